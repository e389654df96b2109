"""The sweep a build finishes, defined once: runs per GPU within VRAM, their gain, waves of runs (solver, notes, answer).

The solver ranks builds on it, the notes quote it and every answer shows it, so the headline cannot contradict the
page (issue 32, item 2). Runs share a card only for a model of known size (given, or the stored workload profile):
with the typical size assumed, one run per GPU, as the answer says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from planner.perf.concurrency import Concurrency, plan_concurrency
from planner.perf.sweep import Estimate, SweepEstimate, sweep_time

# Integer sweep units for the solver: thousandths of one baseline run (7 h on the GTX 1080 Ti -> 25 s a unit, far
# below the 3 % the speed model can tell apart; 10 000 runs on the slowest card stay well inside int64 products).
UNITS_PER_BASELINE_RUN = 1000


@dataclass(frozen=True)
class PlannedSweep:
    """The sweep on `gpu_count` cards with `sharing` (None: one run per GPU) runs per card at once."""

    sweep: SweepEstimate
    sharing: Optional[Concurrency]

    @property
    def wall(self) -> Estimate:
        return self.sweep.wall

    @property
    def estimated_gain(self) -> bool:
        """The figure rests on an estimated (not measured) gain of several runs sharing a card."""
        return self.sharing is not None and not self.sharing.gain_basis.startswith("measured")


_MEMO: dict[tuple, Optional[Concurrency]] = {}


def sharing(chip: Any, vram_gb: float, *, precision: str, model_params: Optional[float],
            run_vram_gib: Optional[float] = None) -> Optional[Concurrency]:
    """Runs sharing one card of this chip and VRAM (2 or more, with their gain), or None for one run per GPU."""
    if model_params is None:
        return None
    from planner.perf.calibration import concurrency_gain, fingerprint

    key = (chip.id, float(vram_gb), precision, float(model_params), run_vram_gib, fingerprint())
    if key not in _MEMO:
        c = plan_concurrency(float(vram_gb), float(model_params), precision=precision, per_run_gib=run_vram_gib,
                             measured=concurrency_gain(chip, precision))
        _MEMO[key] = c if c.runs_per_gpu >= 2 else None
    return _MEMO[key]


def planned_sweep(chip: Any, vram_gb: float, gpu_count: int, speed: Estimate, *, runs: int, baseline_hours: float,
                  precision: str, model_params: Optional[float], run_vram_gib: Optional[float] = None,
                  gain: Optional[float] = None) -> PlannedSweep:
    """Wall hours of `runs` runs on `gpu_count` cards at `speed` (one run's speedup over the GTX 1080 Ti), with as
    many runs per card as fit its VRAM and add throughput. `gain` replaces the sharing gain (what if a measurement
    found 1.0x)."""
    share = sharing(chip, vram_gb, precision=precision, model_params=model_params, run_vram_gib=run_vram_gib)
    speed = Estimate(speed.value, min(speed.low, speed.value), max(speed.high, speed.value), speed.basis)
    k = share.runs_per_gpu if share else 1
    g = (share.gain if share else 1.0) if gain is None else max(1.0, min(float(gain), k))
    return PlannedSweep(sweep_time(runs, baseline_hours, speed, max(1, gpu_count), runs_per_gpu=k,
                                   concurrency_gain=g), share)


def sweep_units(ps: PlannedSweep) -> int:
    """The solver's integer for a sweep's estimate (lower is faster): thousandths of one baseline run."""
    return max(1, round(UNITS_PER_BASELINE_RUN * ps.sweep.wall_hours / ps.sweep.baseline_hours))


def sweep_units_high(ps: PlannedSweep) -> int:
    """The same for the slow end of the sweep's range (the deadline held at the slow end)."""
    return max(1, round(UNITS_PER_BASELINE_RUN * ps.sweep.wall_hours_high / ps.sweep.baseline_hours))


def deadline_units(deadline_hours: float, baseline_hours: float) -> int:
    """A deadline in the same units (rounded down: a sweep meeting it in units meets it in hours, to the unit)."""
    return int(UNITS_PER_BASELINE_RUN * deadline_hours / baseline_hours)


def plan_sweep(plan: Any, req: Any, runs: Optional[int] = None, gain: Optional[float] = None) -> PlannedSweep:
    """The sweep of a solver plan (its chip, card VRAM, GPU count, speed) for a Request's work: the runs still to do
    (all of them unless runs_left), or `runs`."""
    return planned_sweep(plan.chip, float(plan.gpu.vram_gb), plan.gpu_count, plan.speed,
                         runs=runs or req.runs_left or req.runs, baseline_hours=req.baseline_hours,
                         precision=req.precision, model_params=req.model_params,
                         run_vram_gib=getattr(req, "run_vram_gb", None), gain=gain)
