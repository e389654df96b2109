"""The solver's objective and ranking: what makes one build better than another (set in CP-SAT, and across GPU counts)."""

from __future__ import annotations

from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.perf.planned_sweep import plan_sweep, sweep_units
from planner.request import Request
from planner.solver import quality
from planner.solver.model import Candidates
from planner.solver.plan import SAME_SPEED, Plan, shown


def set_objective(model: cp_model.CpModel, terms: dict[str, Any], parts: dict[str, list[Any]], cands: Candidates,
                  req: Request, mode: str, unverified: Any = None) -> None:
    """Best: the sweep the answer shows (planner.perf.planned_sweep: runs per GPU within VRAM, their gain, waves;
    one constant per card once the option fixes the GPU count), then quality points, then cost, as one integer
    lexicographic sum. Cheapest: cost, then quality points at that cost. With `unverified` (the count of parts
    resting on unknown data, when only such parts make a build), fewer of them comes right after the sweep (best) or
    cost (cheapest)."""
    big = sum(max((cands.price_cents[p.id] for p in ps), default=0) for ps in parts.values()) * (req.gpu_count or 1) + 1
    q_big = quality.max_points() + 1
    u_big = len(parts) + 1 if unverified is not None else 1
    verified = 0 if unverified is None else len(parts) - unverified
    if mode == "best":
        model.Maximize(-terms["sweep"] * u_big * q_big * big + verified * q_big * big + terms["quality"] * big
                       - terms["price"])
    else:
        model.Minimize(terms["price"] * u_big * q_big - verified * q_big - terms["quality"])


def sweep_hours(plan: Plan, req: Request) -> float:
    """The planned sweep's estimate in hours (the runs still to do): the figure every ranking here uses."""
    return plan_sweep(plan, req).sweep.wall_hours


def rank_key(plan: Plan, req: Request) -> tuple:
    """Across GPU counts, the same order the model uses within one: the user's objective first."""
    if req.mode == "best":
        return (-sweep_units(plan_sweep(plan, req)), plan.quality, -plan.total_cents_eur, -plan.gpu_count,
                plan.power_fraction)
    return (-plan.total_cents_eur, plan.quality, -plan.gpu_count, plan.power_fraction)


def simpler_key(plan: Plan, req: Request) -> tuple:
    return (-plan.gpu_count, plan.power_fraction, plan.quality, -sweep_hours(plan, req), -plan.total_cents_eur)


def same_speed(hours: float, fastest: float) -> bool:
    """A sweep within the speed model's 3 % of the fastest finishes with it, as far as the model can tell; so does
    one the answer shows as the same hours (1.47 h and 1.53 h both read 1.5 h): a headline dearer and more complex
    than a build its own side table shows as fast would contradict the page."""
    return hours * float(SAME_SPEED) <= fastest or shown(hours) == shown(fastest)


def pick_across_counts(plans: list[Plan], req: Request) -> tuple[Plan, Optional[str]]:
    """The plan to recommend among the GPU counts tried, and a note when a marginally faster one was passed over."""
    fastest = max(plans, key=lambda p: rank_key(p, req))
    if req.mode != "best":
        return fastest, None
    top = sweep_hours(fastest, req)
    pick = max((p for p in plans if same_speed(sweep_hours(p, req), top)), key=lambda p: simpler_key(p, req))
    if pick is fastest:
        return pick, None
    gain = (sweep_hours(pick, req) / top - 1) * 100
    sooner = f"{gain:.1f} % sooner" if gain >= 0.1 else "less than 0.1 % sooner"
    what = f"{fastest.gpu_count} x {fastest.gpu_name}" + (
        f" at {fastest.power_fraction:.0%} power" if fastest.power_fraction < 1 else "")
    return pick, (f"{what} would finish the sweep {sooner}, well inside the speed model's error; this "
                  f"simpler machine ({pick.gpu_count} GPU{'s' if pick.gpu_count > 1 else ''}"
                  f"{'' if pick.power_fraction < 1 else ' at stock power'}) is recommended instead")
