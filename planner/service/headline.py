"""The headline rule: no build an answer shows beats its headline on the user's own objective (issue 32, item 2).

"Fastest within budget": no build shown in the same answer (alternatives, the best of each GPU count and power
limit tried, the user's target) and within the budget sweeps sooner than the headline at both the estimate and the
slow end, beyond the 3 % the speed model cannot tell apart. "Cheapest meeting targets": no shown build that meets
them (the deadline judged at the end the headline meets it: the slow end when it does, else the estimate) costs
less. Sweeps are the planned ones (planner.perf.planned_sweep), the figures the answer prints.

`violations` judges a solver Recommendation (before the answer is written); `answer_violations` judges the typed
Answer itself, on the BuildSummary of every list of builds it shows (plans, side by side, GPU counts tried,
try before you buy): what the user reads.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional

from planner.perf.planned_sweep import plan_sweep
from planner.request import Request
from planner.solver.plan import SAME_SPEED


def shown_plans(rec: Any, target: Optional[Any] = None) -> list[Any]:
    """Every build an answer shows beside its headline: alternatives, the best per GPU count tried, the target."""
    seen, out = set(), []
    for p in [*rec.plans[1:], *(getattr(rec, "by_count", None) or []), getattr(rec, "at_estimate", None),
              *([target] if target is not None else [])]:
        if p is not None and id(p) not in seen and p is not rec.plans[0]:
            seen.add(id(p))
            out.append(p)
    return out


def _name(p: Any) -> str:
    return f"{p.gpu_count} x {p.gpu_name}" + (f" at {p.power_fraction:.0%}" if p.power_fraction < 1 else "")


def violations(rec: Any, req: Request, others: Iterable[Any]) -> list[str]:
    """Sentences naming each shown build that beats the headline on the request's objective (empty: the rule holds)."""
    if not rec.plans:
        return []
    head = rec.plans[0]
    mine = plan_sweep(head, req).wall
    out = []
    if req.mode == "best":
        for p in others:
            if req.budget is not None and p.currency == req.currency and p.total > req.budget:
                continue
            theirs = plan_sweep(p, req).wall
            if theirs.value < mine.value * float(SAME_SPEED) and theirs.high < mine.high * float(SAME_SPEED):
                out.append(f"{_name(p)} ({p.total}) sweeps in {theirs.value:.2f} h (slow end {theirs.high:.2f} h), "
                           f"sooner than the headline {_name(head)} ({mine.value:.2f} h, slow end {mine.high:.2f} h)")
        return out
    end = "high" if req.deadline_hours is None or mine.high <= req.deadline_hours * (1 + 1e-9) else "value"
    for p in others:
        wall = plan_sweep(p, req).wall
        meets = (req.deadline_hours is None or getattr(wall, end) <= req.deadline_hours * (1 + 1e-9)) and (
            not req.min_speedup or p.speed.value >= req.min_speedup - 1e-9) and (
            not req.min_vram_gb or p.gpu.vram_gb >= req.min_vram_gb)
        if meets and p.currency == head.currency and p.total < head.total:
            out.append(f"{_name(p)} meets the targets for {p.total}, less than the headline {_name(head)} "
                       f"({head.total})")
    return out


def _label(b: Any) -> str:
    return f"{b.gpu.count} x {b.gpu.name}" + (f" at {b.power_limit:.0%}" if b.power_limit < 1 else "")


def answer_violations(answer: Any) -> list[str]:
    """The rule on a typed Answer (planner.service.answer): sentences naming each build it shows that beats its
    headline (plans[0]) on the request's objective, read from the BuildSummaries (empty: the rule holds)."""
    if not answer.plans:
        return []
    req, head = answer.request, answer.plans[0].summary
    others = [b for b in answer.builds() if b.key != head.key]
    same = float(SAME_SPEED)
    out = []
    if req.mode == "best":
        for b in others:
            if req.budget is not None and b.total.currency == req.currency and b.total.amount > req.budget:
                continue
            if b.sweep_hours < head.sweep_hours * same and b.sweep_hours_high < head.sweep_hours_high * same:
                out.append(f"{_label(b)} ({b.total.amount}) sweeps in {b.sweep_hours:.2f} h (slow end "
                           f"{b.sweep_hours_high:.2f} h), sooner than the headline {_label(head)} "
                           f"({head.sweep_hours:.2f} h, slow end {head.sweep_hours_high:.2f} h)")
        return out
    slack = 0.005  # the summaries' hours are rounded to the hundredth
    at = lambda b, end: b.sweep_hours_high if end == "high" else b.sweep_hours  # noqa: E731
    end = "high" if req.deadline_hours is None or head.sweep_hours_high <= req.deadline_hours + slack else "value"
    for b in others:
        meets = (req.deadline_hours is None or at(b, end) <= req.deadline_hours - slack) and (
            not req.min_speedup or b.speedup >= req.min_speedup - 1e-9) and (
            not req.min_vram_gb or b.gpu.vram_gb >= req.min_vram_gb)
        if meets and b.total.currency == head.total.currency and b.total.amount < head.total.amount:
            out.append(f"{_label(b)} meets the targets for {b.total.amount}, less than the headline {_label(head)} "
                       f"({head.total.amount})")
    return out
