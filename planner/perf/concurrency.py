"""Several runs per GPU: how many of the user's runs fit one card's VRAM side by side, and what they gain together.

A small model leaves most of a large card idle (kernel launches, optimizer steps and the input pipeline dominate), so
independent seeds can share it. The aggregate gain is an estimate until the user measures it: `planner calibrate LOG
--gpu NAME --concurrent K` with a log of one of K runs that shared the card, beside a log of the card alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

from planner.errors import InputError

MAX_RUNS_PER_GPU = 4
VRAM_HEADROOM = 0.9  # keep 10 % of the card free: allocator growth, a second CUDA context, the desktop
BASELINE_VRAM_GB = 11.0  # GTX 1080 Ti: a run that trains there needs at most this much
GAIN_SOURCE = ("estimate (judgment, kept below the measured collocation gains of Robroek, Yousefzadeh-Asl-Miandoab "
               "and Tozun, 'An Analysis of Collocation on GPUs for Deep Learning Training', arXiv:2209.06018: up to "
               "3-4x aggregate for small models on an A100); measure yours with planner calibrate --concurrent K")
# Aggregate throughput of k runs sharing a card, over one run alone, by model size (trainable parameters).
GAIN_TABLE: tuple[tuple[float, dict[int, float]], ...] = (
    (3e7, {1: 1.0, 2: 1.5, 3: 1.8, 4: 2.0}),  # small: one run leaves most of the card idle
    (3e8, {1: 1.0, 2: 1.2, 3: 1.2, 4: 1.2}),  # mid-size: a second run fills the gaps, more only queue
    (math.inf, {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0}),  # large: one run keeps the card busy
)


@dataclass(frozen=True)
class Concurrency:
    """Runs sharing one GPU and their aggregate throughput gain over one run alone."""

    runs_per_gpu: int
    gain: float
    per_run_gib: float
    per_run_source: str
    gain_basis: str  # "measured: ..." or the estimate's source

    @property
    def per_run_speed_share(self) -> float:
        """Each run's speed while sharing, over its speed alone."""
        return self.gain / self.runs_per_gpu

    def to_json(self) -> dict[str, Any]:
        return {"runs_per_gpu": self.runs_per_gpu, "gain": round(self.gain, 3),
                "per_run_vram_gib": round(self.per_run_gib, 2), "per_run_vram_source": self.per_run_source,
                "gain_basis": self.gain_basis}


def estimated_gain(model_params: float, k: int) -> float:
    if k < 1:
        raise InputError(f"runs per GPU must be >= 1 (got {k})")
    table = next(t for limit, t in GAIN_TABLE if model_params < limit)
    return table[min(k, MAX_RUNS_PER_GPU)]


def per_run_memory(model_params: float, precision: str, per_run_gib: Optional[float]) -> tuple[float, str]:
    """One run's VRAM: given (measured with nvidia-smi), else what fits the GTX 1080 Ti it trains on today."""
    if per_run_gib is not None:
        if not (per_run_gib > 0 and math.isfinite(per_run_gib)):
            raise InputError(f"VRAM per run must be a positive number of GiB (got {per_run_gib})")
        return float(per_run_gib), "given"
    from planner.perf.memfit import ModelShape, estimate_memory

    floor = estimate_memory(ModelShape(params=model_params, precision=precision), []).total_gib
    if floor >= BASELINE_VRAM_GB:
        return floor, "estimate: weights, gradients and AdamW states (planner memfit)"
    return BASELINE_VRAM_GB, ("assumed: a run takes up to the GTX 1080 Ti's 11 GB it trains on today (give "
                              "--run-vram-gb from nvidia-smi for a tighter packing)")


def plan_concurrency(vram_gb: float, model_params: float, *, precision: str = "amp",
                     per_run_gib: Optional[float] = None, measured: Optional[tuple[int, float, str]] = None,
                     runs_per_gpu: Optional[int] = None) -> Concurrency:
    """How many runs to put on one card of `vram_gb`: as many as fit (at most 4), but no more than add throughput.

    `measured` = (K, gain, label) from the user's calibration replaces the estimate for K runs (and caps the plan at K:
    beyond what was measured the planner does not guess). `runs_per_gpu` forces a count (still checked against VRAM).
    """
    need, source = per_run_memory(model_params, precision, per_run_gib)
    fits = max(1, min(MAX_RUNS_PER_GPU, int(VRAM_HEADROOM * vram_gb // need)))
    if runs_per_gpu is not None:
        if not 1 <= runs_per_gpu <= MAX_RUNS_PER_GPU:
            raise InputError(f"runs per GPU must be between 1 and {MAX_RUNS_PER_GPU} (got {runs_per_gpu})")
        if runs_per_gpu > fits:
            raise InputError(f"{runs_per_gpu} runs of {need:.1f} GiB do not fit {vram_gb:g} GB with 10 % headroom "
                             f"(at most {fits})")
        fits = runs_per_gpu
    if measured is not None:
        k, gain, label = measured
        if k <= fits:
            return Concurrency(k, gain, need, source, f"measured: {label}")
    best = 1
    for k in range(2, fits + 1):
        if estimated_gain(model_params, k) > estimated_gain(model_params, best) * 1.001:
            best = k
    if runs_per_gpu is not None:
        best = runs_per_gpu
    return Concurrency(best, estimated_gain(model_params, best), need, source, GAIN_SOURCE)
