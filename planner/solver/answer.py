"""From the engine's solves to a Recommendation: the pick across options, its notes, alternatives and the fallbacks."""

from __future__ import annotations

import time
from typing import Any, Optional

from planner.money import from_cents
from planner.request import Request
from planner.solver.engine import Engine, Option
from planner.solver.notes import (
    adapter_note, channels_note, checklist_note, explain_tried, persist_limit_note, psu_load_note, next_step_note, power_limit_note,
    reuse_platform_note, stack_note, step_up_note, sweep_hours, unspent_note, used_parts_note,
)
from planner.solver.objective import pick_across_counts
from planner.solver.options import options
from planner.solver.plan import Plan, Recommendation, WhyNot, trade_offs
from planner.solver.whynot import OptionWhyNot

VARIANT_FIELDS = frozenset({"budget", "mode", "deadline_hours", "deadline_at", "min_speedup", "gpu_count",
                            "min_vram_gb"})


def fresh(engine: Engine, r: Request) -> Recommendation:
    """A question the one model cannot answer (other owned parts, a GPU count it does not hold): a request of its
    own, whose models and solves count as this request's."""
    from planner.solver import recommend

    rec = recommend(engine.catalog, r, time_limit=engine.time_limit, workers=engine.workers)
    engine.counts.add(rec.stats)
    return rec


def variant(engine: Engine, r: Request, unverified: bool = False) -> Recommendation:
    """The notes' questions (the next faster build, the steps up) answered on the same model when they differ from
    the request only in budget (none), mode, speed floor, GPU count or a higher VRAM floor. With `unverified` (the
    answer itself rests on unknown data), a question no verified build answers gets one GPU's unverified build, as
    a request of its own would."""
    base, other = engine.req.model_dump(), r.model_dump()
    changed = {f for f in base if base[f] != other[f]}
    wanted = set(options(r))
    if (changed - VARIANT_FIELDS or (r.min_vram_gb or 0) < (engine.req.min_vram_gb or 0) or engine.missing
            or r.budget not in (None, engine.req.budget)  # the model holds the request's budget only
            or not wanted <= set(engine.opts)):  # e.g. a GPU more than the request's fixed count: not in this model
        return fresh(engine, r)
    plans = []
    for k in engine.opts:
        if k in wanted:
            _, chosen = engine.solve(k, r)
            if chosen is not None:
                plans.append(engine.plan(k, chosen))
    if not plans and unverified and not r.strict:
        plans = [engine.plan(k, chosen) for k in engine.opts if k in wanted and k[0] == 1
                 for _, chosen in [engine.solve(k, r, trust=True)] if chosen is not None]
    if not plans:
        return Recommendation("infeasible", [], None, 0.0, {})
    return Recommendation("optimal", [pick_across_counts(plans, r)[0]], None, 0.0, {})


def unverified_builds(engine: Engine, tried: list[tuple[Option, str, Optional[Plan]]]
                      ) -> list[tuple[Option, str, Plan]]:
    """Every GPU count found nothing with known data: solve one GPU again trusting unknown safety/fit data (as if each
    part were pinned), so the user gets a build and the checks to make before ordering (`Request.strict` refuses
    instead). Several GPUs stay strict: unknown slot wiring is what refuses the X870E Carbon's x8/x4 (issue 26)."""
    out = []
    for k, st, _ in tried:
        if st != "infeasible" or engine.missing or k[0] > 1:
            continue
        status, chosen = engine.solve(k, engine.req, trust=True)
        if chosen is not None:
            out.append((k, status, engine.plan(k, chosen)))
    return out


def answer(engine: Engine, req: Request, alternatives: int, start: float,
           skipped: list[dict[str, Any]]) -> Recommendation:
    """Every option's best build, the pick across GPU counts and power limits (the simplest machine within the
    speed model's margin of the fastest), its notes and alternatives; or why nothing fits."""
    def stats(extra: dict[str, Any]) -> dict[str, Any]:
        return {**engine.stats, **extra, **engine.counts.to_stats()}

    if engine.missing:
        return Recommendation("infeasible", [], OptionWhyNot(engine, engine.opts[0]).explain(),
                              time.perf_counter() - start, stats({}))
    tried: list[tuple[Option, str, Optional[Plan]]] = []
    for k in engine.opts:
        status, chosen = engine.solve(k, req)
        tried.append((k, status, None if chosen is None else engine.plan(k, chosen)))
    by_count = {"by_gpu_count": [{"gpus": k[0], "power_limit": k[1], "status": st,
                                  "total_eur": None if p is None else str(from_cents(p.total_cents_eur)),
                                  "sweep_hours": None if p is None else round(sweep_hours(p, req), 2)}
                                 for k, st, p in tried] + skipped}
    found = [t for t in tried if t[2] is not None]
    timed_out = any(st == "unknown" for _, st, _ in tried)
    trust = False  # only unverified parts make a build: its alternatives trust unknown data too
    if not found and not req.strict and not timed_out:
        found = list(unverified_builds(engine, tried))
        trust = bool(found)
    if not found:
        if timed_out:
            return Recommendation("timeout", [], WhyNot(["no solution within the time limit"], ["raise --time-limit"]),
                                  time.perf_counter() - start, stats(by_count))
        why = explain_tried([OptionWhyNot(engine, k) for k, _, _ in tried])
        return Recommendation("infeasible", [], why, time.perf_counter() - start, stats(by_count))
    first, passed_over = pick_across_counts([p for _, _, p in found], req)
    k, status, _ = next(t for t in found if t[2] is first)
    if timed_out:
        status = "feasible"  # a count that timed out might have held a better build
    unspent = unspent_note(first, req, status)
    psu_note = psu_load_note(first, [p.wattage_w for p in engine.catalog.by_category("psu")])
    step = lambda r: variant(engine, r, unverified=trust)  # noqa: E731
    first.notes.extend(n for n in (
        power_limit_note(first, engine.reqs[k], req), persist_limit_note(first), used_parts_note(first),
        stack_note(first), unspent, passed_over, channels_note(first), adapter_note(first), psu_note,
        unspent and next_step_note(req, first, step), unspent and step_up_note(req, first, step),
        reuse_platform_note(req, first, step)) if n)
    extra = dict(by_count)
    if trust:
        first.notes.insert(0, checklist_note(first))
        extra["unverified_only"] = True
    plans = [first]
    forbid = {first.gpu.chip}
    # diverse alternatives (issue 34 item 9): the fastest build of each GPU count not shown yet comes first
    # (a 1-GPU build beside a 2-GPU pick), then other chips at the pick's count
    other_counts = sorted((p for _, _, p in found if p is not first and p.gpu_count != first.gpu_count),
                          key=lambda p: (sweep_hours(p, req), p.total_cents_eur))
    for _ in range(alternatives):
        shown = {p.gpu_count for p in plans}
        plan = next((p for p in other_counts if p.gpu_count not in shown and p.gpu.chip not in forbid), None)
        if plan is None:
            _, alt = engine.solve(k, req, forbid_chips=frozenset(forbid), trust=trust)
            if alt is None:
                break
            plan = engine.plan(k, alt)
        plan.trade_offs = trade_offs(plans[0], plan)
        plans.append(plan)
        forbid.add(plan.gpu.chip)
    plans[1:] = sorted(plans[1:], key=lambda p: (sweep_hours(p, req), p.total_cents_eur))  # ranked by the sweep
    return Recommendation(status, plans, None, time.perf_counter() - start, stats(extra), [p for _, _, p in found])
