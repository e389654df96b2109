"""Plan tab: the recommended (or shared) build, its checks, PSU sizing, speed, sweep time, alternatives, why-not."""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd
import streamlit as st

from planner.catalog.load import Catalog
from planner.service.pipeline import check
from planner.request import Request
from planner.share import SharedBuild, build_from_catalog, build_from_json
from planner.textsafe import md_escape
from ui import services
from ui.view import build_rows, hours_text, money, plan_summary_rows, psu_rows, sweep_view

ORIGIN_TITLES = {"link": "Build restored from a shared link", "import": "Imported build", "check": "Build from the checker"}


def view_from_plan(plan_obj: Any, inputs: Request) -> dict[str, Any]:
    """What the page shows for a solver plan (drawn from Plan.to_json(); the check report kept for costs)."""
    plan = plan_obj.to_json()
    return {
        "origin": "plan", "build": build_from_json(plan, inputs), "plan_json": plan, "problems": [],
        "report": plan_obj.report,
        "warnings": plan.get("warnings", []), "unverified": plan.get("unverified", []),
        "power": plan.get("power") or {}, "gpus": plan["gpu"]["count"],
        "speed": {"value": plan["speedup_vs_1080ti"], "low": plan["speedup_range"][0],
                  "high": plan["speedup_range"][1], "basis": plan.get("speedup_basis", "")},
        "trade_offs": plan.get("trade_offs", []),
        "headline": f"{plan['gpu']['count']} x {plan['gpu']['name']}" if plan["gpu"]["count"] > 1 else plan["gpu"]["name"],
    }


def view_from_parts(cat: Catalog, parts: list[tuple[str, int]], inputs: Request, origin: str) -> dict[str, Any]:
    """What the page shows for a hand-picked, imported or shared list of parts (checked and priced today)."""
    gpus = next((q for i, q in parts if cat.parts[i].category == "gpu"), inputs.gpu_count)
    owned = tuple(i for i in inputs.owned if any(i == p for p, _ in parts))
    report = check(cat, [i for i, _ in parts], inputs.model_copy(update={"gpu_count": gpus, "owned": owned}))
    build = build_from_catalog(cat, [(i, gpus if cat.parts[i].category == "gpu" else 1) for i, _ in parts],
                               currency=inputs.currency, inputs=inputs, owned=owned, used=inputs.used)
    data = report.to_json()
    gpu = report.build.get("gpu")
    speed = None
    if gpu is not None:
        s = services.speed_of(gpu.chip, inputs.workload, inputs.precision, inputs.power_fraction,
                              inputs.model_params)  # type: ignore[attr-defined]
        speed = {"value": s.value, "low": s.low, "high": s.high, "basis": s.basis}
    plan_json = {**build.to_json(with_token=False), "power": data["power"]}
    return {"origin": origin, "build": build, "plan_json": plan_json, "problems": data["problems"],
            "warnings": data["warnings"], "unverified": data["unverified"], "power": data["power"], "gpus": gpus,
            "speed": speed, "trade_offs": [], "report": report,
            "headline": (cat.chips[gpu.chip].name if gpu is not None else "no GPU") + (f" x {gpus}" if gpus > 1 else "")}  # type: ignore[attr-defined]


def build_table(build: SharedBuild, cat: Catalog) -> None:
    rows = build_rows(build, cat)
    frame = pd.DataFrame(rows).drop(columns=["id"]) if rows else pd.DataFrame()
    st.dataframe(frame, hide_index=True,
                 column_config={"Part": st.column_config.TextColumn("Part", width="medium"),
                                "Price": st.column_config.TextColumn("Price @ retailer"),
                                "Age (days)": st.column_config.NumberColumn("Age (d)", format="%d"),
                                "Link": st.column_config.LinkColumn("Link", display_text="shop", width="small")})
    st.markdown(f"**Total: {money(build.total, build.currency)}**" +
                (" (owned parts at 0)" if any(ln.owned for ln in build.lines) else ""))


def verdicts(view: dict[str, Any]) -> None:
    if view["origin"] != "plan":
        if view["problems"]:
            st.error(f"Not compatible: {len(view['problems'])} problem(s)")
        else:
            st.success("Compatible: no rule found a problem")
    for f in view["problems"]:
        st.error(f"✗ {md_escape(f['rule'])}: {md_escape(f['message'])}")
    for f in view["warnings"]:
        st.warning(f"! {md_escape(f['rule'])}: {md_escape(f['message'])}")
    if view["unverified"]:
        with st.expander(f"{len(view['unverified'])} check(s) could not be verified (missing data)"):
            for f in view["unverified"]:
                st.markdown(f"- **{f['rule']}**: {f['message']}")


def speed_and_power(view: dict[str, Any], inputs: Request) -> None:
    c1, c2, c3 = st.columns(3)
    sp = view["speed"]
    if sp:
        c1.metric("Speed vs a GTX 1080 Ti", f"{sp['value']:.1f}x")
        c1.caption(f"range {sp['low']:.1f}x to {sp['high']:.1f}x ({sp['basis']})")
        sw = sweep_view(sp["value"], sp["low"], sp["high"], inputs.runs, inputs.baseline_hours, view["gpus"])
        c2.metric(f"Sweep of {inputs.runs} runs", hours_text(sw.wall_hours))
        c2.caption(f"{hours_text(sw.wall_hours_low)} to {hours_text(sw.wall_hours_high)}; {hours_text(sw.hours_per_run)} per run "
                   f"(was {hours_text(inputs.baseline_hours)}), {sw.waves} round(s) on {view['gpus']} GPU(s)")
    power = view["power"] or {}
    if power.get("sustained_w"):
        c3.metric("PSU to buy", f"{power.get('recommended_psu_w')} W")
        c3.caption(f"{power['sustained_w']} W sustained, {power.get('transient_w')} W worst 100 µs transient")
        with st.expander("PSU sizing breakdown"):
            st.table(pd.DataFrame(psu_rows(power.get("breakdown"))), hide_index=True)
            st.caption("Sustained load at most 80 % of the rating; transients sized for ATX 3.x (200 % for 100 µs) "
                       "or 1.47 x sustained for ATX 2.x; never below the GPU vendor's figure (docs/rules.md).")


def render_view(view: dict[str, Any], inputs: Request, cat: Catalog) -> None:
    build_table(view["build"], cat)
    verdicts(view)
    speed_and_power(view, inputs)


def why_not(rec: dict[str, Any]) -> None:
    st.error(f"No build fits these requirements ({rec['status']}).")
    why = rec.get("why_not") or {}
    if why.get("conflicts"):
        st.markdown("**Requirements that collide:**\n" + "\n".join(f"- {c}" for c in why["conflicts"]))
    if why.get("suggestions"):
        st.markdown("**What would make it fit:**\n" + "\n".join(f"- {s}" for s in why["suggestions"]))


def alternatives(plans: list[dict[str, Any]]) -> None:
    if not plans:
        return
    st.subheader("Alternatives")
    cols = st.columns(len(plans))
    for col, plan in zip(cols, plans):
        with col:
            st.markdown(f"**{plan['gpu']['name']}**" + (f" x {plan['gpu']['count']}" if plan["gpu"]["count"] > 1 else ""))
            st.markdown(f"{money(plan['total']['amount'], plan['total']['currency'])} · "
                        f"{plan['speedup_vs_1080ti']:.1f}x a GTX 1080 Ti")
            st.table(pd.DataFrame(plan_summary_rows(plan)), hide_index=True)
            for t in plan.get("trade_offs", []):
                st.markdown(f"- {t}")


def render(cat: Catalog, inputs: Request, shared: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """Draw the tab; returns the view of the build on show (None when nothing fits)."""
    if shared is not None:
        view = view_from_parts(cat, list(shared["parts"]), inputs, shared["origin"])
        st.subheader(f"{ORIGIN_TITLES.get(shared['origin'], 'Shared build')}: {view['headline']}")
        st.caption("Prices are today's catalog prices. Change any input in the sidebar to re-plan from scratch.")
        render_view(view, inputs, cat)
        return view
    with st.spinner("Solving..."):
        planned = services.solve(inputs.model_dump_json(), services.catalog_key())
    for note in planned.notes:
        st.caption(f"Assumed: {note}.")
    rec = planned.to_json()
    if not rec["plans"]:
        why_not(rec)
        return None
    first = view_from_plan(planned.plans[0], inputs)
    for note in planned.plans[0].notes:  # power-limit advice, budget left unspent
        st.info(md_escape(note))
    st.subheader(f"Recommended: {first['headline']}, {money(first['build'].total, inputs.currency)}")
    st.caption(f"{rec['status']} · solved in {rec['solve_seconds']:.2f} s over "
               f"{rec.get('stats', {}).get('after_pruning', '?')} of {rec.get('stats', {}).get('candidates', '?')} parts")
    render_view(first, inputs, cat)
    alternatives(rec["plans"][1:])
    return first
