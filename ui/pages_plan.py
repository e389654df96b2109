"""Plan tab: the recommended (or shared) build, its checks, PSU sizing, speed, sweep time, alternatives, why-not."""

from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from planner.service import Catalog
from planner.service import check
from planner.request import Request
from planner.service import (Answer, AssumedModel, BuildSummary, PlannedBuild, SharedBuild, SideBySide, SweepReport,
                             Trial)
from planner.plan_view import PlanView
from planner.textsafe import md_cell, md_escape, md_link, md_table
from ui import pages_burnin, pages_calibrate, services
from planner.service import CheckReport, priced_fixes
from ui.charts import speed_chart
from ui.view import build_rows, hours_text, money, plan_summary_rows, psu_rows

ORIGIN_TITLES = {"link": "Build restored from a shared link", "import": "Imported build", "check": "Build from the checker"}


def option_name(plan: PlanView) -> str:
    """'RTX 5090' or '2 x RTX 5070' (the GPU summary of a solved plan)."""
    gpu = plan.gpu
    return "no GPU" if gpu is None else f"{gpu.count} x {gpu.name}" if gpu.count > 1 else gpu.name


def gpu_label(plan: PlanView) -> str:
    """'RTX 5090' or 'RTX 5070 x 2', as the option lists name a plan."""
    gpu = plan.gpu
    return "no GPU" if gpu is None else gpu.name + (f" x {gpu.count}" if gpu.count > 1 else "")


def view_from_plan(built: PlannedBuild, report: Any, inputs: Request, model: Any = None) -> dict[str, Any]:
    """What the page shows for a plan of the Answer (its typed view, sweep and the model assumed, as describe()
    made them; the solver's check report kept for costs)."""
    plan = built.view
    speed = plan.speed
    return {
        "origin": "plan", "build": SharedBuild.from_view(plan, inputs), "plan_json": plan.to_json(),
        "problems": [], "report": report, "sweep": built.sweep, "model": model,
        "warnings": [f.to_json() for f in plan.warnings], "unverified": [f.to_json() for f in plan.unverified],
        "power": plan.power.to_json() if plan.power else {}, "gpus": plan.gpu_count,
        "speed": None if speed is None else {"value": speed.value, "low": speed.low, "high": speed.high,
                                             "basis": speed.basis,
                                             "limit": services.speed_limit_sentence(
                                                 plan.gpu.chip, inputs.workload, inputs.precision, inputs.model_params)
                                             if plan.gpu is not None else ""},
        "trade_offs": list(plan.trade_offs), "headline": option_name(plan),
        "chip": plan.gpu.chip if plan.gpu is not None else None,
    }


def view_from_parts(cat: Catalog, parts: list[tuple[str, int]], inputs: Request, origin: str) -> dict[str, Any]:
    """What the page shows for a hand-picked, imported or shared list of parts (checked and priced today)."""
    gpus = next((q for i, q in parts if cat.parts[i].category == "gpu"), inputs.gpu_count)
    owned = tuple(i for i in inputs.owned if any(i == p for p, _ in parts))
    request = inputs.model_copy(update={"gpu_count": gpus, "owned": owned})
    report = check(cat, [i for i, _ in parts], request)
    build = SharedBuild.from_catalog(cat, [(i, gpus if cat.parts[i].category == "gpu" else 1) for i, _ in parts],
                               currency=inputs.currency, inputs=inputs, owned=owned, used=inputs.used)
    data = report.to_json()
    gpu = report.build.get("gpu")
    speed = None
    if gpu is not None:
        s = services.speed_of(gpu.chip, inputs.workload, inputs.precision, inputs.power_fraction,
                              inputs.model_params)  # type: ignore[attr-defined]
        speed = {"value": s.value, "low": s.low, "high": s.high, "basis": s.basis,
                 "limit": services.speed_limit_sentence(gpu.chip, inputs.workload, inputs.precision,
                                                        inputs.model_params)}
    plan_json = report.view().to_json()
    return {"origin": origin, "build": build, "plan_json": plan_json, "problems": data["problems"],
            "warnings": data["warnings"], "unverified": data["unverified"], "power": data["power"], "gpus": gpus,
            "speed": speed, "trade_offs": [], "report": report, "chip": gpu.chip if gpu is not None else None,
            "fixes": priced_fixes(cat, [i for i, _ in parts], request) if data["problems"] or data["warnings"] else {},
            "headline": (cat.chips[gpu.chip].name if gpu is not None else "no GPU") + (f" x {gpus}" if gpus > 1 else "")}  # type: ignore[attr-defined]


def rows_table(rows: list[dict[str, Any]], links: tuple[str, ...] = ()) -> None:
    """Rows as a Markdown table: plain text for the browser to lay out (a data grid or an Arrow table costs a
    first visit 0.2-0.5 s of browser time here; docs/benchmarks-ui.md). Cells are literal; `links` columns hold
    addresses, shown as a 'shop' link when safe."""
    if not rows:
        return
    head = list(rows[0])
    st.markdown(md_table(head, [[md_link("shop", r[h]) if h in links and r[h] else md_cell(r[h]) for h in head]
                                for r in rows]))


def given_prices_note(cat: Catalog, view: dict[str, Any]) -> None:
    """Say which prices a person gave the answer rests on (as `planner recommend` does)."""
    said = cat.given_prices_sentence([ln.part_id for ln in view["build"].lines])
    if said:
        st.info(md_escape(said))


def inline_price(build: SharedBuild, cat: Catalog) -> None:
    """Beside the plan's prices: give a better one for a part of this build (the Prices tab's form)."""
    from ui.pages_prices import give_panel

    ids = [ln.part_id for ln in build.lines if ln.part_id in cat.parts and not ln.owned]
    if not ids:
        return
    with st.expander("Found a better price for one of these parts? Give it"):
        give_panel(cat, ids[0], k="plan_give", choose=ids)


def build_table(build: SharedBuild, cat: Catalog) -> None:
    rows = build_rows(build, cat)
    drop = {"id"} | {k for k in ("Age", "Link", "Specs") if not any(r[k] for r in rows)}  # nothing to show: no column
    rows_table([{k: v for k, v in r.items() if k not in drop} for r in rows], links=("Link",))
    st.markdown(f"**Total: {money(build.total, build.currency)}**" +
                (" (owned parts at 0)" if any(ln.owned for ln in build.lines) else ""))
    st.caption("Price @ shop as last seen there; Age = days since that shop showed it (estimates and undated "
               "research have no age; the Age and Link columns appear when a shop price is in the build). Specs: "
               "'checked' = the catalog row was re-read against a dated maker's page or review; 'unverified' = "
               "check its length, connectors and slots on the maker's page before ordering.")
    inline_price(build, cat)


def verdicts(view: dict[str, Any]) -> None:
    if view["origin"] != "plan":
        if view["problems"]:
            st.error(f"Not compatible: {len(view['problems'])} problem(s)")
        elif view["unverified"]:  # a rule whose data is missing is not a pass
            st.warning(f"Cannot confirm: no rule found a problem, but {len(view['unverified'])} fact(s) that decide "
                       "whether this build works are unknown (below); check them on the maker's pages before ordering")
        elif view["warnings"]:
            st.warning(f"Compatible, with {len(view['warnings'])} warning(s) worth a look before ordering (below)")
        elif rows := sum(v is False for v in view["report"].verified.values()):  # rows not re-read: not "verified"
            st.success(f"Compatible: no rule found a problem or a warning, but {rows} part row(s) are not yet re-read "
                       "against a maker's page (marked unverified in the table, with what to check)")
        else:
            st.success("Compatible: every rule verified, no problem and no warning")
    fixes = view.get("fixes") or {}
    for f in view["problems"]:
        st.error(f"✗ Not met: {md_escape(CheckReport.rule_summary(f['rule']))}. {md_escape(f['message'])}"
                 + (f"\n\nFix: {md_escape(fixes[f['rule']])}" if f["rule"] in fixes else ""))
    for f in view["warnings"]:
        st.warning(f"! Worth a look: {md_escape(CheckReport.rule_summary(f['rule']))}. {md_escape(f['message'])}"
                   + (f"\n\nFix: {md_escape(fixes[f['rule']])}" if f["rule"] in fixes else ""))
    if view["unverified"]:
        with st.expander(f"{len(view['unverified'])} check(s) could not be verified (missing data)"):
            for f in view["unverified"]:
                st.markdown(f"- **{CheckReport.rule_summary(f['rule'])}**: {f['message']}")


def psu_in_build(view: dict[str, Any], cat: Catalog) -> Optional[tuple[str, int]]:
    """(name, rating W) of the PSU the shown build holds, or None."""
    ln = next((ln for ln in view["build"].lines if ln.category == "psu"), None)
    part = cat.parts.get(ln.part_id) if ln is not None else None
    return None if part is None else (part.name, int(part.wattage_w))  # type: ignore[union-attr]


def speed_and_power(view: dict[str, Any], inputs: Request, cat: Catalog) -> None:
    c1, c2, c3 = st.columns(3)
    sp = view["speed"]
    if sp:  # a solved plan's model and sweep are the Answer's; a shared or hand-picked build's are computed here
        model = view.get("model") or AssumedModel.of(inputs.workload, inputs.precision, inputs.model_params)
        c1.metric(f"Speed vs a GTX 1080 Ti, {model.params_text()} model", f"{sp['value']:.1f}x")
        basis = sp["basis"]
        if basis != "model" and view.get("chip"):  # say which of your measurements the figure rests on
            basis = pages_calibrate.basis_text(view["chip"], inputs.precision, inputs.workload, inputs.power_fraction,
                                               inputs.model_params) or basis
        c1.caption(md_escape(f"for {model.phrase()}; range {sp['low']:.1f}x to {sp['high']:.1f}x "
                             f"({basis})" + (f". On this card: {sp['limit']}" if sp.get("limit") else "")))
        gpu = (view.get("plan_json") or {}).get("gpu") or {}
        sw = view.get("sweep") or SweepReport.estimate(
            sp["value"], sp["low"], sp["high"], runs=inputs.runs, runs_left=inputs.runs_left,
            baseline_hours=inputs.baseline_hours, gpu_count=view["gpus"], chip=gpu.get("chip"),
            vram_gb=gpu.get("vram_gb"), precision=inputs.precision, model_params=inputs.model_params,
            run_vram_gb=inputs.run_vram_gb)
        left = sw.runs_left
        c2.metric(f"Sweep: {left} of {inputs.runs} runs left" if left != inputs.runs else f"Sweep of {inputs.runs} runs",
                  hours_text(sw.wall_hours.value))
        c2.caption(f"{sw.finish_sentence()}; {hours_text(sw.hours_per_run.value)} per run "
                   f"(was {hours_text(inputs.baseline_hours)}), {sw.rounds} round(s) on {view['gpus']} GPU(s)")
    power = view["power"] or {}
    if power.get("sustained_w"):
        have = psu_in_build(view, cat)
        b = power.get("breakdown") or {}
        need = max(b.get("required_atx3_w") or 0, b.get("vendor_floor_w") or 0) or power.get("recommended_psu_w")
        if have is not None:  # the plan's own unit, so the page never names a different size beside it
            c3.metric("PSU in this build", f"{have[1]} W")
            c3.caption(f"{have[0]}; needs at least {need} W (ATX 3.x sizing): {power['sustained_w']} W sustained, "
                       f"{power.get('transient_w')} W worst 100 µs transient")
        else:
            c3.metric("PSU to buy", f"{power.get('recommended_psu_w')} W")
            c3.caption(f"at least {need} W; {power['sustained_w']} W sustained, {power.get('transient_w')} W worst "
                       "100 µs transient")
        with st.expander("PSU sizing breakdown"):
            rows_table(psu_rows(power.get("breakdown")))
            st.caption("Sustained load at most 80 % of the rating; transients sized for ATX 3.x (200 % for 100 µs) "
                       "or 1.47 x sustained for ATX 2.x; never below the GPU vendor's figure (docs/rules.md).")


def render_view(view: dict[str, Any], inputs: Request, cat: Catalog) -> None:
    speed_and_power(view, inputs, cat)  # the answer first: speed, sweep finish, PSU; then the parts behind it
    build_table(view["build"], cat)
    verdicts(view)
    pages_burnin.pointer(view, cat)  # the burn-in of this build, before it runs a sweep


def build_notes(notes: list[str]) -> None:
    """The recommendation's notes (airflow, unspent money, the next faster build, steps up, power limits) as one
    list under the build, not as boxes above it."""
    if notes:
        st.markdown("**Notes on this build**\n" + "\n".join(f"- {md_escape(n)}" for n in notes))


def why_not(answer: Answer) -> None:
    st.error(f"No build fits these requirements ({answer.status}).")
    why = answer.why_not
    gaps = why.catalog_gaps if why else None
    if gaps:
        st.markdown("**What the catalog lacks for this request:**\n" + "\n".join(f"- {g}" for g in gaps))
    elif why and why.conflicts:
        st.markdown("**Requirements that collide:**\n" + "\n".join(f"- {c}" for c in why.conflicts))
    if why and why.suggestions and not gaps:
        st.markdown("**What would make it fit:**\n" + "\n".join(f"- {s}" for s in why.suggestions))


def alternatives(plans: list[PlanView]) -> None:
    if not plans:
        return
    st.subheader("Alternatives")
    cols = st.columns(len(plans))
    for col, plan in zip(cols, plans):
        with col:
            st.markdown(f"**{md_escape(gpu_label(plan))}**")
            st.markdown(f"{money(plan.total, plan.currency)} · {plan.speed.value:.1f}x a GTX 1080 Ti")  # type: ignore[union-attr]
            rows_table(plan_summary_rows(plan))
            for t in plan.trade_offs:
                st.markdown(f"- {md_escape(t)}")


def speed_rows(plans: list[PlannedBuild], inputs: Request) -> list[dict[str, Any]]:
    """One row per option (the user's 1080 Ti first, its sweep computed here; the plans' from the Answer): speed
    with range, sweep hours with range, finish time."""
    today = SweepReport.estimate(1.0, 1.0, 1.0, runs=inputs.runs, runs_left=inputs.runs_left,
                                 baseline_hours=inputs.baseline_hours, gpu_count=1)
    rows = []
    for label, speed, low, high, gpus, sw in [("your GTX 1080 Ti (today)", 1.0, 1.0, 1.0, 1, today)] + [
            (gpu_label(b.view) + f", {money(b.view.total, b.view.currency)}", b.view.speed.value,  # type: ignore[union-attr]
             b.view.speed.low, b.view.speed.high, b.view.gpu_count, b.sweep) for b in plans]:  # type: ignore[union-attr]
        rows.append({"option": label, "baseline": not rows, "speed": speed * gpus, "speed_low": low * gpus, "speed_high": high * gpus,
                     "sweep_hours": sw.wall_hours.value, "sweep_low": sw.wall_hours.low,
                     "sweep_high": sw.wall_hours.high, "finish": sw.finish_text()})
    return rows


def speed_by_option(answer: Answer, inputs: Request) -> None:
    st.markdown("**Speed and sweep time by option**")
    rows = speed_rows(answer.plans, inputs)
    speed, hours = speed_chart(rows)
    c1, c2 = st.columns(2)
    c1.vega_lite_chart(spec=speed, width="stretch")
    c2.vega_lite_chart(spec=hours, width="stretch")
    model = answer.model
    st.caption(f"Sweep throughput vs your GTX 1080 Ti for {model.phrase()} (on it the sweep takes "
               f"{hours_text(rows[0]['sweep_hours'])}); grey lines show the speed model's range. Several GPUs count "
               "as their combined throughput; the sweep hours are the answer's planned sweep (several runs on one "
               "card where they fit its VRAM).")


def view_of(cat: Catalog, inputs: Request, shared: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """The view `render` would return, without drawing (another tab is open and needs the build on show)."""
    if shared is not None:
        return view_from_parts(cat, list(shared["parts"]), inputs, shared["origin"])
    key = services.catalog_key()
    answer = services.describe(inputs.model_dump_json(), key)
    if not answer.plans:
        return None
    return view_from_plan(answer.plans[0], services.solve(inputs.model_dump_json(), key).plans[0].report, inputs,
                          answer.model)


def render(cat: Catalog, inputs: Request, shared: Optional[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """Draw the tab; returns the view of the build on show (None when nothing fits)."""
    if shared is not None:
        view = view_of(cat, inputs, shared)
        st.subheader(f"{ORIGIN_TITLES.get(shared['origin'], 'Shared build')}: {view['headline']}")
        st.caption("Prices are the ones every answer uses today (the catalog's, the shops', and any you gave or kept "
                   "from a shared list). Change any input in the sidebar to re-plan from scratch.")
        given_prices_note(cat, view)
        render_view(view, inputs, cat)
        return view
    key = services.catalog_key()
    with st.spinner("Solving..."):
        answer = services.describe(inputs.model_dump_json(), key)  # the typed Answer the CLI prints too
    for note in answer.notes:
        st.caption(f"Assumed: {note}.")
    if not answer.plans:
        why_not(answer)
        pages_calibrate.render()
        return None
    first = view_from_plan(answer.plans[0], services.solve(inputs.model_dump_json(), key).plans[0].report, inputs,
                           answer.model)
    st.subheader(f"Recommended: {first['headline']}, {money(first['build'].total, inputs.currency)}")
    st.caption(f"{answer.status} · solved in {answer.solve_seconds:.2f} s over "
               f"{answer.stats.after_pruning or '?'} of {answer.stats.candidates or '?'} parts")
    given_prices_note(cat, first)
    render_view(first, inputs, cat)
    build_notes(answer.plans[0].view.notes)  # the answer first, its notes after (issue 34 item 9)
    for entry in answer.owned_not_used:
        st.warning(md_escape(entry.sentence(flag=None).replace(
            "; to keep it, accept ", "; to keep it, add to 'Warnings I accept': ")))
    speed_by_option(answer, inputs)
    side_by_side(answer.side_by_side, inputs)
    try_before_you_buy(answer.try_before_you_buy)
    pages_calibrate.render()
    alternatives(answer.views[1:])
    return first


def side_by_side(sbs: Optional[SideBySide], inputs: Optional[Request] = None) -> None:
    """Builds whose sweep ranges overlap the recommendation's, in one table, and what would decide between them."""
    if not sbs:
        return
    st.subheader("Too close to call: sweep ranges overlap" if sbs.too_close_to_call else "Side by side")
    rows = []
    for b in sbs.builds:
        g, shared = b.gpu, b.runs_sharing_each_gpu
        rows.append({"": b.role or "", "GPUs": f"{g.count} x {g.name}",
                     "total": money(b.total.amount, b.total.currency),
                     "sweep (fast to slow end)": f"{hours_text(b.sweep_hours)} ({hours_text(b.sweep_hours_low)}"
                                                 f" to {hours_text(b.sweep_hours_high)})"
                                                 + (f", {b.sweep_runs} runs left" if b.sweep_counts == "runs left"
                                                    else ""),
                     "per run": hours_text(b.hours_per_run), "VRAM per GPU": f"{g.vram_gb:g} GB",
                     "speed from": _basis(b, inputs),
                     "runs sharing a GPU": f"{shared['runs_per_gpu']}: {hours_text(shared['wall_hours']['value'])}"
                                           if shared else "-"})
    rows_table(rows)
    for b in sbs.builds:
        if not (b.role or "").startswith("recommended") and b.parts:
            st.caption(md_escape(f"Parts of the {b.role} build: " + ", ".join(
                (f"{p.quantity} x " if p.quantity > 1 else "") + p.name for p in b.parts)))
    if sbs.target_missing:
        st.caption(md_escape(sbs.target_missing))
    st.markdown("**What would decide:**\n" + "\n".join(f"- {md_escape(line)}" for line in sbs.what_would_decide))


def _basis(b: BuildSummary, inputs: Optional[Request]) -> str:
    """'measured: ...' or 're-anchored on your X measurement' for a card of the side-by-side; else the basis word."""
    if b.speedup_basis == "model" or inputs is None or not b.gpu.chip:
        return b.speedup_basis
    return pages_calibrate.basis_text(b.gpu.chip, inputs.precision, inputs.workload, b.power_limit or 1.0,
                                      inputs.model_params) or b.speedup_basis


def try_before_you_buy(trials: list[Trial]) -> None:
    """Per candidate card: the cheapest dated rental, a 30-minute measurement's cost, and the steps to calibrate."""
    if not trials:
        return
    st.subheader("Try before you buy")
    for t in trials:
        st.markdown(md_escape(f"For {' and '.join(t.for_gpus)}, " + t.sentence) + ".")
        st.markdown("\n".join(f"{i}. {md_escape(step)}" for i, step in enumerate(t.steps, 1)))
        st.caption(md_escape(f"Price: {t.price_source}" + (f"; {t.price_note}" if t.price_note else "")))
