"""Read training metrics (CSV or JSONL) row by row into compact per-role columns of floats."""

from __future__ import annotations

import itertools
import math
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

import numpy as np

from planner.doctor.textio import Source, open_text, whole_lines
from planner.errors import InputError
from planner.perf import trainlog

MAX_COLUMNS = 10_000  # distinct column names mapped (JSONL keys); more are ignored unseen
MAX_IGNORED = 50  # ignored column names listed
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
                  "tokens_sec tok_sec samples_per_s samples_per_sec samples_per_second samples_sec samples_s it_s "
                  "its iters_per_s images_per_s imgs_per_s images_sec",
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
# The vocabulary `planner calibrate` reads (planner.perf.trainlog) is this reader's too: every throughput column it
# names is throughput here; a time per step is turned into steps per second (higher is faster, like the others).
STEP_TIME: dict[str, float] = {}  # normalised column name -> the numerator of steps/s (1 for s, 1000 for ms)
for _name, _unit, _kind in trainlog.RATE_NAMES:
    ALIASES.setdefault(_name, "throughput")
    if _kind != "rate":
        STEP_TIME[_name] = 1000.0 if _kind == "ms" else 1.0
for _words, _role in ((trainlog.STEP_NAMES, "step"), (trainlog.LOSS_NAMES, "loss"), (trainlog.GRAD_NAMES, "grad_norm")):
    for _n in _words:
        ALIASES.setdefault(_n, _role)
# gpu0_util, gpu_1_temp_c, W&B system metrics (system.gpu.0.gpu = utilisation %, .temp, .powerWatts, .smClock)
_PER_GPU = re.compile(r"^(?:system_)?gpu_?(\d+)_(util|utilization|usage|gpu|temp|temperature|power|powerwatts|clock|"
                      r"smclock)(?:_[a-z%]+)?$")
# PyTorch Lightning's GPUStatsMonitor: "gpu_id: 0/utilization.gpu (%)", "gpu_id: 1/temperature.gpu (°C)"
_LIGHTNING_GPU = re.compile(r"^gpu_id: ?(\d+)/(utilization\.gpu|temperature\.gpu|power\.draw|clocks\.sm)\b")
_PER_GPU_ROLE = {"utilization": "util", "usage": "util", "gpu": "util", "temperature": "temp", "powerwatts": "power",
                 "smclock": "clock", "utilization.gpu": "util", "temperature.gpu": "temp", "power.draw": "power",
                 "clocks.sm": "clock"}
# TensorBoard's "download CSV" of one scalar: Wall time,Step,Value in a file named run-<run>-tag-<tag>.csv
_TB_TAG = re.compile(r"-tag-(.+?)(?:\.csv)?$", re.IGNORECASE)
# W&B panel export: "<run name> - train/loss", with "__MIN" / "__MAX" companions
_WANDB_PANEL = re.compile(r"^.+ - (.+)$")
KINDS = ROLES + ("step", "time", "expected")
_NORMALISE = re.compile(r"[/.\-\s]+")
_MISSING = {"", "none", "null", "na", "n/a", "-"}


_UNSEEN = ("", None)  # sentinel: a column not mapped yet


def normalise(name: str) -> str:
    return _NORMALISE.sub("_", name.strip().lower()).strip("_")


Target = Optional[tuple[str, Optional[int]]]


def parse_column_map(items: Optional[list[str]]) -> dict[str, tuple[str, Optional[int]]]:
    """`--column KIND=NAME` options -> {column name: (role, gpu)}; KIND is a role (loss, throughput, util, temp,
    power, clock, grad_norm, step, time, expected) or a per-GPU one (gpu1_temp)."""
    out: dict[str, tuple[str, Optional[int]]] = {}
    for item in items or []:
        kind, sep, name = item.partition("=")
        kind, name = kind.strip().lower(), name.strip()
        per = re.fullmatch(r"gpu(\d{1,3})_([a-z_]+)", kind)
        role, gpu = (per.group(2), int(per.group(1))) if per else (kind, None)
        if not sep or not name or role not in KINDS or (gpu is not None and role not in PER_GPU_ROLES):
            raise InputError(f"--column {item[:60]!r}: expected KIND=NAME with KIND one of {', '.join(KINDS)} or "
                             "gpuN_util/temp/power/clock, e.g. --column loss=val/loss")
        out[name] = (role, gpu)
    return out


def column_target(col: str, source_name: str = "") -> Target:
    """The role (and GPU) a column name feeds, or None: the one table both `doctor metrics` and the watch read."""
    raw = str(col).strip()
    if raw.endswith(("__MIN", "__MAX", "__min", "__max")):
        return None  # the W&B panel export's band around the value
    panel = _WANDB_PANEL.match(raw)
    if panel:
        raw = panel.group(1)
    lightning = _LIGHTNING_GPU.match(raw.lower())
    if lightning:
        return _PER_GPU_ROLE[lightning.group(2)], int(lightning.group(1))
    norm = normalise(raw)
    m = _PER_GPU.match(norm)
    if m:
        return _PER_GPU_ROLE.get(m.group(2), m.group(2)), int(m.group(1))
    if norm in ALIASES:
        return ALIASES[norm], None
    if norm.startswith("train_") and norm[6:] in ALIASES:
        return ALIASES[norm[6:]], None
    if norm == "value" and source_name:  # TensorBoard: the tag in the file name says what Value is
        tag = _TB_TAG.search(Path(source_name).name)
        if tag:
            inner = column_target(tag.group(1))
            if inner is not None and inner[0] not in ("step", "time"):
                return inner
    return None


def step_time_scale(col: str, source_name: str = "") -> Optional[float]:
    """For a column holding a time per step (s or ms, or a TensorBoard Value whose tag is one): the numerator that
    turns it into steps per second; None for a rate."""
    norm = normalise(col)
    if norm == "value" and source_name:
        tag = _TB_TAG.search(Path(source_name).name)
        norm = normalise(tag.group(1)) if tag else norm
    if norm.startswith("train_") and norm not in STEP_TIME:
        norm = norm[6:]
    return STEP_TIME.get(norm)


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
    ignored: list[str] = field(default_factory=list)  # columns read but feeding no role

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

    def __init__(self, name: str, fmt: str, columns: Optional[dict[str, tuple[str, Optional[int]]]] = None) -> None:
        self.series = MetricSeries(name=name, format=fmt)
        self.overrides = dict(columns or {})
        self.ignored: list[str] = []  # columns that feed no role (shown as "ignored: ..."), at most MAX_IGNORED
        self.mapping: dict[str, Optional[tuple[str, Optional[int]]]] = {}
        self._taken: set[tuple[str, Optional[int]]] = set()
        self._plan: Optional[list[tuple[int, str]]] = None
        self._arrays: dict[tuple[str, Optional[int]], array] = {}
        self.folded = 0  # rows of the arrays that are whole buckets (the rest is the bucket being filled)
        self.inverse: dict[str, float] = {}  # step-time columns read as throughput: steps/s = scale / time

    def _map(self, col: str) -> None:
        if len(self.mapping) >= MAX_COLUMNS:  # JSONL rows may invent keys without end: keep the map bounded
            return
        if col in self.overrides:
            target: Target = self.overrides[col]
            for other, t in list(self.mapping.items()):  # --column wins over a name read by default
                if t == target:
                    self.mapping[other] = None
                    self._taken.discard(target)
        else:
            target = column_target(col, self.series.name)
            if target is not None and target in set(self.overrides.values()):
                target = None  # the user mapped another column to this role
        if target in self._taken:
            target = None  # a second column for the same role is ignored
        self.mapping[col] = target
        if target is None and len(self.ignored) < MAX_IGNORED and col.strip():
            self.ignored.append(col)
        if target is not None:
            self._taken.add(target)
            label = target[0] if target[1] is None else f"gpu{target[1]}_{target[0]}"
            self.series.roles[label] = col
            scale = step_time_scale(col, self.series.name)
            if target == ("throughput", None) and scale is not None:
                self.inverse[col] = scale
                self.series.roles[label] = f"{col} (as steps/s)"
                self.series.notes.append(f"throughput is steps per second from the time per step in {col!r}")

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
            "e.g. step, loss, tokens_per_s, gpu_util, gpu_temp or per-GPU gpu0_util, gpu1_temp; map a column of "
            "yours with --column KIND=NAME (docs/doctor.md §8.1)"
        )

    def finish(self) -> MetricSeries:
        s = self.series
        if not s.steps:
            raise InputError(f"{s.name}: no metric rows")
        if not (s.values or s.per_gpu):
            raise self._no_columns()
        if "step" not in s.roles and not any(n.startswith("no step column") for n in s.notes):
            s.notes.append("no step column: rows are numbered from 1")
        s.ignored = list(self.ignored)
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
                target = self.mapping.get(col)
            if target is None:
                continue
            role, gpu = target
            if role == "time":
                epoch = _epoch(raw, number, s.name)
                continue
            value, explicit = _float(raw, col, number, s.name)
            if col in self.inverse and not explicit and not math.isnan(value):
                value = self.inverse[col] / value if value > 0 else math.nan
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

    def plan(self, header: list[str]) -> list[tuple[int, str]]:
        """Map the header once: (index, column) of the cells that feed a role."""
        for col in header:
            if col not in self.mapping:
                self._map(col)
        self._plan = [(i, col) for i, col in enumerate(header) if self.mapping.get(col) is not None]
        return self._plan

    def add_cells(self, cells: list[str], header: list[str], number: int) -> None:
        """A CSV row: columns were mapped once from the header, so no per-row dict is built."""
        plan = self._plan if self._plan is not None else self.plan(header)
        self.add({col: cells[i] for i, col in plan if i < len(cells)}, number)


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
    for number, row in trainlog.jsonl_rows(lines, builder.series.name):  # calibrate's JSONL reader, one for both
        builder.add(row, number)


def _csv(lines: Iterator[str], builder: _Builder) -> None:
    from planner.doctor import metrics_block  # imports this module

    metrics_block.read_csv(lines, builder)


def read_metrics(source: Source, columns: Optional[dict[str, tuple[str, Optional[int]]]] = None) -> MetricSeries:
    """Parse a metrics CSV (header row), JSONL (one object per line), trainer_state.json or training stdout
    (nanoGPT, llama2.c, llm.c, modded-nanogpt, Megatron-LM, MLX, Hugging Face Trainer), streaming; `columns` maps
    names to roles."""
    with open_text(source) as stream:
        head = list(itertools.islice(stream.lines, 20))
        first = next((ln.strip() for ln in head if ln.strip()), "")
        if not first:
            raise InputError(f"{stream.name} is empty")
        lines = whole_lines(itertools.chain(head, stream.lines), stream.name)
        kind = trainlog.sniff(head)
        if kind == "json_array":
            raise InputError(f"{stream.name}: a JSON array; write one JSON object per line (JSONL) instead")
        if kind in ("stdout", "trainer_state"):
            return _from_trainlog(trainlog.attach(trainlog.TrainLog(name=stream.name, format=kind),
                                                  (ln.rstrip("\r\n") for ln in lines)), columns)
        fmt = "jsonl" if kind == "jsonl" else "csv"
        builder = _Builder(stream.name, fmt, columns)
        (_jsonl if fmt == "jsonl" else _csv)(lines, builder)
    return finished(builder)


def _from_trainlog(log: trainlog.TrainLog, columns: Optional[dict[str, tuple[str, Optional[int]]]]) -> MetricSeries:
    """Training stdout or trainer_state.json rows through the same builder: evaluation lines and the closing summary
    are not training steps; lines of no known trainer are counted, not fatal."""
    builder: Optional[_Builder] = None
    number = 0
    for row in log.rows:
        number += 1
        if builder is None:
            builder = _Builder(log.name, log.describe(), columns)
        if row.get("eval") is True or row.get("summary") is True:
            continue
        builder.add({k: v for k, v in row.items() if k not in ("eval", "summary")}, number)
    if builder is None or not builder.series.steps:
        raise InputError(f"{log.name}: {trainlog.NOT_A_LOG}")
    builder.series.format = log.describe()
    if log.skipped:
        builder.series.notes.append(f"{log.skipped} line(s) of other output skipped (not training lines)")
    return finished(builder)


def finished(builder: _Builder) -> MetricSeries:
    """The series once every row is in: padded, with its notes (bucketing, ignored columns)."""
    series = builder.finish()
    _pad(series)
    if series.bucket > 1:
        series.notes.append(f"{series.total_rows} rows analysed as {len(series.steps)} buckets of {series.bucket} "
                            "rows (means; NaN/inf kept): step ranges are exact to a bucket")
    return series
