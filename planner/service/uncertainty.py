"""Decisions that hold under uncertainty: builds whose sweep ranges overlap shown side by side with what would
decide between them, and a sweep deadline kept at the slow end of the range (post-processing of the solver's plans)."""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

from planner.errors import InputError
from planner.perf.sweep import Estimate, sweep_time
from planner.request import Request
from planner.service.answer import SideBySide, summarize

_COUNT = re.compile(r"^\s*(\d+)\s*[x×]\s*(.+)$", re.IGNORECASE)
Solve = Callable[[Request], Any]  # Request -> planner.solver.Recommendation


def sweep_range(plan: Any, req: Request) -> Estimate:
    """Wall hours of the runs still to do on a plan: estimate, fast end (low) and slow end (high)."""
    return sweep_time(req.runs_left or req.runs, req.baseline_hours, plan.speed, plan.gpu_count).wall


def overlap(a: Estimate, b: Estimate) -> bool:
    return a.low <= b.high and b.low <= a.high


# ---------------------------------------------------------------- deadline at the slow end

def deadline_at_slow_end(rec: Any, req: Request, solve: Solve, tries: int = 4) -> Any:
    """A plan meeting --deadline-hours H at its slow end, re-solving with a tighter deadline where the first plan
    meets H only at the estimate; when none does, the plan is kept with a note saying so."""
    if req.deadline_hours is None or not rec.plans:
        return rec
    h = req.deadline_hours
    first = rec.plans[0]
    current, tight = rec, h
    for _ in range(tries):
        plan = current.plans[0]
        slow = sweep_range(plan, req).high
        if slow <= h * (1 + 1e-9):
            if current is not rec:
                plan.notes.append(f"meets the {h:g} h deadline at the slow end of the speed range ({slow:.1f} h); "
                                  f"the cheaper {first.gpu_count} x {first.chip.name} met it only at the estimate "
                                  f"({sweep_range(first, req).value:.1f} h, slow end "
                                  f"{sweep_range(first, req).high:.1f} h)")
            else:
                plan.notes.append(f"meets the {h:g} h deadline at the slow end of the speed range ({slow:.1f} h)")
            return current
        tight = tight * h / slow * 0.995  # what this plan's range says the estimate must reach (a hair under)
        nxt = solve(req.model_copy(update={"deadline_hours": max(tight, 1 / 60)}))
        if not nxt.plans:
            break
        current = nxt
    est = sweep_range(first, req)
    first.notes.append(f"meets {h:g} h at the estimate ({est.value:.1f} h), misses it at the slow end "
                       f"({est.high:.1f} h): no build in the catalog meets it at the slow end within the other "
                       "requirements; a measurement of your script (planner calibrate) narrows the range")
    return rec


# ---------------------------------------------------------------- side by side

def target_request(catalog: Any, req: Request, target: str) -> tuple[Request, str]:
    """The request restricted to the user's target card ('RTX 5090', '2x RTX 5090'): every other GPU chip left out."""
    from planner.perf.model import load_perf_model

    match = _COUNT.match(target)
    count, name = (int(match.group(1)), match.group(2).strip()) if match else (1, target.strip())
    if not 1 <= count <= 4:
        raise InputError(f"--target: 1 to 4 GPUs (got {count})")
    chip = load_perf_model().resolve(name)
    cards = [g for g in catalog.by_category("gpu") if g.chip == chip.id]
    if not cards:
        raise InputError(f"--target: the catalog sells no {chip.name} card")
    others = tuple(g.id for g in catalog.by_category("gpu") if g.chip != chip.id)
    label = f"{count} x {chip.name}" if count > 1 else chip.name
    return req.model_copy(update={"excluded": tuple(dict.fromkeys((*req.excluded, *others))), "gpu_count": count,
                                  "alternatives": 0}), label


def _shared(plan: Any, req: Request) -> dict[str, Any]:
    """The sweep with several runs per GPU where the user's model fits the card several times (sweep_report)."""
    from planner.service.sweep_report import shared_sweep

    shared = shared_sweep(plan.chip.id, plan.gpu_count, float(plan.gpu.vram_gb), plan.speed,
                          runs=req.runs_left or req.runs, baseline_hours=req.baseline_hours, precision=req.precision,
                          model_params=req.model_params)
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
    return SideBySide(
        builds=[summarize(p, req, role, shared=True) for role, p in entries],
        too_close_to_call=len(entries) > 1 and all(overlap(sweep_range(p, req), sweep_range(first, req))
                                                   for _, p in entries),
        what_would_decide=what_would_decide([p for _, p in entries], req), target_missing=missing)


def what_would_decide(plans: list[Any], req: Request) -> list[str]:
    """Plain sentences: which measurement, VRAM headroom, one run's time and simplicity tell the builds apart."""
    if len(plans) < 2:
        return []
    out = []
    modelled = sorted({p.chip.name for p in plans if p.speed.basis not in ("measured",)})
    if modelled:
        out.append("a measurement: 30 minutes of your own script on a rented " + " and a ".join(modelled)
                   + ", then `planner calibrate LOG --gpu NAME`, replaces the model's range with your numbers")
    vram = {p.chip.name: p.gpu.vram_gb for p in plans}
    if len(set(vram.values())) > 1:
        big = max(vram, key=vram.__getitem__)
        out.append(f"VRAM headroom: {big} has {vram[big]:g} GB per GPU against "
                   + ", ".join(f"{v:g} GB ({k})" for k, v in vram.items() if k != big)
                   + "; independent runs do not pool VRAM across GPUs, so the largest model or batch you can grow "
                     "into is set per card")
    per_run = {f"{p.gpu_count} x {p.chip.name}": req.baseline_hours / p.speed.value for p in plans}
    if max(per_run.values()) > 1.1 * min(per_run.values()):
        out.append("one run's time: " + ", ".join(f"{v:.1f} h per run on {k}" for k, v in per_run.items())
                   + " (the first result arrives sooner on the faster card, whatever the sweep total)")
    shared = [(p, _shared(p, req).get("runs_sharing_each_gpu")) for p in plans]
    for p, sh in shared:
        if sh:
            out.append(f"several runs per GPU: {p.chip.name} holds {sh['runs_per_gpu']} of your runs at once "
                       f"({sh['gain']:.2f}x one run, {'measured' if sh['gain_basis'].startswith('measured') else 'an estimate'}"
                       f"): the sweep in about {sh['wall_hours']['value']:.1f} h; measure it with planner calibrate "
                       "--concurrent K")
    counts = sorted({p.gpu_count for p in plans})
    if len(counts) > 1:
        out.append("simplicity: one GPU means a smaller PSU, no multi-GPU airflow or slot spacing, one card to "
                   "resell; several GPUs finish a sweep in waves and lose their edge when runs do not divide evenly")
    return out
