"""Sweep wall time and energy: independent runs spread over GPUs, from baseline hours and a speedup estimate."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from planner.errors import InputError
from planner.settings import MAX_MACHINE_W
from planner.catalog.models import GpuChip

PLATFORM_OVERHEAD_W = 150.0  # estimate: CPU, board, RAM, drives and fans of a training box beside its GPUs


@dataclass(frozen=True)
class Estimate:
    """A point estimate with the range the cross-validated error allows (low <= value <= high), and what it rests
    on (e.g. "model" for the calibrated speed model, "spec estimate" for the datasheet ratio): the one value/low/high
    type of speeds, sweep times and costs."""

    value: float
    low: float
    high: float
    basis: str = ""

    def __float__(self) -> float:
        return float(self.value)

    def scaled(self, factor: float) -> "Estimate":
        return Estimate(self.value * factor, self.low * factor, self.high * factor, self.basis)

    def to_json(self, digits: int = 3) -> dict[str, float]:
        return {"value": round(self.value, digits), "low": round(self.low, digits), "high": round(self.high, digits)}


@dataclass(frozen=True)
class SweepEstimate:
    """Time to finish `runs` independent runs on `gpu_count` GPUs; floats are hours, low/high from the speedup range."""

    runs: int
    gpu_count: int
    baseline_hours: float
    speedup: Estimate
    hours_per_run: float
    hours_per_run_low: float
    hours_per_run_high: float
    waves: int  # rounds of runs: ceil(runs / gpu_count)
    wall_hours: float
    wall_hours_low: float
    wall_hours_high: float
    wall_power_w: Optional[float] = None
    energy_kwh: Optional[float] = None
    energy_kwh_low: Optional[float] = None
    energy_kwh_high: Optional[float] = None
    model_params: Optional[float] = None  # model size the speedup was computed for (given or assumed)
    model_params_source: Optional[str] = None  # "given" or the assumption, for front ends to show beside the time
    runs_per_gpu: int = 1  # runs sharing each GPU at once (planner.perf.concurrency)
    concurrency_gain: float = 1.0  # their aggregate throughput over one run alone

    @property
    def per_run(self) -> Estimate:
        return Estimate(self.hours_per_run, self.hours_per_run_low, self.hours_per_run_high)

    @property
    def wall(self) -> Estimate:
        return Estimate(self.wall_hours, self.wall_hours_low, self.wall_hours_high)

    @property
    def gpu_hours(self) -> float:
        """GPU-hours actually computing (what a per-GPU-hour cloud bill counts when idle GPUs are released)."""
        return self.runs * self.hours_per_run

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "runs": self.runs, "gpu_count": self.gpu_count, "baseline_hours": self.baseline_hours,
            "speedup": self.speedup.to_json(), "waves": self.waves,
            "hours_per_run": Estimate(self.hours_per_run, self.hours_per_run_low, self.hours_per_run_high).to_json(2),
            "wall_hours": Estimate(self.wall_hours, self.wall_hours_low, self.wall_hours_high).to_json(2),
        }
        if self.runs_per_gpu > 1:
            out["runs_per_gpu"] = self.runs_per_gpu
            out["concurrency_gain"] = round(self.concurrency_gain, 3)
        if self.model_params is not None:
            out["model_params"] = self.model_params
            out["model_params_source"] = self.model_params_source
        if self.energy_kwh is not None:
            out["wall_power_w"] = self.wall_power_w
            out["energy_kwh"] = {"value": round(self.energy_kwh, 2), "low": round(self.energy_kwh_low or 0, 2),
                                 "high": round(self.energy_kwh_high or 0, 2)}
        return out


def rounds(runs: int, gpu_count: int) -> int:
    """Rounds of runs on `gpu_count` GPUs: ceil(runs / GPUs) (independent runs do not share a GPU)."""
    return -(-int(runs) // max(1, int(gpu_count)))


def wall_hours(runs: int, baseline_hours: float, speedup: float, gpu_count: int = 1) -> float:
    """The one sweep-time formula: rounds x baseline hours / speedup (what sweep_time and the solver's notes say)."""
    return rounds(runs, gpu_count) * baseline_hours / speedup


def sweep_time(
    runs: int,
    baseline_hours: float,
    speedup: Estimate,
    gpu_count: int = 1,
    *,
    wall_power_w: Optional[float] = None,
    model_params: Optional[float] = None,
    model_params_source: Optional[str] = None,
    runs_per_gpu: int = 1,
    concurrency_gain: float = 1.0,
) -> SweepEstimate:
    """Hours per run = baseline hours / speedup; wall = ceil(runs / GPUs) x hours per run (runs do not share a GPU).

    With `runs_per_gpu` k > 1, k runs share each GPU at `concurrency_gain` g times one run's throughput: each run
    takes k / g times as long, and ceil(runs / (GPUs x k)) rounds of them finish the sweep.

    With `wall_power_w` (the whole machine at the wall while it trains), energy = power x wall time.
    `model_params` / `model_params_source` only travel with the result (the size the speedup assumed).
    """
    if isinstance(runs, bool) or int(runs) != runs or runs < 1:
        raise InputError(f"runs must be a whole number >= 1 (got {runs})")
    if isinstance(gpu_count, bool) or int(gpu_count) != gpu_count or gpu_count < 1:
        raise InputError(f"GPU count must be a whole number >= 1 (got {gpu_count})")
    if not (baseline_hours > 0 and math.isfinite(baseline_hours)):
        raise InputError(f"baseline hours must be a positive number (got {baseline_hours})")
    if not (0 < speedup.low <= speedup.value <= speedup.high):
        raise InputError(f"speedup must satisfy 0 < low <= value <= high (got {speedup})")
    if isinstance(runs_per_gpu, bool) or int(runs_per_gpu) != runs_per_gpu or runs_per_gpu < 1:
        raise InputError(f"runs per GPU must be a whole number >= 1 (got {runs_per_gpu})")
    if not (1.0 <= concurrency_gain <= runs_per_gpu):
        raise InputError(f"the gain of {runs_per_gpu} runs sharing a GPU must be between 1 and {runs_per_gpu} "
                         f"(got {concurrency_gain})")
    runs, gpu_count, k = int(runs), int(gpu_count), int(runs_per_gpu)
    waves = rounds(runs, gpu_count * k)
    share = k / concurrency_gain  # each run's time while k share the card, over its time alone
    per_run = tuple(share * h for h in (baseline_hours / speedup.value, baseline_hours / speedup.high,
                                        baseline_hours / speedup.low))
    wall = tuple(waves * h for h in per_run)
    energy: tuple[Optional[float], ...] = (None, None, None)
    if wall_power_w is not None:
        energy = tuple(energy_kwh(wall_power_w, h) for h in wall)
    return SweepEstimate(
        runs=runs, gpu_count=gpu_count, baseline_hours=float(baseline_hours), speedup=speedup,
        hours_per_run=per_run[0], hours_per_run_low=per_run[1], hours_per_run_high=per_run[2], waves=waves,
        wall_hours=wall[0], wall_hours_low=wall[1], wall_hours_high=wall[2],
        wall_power_w=None if wall_power_w is None else float(wall_power_w),
        energy_kwh=energy[0], energy_kwh_low=energy[1], energy_kwh_high=energy[2],
        model_params=None if model_params is None else float(model_params), model_params_source=model_params_source,
        runs_per_gpu=k, concurrency_gain=float(concurrency_gain),
    )


def energy_kwh(wall_power_w: float, hours: float) -> float:
    """kWh drawn by a machine at `wall_power_w` for `hours` (the caller decides what the power includes)."""
    if not (0 < wall_power_w <= MAX_MACHINE_W and math.isfinite(wall_power_w)):
        raise InputError(f"wall power must be a positive number of watts up to {MAX_MACHINE_W} (got {wall_power_w:g})")
    if hours < 0:
        raise InputError(f"hours must be >= 0 (got {hours})")
    return wall_power_w * hours / 1000.0


def estimated_wall_power_w(chip: GpuChip, gpu_count: int = 1, power_fraction: float = 1.0) -> float:
    """Estimate when no plan gives one: board power x power limit x GPUs + 150 W for the rest of the machine."""
    return chip.tdp_w * power_fraction * gpu_count + PLATFORM_OVERHEAD_W
