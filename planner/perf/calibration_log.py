"""Read a training log (CSV or JSONL) into one throughput series and its steady-state statistics.

Column names as the common loggers write them: PyTorch Lightning's CSVLogger (`throughput/tokens_per_sec`, any
metric name you logged), Weights & Biases history exports (`tokens/sec`, `_step`, `_runtime`), TensorBoard scalar
CSV exports (`Wall time,Step,Value`). A rate is higher-is-faster in one of three units: tokens/s, samples/s or
steps/s (a step time, or time and step columns, become steps/s; with tokens per step, tokens/s).
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np

from planner.errors import InputError
from planner.validation import load_json, read_text_capped

UNITS = ("tokens/s", "samples/s", "steps/s")
WARMUP_SHARE = 0.1  # the first 10 % of the points (at least one) are warm-up: compilation, caches, data loader
MIN_POINTS = 5  # steady-state points needed for a median and a spread
MAX_LOG_BYTES = 256 * 1024 * 1024

_KEY = re.compile(r"[^a-z0-9]+")


def _key(name: str) -> str:
    """'throughput/tokens_per_sec' -> 'throughput_tokens_per_sec'; 'Wall time' -> 'wall_time'."""
    return _KEY.sub("_", name.strip().lower()).strip("_")


# (unit, kind) per recognised column: kind "rate" is already per second, "seconds" / "ms" a time per step.
# Order matters: a log with several picks the first in this list (a global rate before a per-device one).
_RATE_NAMES: list[tuple[str, str, str]] = [
    *((n, "tokens/s", "rate") for n in (
        "throughput_tokens_per_sec", "tokens_per_sec", "tokens_sec", "tokens_per_second", "tokens_per_s", "tokens_s",
        "tok_s", "tok_per_sec", "train_tokens_per_sec", "train_tokens_per_second", "throughput_device_tokens_per_sec",
        "perf_tokens_per_sec", "tps")),
    *((n, "samples/s", "rate") for n in (
        "throughput_samples_per_sec", "samples_per_sec", "samples_sec", "samples_per_second", "samples_per_s",
        "samples_s", "train_samples_per_second", "train_samples_per_sec", "images_per_sec", "images_sec", "img_s",
        "imgs_per_sec", "throughput_device_samples_per_sec")),
    *((n, "steps/s", "rate") for n in (
        "throughput_batches_per_sec", "batches_per_sec", "steps_per_sec", "steps_per_second", "it_s", "iter_per_sec",
        "train_steps_per_second")),
    *((n, "steps/s", "seconds") for n in (
        "step_time", "step_time_s", "time_per_step", "sec_per_step", "s_per_step", "batch_time", "iter_time",
        "train_step_time", "time_step", "perf_step_time")),
    *((n, "steps/s", "ms") for n in ("step_time_ms", "iter_time_ms", "batch_time_ms", "ms_per_step", "time_per_step_ms")),
]
_RATE_INDEX = {name: (unit, kind) for name, unit, kind in _RATE_NAMES}
_STEP_NAMES = ("step", "_step", "global_step", "trainer_global_step", "iteration", "iter", "steps")
_TIME_NAMES = ("wall_time", "_runtime", "runtime", "elapsed", "elapsed_s", "time", "timestamp", "_timestamp")


@dataclass(frozen=True)
class LogReading:
    """One log's throughput: the column used, its unit, the steady-state median and quartiles (higher = faster)."""

    column: str
    unit: str  # one of UNITS
    points: int  # points in the steady state (after the warm-up)
    warmup_dropped: int
    median: float
    q25: float
    q75: float
    how: str  # how the rate was obtained, for the user: "column 'tokens/sec'", "step time x 4096 tokens per step", ...
    steps_per_s: Optional[float] = None  # steady steps per second where the log or --tokens-per-step gives it

    @property
    def spread(self) -> float:
        """Interquartile range over the median: the run's own variation."""
        return (self.q75 - self.q25) / self.median


def _rows(text: str, where: str) -> list[dict[str, Any]]:
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not first:
        raise InputError(f"{where}: empty log")
    if first.startswith("{"):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                obj = load_json(line, f"{where}: line {n}")
                if not isinstance(obj, dict):
                    raise InputError(f"{where}: line {n} is not a JSON object")
                rows.append(_flat(obj))
        return rows
    if first.startswith("["):
        raise InputError(f"{where}: a JSON array; give one JSON object per line (JSONL) or a CSV")
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or len(reader.fieldnames) < 1:
        raise InputError(f"{where}: no CSV header row")
    return [dict(r) for r in reader]


def _flat(obj: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k}/"))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        v = float(value)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def _column(rows: list[dict[str, Any]], names: dict[str, str], wanted: str) -> np.ndarray:
    return np.array([_number(r.get(names[wanted])) for r in rows], dtype=float)


def _pick(names: dict[str, str], column: Optional[str], where: str) -> Optional[str]:
    if column is not None:
        if column in names.values():
            return column
        hit = names.get(_key(column))
        if hit is None:
            raise InputError(f"{where}: no column {column!r}; columns: {', '.join(sorted(names.values()))[:300]}")
        return hit
    return next((names[n] for n, *_ in _RATE_NAMES if n in names), None)


def read_log(path: Path, *, column: Optional[str] = None, unit: Optional[str] = None,
             tokens_per_step: Optional[float] = None) -> LogReading:
    """The steady-state throughput of a training log: the median after the warm-up, with its quartiles.

    `column` overrides the recognised names; `unit` says what an unrecognised (or TensorBoard `Value`) column is:
    tokens/s, samples/s, steps/s or s/step. Without a rate column, a time and a step column give steps/s.
    `tokens_per_step` turns steps/s into tokens/s.
    """
    where = str(path)
    if unit is not None and unit not in (*UNITS, "s/step"):
        raise InputError(f"--unit must be one of {', '.join((*UNITS, 's/step'))} (got {unit!r})")
    if tokens_per_step is not None and not (tokens_per_step > 0 and math.isfinite(tokens_per_step)):
        raise InputError(f"--tokens-per-step must be a positive number (got {tokens_per_step})")
    rows = _rows(read_text_capped(Path(path), max_bytes=MAX_LOG_BYTES, what="training log"), where)
    if not rows:
        raise InputError(f"{where}: no data rows")
    names: dict[str, str] = {}
    for r in rows:
        for name in r:
            if name is not None:
                names.setdefault(_key(name), name)
    steps = next((names[n] for n in _STEP_NAMES if n in names), None)
    clock = next((names[n] for n in _TIME_NAMES if n in names), None)
    col = _pick(names, column, where)
    if col is None and "value" in names and unit is not None:
        col = names["value"]  # a TensorBoard scalar export: the user says what the tag measures
    if col is not None:
        found_unit, kind = _RATE_INDEX.get(_key(col), (None, "rate"))
        if unit is not None:
            found_unit, kind = ("steps/s", "seconds") if unit == "s/step" else (unit, "rate")
        if found_unit is None:
            raise InputError(f"{where}: say what column {col!r} measures with --unit tokens/s, samples/s, steps/s or "
                             "s/step")
        values = np.array([_number(r.get(col)) for r in rows], dtype=float)
        if kind != "rate":
            values = (1000.0 if kind == "ms" else 1.0) / values
        how = f"column {col!r}" + ("" if kind == "rate" else f" (time per step{', ms' if kind == 'ms' else ''})")
    elif steps is not None and clock is not None:
        s, t = _column(rows, names, _key(steps)), _column(rows, names, _key(clock))
        ok = ~np.isnan(s) & ~np.isnan(t)
        s, t = s[ok], t[ok]
        keep = np.diff(s) > 0
        with np.errstate(divide="ignore", invalid="ignore"):  # equal times: no rate, dropped below
            values = np.diff(s)[keep] / np.diff(t)[keep]
        values[~np.isfinite(values) | (values <= 0)] = np.nan
        found_unit, kind, col = "steps/s", "rate", f"{steps} over {clock}"
        how = f"steps per second from columns {steps!r} and {clock!r}"
    else:
        raise InputError(f"{where}: no throughput column found (tokens/s, samples/s, step time, or a step and a time "
                         f"column); name it with --column (columns: {', '.join(sorted(names.values()))[:300]})")
    values = values[~np.isnan(values) & (values > 0)]
    if values.size == 0:
        raise InputError(f"{where}: column {col!r} has no positive numbers")
    drop = max(1, int(math.ceil(WARMUP_SHARE * values.size))) if values.size > MIN_POINTS else 0
    steady = values[drop:]
    if steady.size < MIN_POINTS:
        raise InputError(f"{where}: only {values.size} throughput points in column {col!r}; log at least "
                         f"{MIN_POINTS + 1} (a few minutes of training) for a steady-state median")
    steps_per_s = None
    if found_unit == "steps/s":
        steps_per_s = float(np.median(steady))
        if tokens_per_step is not None:
            steady = steady * tokens_per_step
            found_unit, how = "tokens/s", how + f" x {tokens_per_step:g} tokens per step"
    elif found_unit == "tokens/s" and tokens_per_step is not None:
        steps_per_s = float(np.median(steady)) / tokens_per_step
    q25, med, q75 = (float(v) for v in np.quantile(steady, (0.25, 0.5, 0.75)))
    return LogReading(column=str(col), unit=found_unit, points=int(steady.size), warmup_dropped=drop, median=med,
                      q25=q25, q75=q75, how=how, steps_per_s=steps_per_s)
