"""The solver's objective and ranking: what makes one build better than another (set in CP-SAT, and across GPU counts)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.perf.speed import score_units
from planner.request import Request
from planner.solver import quality
from planner.solver.model import Candidates
from planner.solver.plan import SAME_SPEED, Plan


def set_objective(model: cp_model.CpModel, terms: dict[str, Any], parts: dict[str, list[Any]], cands: Candidates,
                  req: Request, mode: str, unverified: Any = None) -> None:
    """Best: sweep speed, then quality points, then cost, as one integer lexicographic sum. Cheapest: cost, then
    quality points at that cost. With `unverified` (the count of parts resting on unknown data, when only such parts
    make a build), fewer of them comes right after speed (best) or cost (cheapest)."""
    big = sum(max((cands.price_cents[p.id] for p in ps), default=0) for ps in parts.values()) * (req.gpu_count or 1) + 1
    q_big = quality.max_points() + 1
    u_big = len(parts) + 1 if unverified is not None else 1
    verified = 0 if unverified is None else len(parts) - unverified
    if mode == "best":
        model.Maximize(terms["score"] * u_big * q_big * big + verified * q_big * big + terms["quality"] * big
                       - terms["price"])
    else:
        model.Minimize(terms["price"] * u_big * q_big - verified * q_big - terms["quality"])


def throughput(plan: Plan, runs: int) -> Fraction:
    """Sweep throughput in per-GPU speed units per round: speed / ceil(runs / GPUs) (runs go in parallel)."""
    per_gpu = score_units(plan.speed, 1)
    return Fraction(per_gpu, -(-runs // plan.gpu_count))


def rank_key(plan: Plan, req: Request) -> tuple:
    """Across GPU counts, the same order the model uses within one: the user's objective first."""
    if req.mode == "best":
        return (throughput(plan, req.runs), plan.quality, -plan.total_cents_eur, -plan.gpu_count, plan.power_fraction)
    return (-plan.total_cents_eur, plan.quality, -plan.gpu_count, plan.power_fraction)


def simpler_key(plan: Plan, req: Request) -> tuple:
    return (-plan.gpu_count, plan.power_fraction, plan.quality, throughput(plan, req.runs), -plan.total_cents_eur)


def pick_across_counts(plans: list[Plan], req: Request) -> tuple[Plan, Optional[str]]:
    """The plan to recommend among the GPU counts tried, and a note when a marginally faster one was passed over."""
    fastest = max(plans, key=lambda p: rank_key(p, req))
    if req.mode != "best":
        return fastest, None
    top = throughput(fastest, req.runs)
    pick = max((p for p in plans if throughput(p, req.runs) >= top * SAME_SPEED), key=lambda p: simpler_key(p, req))
    if pick is fastest:
        return pick, None
    gain = float(top / throughput(pick, req.runs) - 1) * 100
    sooner = f"{gain:.1f} % sooner" if gain >= 0.1 else "less than 0.1 % sooner"
    what = f"{fastest.gpu_count} x {fastest.chip.name}" + (
        f" at {fastest.power_fraction:.0%} power" if fastest.power_fraction < 1 else "")
    return pick, (f"{what} would finish the sweep {sooner}, well inside the speed model's error; this "
                  f"simpler machine ({pick.gpu_count} GPU{'s' if pick.gpu_count > 1 else ''}"
                  f"{'' if pick.power_fraction < 1 else ' at stock power'}) is recommended instead")
