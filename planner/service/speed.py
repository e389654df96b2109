"""Speed and memory as `planner speedup`, `sweep`, `memfit` and `burnin` ask for them: rows per GPU, the runs a GPU
shares, which GPUs fit a model, the GPUs of a plan (the perf model, calibration and memory model behind them)."""

from __future__ import annotations

from typing import Any, Optional

from planner.errors import InputError, PlannerError, UnknownPartError
from planner.plan_view import PlanView, PricedLine
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
    if forced is None:  # the planned sweep's sharing, the one `recommend` ranks and shows (planner.perf.planned_sweep)
        from planner.perf.planned_sweep import sharing

        return sharing(chip, float(chip.vram_gb), precision=precision, model_params=model_params,
                       run_vram_gib=run_vram_gb)
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


def plan_gpus(plan: PlanView, where: str, m: Any) -> tuple[Any, int, Optional[float], str]:
    """(chip, count, plan sustained watts, label) of a plan's GPUs (one chip kind)."""
    gpus = plan.lines("gpu")
    if not gpus:
        raise InputError(f"{where}: the plan has no GPU part")
    chips = {c.id: c for c in (_part_chip(p, plan, m) for p in gpus)}
    if len(chips) > 1:
        raise InputError(f"{where}: the plan mixes GPU chips ({', '.join(chips)}); sweep one kind at a time with --gpu")
    return next(iter(chips.values())), plan.gpu_count, _plan_wall_w(plan), gpus[0].name


def _plan_wall_w(plan: PlanView) -> Optional[float]:
    """The plan's sustained DC draw taken to the wall through its PSU's 80 PLUS curve (as `planner costs` does)."""
    from planner.catalog.load import cached_catalog
    from planner.costs.compare import wall_power_w

    power = plan.power
    if power is None or not power.sustained_w:
        return None
    psu = plan.line("psu")
    known = cached_catalog().parts.get(psu.part_id) if psu else None
    watts = (psu.wattage_w if psu else None) or getattr(known, "wattage_w", None)
    efficiency = (psu.efficiency if psu else None) or getattr(known, "efficiency", None)
    if watts is None or efficiency is None:  # no PSU we know: a typical Gold unit at the recommended size (else 80 %)
        return wall_power_w(power.sustained_w, "gold",
                            int(power.recommended_psu_w) if power.recommended_psu_w else None)
    return wall_power_w(power.sustained_w, efficiency, watts)


def _part_chip(part: PricedLine, plan: PlanView, m: Any) -> Any:
    from planner.share.plan_file import gpu_chip

    problem = "is not in the catalog"
    try:
        chip = gpu_chip(part, plan)
    except PlannerError as exc:  # a broken catalog should not hide a chip the plan names by itself
        chip, problem = None, f"could not be looked up ({exc})"
    for label in (chip, part.part_id, part.name):
        if not label:
            continue
        try:
            return m.resolve(label)
        except UnknownPartError:
            if label == chip:
                raise
            continue
    raise InputError(f"GPU part {part.part_id!r} {problem} and its chip is unknown")


class SpeedQueries:
    """The speed model as front ends ask it (one use case, several questions): speed of a GPU, a sweep's wall time,
    speedup rows, the runs a GPU shares, memory fit and a plan's GPUs. The PerfModel behind it loads on first use."""

    def __init__(self, model: Any = None) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        """The PerfModel (planner.perf.model, cached): chips, fitted parameters, resolve(), limit_of(), anchored()."""
        if self._model is None:
            from planner.perf.model import load_perf_model

            self._model = load_perf_model()
        return self._model

    def gpu_speed(self, chip: Any, chips: dict[str, Any], workload: str, precision: str, power_fraction: float = 1.0,
                  model_params: Optional[float] = None) -> Any:
        """Speedup vs the baseline chip (planner.perf.speed.gpu_speed)."""
        from planner.perf.speed import gpu_speed

        return gpu_speed(chip, chips, workload, precision, power_fraction, model_params)

    def sweep_time(self, *args: Any, **kwargs: Any) -> Any:
        """A sweep's wall time, energy and range (planner.perf.sweep.sweep_time)."""
        from planner.perf.sweep import sweep_time

        return sweep_time(*args, **kwargs)

    def speedup_rows(self, gpus: list[str], vs: str, workload: str, precision: str, power: float,
                     model_params: Optional[float] = None) -> list[dict[str, Any]]:
        return speedup_rows(self.model, gpus, vs, workload, precision, power, model_params)

    def runs_sharing_a_gpu(self, chip: Any, precision: str, model_params: Optional[float], runs_per_gpu: str,
                           run_vram_gb: Optional[float]) -> Optional[Any]:
        return runs_sharing_a_gpu(chip, precision, model_params, runs_per_gpu, run_vram_gb)

    def memory_fit(self, gpus: list[str], **shape: Any) -> Any:
        return memory_fit(gpus, **shape)

    def plan_gpus(self, plan: PlanView, where: str) -> tuple[Any, int, Optional[float], str]:
        return plan_gpus(plan, where, self.model)


def speed_model() -> SpeedQueries:
    """The use case behind `planner speedup`, `sweep`, `memfit`, `burnin` and the UI's speed figures."""
    return SpeedQueries()
