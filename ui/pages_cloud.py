"""Cloud vs buy tab: cumulative cost against training hours with break-even points, time to finish per option."""

from __future__ import annotations

import json
from typing import Any, Optional

import pandas as pd
import streamlit as st

from planner.request import Request
from planner.service import verdict
from ui import services
from ui.charts import default_sweeps_shown, rent_or_buy_chart
from ui.view import hours_text, money

def options_table(options: list[dict[str, Any]], currency: str) -> pd.DataFrame:
    rows = []
    for o in options:
        rows.append({
            "Option": ("Buy: " if o["kind"] == "buy" else "Rent: ") + o["name"],
            "GPUs": o["gpus"],
            "Time to finish": f"{hours_text(o['hours_to_finish'])} ({hours_text(o['hours_low'])}-{hours_text(o['hours_high'])})",
            "Cost to finish": money(o["cost_to_finish"], currency),
            "Per run": money(o["cost_per_run"], currency),
            "Price date": o["price_date"],
            "Price source": o["price_source"],
        })
    return pd.DataFrame(rows)


def break_even_cells(b: dict[str, Any], runs: int, hours: float) -> dict[str, str]:
    """A break-even row in the user's units: sweeps like theirs and runs a month, and what the build can do."""
    per_month = b["baseline_hours_per_month"]
    cap = b["buy_capacity_per_month"] / (runs * hours)
    if per_month is None:
        return {"sweeps / month": "never (renting is cheaper per hour)", "runs / month": "-",
                "build can do / month": f"{cap:,.0f} sweeps"}
    return {"sweeps / month": f"{per_month / (runs * hours):,.1f}" + ("" if b["within_capacity"] else " (more than the build can do)"),
            "runs / month": f"{per_month / hours:,.0f} of {hours:g} h",
            "build can do / month": f"{cap:,.0f} sweeps"}


def render(view: Optional[dict[str, Any]], inputs: Request) -> None:
    st.subheader("Rent or buy?")
    if view is None or not view.get("speed"):
        st.info("There is no build with a GPU to compare yet: change the inputs until the Plan tab shows one.")
        return
    build_key = json.dumps(view["plan_json"], default=str, sort_keys=True)
    data = services.compare_costs(build_key, inputs.model_dump_json(), services.catalog_key(), view["report"])
    runs = inputs.runs_left or inputs.runs  # the runs still to do are what is rented or bought for
    rents = [o for o in data["options"] if o["kind"] == "rent"]
    buy = next((o for o in data["options"] if o["kind"] == "buy"), None)
    if not rents and buy is None:
        st.info("No rental offer and no build to compare.")
        return
    answer = verdict(data["options"], data["break_even"], runs=runs, baseline_hours=inputs.baseline_hours,
                     horizon_months=data["horizon_months"], currency=inputs.currency)
    (st.success if answer.action == "buy" else st.info)(answer.sentence)
    names = st.multiselect("Rental options on the chart", [o["name"] for o in rents],
                           default=answer.rentals_to_show(rents))
    shown = ([buy["name"]] if buy else []) + names
    sweep_h = data["baseline_gpu_hours"]
    evens_sweeps = {b["vs"]: (b["baseline_hours_total"] / sweep_h if b["baseline_hours_total"] is not None else None)
                    for b in data["break_even"]}
    default_n = default_sweeps_shown([evens_sweeps.get(n) for n in names], data["horizon_months"])
    span = st.slider("Sweeps on the chart", min_value=1, max_value=max(200, default_n), value=default_n,
                     key="cloud_sweeps", help="How many sweeps like this one you might run over the horizon")
    st.altair_chart(rent_or_buy_chart(data["lines"], shown, sweep_h, span, inputs.currency, evens_sweeps),
                    width="stretch")
    st.caption(f"On the chart, buying = parts minus resale after {data['horizon_months']} months, plus electricity "
               f"(EUR {data['kwh']['price']}/kWh); renting = the bill. Diamonds mark break-even; the dashed line is "
               f"your sweep ({runs} x {inputs.baseline_hours:g} h on the 1080 Ti). Exchange rates of {data['rates_date']}.")
    if buy is not None:
        d = buy
        st.markdown(f"**Buying** finishes in {hours_text(d['hours_to_finish'])} for "
                    f"{money(d['cash_to_finish'], inputs.currency)} cash (parts {money(d['purchase'], inputs.currency)} + "
                    f"electricity {money(d['electricity'], inputs.currency)}); net of resale over "
                    f"{data['horizon_months']} months: {money(d['net_cost_over_horizon'], inputs.currency)}.")
    st.markdown("**Time and cost to finish the sweep**")
    chosen = [o for o in data["options"] if o["kind"] == "buy" or o["name"] in names]
    st.table(options_table(chosen, inputs.currency), hide_index=True)
    evens = [b for b in data["break_even"] if b["vs"] in names]
    if evens:
        st.markdown(f"**Break-even: buying is cheaper above** (over {data['horizon_months']} months)")
        st.table(pd.DataFrame([{"vs": b["vs"], **break_even_cells(b, runs, inputs.baseline_hours)} for b in evens]),
                 hide_index=True)
    if st.toggle("Show all rental options, assumptions and skipped offers", key="cloud_all"):
        st.dataframe(options_table(data["options"], inputs.currency), hide_index=True)
        for n in data["notes"]:
            st.markdown(f"- {n}")
        for s in data["skipped"]:
            st.markdown(f"- skipped: {s}")
        st.caption(f"Electricity price source: {data['kwh']['source']}")
