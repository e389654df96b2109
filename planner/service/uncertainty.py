"""Decisions that hold under uncertainty: builds whose sweep ranges overlap shown side by side with what would
decide between them, and a sweep deadline kept at the slow end of the range (post-processing of the solver's plans)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Callable, Optional

from planner.errors import InputError
from planner.money import format_money
from planner.perf.planned_sweep import plan_sweep
from planner.perf.sweep import Estimate, sweep_time
from planner.request import Request
from planner.settings import MAX_GPUS

if TYPE_CHECKING:
    from planner.service.answer import SideBySide

_COUNT = re.compile(r"^\s*(\d+)\s*[x×]\s*(.+)$", re.IGNORECASE)
Solve = Callable[[Request], Any]  # Request -> planner.solver.Recommendation


def sweep_range(plan: Any, req: Request) -> Estimate:
    """Wall hours of the runs still to do on a plan, as planned (runs per GPU, waves: planner.perf.planned_sweep,
    the figure the solver ranks on): estimate, fast end (low) and slow end (high)."""
    return plan_sweep(plan, req).wall


def overlap(a: Estimate, b: Estimate) -> bool:
    return a.low <= b.high and b.low <= a.high


# ---------------------------------------------------------------- deadline at the slow end

def deadline_at_slow_end(rec: Any, req: Request, solve: Solve) -> Any:
    """One rule for --deadline-hours H, whatever the GPU count: the build must meet H at the slow end of its sweep's
    range (the solver holds each card's slow-end sweep to H, exactly); when no build does, the build meeting H at the
    estimate stays, with a note saying so. The cheapest (or fastest) build meeting H only at the estimate is kept on
    the answer (`at_estimate`), so the side-by-side shows both."""
    if req.deadline_hours is None or not rec.plans:
        return rec
    h, first = req.deadline_hours, rec.plans[0]
    est = sweep_range(first, req)
    if est.high <= h * (1 + 1e-9):
        first.notes.append(f"meets the {h:g} h deadline at the slow end of the speed range ({est.high:.1f} h)")
        return rec
    slow = solve(req.model_copy(update={"deadline_at": "slow end"}))
    if not slow.plans:
        first.notes.append(f"meets {h:g} h at the estimate ({est.value:.1f} h), misses it at the slow end "
                           f"({est.high:.1f} h): no build in the catalog meets it at the slow end within the other "
                           "requirements; a measurement of your script (planner calibrate) narrows the range")
        return rec
    plan = slow.plans[0]
    mine = sweep_range(plan, req)
    plan.notes.append(f"meets the {h:g} h deadline at the slow end of the speed range ({mine.high:.1f} h); the "
                      f"{'cheaper' if plan.total > first.total else 'other'} {first.gpu_count} x {first.gpu_name} "
                      f"({format_money(first.total, first.currency)}) meets it only at the estimate ({est.value:.1f} h, slow end "
                      f"{est.high:.1f} h): both are side by side")
    slow.at_estimate = first
    return slow


# ---------------------------------------------------------------- side by side

def target_request(catalog: Any, req: Request, target: str) -> tuple[Request, str]:
    """The request restricted to the user's target card ('RTX 5090', '2x RTX 5090'): every other GPU chip left out."""
    from planner.perf.model import load_perf_model

    match = _COUNT.match(target)
    count, name = (int(match.group(1)), match.group(2).strip()) if match else (1, target.strip())
    if not 1 <= count <= MAX_GPUS:
        raise InputError(f"--target: 1 to {MAX_GPUS} GPUs (got {count})")
    chip = load_perf_model().resolve(name)
    cards = [g for g in catalog.by_category("gpu") if g.chip == chip.id]
    if not cards:
        raise InputError(f"--target: the catalog sells no {chip.name} card")
    others = tuple(g.id for g in catalog.by_category("gpu") if g.chip != chip.id)
    label = f"{count} x {chip.name}" if count > 1 else chip.name
    return req.model_copy(update={"excluded": tuple(dict.fromkeys((*req.excluded, *others))), "gpu_count": count,
                                  "alternatives": 0}), label


def _shared(plan: Any, req: Request) -> dict[str, Any]:
    """How many runs share each GPU in the planned sweep, when several do (their gain measured or estimated)."""
    from planner.service.answer import sharing_of

    shared = sharing_of(plan, req)
    return {"runs_sharing_each_gpu": shared} if shared else {}


def _best(plans: list[Any], req: Request) -> Optional[Any]:
    return min(plans, key=lambda p: (sweep_range(p, req).value, p.total)) if plans else None


def side_by_side(rec: Any, req: Request, target: Optional[tuple[Any, str]] = None) -> Optional[SideBySide]:
    """The recommended build beside the best 1-GPU and best multi-GPU builds whose sweep ranges overlap its range,
    and the user's target (`target` = (its plan or None, label)); None when nothing is close enough to show."""
    if not rec.plans:
        return None
    first = rec.plans[0]
    tried = list(getattr(rec, "by_count", []) or [])
    same = lambda p: p is first or (p.chip.id, p.gpu_count, p.total) == (first.chip.id, first.gpu_count, first.total)  # noqa: E731
    entries: list[list[Any]] = [["recommended", first]]
    for role, plans in (("best 1-GPU", [p for p in tried if p.gpu_count == 1]),
                        ("best multi-GPU", [p for p in tried if p.gpu_count > 1])):
        best = _best(plans, req)
        if best is not None and not same(best) and overlap(sweep_range(best, req), sweep_range(first, req)):
            entries.append([role, best])
    at_estimate = getattr(rec, "at_estimate", None)
    if at_estimate is not None and req.deadline_hours is not None:
        entries[0][0] += f", meets {req.deadline_hours:g} h at the slow end"
        entries.append([f"meets {req.deadline_hours:g} h only at the estimate", at_estimate])
    missing = None
    if target is not None:
        plan, label = target
        hit = None if plan is None else next(
            (e for e in entries if e[1].chip.id == plan.chip.id and e[1].gpu_count == plan.gpu_count), None)
        if plan is None:
            missing = f"your target ({label}): no build with it fits the budget and rules"
        elif hit is None:
            entries.append([f"your target ({label})", plan])
        else:
            hit[0] += f", your target ({label})"
    if len(entries) < 2 and missing is None:
        return None
    from planner.service.answer import SideBySide, summarize

    return SideBySide(
        builds=[summarize(p, req, role, parts=True) for role, p in entries],
        too_close_to_call=len(entries) > 1 and all(overlap(sweep_range(p, req), sweep_range(first, req))
                                                   for _, p in entries),
        what_would_decide=what_would_decide([p for _, p in entries], req), target_missing=missing)


MEASUREMENT = "a measurement: "


def measurement_sentence(modelled: list[str], rented: Optional[dict[str, tuple[Optional[str], bool]]] = None) -> str:
    """Which cards to rent for 30 minutes to measure the modelled ones. `rented` (from try before you buy) maps
    each card to the card a dated rental offers (None: no rental at all) and whether it is that card itself, so
    both sections name the same rentable card."""
    tail = ", then `planner calibrate LOG --gpu NAME`, replaces the model's range with your numbers"
    if rented is None:
        return MEASUREMENT + "30 minutes of your own script on a rented " + " and a ".join(modelled) + tail
    rent: dict[str, list[str]] = {}
    none: list[str] = []
    for name in modelled:
        card, _exact = rented.get(name, (None, False))
        if card is None:
            none.append(name)
        else:
            rent.setdefault(card, []).append(name)
    bits = []
    for card, names in rent.items():
        others = [n for n in names if n != card]
        bits.append(card + (f" (it stands in for the {' and '.join(others)}: no dated rental of "
                            f"{'it' if len(others) == 1 else 'them'}; the model re-anchors "
                            f"{'it' if len(others) == 1 else 'them'} on your measurement)" if others else ""))
    out = MEASUREMENT + ("30 minutes of your own script on a rented " + " and a ".join(bits) + tail if bits else
                         "none can be rented from the dated price list; calibrate a log of a card you can run")
    if none and bits:
        out += f"; no dated rental of the {' or '.join(none)} or a card like it"
    return out


def what_would_decide(plans: list[Any], req: Request) -> list[str]:
    """Plain sentences: which measurement, VRAM headroom, one run's time and simplicity tell the builds apart."""
    if len(plans) < 2:
        return []
    out = []
    modelled = sorted({p.chip.name for p in plans if p.speed.basis not in ("measured",)})
    if modelled:
        out.append(measurement_sentence(modelled))
    vram = {p.gpu_name: p.gpu.vram_gb for p in plans}
    if len(set(vram.values())) > 1:
        big = max(vram, key=vram.__getitem__)
        out.append(f"VRAM headroom: {big} has {vram[big]:g} GB per GPU against "
                   + ", ".join(f"{v:g} GB ({k})" for k, v in vram.items() if k != big)
                   + "; independent runs do not pool VRAM across GPUs, so the largest model or batch you can grow "
                     "into is set per card")
    from planner.service.sweep_report import hours_text

    per_run = {f"{p.gpu_count} x {p.gpu_name}": plan_sweep(p, req).sweep.hours_per_run for p in plans}
    if max(per_run.values()) > 1.1 * min(per_run.values()):
        out.append("one run's time: " + ", ".join(f"{hours_text(v)} per run on {k}" for k, v in per_run.items())
                   + " (the first result arrives sooner on the faster card, whatever the sweep total)")
    shared = [(p, _shared(p, req).get("runs_sharing_each_gpu")) for p in plans]
    for p, sh in shared:
        if sh:
            out.append(f"several runs per GPU: the sweep on {p.gpu_count} x {p.gpu_name} counts {sh['runs_per_gpu']} "
                       f"of your runs on each card at once ({sh['gain']:.2f}x one run, "
                       f"{'measured' if sh['gain_basis'].startswith('measured') else 'an estimate'}): about "
                       f"{sh['wall_hours']['value']:.1f} h against {sh['one_run_per_gpu_hours']['value']:.1f} h with "
                       "one run per GPU; measure it with planner calibrate --concurrent K")
    out.extend(gain_could_reverse(plans, req))
    counts = sorted({p.gpu_count for p in plans})
    if len(counts) > 1:
        out.append("simplicity: one GPU means a smaller PSU, no multi-GPU airflow or slot spacing, one card to "
                   "resell; several GPUs finish a sweep in waves and lose their edge when runs do not divide evenly")
    return out


def gain_could_reverse(plans: list[Any], req: Request) -> list[str]:
    """Where the headline (plans[0]) rests on an estimated gain of runs sharing a card, or another build would pass it
    with a better one: the measurement that could reverse the order, said as such (issue 32, item 2)."""
    first, out = plans[0], []
    mine = plan_sweep(first, req)
    for other in plans[1:]:
        theirs = plan_sweep(other, req)
        name = lambda p: f"{p.gpu_count} x {p.gpu_name}"  # noqa: E731
        if mine.estimated_gain:
            worst = plan_sweep(first, req, gain=1.0).wall.value
            if worst > theirs.wall.value:
                k = mine.sharing.runs_per_gpu  # type: ignore[union-attr]
                out.append(f"the recommendation rests on an estimated gain: {k} runs sharing each {first.gpu_name} "
                           f"at {mine.sharing.gain:.2f}x one run; if they gained nothing its sweep would take "  # type: ignore[union-attr]
                           f"{worst:.1f} h, slower than {name(other)} ({theirs.wall.value:.1f} h): measure it "
                           f"before buying (planner calibrate LOG --gpu '{first.chip.name}' --concurrent {k})")
        if theirs.estimated_gain:
            k = theirs.sharing.runs_per_gpu  # type: ignore[union-attr]
            best = plan_sweep(other, req, gain=float(k)).wall.value
            if best < mine.wall.value:
                out.append(f"{name(other)} rests on an estimated gain of {theirs.sharing.gain:.2f}x for {k} runs "  # type: ignore[union-attr]
                           f"sharing a card; at up to {k:.0f}x (runs that barely slow each other) its sweep would take "
                           f"{best:.1f} h, sooner than the recommendation's {mine.wall.value:.1f} h: a measurement "
                           f"(planner calibrate --concurrent {k}) could reverse the order")
    return out
