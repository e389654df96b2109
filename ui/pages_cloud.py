"""Cloud vs buy tab: cumulative cost against training hours with break-even points, time to finish per option."""

from __future__ import annotations

import json
from typing import Any, Optional

import altair as alt
import pandas as pd
import streamlit as st

from planner.request import Request
from ui import services
from ui.view import hours_text, money

DEFAULT_RENTALS = 4


def _default_pick(rents: list[dict[str, Any]]) -> list[str]:
    """The cheapest rentals plus the cheapest A100 and H100 offers (what the user considers)."""
    pick: dict[str, str] = {}
    for o in rents:  # sorted cheapest first: keep the cheapest option of each GPU model
        if len(pick) < DEFAULT_RENTALS and o["gpu"] not in pick:
            pick[o["gpu"]] = o["name"]
    for family in ("a100", "h100"):
        hit = next((o for o in rents if o["gpu"].startswith(family)), None)
        if hit is not None and hit["gpu"] not in pick:
            pick[hit["gpu"]] = hit["name"]
    return list(pick.values())


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


def chart(curve: list[dict[str, Any]], names: list[str], sweep_hours: float, currency: str) -> alt.Chart:
    frame = pd.DataFrame(curve)
    frame = frame[frame["option"].isin(names)]
    x = alt.X("baseline_hours:Q", title="training hours on the GTX 1080 Ti (baseline GPU-hours)")
    y = alt.Y("cost:Q", title=f"cumulative cost, {currency}")
    color = alt.Color("option:N", title="option", legend=alt.Legend(orient="bottom", columns=2, labelLimit=360))
    lines = alt.Chart(frame[~frame["break_even"]]).mark_line().encode(x=x, y=y, color=color)
    evens = alt.Chart(frame[frame["break_even"]]).mark_point(size=120, filled=True, shape="diamond").encode(
        x=x, y=y, color=color, tooltip=["option", alt.Tooltip("baseline_hours:Q", format=",.0f"),
                                        alt.Tooltip("cost:Q", format=",.0f")])
    rule = alt.Chart(pd.DataFrame({"baseline_hours": [sweep_hours], "what": ["your sweep"]})).mark_rule(
        strokeDash=[4, 4], color="gray").encode(x="baseline_hours:Q", tooltip=["what", "baseline_hours"])
    return (lines + evens + rule).properties(height=380)


def render(view: Optional[dict[str, Any]], inputs: Request) -> None:
    st.subheader("Rent or buy?")
    if view is None or not view.get("speed"):
        st.info("There is no build with a GPU to compare yet: change the inputs until the Plan tab shows one.")
        return
    build_key = json.dumps(view["plan_json"], default=str, sort_keys=True)
    data = services.compare_costs(build_key, inputs.model_dump_json(), services.catalog_key(), view["report"])
    rents = [o for o in data["options"] if o["kind"] == "rent"]
    buy = next((o for o in data["options"] if o["kind"] == "buy"), None)
    names = st.multiselect("Rental options on the chart", [o["name"] for o in rents], default=_default_pick(rents))
    shown = ([buy["name"]] if buy else []) + names
    st.altair_chart(chart(data["curve"], shown, data["baseline_gpu_hours"], inputs.currency), width="stretch")
    st.caption(f"On the chart, buying = parts minus resale after {data['horizon_months']} months, plus electricity "
               f"(EUR {data['kwh']['price']}/kWh); renting = the bill. Diamonds mark break-even; the dashed line is "
               f"your sweep ({inputs.runs} x {inputs.baseline_hours:g} h on the 1080 Ti). Exchange rates of {data['rates_date']}.")
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
        st.markdown("**Break-even: buying is cheaper above**")
        st.table(pd.DataFrame([{
            "vs": b["vs"],
            "1080 Ti hours / month": "never (renting is cheaper per hour)" if b["baseline_hours_per_month"] is None
            else f"{b['baseline_hours_per_month']:,.0f}" + ("" if b["within_capacity"] else " (beyond what the build can do)"),
            "build capacity / month": f"{b['buy_capacity_per_month']:,.0f}",
        } for b in evens]), hide_index=True)
    if st.toggle("Show all rental options, assumptions and skipped offers", key="cloud_all"):
        st.dataframe(options_table(data["options"], inputs.currency), hide_index=True)
        for n in data["notes"]:
            st.markdown(f"- {n}")
        for s in data["skipped"]:
            st.markdown(f"- skipped: {s}")
        st.caption(f"Electricity price source: {data['kwh']['source']}")
