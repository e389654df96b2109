"""Throughput score of a GPU for a workload: the speed model's speedup vs the GTX 1080 Ti.

Until (or where) the calibrated model in planner.perf.model is unavailable, a documented spec-based score is
used: the geometric mean of the compute ratio (tensor fp16/fp32-accumulate TFLOPS for amp on tensor-core
GPUs, fp32 TFLOPS otherwise) and the memory-bandwidth ratio against the GTX 1080 Ti at fp32.
"""

from __future__ import annotations

import math

from functools import lru_cache
from typing import Any, Optional

from planner.catalog.models import GpuChip
from planner.perf.sweep import Estimate
from planner.vocab import BASELINE_CHIP

BASELINE = BASELINE_CHIP
SCALE = 1000  # integer score units per 1.0x speedup


def _spec_compute(chip: GpuChip, precision: str) -> float:
    if precision in ("amp", "tf32") and chip.has_tensor_cores and chip.fp16_tensor_tflops_fp32acc:
        tensor = chip.fp16_tensor_tflops_fp32acc if precision == "amp" else chip.fp16_tensor_tflops_fp32acc / 2
        return max(tensor, chip.fp32_tflops)
    return chip.fp32_tflops


def spec_speed(chip: GpuChip, baseline: GpuChip, precision: str, power_fraction: float = 1.0) -> Estimate:
    compute = _spec_compute(chip, precision) / _spec_compute(baseline, "fp32")
    bandwidth = chip.mem_bandwidth_gbs / baseline.mem_bandwidth_gbs
    from planner.perf.model import power_scale  # the one power-limit curve (hardware-facts §4.2)

    value = math.sqrt(compute * bandwidth) * power_scale(power_fraction)
    return Estimate(value, value * 0.6, value * 1.4, "spec estimate")


@lru_cache(maxsize=1)
def _perf_model() -> Any:
    from planner.perf.model import load_perf_model  # ships with the package: a failure to load is a bug, said loudly

    return load_perf_model()


_MEMO: dict[tuple, Estimate] = {}


def gpu_speed(chip: GpuChip, chips: dict[str, GpuChip], workload: str, precision: str,
              power_fraction: float = 1.0, model_params: Optional[float] = None) -> Estimate:
    """Speedup vs the GTX 1080 Ti for a workload class, precision and (optional) model size in parameters
    (memoised: the solver asks once per candidate card); basis "measured" or "re-anchored" where the user's
    `planner calibrate` measurements reach, else "model"."""
    from planner.perf.calibration import fingerprint

    key = (chip.id, chip.fp32_tflops, chip.mem_bandwidth_gbs, workload, precision, power_fraction, model_params,
           fingerprint())  # the user's measurements (planner calibrate) change the answer
    hit = _MEMO.get(key)
    if hit is None:
        hit = _MEMO[key] = _gpu_speed(chip, chips, workload, precision, power_fraction, model_params)
    return hit


def _gpu_speed(chip: GpuChip, chips: dict[str, GpuChip], workload: str, precision: str,
               power_fraction: float, model_params: Optional[float]) -> Estimate:
    model = _perf_model()
    if chip.id in model.chips:
        from planner.perf.calibration import anchored_speedup  # the user's measurements first, then the model

        est = anchored_speedup(model, chip.id, baseline=BASELINE, workload=workload, precision=precision,
                               power_fraction=power_fraction, model_params=model_params).estimate
        return Estimate(est.value, est.low, est.high, est.basis)
    return spec_speed(chip, chips[BASELINE], precision, power_fraction)  # a chip the model was not given


def score_units(speed: Estimate, gpu_count: int) -> int:
    """Integer objective: aggregate sweep throughput (independent runs spread over the GPUs)."""
    return int(round(speed.value * SCALE)) * gpu_count
