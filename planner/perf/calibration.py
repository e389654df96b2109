"""The user's own measurements (from `planner calibrate`): stored under PLANNER_HOME, and the speedups they anchor.

Measured beats modelled: a card measured on the user's harness, against a measured baseline, gets the measured
ratio (basis "measured", range from the logs' own quartiles); a card not measured is re-anchored on the nearest
measured one through the model: model(card) / model(anchor) x measured(anchor) (basis "re-anchored").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner import atomicfile
from planner.errors import InputError
from planner.perf.calibration_log import UNITS, LogReading
from planner.perf.physics import executed_precision, power_scale
from planner.perf.sweep import Estimate
from planner.resources import user_data_dir
from planner.validation import load_json, read_text_capped
from planner.vocab import BASELINE_CHIP

STORE_NAME = "calibration.json"
LOCK_NAME = "calibration.json.lock"
STORE_WHAT = "the calibration store"
Unit = Literal["tokens/s", "samples/s", "steps/s"]
# What one GPU running one training job can physically reach, per unit: outside it a figure is a unit slip, a
# logger glitch or a typo (a 15 M-parameter model on the fastest card is ~2e7 tokens/s; a step takes > 100 us).
RATE_BAND: dict[str, tuple[float, float]] = {"tokens/s": (1e-2, 1e8), "samples/s": (1e-4, 1e7),
                                             "steps/s": (1e-5, 1e4)}
MAX_RUN_HOURS = 100_000.0
MIN_RUN_HOURS = 1 / 60  # one minute: a shorter "run" is a --steps-per-run slip
MAX_MODEL_RATIO = 20.0  # a measured ratio this far from the model's (either way) is ignored on read, with a warning


class Measurement(BaseModel):
    """One card's steady-state throughput on the user's own training script, read from their log."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gpu_id: str = Field(min_length=1, max_length=80)
    gpu_name: str = Field(min_length=1, max_length=120)
    precision: Literal["fp32", "tf32", "amp"]
    unit: Unit
    median: float = Field(gt=0, allow_inf_nan=False)
    q25: float = Field(gt=0, allow_inf_nan=False)
    q75: float = Field(gt=0, allow_inf_nan=False)
    points: int = Field(ge=1)
    warmup_dropped: int = Field(ge=0)
    column: str = Field(max_length=200)
    how: str = Field(max_length=300)
    log_file: str = Field(max_length=300)
    recorded_on: date
    steps_per_s: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)
    run_hours: Optional[float] = Field(default=None, gt=0, le=100_000, allow_inf_nan=False)  # one whole run, this card
    concurrent: int = Field(default=1, ge=1, le=8)  # runs sharing the card while this one was logged

    @property
    def low(self) -> float:
        return min(self.q25, self.median)

    @property
    def high(self) -> float:
        return max(self.q75, self.median)

    def label(self) -> str:
        shared = f", one of {self.concurrent} runs sharing it" if self.concurrent > 1 else ""
        return (f"{self.gpu_name} ({self.precision}{shared}): {self.median:,.0f} {self.unit} "
                f"(IQR {self.q25:,.0f}-{self.q75:,.0f}, {self.points} points) from {self.log_file}, {self.recorded_on}")


class Store(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: Literal[1] = 1
    measurements: list[Measurement] = Field(default_factory=list)


def store_path() -> Path:
    return user_data_dir() / STORE_NAME


def load_store(path: Optional[Path] = None) -> Store:
    """The stored measurements, validated; a missing file is an empty store, a broken one a one-line error."""
    path = path or store_path()
    try:
        if not path.exists():
            return Store()
        if not path.is_file():
            raise InputError(f"{path}: not a file; remove it or point PLANNER_HOME elsewhere")
        return Store.model_validate(load_json(read_text_capped(path, what="calibration file"), str(path)))
    except ValidationError as exc:
        raise atomicfile.invalid_error(path, exc, "calibration file", "planner calibrate --clear") from None
    except OSError as exc:
        raise InputError(f"cannot read the calibration store {path}: {exc.strerror or exc}") from None


def _fs_error(path: Path, exc: OSError) -> InputError:
    return atomicfile.fs_error(path, exc, STORE_WHAT)


def _locked(path: Path):  # type: ignore[no-untyped-def]
    """An exclusive lock on the store (a lock file beside it, never followed through a symlink) while held."""
    return atomicfile.locked(path, STORE_WHAT, LOCK_NAME)


def _write(store: Store, path: Path) -> Path:
    """Atomic write (planner.atomicfile): readers never see a half-written store."""
    return atomicfile.write_json(path, store.model_dump(mode="json"), STORE_WHAT)


def save_store(store: Store, path: Optional[Path] = None) -> Path:
    """Replace the stored measurements by `store` (locked, atomic); a file-system error is one line."""
    path = path or store_path()
    with _locked(path):
        return _write(store, path)


def update_store(change: Callable[[Store], Store], path: Optional[Path] = None) -> Store:
    """Read, change and write the store under one lock, so parallel `planner calibrate` runs lose nothing."""
    path = path or store_path()
    with _locked(path):
        new = change(load_store(path))
        _write(new, path)
    return new


def clear_store(path: Optional[Path] = None) -> int:
    """Delete the stored measurements; how many there were (0 for a file that no longer reads)."""
    path = path or store_path()
    if not path.exists():
        return 0
    with _locked(path):
        try:
            n = len(load_store(path).measurements)
        except InputError:
            n = 0
        try:
            path.unlink()
        except FileNotFoundError:
            return 0
        except OSError as exc:
            raise _fs_error(path, exc) from None
    return n


def measurement_from(reading: LogReading, chip: Any, precision: str, log_file: str,
                     run_steps: Optional[float] = None, today: Optional[date] = None,
                     concurrent: int = 1) -> Measurement:
    """A stored measurement from a log reading; `run_steps` (steps in one whole run) gives the run's hours."""
    check_rate(reading.median, reading.unit, f"{log_file}: the steady-state median")
    run_hours = None
    if run_steps is not None:
        if not (run_steps >= 1 and math.isfinite(run_steps)):
            raise InputError(f"--steps-per-run must be a number of steps, at least 1 (got {run_steps:g})")
        if reading.steps_per_s is None:
            raise InputError("--steps-per-run needs steps per second: give --tokens-per-step, or a log with a step "
                             "and a time column, or a step-time column")
        run_hours = run_steps / reading.steps_per_s / 3600.0
        if not MIN_RUN_HOURS <= run_hours <= MAX_RUN_HOURS:
            raise InputError(f"--steps-per-run {run_steps:g} at {reading.steps_per_s:.4g} steps/s is a run of "
                             f"{run_hours:.3g} h, outside 1 minute to {MAX_RUN_HOURS:,.0f} h; give the steps of "
                             "one whole run")
    return Measurement(gpu_id=chip.id, gpu_name=chip.name, precision=executed_precision(chip, precision),
                       unit=reading.unit, median=reading.median, q25=reading.q25, q75=reading.q75,
                       points=reading.points, warmup_dropped=reading.warmup_dropped, column=reading.column[:200],
                       how=reading.how[:300], log_file=Path(log_file).name[:300],
                       recorded_on=today or datetime.now(timezone.utc).date(), steps_per_s=reading.steps_per_s,
                       run_hours=run_hours, concurrent=concurrent)


def check_rate(value: float, unit: str, what: str) -> None:
    """Refuse a throughput one GPU cannot reach (or a unit slip): outside RATE_BAND for its unit."""
    low, high = RATE_BAND.get(unit, (0.0, math.inf))
    if not (math.isfinite(value) and low <= value <= high):
        raise InputError(f"{what} is {value:.4g} {unit}, outside what one GPU can do ({low:g} to {high:g} {unit}): "
                         "check the column and --unit (a step time read as a rate, ms as s?) and --tokens-per-step")


def in_band(m: Measurement) -> bool:
    low, high = RATE_BAND.get(m.unit, (0.0, math.inf))
    return all(math.isfinite(v) and low <= v <= high for v in (m.median, m.q25, m.q75))


def add_measurement(store: Store, m: Measurement) -> Store:
    """The store with `m` in place of an earlier measurement of the same card at the same precision."""
    kept = [x for x in store.measurements
            if (x.gpu_id, x.precision, x.concurrent) != (m.gpu_id, m.precision, m.concurrent)]
    return Store(measurements=[*kept, m])


def remove(store: Store, gpu_id: Optional[str] = None) -> tuple[Store, int]:
    kept = [x for x in store.measurements if gpu_id is not None and x.gpu_id != gpu_id]
    return Store(measurements=kept), len(store.measurements) - len(kept)


# ---------------------------------------------------------------- using them

@dataclass(frozen=True)
class Anchored:
    """A speedup and where it comes from: measured ratio, re-anchored on a measured card, or the model alone."""

    estimate: Estimate
    basis: str  # "measured" | "re-anchored" | "model"
    anchor: Optional[str] = None  # the measured card a re-anchored figure rests on
    measured: tuple[str, ...] = ()  # the measurements used (labels)
    note: str = ""
    warnings: tuple[str, ...] = ()  # stored measurements set aside as absurd

    def to_json(self) -> dict[str, Any]:
        return {"basis": self.basis, **({"anchor": self.anchor} if self.anchor else {}),
                "measured": list(self.measured), "explanation": self.note,
                **({"warnings": list(self.warnings)} if self.warnings else {})}


def _usable(store: Store, chip: Any, precision: str, unit: Optional[str] = None) -> Optional[Measurement]:
    prec = executed_precision(chip, precision)
    for m in reversed(store.measurements):
        if (m.gpu_id == chip.id and m.precision == prec and m.concurrent == 1 and (unit is None or m.unit == unit)
                and in_band(m)):
            return m
    return None


def _sane(e: Estimate) -> bool:
    return all(math.isfinite(v) and v > 0 for v in (e.value, e.low, e.high))


def _absurd(measured: float, modelled: float) -> bool:
    """A measured ratio more than MAX_MODEL_RATIO times off the model's: a wrong card, unit or log, not a finding."""
    if not (math.isfinite(measured) and measured > 0 and math.isfinite(modelled) and modelled > 0):
        return True
    return not 1 / MAX_MODEL_RATIO <= measured / modelled <= MAX_MODEL_RATIO


def _set_aside(a: Measurement, b: Measurement, measured: float, modelled: float) -> str:
    return (f"ignored your measurement of {a.gpu_name} ({a.median:.4g} {a.unit}): {measured:.3g}x the {b.gpu_name} "
            f"measurement where the model says {modelled:.3g}x, over {MAX_MODEL_RATIO:.0f}x apart (a wrong --gpu, "
            "unit or log?); re-run `planner calibrate` or remove it with `planner calibrate --clear --gpu`")


def _ratio(a: Measurement, b: Measurement) -> Estimate:
    """a / b with the range of the two logs' quartiles (slow end of a over fast end of b, and back)."""
    return Estimate(a.median / b.median, a.low / b.high, a.high / b.low, "measured")


def anchored_speedup(model: Any, target: str, *, baseline: str = BASELINE_CHIP, workload: str = "transformer",
                     precision: str = "amp", power_fraction: float = 1.0, model_params: Optional[float] = None,
                     store: Optional[Store] = None) -> Anchored:
    """The speedup of `target` over `baseline` using the user's measurements where they reach, else the model."""
    store = load_store() if store is None else store
    t, b = model.resolve(target), model.resolve(baseline)
    base_prec = precision if b.has_tensor_cores else "fp32"
    modelled = model.speedup(t.id, baseline=b.id, workload=workload, precision=precision,
                             power_fraction=power_fraction, model_params=model_params)
    plain = Anchored(Estimate(modelled.value, modelled.low, modelled.high, "model"), "model",
                     note="modelled: no measurement of yours reaches this pair (`planner calibrate`)")
    if not store.measurements or t.id == b.id:
        return plain
    scale = power_scale(power_fraction)
    ignored = [f"ignored a stored measurement of {m.gpu_name} outside what one GPU can do ({m.median:.4g} {m.unit})"
               for m in store.measurements if m.gpu_id in (t.id, b.id) and not in_band(m)]
    plain = Anchored(plain.estimate, "model", note=plain.note, warnings=tuple(ignored))
    mb = _usable(store, b, base_prec)
    if mb is None:
        return Anchored(plain.estimate, "model", note=f"modelled: no measurement of the baseline {b.name} "
                        f"({base_prec}) to compare yours with; calibrate a {b.name} log", warnings=tuple(ignored))
    mt = _usable(store, t, precision, mb.unit)
    if mt is not None:
        r = _ratio(mt, mb).scaled(scale)
        if _absurd(r.value, modelled.value) or not _sane(r):
            ignored.append(_set_aside(mt, mb, r.value, modelled.value))
        else:
            return Anchored(Estimate(r.value, r.low, r.high, "measured"), "measured", None, (mt.label(), mb.label()),
                            f"measured: {mt.gpu_name} / {mb.gpu_name} from your logs ({mt.unit})", tuple(ignored))
    anchors = []
    for m in store.measurements:
        if not (m.unit == mb.unit and m.gpu_id not in (b.id, t.id) and m.concurrent == 1 and m.gpu_id in model.chips
                and _usable(store, model.chips[m.gpu_id], precision, mb.unit) is m):
            continue
        meas_r = m.median / mb.median
        mod_r = model.speedup(m.gpu_id, baseline=b.id, workload=workload, precision=precision,
                              model_params=model_params).value
        if _absurd(meas_r, mod_r):
            ignored.append(_set_aside(m, mb, meas_r, mod_r))
        else:
            anchors.append(m)
    if not anchors:
        return Anchored(plain.estimate, "model", note=plain.note, warnings=tuple(ignored))
    anchor = min(anchors, key=lambda m: _distance(model, t, model.chips[m.gpu_id], workload, precision, model_params))
    a = model.chips[anchor.gpu_id]
    via = model.speedup(t.id, baseline=a.id, workload=workload, precision=precision, power_fraction=power_fraction,
                        model_params=model_params)
    meas = _ratio(anchor, mb)
    value = via.value * meas.value
    band = model.params.meta.get("two_point", {}).get("range")  # how re-anchored answers erred on held-out sources
    lo_m, hi_m = (float(band[0]), float(band[1])) if band else (via.low / via.value, via.high / via.value)
    low = value * lo_m * (meas.low / meas.value)
    high = value * hi_m * (meas.high / meas.value)
    est = Estimate(value, low, high, "re-anchored")
    if not _sane(est):
        return Anchored(plain.estimate, "model", note=plain.note, warnings=tuple(ignored))
    return Anchored(est, "re-anchored", a.name, (anchor.label(), mb.label()),
                    f"re-anchored: model {t.name} / {a.name} = {via.value:.2f}x times your measured {a.name} / "
                    f"{b.name} = {meas.value:.2f}x", tuple(ignored))


def _distance(model: Any, t: Any, a: Any, workload: str, precision: str, model_params: Optional[float]) -> tuple:
    """Nearest measured card: same architecture first, then the closest modelled speed."""
    ratio = model.speedup(t.id, baseline=a.id, workload=workload, precision=precision, model_params=model_params).value
    return (t.architecture != a.architecture, abs(math.log(ratio)), a.id)


def concurrency_gain(chip: Any, precision: str, store: Optional[Store] = None) -> Optional[tuple[int, float, str]]:
    """(K, measured gain, label) where the user logged one of K runs sharing `chip` and the card alone: the K runs'
    aggregate throughput over one run's = K x shared median / alone median."""
    store = load_store() if store is None else store
    alone = _usable(store, chip, precision)
    if alone is None:
        return None
    prec = executed_precision(chip, precision)
    shared = [m for m in store.measurements if m.gpu_id == chip.id and m.precision == prec and m.concurrent > 1
              and m.unit == alone.unit and in_band(m)]
    if not shared:
        return None
    m = max(shared, key=lambda x: x.concurrent)
    gain = min(float(m.concurrent), max(1.0, m.concurrent * m.median / alone.median))
    return m.concurrent, gain, f"{m.concurrent} runs on {chip.name} give {gain:.2f}x one run (your logs)"


def baseline_run_hours(store: Optional[Store] = None, baseline: str = BASELINE_CHIP) -> Optional[Measurement]:
    """The baseline card's measurement that carries one whole run's hours (from --steps-per-run), if any."""
    store = load_store() if store is None else store
    return next((m for m in reversed(store.measurements) if m.gpu_id == baseline and m.run_hours and in_band(m)
                 and MIN_RUN_HOURS <= m.run_hours <= MAX_RUN_HOURS), None)


def resolve_baseline_hours(given: Optional[float], baseline: str = BASELINE_CHIP) -> tuple[float, str]:
    """Hours per run on the baseline: given, else measured (a baseline log calibrated with --steps-per-run), else the
    7 h default, each with where it comes from."""
    from planner.request import DEFAULT_BASELINE_HOURS

    if given is not None:
        return float(given), "given with --hours"
    m = baseline_run_hours(baseline=baseline)
    if m is not None and m.run_hours:
        return round(m.run_hours, 3), f"measured: your {m.gpu_name} log {m.log_file} ({m.recorded_on})"
    return DEFAULT_BASELINE_HOURS, "assumed (give --hours, or calibrate a baseline log with --steps-per-run)"


def fingerprint(path: Optional[Path] = None) -> tuple:
    """Changes when the store changes (for caches keyed on it)."""
    path = path or store_path()
    try:
        st = path.stat()
    except OSError:
        return (str(path), None)
    return (str(path), st.st_mtime_ns, st.st_size)


__all__ = ["Anchored", "Measurement", "RATE_BAND", "Store", "UNITS", "add_measurement", "check_rate", "in_band",
           "update_store", "anchored_speedup", "baseline_run_hours",
           "clear_store", "concurrency_gain", "resolve_baseline_hours",
           "fingerprint", "load_store", "measurement_from", "remove", "save_store", "store_path"]
