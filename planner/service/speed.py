"""Speed and memory as `planner speedup`, `planner sweep` and `planner memfit` ask for them: rows per GPU, the runs a
GPU shares, and which GPUs fit a model (the perf model, the user's calibration and the memory model behind them)."""

from __future__ import annotations

from typing import Any, Optional

from planner.errors import InputError
from planner.vocab import BASELINE_CHIP


def speedup_rows(m: Any, gpus: list[str], vs: str, workload: str, precision: str, power: float,
                 model_params: Optional[float] = None) -> list[dict[str, Any]]:
    """One row per GPU (all chips, fastest first, when none is named): the speedup over `vs` with its range, what
    anchors it (a calibration or the model) and the limit that caps it."""
    from planner.perf.calibration import anchored_speedup, load_store
    from planner.perf.limits import limit_of
    from planner.perf.model import executed_precision

    chips = [m.resolve(g) for g in gpus] if gpus else list(m.chips.values())
    store = load_store()
    rows = []
    for chip in chips:
        a = anchored_speedup(m, chip.id, baseline=vs, workload=workload, precision=precision, power_fraction=power,
                             model_params=model_params, store=store)
        e = a.estimate
        limit = limit_of(m, chip.id, precision=precision, workload=workload, model_params=model_params, baseline=vs)
        rows.append({"gpu": chip.name, "id": chip.id, "speedup": round(e.value, 2), "low": round(e.low, 2),
                     "high": round(e.high, 2), "high_over_low": round(e.high / e.low, 2),
                     "runs_as": executed_precision(chip, precision), "error_tier": m.tier(chip), **a.to_json(),
                     **limit.to_json()})
    return rows if gpus else sorted(rows, key=lambda r: -r["speedup"])


def runs_sharing_a_gpu(chip: Any, precision: str, model_params: Optional[float], runs_per_gpu: str,
                       run_vram_gb: Optional[float]) -> Optional[Any]:
    """Several runs per GPU: 'auto' plans them for a given model size, a number forces them; None = one run per GPU."""
    from planner.perf.calibration import concurrency_gain
    from planner.perf.concurrency import plan_concurrency

    text = str(runs_per_gpu).strip().lower()
    if text != "auto" and not text.isdigit():
        raise InputError(f"--runs-per-gpu must be 'auto' or a number 1-4 (got {runs_per_gpu!r})")
    forced = None if text == "auto" else int(text)
    if forced == 1 or (forced is None and model_params is None):
        return None
    params = model_params if model_params is not None else 1.5e8
    return plan_concurrency(chip.vram_gb, params, precision=precision, per_run_gib=run_vram_gb,
                            measured=concurrency_gain(chip, precision), runs_per_gpu=forced)


def memory_fit(gpus: list[str], **shape: Any) -> Any:
    """Training memory of a model (planner.perf.memfit.ModelShape's fields; only `params` given: a typical
    transformer of that size, said in the first note) and its fit on each named GPU and the baseline (every chip
    when none is named)."""
    from planner.perf.memfit import ModelShape, assume_typical, estimate_memory
    from planner.perf.model import load_perf_model

    m = load_perf_model()
    full, assumed = assume_typical(ModelShape(**shape))
    chips = [m.resolve(g) for g in gpus] if gpus else sorted(m.chips.values(), key=lambda c: (c.vram_gb, c.id))
    if gpus and BASELINE_CHIP not in {c.id for c in chips}:
        chips.append(m.chips[BASELINE_CHIP])
    est = estimate_memory(full, chips)
    if assumed:
        est.notes.insert(0, assumed)
    return est
