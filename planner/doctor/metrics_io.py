"""Read training metrics (CSV or JSONL) row by row into compact per-role columns of floats."""

from __future__ import annotations

import itertools
import json
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Optional

import numpy as np

from planner.doctor.textio import Source, open_text, whole_lines
from planner.errors import InputError

KEPT_ROWS = 100_000  # rows kept for the analysis; longer runs are averaged into buckets, so memory stays flat
EPOCH_MIN, EPOCH_MAX = 0.0, 4_102_444_800.0  # 1970-01-01 .. 2100-01-01 UTC: a training log's clock
MAX_STEP = 1e15  # a step counter beyond this is not a step (and would not print as one)
ROLES = ("loss", "throughput", "util", "temp", "power", "clock", "grad_norm")
PER_GPU_ROLES = ("util", "temp", "power", "clock")
# Normalised column name -> role. Names are lower-cased with '/', '.', '-' and spaces turned into '_'.
ALIASES: dict[str, str] = {}
for _role, _names in {
    "step": "step global_step iter iteration it steps _step trainer_global_step batch",
    "loss": "loss train_loss training_loss loss_train train_loss_step",
    "throughput": "tokens_per_s tokens_per_sec tokens_per_second tokens_s tok_s tok_per_s tps throughput "
                  "samples_per_s samples_per_sec samples_s it_s its iters_per_s images_per_s imgs_per_s",
    "util": "gpu_util gpu_utilization utilization util gpu_util_pct gpu_utilization_pct gpu_util_percent gpu_usage",
    "temp": "gpu_temp gpu_temp_c temp temperature gpu_temperature temp_c",
    "power": "gpu_power gpu_power_w power_w power",
    "clock": "gpu_clock gpu_clock_mhz sm_clock sm_clock_mhz clock_mhz clocks_sm",
    "grad_norm": "grad_norm gradient_norm grad_norm_total",
    "time": "time timestamp wall_time walltime datetime date _timestamp",
    "expected": "total_steps max_steps expected_steps",
}.items():
    for _n in _names.split():
        ALIASES[_n] = _role
_PER_GPU = re.compile(r"^gpu_?(\d+)_(util|utilization|usage|temp|temperature|power|clock)(?:_[a-z%]+)?$")
_PER_GPU_ROLE = {"utilization": "util", "usage": "util", "temperature": "temp"}
_NORMALISE = re.compile(r"[/.\-\s]+")
_MISSING = {"", "none", "null", "na", "n/a", "-"}


_UNSEEN = ("", None)  # sentinel: a column not mapped yet


def normalise(name: str) -> str:
    return _NORMALISE.sub("_", name.strip().lower()).strip("_")


@dataclass
class MetricSeries:
    """Parsed metrics: steps per row, one float array per role (NaN = missing), per-GPU arrays, times."""

    name: str
    format: str
    steps: array = field(default_factory=lambda: array("d"))
    values: dict[str, array] = field(default_factory=dict)
    per_gpu: dict[str, dict[int, array]] = field(default_factory=dict)
    nonfinite: dict[str, list[int]] = field(default_factory=dict)  # row indices with explicit NaN/inf
    epoch_s: array = field(default_factory=lambda: array("d"))
    roles: dict[str, str] = field(default_factory=dict)  # role -> source column
    expected_steps: Optional[int] = None
    notes: list[str] = field(default_factory=list)
    total_rows: int = 0  # rows read (the arrays hold at most 2 x KEPT_ROWS buckets of `bucket` rows each)
    bucket: int = 1
    first_step: Optional[float] = None
    last_step: Optional[float] = None

    @property
    def times(self) -> list[datetime]:
        return [datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None) for t in self.epoch_s if t == t]

    def column(self, role: str) -> Optional[list[float]]:
        arr = self.values.get(role)
        return list(arr) if arr is not None else None


def _float(value: Any, column: str, row: int, name: str) -> tuple[float, bool]:
    """(value, explicit_nonfinite). Missing cells are NaN but not 'explicit'."""
    if type(value) is str:  # the common case, fast: a plain number
        try:
            v = float(value)
        except ValueError:
            pass
        else:
            return v, v != v or v in (math.inf, -math.inf)
    if value is None or isinstance(value, bool):
        return math.nan, False
    if isinstance(value, (int, float)):
        v = float(value)
        return v, not math.isfinite(v)
    text = str(value).strip().rstrip("%")
    if text.lower() in _MISSING:
        return math.nan, False
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{name}: row {row}: column {column!r} value {text[:30]!r} is not a number") from None
    return v, not math.isfinite(v)


def _epoch(value: Any, row: int, name: str) -> float:
    if value is None or (isinstance(value, str) and value.strip().lower() in _MISSING):
        return math.nan
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        v = float(value)
    else:
        text = str(value).strip()
        try:
            v = float(text)
        except ValueError:
            try:
                t = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise InputError(f"{name}: row {row}: time {text[:30]!r} is neither ISO nor epoch seconds") from None
            try:
                v = (t if t.tzinfo else t.replace(tzinfo=timezone.utc)).timestamp()
            except (OverflowError, ValueError, OSError):
                v = math.nan
            if not (math.isfinite(v) and EPOCH_MIN <= v <= EPOCH_MAX):
                raise InputError(f"{name}: row {row}: time {text[:30]!r} is not a date between 1970 and 2100")
            return v
    seconds = v / 1000.0 if v > 1e11 else v  # epoch milliseconds
    if not (math.isfinite(seconds) and EPOCH_MIN <= seconds <= EPOCH_MAX):
        raise InputError(f"{name}: row {row}: time {str(value)[:30]!r} is not a date between 1970 and 2100")
    return seconds


class _Builder:
    """Maps columns to roles as they appear (JSONL rows may add keys), then appends each row's numbers."""

    def __init__(self, name: str, fmt: str) -> None:
        self.series = MetricSeries(name=name, format=fmt)
        self.mapping: dict[str, Optional[tuple[str, Optional[int]]]] = {}
        self._taken: set[tuple[str, Optional[int]]] = set()
        self._plan: Optional[list[tuple[int, str]]] = None
        self._arrays: dict[tuple[str, Optional[int]], array] = {}
        self.folded = 0  # rows of the arrays that are whole buckets (the rest is the bucket being filled)

    def _map(self, col: str) -> None:
        norm = normalise(col)
        m = _PER_GPU.match(norm)
        target: Optional[tuple[str, Optional[int]]] = None
        if m:
            target = (_PER_GPU_ROLE.get(m.group(2), m.group(2)), int(m.group(1)))
        elif norm in ALIASES:
            target = (ALIASES[norm], None)
        elif norm.startswith("train_") and norm[6:] in ALIASES:
            target = (ALIASES[norm[6:]], None)
        if target in self._taken:
            target = None  # a second column for the same role is ignored
        self.mapping[col] = target
        if target is not None:
            self._taken.add(target)
            label = target[0] if target[1] is None else f"gpu{target[1]}_{target[0]}"
            self.series.roles[label] = col

    def check_header(self, columns: list[str]) -> None:
        """Fail early when a CSV header names no metric at all (e.g. an event log given by mistake)."""
        for col in columns:
            if col not in self.mapping:
                self._map(col)
        if not {t[0] for t in self.mapping.values() if t is not None} - {"step", "time", "expected"}:
            raise self._no_columns()

    def _no_columns(self) -> InputError:
        return InputError(
            f"{self.series.name}: no metric columns recognised (got {', '.join(self.mapping)[:100]}); expected "
            "e.g. step, loss, tokens_per_s, gpu_util, gpu_temp or per-GPU gpu0_util, gpu1_temp"
        )

    def finish(self) -> MetricSeries:
        s = self.series
        if not s.steps:
            raise InputError(f"{s.name}: no metric rows")
        if not (s.values or s.per_gpu):
            raise self._no_columns()
        if "step" not in s.roles:
            s.notes.append("no step column: rows are numbered from 1")
        return s

    def _array(self, target: tuple[str, Optional[int]]) -> array:
        arr = self._arrays.get(target)
        if arr is None:
            role, gpu = target
            s = self.series
            arr = s.values.setdefault(role, array("d")) if gpu is None else (
                s.per_gpu.setdefault(role, {}).setdefault(gpu, array("d")))
            self._arrays[target] = arr
        return arr

    def add(self, row: dict[str, Any], number: int) -> None:
        s = self.series
        index = len(s.steps)
        step, epoch = float(s.total_rows + 1), math.nan
        for col, raw in row.items():
            target = self.mapping.get(col, _UNSEEN)
            if target is _UNSEEN:
                self._map(col)
                target = self.mapping[col]
            if target is None:
                continue
            role, gpu = target
            if role == "time":
                epoch = _epoch(raw, number, s.name)
                continue
            value, explicit = _float(raw, col, number, s.name)
            if role == "step":
                if math.isfinite(value) and abs(value) > MAX_STEP:
                    raise InputError(f"{s.name}: row {number}: step {value:g} is not a step count (over {MAX_STEP:g})")
                step = value if math.isfinite(value) else step
            elif role == "expected":
                if math.isfinite(value) and value > 0:
                    s.expected_steps = int(value)
            else:
                if explicit:
                    s.nonfinite.setdefault(role if gpu is None else f"gpu{gpu}_{role}", []).append(index)
                arr = self._array(target)
                if len(arr) < index:
                    arr.extend([math.nan] * (index - len(arr)))  # column first seen on a later row
                arr.append(value)
        s.steps.append(step)
        s.epoch_s.append(epoch)
        s.total_rows += 1
        if s.first_step is None:
            s.first_step = step
        s.last_step = step
        if s.bucket > 1 and len(s.steps) - self.folded >= s.bucket:
            fold_tail(s, self.folded)
            self.folded += 1
        if (self.folded if s.bucket > 1 else len(s.steps)) >= 2 * KEPT_ROWS:
            compact(s)
            self.folded, self._arrays = len(s.steps), {}

    def plan(self, header: list[str]) -> None:
        """Map the header once: (index, column) of the cells that feed a role."""
        for col in header:
            if col not in self.mapping:
                self._map(col)
        self._plan = [(i, col) for i, col in enumerate(header) if self.mapping.get(col) is not None]

    def add_cells(self, cells: list[str], header: list[str], number: int) -> None:
        """A CSV row: columns were mapped once from the header, so no per-row dict is built."""
        if self._plan is None:
            self.plan(header)
        self.add({col: cells[i] for i, col in self._plan if i < len(cells)}, number)


def _merge(values: array) -> array:
    """Pairs of buckets into one: the mean of their finite values (NaN when neither has one)."""
    v = np.frombuffer(values, dtype=np.float64)
    a, b = v[0:len(v) - 1:2], v[1::2]
    fa, fb = np.isfinite(a), np.isfinite(b)
    with np.errstate(invalid="ignore", over="ignore"):
        pair = np.where(fa & fb, (a + b) / 2, np.where(fa, a, np.where(fb, b, math.nan)))
    out = array("d", pair.tobytes())
    if len(values) % 2:
        out.append(values[-1])
    return out


def fold_tail(s: MetricSeries, start: int) -> None:
    """The rows from `start` on become one bucket: means of finite values, the first step and time."""
    _pad(s)
    for arr in list(s.values.values()) + [a for per in s.per_gpu.values() for a in per.values()]:
        finite = [x for x in arr[start:] if math.isfinite(x)]
        del arr[start:]
        arr.append(sum(finite) / len(finite) if finite else math.nan)
    del s.steps[start + 1:]
    del s.epoch_s[start + 1:]
    for label, rows in s.nonfinite.items():
        if rows and rows[-1] >= start:
            while rows and rows[-1] >= start:
                rows.pop()
            rows.append(start)


def compact(s: MetricSeries) -> None:
    """Halve the kept rows: buckets of twice the rows; steps and times keep each bucket's first row."""
    _pad(s)
    s.steps = array("d", s.steps[::2])
    s.epoch_s = array("d", s.epoch_s[::2])
    s.values = {role: _merge(arr) for role, arr in s.values.items()}
    s.per_gpu = {role: {g: _merge(arr) for g, arr in per.items()} for role, per in s.per_gpu.items()}
    s.nonfinite = {label: sorted({i // 2 for i in rows}) for label, rows in s.nonfinite.items()}
    s.bucket *= 2


def _pad(series: MetricSeries) -> None:
    """Fill every column to the number of rows (cells missing at the end are NaN)."""
    n = len(series.steps)
    arrays = list(series.values.values()) + [a for per in series.per_gpu.values() for a in per.values()]
    for arr in arrays:
        arr.extend([math.nan] * (n - len(arr)))


def _jsonl(lines: Iterator[str], builder: _Builder) -> None:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{builder.series.name}: line {number} is not valid JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{builder.series.name}: line {number}: JSON nested too deep for a metrics row") from None
        if not isinstance(obj, dict):
            raise InputError(f"{builder.series.name}: line {number} is not a JSON object")
        builder.add(_flatten(obj), number)


def _flatten(obj: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in obj.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            if depth < 8:  # "train/loss"-style nesting; deeper objects are not metrics
                out.update(_flatten(v, key + "/", depth + 1))
        else:
            out[key] = v
    return out


def _csv(lines: Iterator[str], builder: _Builder) -> None:
    from planner.doctor import metrics_block  # imports this module

    metrics_block.read_csv(lines, builder)


def read_metrics(source: Source) -> MetricSeries:
    """Parse a metrics CSV (header row) or JSONL (one object per line), streaming."""
    with open_text(source) as stream:
        head = list(itertools.islice(stream.lines, 5))
        first = next((ln.strip() for ln in head if ln.strip()), "")
        if not first:
            raise InputError(f"{stream.name} is empty")
        lines = whole_lines(itertools.chain(head, stream.lines), stream.name)
        if first.startswith("["):
            raise InputError(f"{stream.name}: a JSON array; write one JSON object per line (JSONL) instead")
        fmt = "jsonl" if first.startswith("{") else "csv"
        builder = _Builder(stream.name, fmt)
        (_jsonl if fmt == "jsonl" else _csv)(lines, builder)
    series = builder.finish()
    _pad(series)
    if series.bucket > 1:
        series.notes.append(f"{series.total_rows} rows analysed as {len(series.steps)} buckets of {series.bucket} "
                            "rows (means; NaN/inf kept): step ranges are exact to a bucket")
    return series
