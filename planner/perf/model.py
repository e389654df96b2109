"""GPU training speed model: throughput of any chip relative to a baseline (default GTX 1080 Ti), with a range."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar, Optional

from planner.catalog.load import load_chips
from planner.catalog.match import ChipNames
from planner.resources import SHIPPED_DATA_DIR
from planner.errors import CatalogError, InputError, UnknownPartError
from planner.catalog.models import GpuChip
from planner.perf.physics import (  # noqa: F401 - the step-time physics; callers import these names from here too
    DUAL_FP32_ARCHS, L2_FILE, MATMUL_SHARE_BOUNDS, MAX_MODEL_PARAMS, MIN_POWER_FRACTION, MODEL_SIZE_REF, OLD_SM_ARCHS,
    OLD_TENSOR_ARCHS, OVERHEAD_MAX, POWER_CURVE, POWER_VARIANTS_FILE, SHARE_BOUNDS, TF32_ARCHS, PerfParams, bandwidth_gbs,
    board_power_density, compute_share, compute_terms, compute_tflops, dram_bandwidth, executed_precision,
    geometric_mean, has_dual_fp32, is_pro, l2_sizes, load_power_variants, matmul_share, overhead_share,
    power_clock_factor, power_scale, relative_power_density, relative_step_time, sm_clock_tflops,
    has_old_tensor_cores, tensor_generation_factor,
)
from planner.perf.params_file import check_params_file
from planner.perf.sweep import Estimate, SweepEstimate, energy_kwh, sweep_time
from planner.vocab import BASELINE_CHIP, PRECISIONS, WORKLOADS

__all__ = ["Estimate", "PerfModel", "PerfParams", "SweepEstimate", "compute_share", "energy_kwh", "load_perf_model",
           "power_scale", "sweep_time"]

DATA_DIR = SHIPPED_DATA_DIR
PARAMS_FILE = DATA_DIR / "perf_params.json"
REFERENCE_CHIP = BASELINE_CHIP
RANGE_NOTE = ("the narrowest band holding 90 % of the model's errors on labs it was not fitted on; it held 81 % "
              "of unseen labs' measurements")  # what low/high mean (planner.perf.fit, validate.RANGE_SHARE)


# ---------------------------------------------------------------- model object
class PerfModel:
    """Chip table + fitted parameters; answers speedup questions with ranges."""

    RANGE_NOTE: ClassVar[str] = RANGE_NOTE  # what an estimate's low/high mean, for the text beside them

    def __init__(self, chips: dict[str, GpuChip], params: PerfParams, calibrated_chips: frozenset[str] = frozenset(),
                 power_variants: Optional[dict[str, float]] = None):
        if REFERENCE_CHIP not in chips:
            raise CatalogError(f"the chip table has no {REFERENCE_CHIP!r} row; the model is normalised on it")
        self.chips = chips
        self.power_variants = power_variants or {}
        self.params = params
        self.calibrated_chips = calibrated_chips
        self._names = ChipNames(chips)
        self._seen_archs = frozenset(chips[c].architecture for c in calibrated_chips if c in chips)

    def anchored(self, target: str, **options: Any) -> Any:
        """The speedup of `target` on your measurements where they reach, else this model (planner.perf.calibration
        .anchored_speedup: baseline, workload, precision, power_fraction, model_params, store)."""
        from planner.perf.calibration import anchored_speedup

        return anchored_speedup(self, target, **options)

    def limit_of(self, chip_id: str, **options: Any) -> Any:
        """What limits the user's model on this card (planner.perf.limits.limit_of: precision, workload,
        model_params, baseline); `.sentence()` says it."""
        from planner.perf.limits import limit_of

        return limit_of(self, chip_id, **options)

    @staticmethod
    def wall_power_w(chip: GpuChip, gpu_count: int = 1, power_fraction: float = 1.0) -> float:
        """Wall power estimated when no plan gives one (planner.perf.sweep.estimated_wall_power_w)."""
        from planner.perf.sweep import estimated_wall_power_w

        return estimated_wall_power_w(chip, gpu_count, power_fraction)

    def resolve(self, name: str) -> GpuChip:
        """A chip by id, name, alias or short form, case-insensitive; unknown -> UnknownPartError with suggestions."""
        found = self._names.find(str(name))
        if found is not None:
            return self.chips[found]
        close = self.suggest(name)
        hint = f"; did you mean: {', '.join(close)}" if close else "; `planner speedup` without --gpu lists every GPU"
        raise UnknownPartError(f"unknown GPU {name!r}{hint}")

    def suggest(self, name: str, n: int = 4) -> list[str]:
        """Chip names close to `name`: containing it first (e.g. 'RTX 6000' -> Quadro / Ada), then similar spellings."""
        return [self.chips[cid].name for cid in self._names.suggest(str(name), n)]

    def tier(self, chip: GpuChip) -> str:
        """Which cross-validated error applies: seen architecture (LOGO), new NVIDIA architecture (LOAO), or AMD."""
        if chip.vendor != "NVIDIA":
            return "amd"
        return "seen_architecture" if chip.architecture in self._seen_archs else "new_architecture"

    @staticmethod
    def power_scale(power_fraction: float) -> float:
        """Throughput kept at a power limit: 1.0 at 1.0, 0.95 at 0.8, 0.90 at 0.7, 0.82 at 0.6 (monotone)."""
        return power_scale(power_fraction)

    def _range(self, tier: str, group: str) -> tuple[float, float]:
        return self.params.ranges.get(tier, {}).get(group, (0.7, 1.3))

    def size_widening(self, model_params: Optional[float]) -> float:
        """Range multiplier outside the calibrated model sizes: 1 + w per decade beyond the smallest/largest."""
        lo_hi = self.params.meta.get("calibration", {}).get("model_params_range")
        if model_params is None or not lo_hi:
            return 1.0
        lo, hi = float(lo_hi[0]), float(lo_hi[1])
        decades = math.log10(lo / model_params) if model_params < lo else max(math.log10(model_params / hi), 0.0)
        return 1.0 + float(self.params.meta.get("size_widening_per_decade", 0.25)) * decades

    def step_time(self, chip: GpuChip, precision: str, workload: str, model_params: Optional[float] = None) -> float:
        """Step time relative to the 1080 Ti at fp32; a power-limited board variant runs at its board's power."""
        return relative_step_time(chip, precision, workload, self.params, self.chips[REFERENCE_CHIP], model_params,
                                  self.power_variants.get(chip.id, 1.0))

    def overhead_share(self, workload: str, model_params: Optional[float] = None) -> float:
        """Share of a 1080 Ti step no GPU speeds up at this size: the speedup of any card is at most 1 / this."""
        return overhead_share(self.params, workload, model_params)

    def typical_params(self, workload: str) -> float:
        """Model size assumed when none is given: the class's typical size (calibration geometric mean)."""
        return self.params.typical_params.get(workload, MODEL_SIZE_REF)

    def model_size(self, workload: str, model_params: Optional[float] = None) -> tuple[float, str]:
        """(size used, where it comes from): the user's size when given, else the class's typical size, said so."""
        if model_params is not None:
            return float(model_params), "given"
        size = self.typical_params(workload)
        return size, f"assumed: typical {workload} size of the calibration set ({size / 1e6:.0f}M parameters)"

    def sweep(
        self,
        chip_id: str,
        runs: int,
        baseline_hours: float,
        *,
        gpu_count: int = 1,
        baseline: str = REFERENCE_CHIP,
        workload: str = "transformer",
        precision: str = "amp",
        power_fraction: float = 1.0,
        model_params: Optional[float] = None,
        wall_power_w: Optional[float] = None,
    ) -> SweepEstimate:
        """Sweep time on `gpu_count` x chip at the user's model size (or the stated typical size when none is given);
        the result carries `model_params` and `model_params_source` so every front end can show the assumption."""
        size, source = self.model_size(workload, model_params)
        est = self.speedup(chip_id, baseline=baseline, workload=workload, precision=precision,
                           power_fraction=power_fraction, model_params=model_params)
        return sweep_time(runs, baseline_hours, est, gpu_count, wall_power_w=wall_power_w, model_params=size,
                          model_params_source=source)

    def speedup(
        self,
        chip_id: str,
        *,
        baseline: str = REFERENCE_CHIP,
        workload: str = "transformer",
        precision: str = "amp",
        power_fraction: float = 1.0,
        model_params: float | None = None,
    ) -> Estimate:
        """Throughput ratio target/baseline; a baseline without tensor cores runs fp32 whatever the target precision.

        model_params: trainable parameters of the user's model (small models lean memory-bound, so they gain less
        from compute); None = the workload class's typical size (`typical_params`).
        """
        if model_params is not None and not (0 < float(model_params) <= MAX_MODEL_PARAMS):
            raise InputError(f"model size must be a positive parameter count up to {MAX_MODEL_PARAMS:g} (got {model_params})")
        if workload not in WORKLOADS:
            raise InputError(f"unknown workload {workload!r}; expected one of {', '.join(WORKLOADS)}")
        if precision not in PRECISIONS:
            raise InputError(f"unknown precision {precision!r}; expected one of {', '.join(PRECISIONS)}")
        target, base = self.resolve(chip_id), self.resolve(baseline)
        base_prec = precision if base.has_tensor_cores else "fp32"
        size = float(model_params) if model_params is not None else None
        value = self.step_time(base, base_prec, workload, size) / self.step_time(target, precision, workload, size)
        scale = power_scale(power_fraction)
        if target.id == base.id and executed_precision(target, precision) == executed_precision(base, base_prec):
            return Estimate(scale, scale, scale)
        group = "fp32" if executed_precision(target, precision) == "fp32" and executed_precision(base, base_prec) == "fp32" \
            else "tensor"
        lo_t, hi_t = self._range(self.tier(target), group)
        lo_b, hi_b = self._range(self.tier(base), group) if base.id != REFERENCE_CHIP else (1.0, 1.0)
        widen = self.size_widening(size)
        low, high = min(lo_t, lo_b) / widen, max(hi_t, hi_b) * widen
        return Estimate(value * scale, value * low * scale, value * high * scale)


def _calibrated_chips(meta: dict[str, Any]) -> frozenset[str]:
    return frozenset(meta.get("calibration", {}).get("chips", []))


@lru_cache(maxsize=4)
def _load(params_path: str, data_dir: Optional[str]) -> PerfModel:
    path = Path(params_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CatalogError(f"{path} is missing; re-create it with `python -m planner.perf.fit --write`") from None
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{path}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    check_params_file(data, path)
    params = PerfParams.from_json(data)
    chips = load_chips(Path(data_dir) if data_dir else None)
    return PerfModel(chips, params, _calibrated_chips(params.meta), load_power_variants(chips=chips))


def load_perf_model(data_dir: Optional[Path | str] = None, params_path: Optional[Path | str] = None) -> PerfModel:
    """The speed model (cached): chip table via planner.catalog.load.load_chips + data/perf_params.json, no refit."""
    return _load(str(params_path or PARAMS_FILE), str(data_dir) if data_dir else None)
