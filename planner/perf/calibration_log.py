"""Read a training log into one throughput series and its steady-state statistics, streaming, keeping only numbers.

Every format of planner.perf.trainlog (Lightning CSV, W&B and TensorBoard exports, JSONL, trainer_state.json and the
stdout of nanoGPT, llm.c, modded-nanogpt, Megatron-LM, MLX and the Hugging Face Trainer). A rate is higher-is-faster
in one of three units: tokens/s, samples/s or steps/s (a step time, or time and step columns, become steps/s; with
tokens per step, tokens/s; samples/s with a sequence length, tokens/s; nanoGPT's mfu with the model size, tokens/s).
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

from planner.errors import InputError
from planner.perf import trainlog as tl

UNITS = ("tokens/s", "samples/s", "steps/s")
WARMUP_SHARE = 0.1  # the first 10 % of the points (at least one) are warm-up: compilation, caches, data loader
MIN_POINTS = 5  # steady-state points needed for a median and a spread
MAX_LOG_BYTES = tl.MAX_LOG_BYTES
MAX_STEP_SECONDS = 3600.0  # a "step" longer than an hour is an epoch or a whole run, not one optimizer step
DISAGREE = 3.0  # two figures of the same log this far apart (either way) are not the same throughput: a warning
REFUSE = 10.0  # a step figure this far from the log's own step and time columns is not a step's: refused
OUTLIER = 100.0  # a point this far from the column's median is not a throughput reading
NANOGPT_PEAK_FLOPS = 312e12  # nanoGPT's estimate_mfu() divides by the A100's bf16 peak, whatever the GPU
MAX_NAMES = 300  # distinct column names remembered (for the error listing them)

_RATE_NAMES = tl.RATE_NAMES  # kept for importers of the old name
_RATE_INDEX = tl.RATE_INDEX
_STEP_NAMES = tl.STEP_NAMES
_TIME_NAMES = tl.TIME_NAMES
_key = tl.key


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
    warnings: tuple[str, ...] = ()  # what looked odd but did not stop the reading
    format: str = ""  # the log's format as read ("nanoGPT stdout", "csv", ...)
    stated: dict[str, float] = field(default_factory=dict)  # run settings the log states (trainlog.note_settings)

    @property
    def spread(self) -> float:
        """Interquartile range over the median: the run's own variation."""
        return (self.q75 - self.q25) / self.median


def _number(value: Any) -> float:
    if value is None or isinstance(value, bool):
        return math.nan
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def _median(values: np.ndarray) -> float:
    """The median without overflow (numpy's averages the middle pair, which overflows near the float limit)."""
    return float(np.quantile(values, 0.5))


def _positive(text: str, value: Optional[float]) -> None:
    if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise InputError(f"{text} must be a positive number (got {value})")


class _Collect:
    """The numbers of the columns that may matter, row by row: throughput candidates, one step and one time."""

    def __init__(self, column: Optional[str]) -> None:
        self.column = column
        self.series: dict[str, array] = {}  # column name -> its numbers, in row order (rows without it skipped)
        self.names: dict[str, str] = {}  # key -> first spelling seen
        self.steps, self.clock = array("d"), array("d")
        self.step_name: Optional[str] = None
        self.clock_name: Optional[str] = None
        self.rows = 0

    def wanted(self, name: str) -> bool:
        k = _key(name)
        return (k in _RATE_INDEX or k in tl.MFU_NAMES or k == "value" or name == self.column
                or (self.column is not None and k == _key(self.column)))

    def add(self, row: dict[str, Any]) -> None:
        self.rows += 1
        step = clock = math.nan
        for name, cell in row.items():
            if name is None:
                continue
            k = _key(name)
            if len(self.names) < MAX_NAMES:
                self.names.setdefault(k, name)
            if self.wanted(name):
                v = _number(cell)
                if not math.isnan(v):
                    self.series.setdefault(name, array("d")).append(v)
            if k in _STEP_NAMES and (self.step_name in (None, name)):
                step = _number(cell)
                self.step_name = name if not math.isnan(step) else self.step_name
            elif k in _TIME_NAMES and (self.clock_name in (None, name)):
                clock = _number(cell)
                self.clock_name = name if not math.isnan(clock) else self.clock_name
        if not (math.isnan(step) or math.isnan(clock)):
            self.steps.append(step)
            self.clock.append(clock)

    def add_cells(self, header: list[str], rows: Any) -> None:
        """CSV rows as lists of cells: the columns that may matter are found once from the header."""
        for name in header:
            if len(self.names) < MAX_NAMES:
                self.names.setdefault(_key(name), name)
        wanted = [(i, name, self.series.setdefault(name, array("d"))) for i, name in enumerate(header)
                  if self.wanted(name)]
        step_i = next((i for k in _STEP_NAMES for i, n in enumerate(header) if _key(n) == k), None)
        clock_i = next((i for k in _TIME_NAMES for i, n in enumerate(header) if _key(n) == k), None)
        if step_i is not None and clock_i is not None:
            self.step_name, self.clock_name = header[step_i], header[clock_i]
        number = _number
        for cells in rows:
            self.rows += 1
            width = len(cells)
            for i, _name, arr in wanted:
                if i < width:
                    v = number(cells[i])
                    if v == v:
                        arr.append(v)
            if step_i is not None and clock_i is not None and step_i < width and clock_i < width:
                step, clock = number(cells[step_i]), number(cells[clock_i])
                if step == step and clock == clock:
                    self.steps.append(step)
                    self.clock.append(clock)

    def values(self, name: str) -> np.ndarray:
        arr = self.series.get(name)
        return np.frombuffer(arr, dtype=float) if arr else np.zeros(0)

    def clock_steps_per_s(self) -> Optional[np.ndarray]:
        if len(self.steps) < 2:
            return None
        s, t = np.frombuffer(self.steps, dtype=float), np.frombuffer(self.clock, dtype=float)
        ds, dt = np.diff(s), np.diff(t)
        keep = (ds > 0) & (dt > 0)
        if not keep.any():
            return None
        return ds[keep] / dt[keep]


def _pick(c: _Collect, column: Optional[str], where: str, header: Optional[list[str]]) -> Optional[str]:
    if column is not None:
        pool = header if header is not None else list(c.series) + list(c.names.values())
        if column in pool:
            return column
        hit = next((n for n in pool if _key(n) == _key(column)), None)
        if hit is None:
            names = header if header is not None else sorted(c.names.values())
            raise InputError(f"{where}: no column {column!r}; columns: {', '.join(names)[:300]}")
        return hit
    present = {_key(n): n for n in c.series if c.values(n).size and (c.values(n) > 0).any()}
    hit = next((present[n] for n, *_ in _RATE_NAMES if n in present), None)
    if hit is None:  # a recognised column with no positive number (a step time of 0): read it, to say so
        named = {_key(n): n for n in c.series}
        hit = next((named[n] for n, *_ in _RATE_NAMES if n in named), None)
    return hit


def read_log(path: Any, *, column: Optional[str] = None, unit: Optional[str] = None,
             tokens_per_step: Optional[float] = None, seq_len: Optional[float] = None,
             model_params: Optional[float] = None) -> LogReading:
    """The steady-state throughput of a training log: the median after the warm-up, with its quartiles.

    `column` overrides the recognised names; `unit` says what an unrecognised (or TensorBoard `Value`) column is:
    tokens/s, samples/s, steps/s or s/step. Without a rate column, a time and a step column give steps/s.
    `tokens_per_step` turns steps/s into tokens/s, `seq_len` samples/s into tokens/s, `model_params` nanoGPT's mfu
    into tokens/s. The log is streamed: only the numbers of candidate columns are kept.
    """
    where = str(path) if isinstance(path, (str, Path)) else str(getattr(path, "name", "uploaded log"))
    if unit is not None and unit not in (*UNITS, "s/step"):
        raise InputError(f"--unit must be one of {', '.join((*UNITS, 's/step'))} (got {unit!r})")
    _positive("--tokens-per-step", tokens_per_step)
    _positive("--seq-len", seq_len)
    _positive("--model-params", model_params)
    c = _Collect(column)
    with tl.open_log(path) as log:
        where = str(path) if isinstance(path, (str, Path)) else log.name
        if log.cell_rows is not None and log.header is not None:
            c.add_cells(log.header, log.cell_rows)
        else:
            for row in log.rows:
                if row.get("eval") is True or row.get("summary") is True:
                    continue  # evaluation and the closing summary are not training steps
                c.add(row)
        header, fmt = log.header, log.describe()
        summary = tl.training_steps_per_s(log)
        stated = dict(log.stated)
        if log.format == "stdout" and not c.rows and summary is None:
            raise InputError(f"{where}: {tl.NOT_A_LOG}")
        if log.format != "csv" and not c.rows and summary is None:
            raise InputError(f"{where}: no training rows in this {fmt}")
    warnings: list[str] = []
    tokens_per_step, seq_len, model_params, said = _stated_defaults(stated, tokens_per_step, seq_len, model_params)
    col = _pick(c, column, where, header)
    if col is None and "value" in {_key(n) for n in c.series} and unit is not None:
        col = next(n for n in c.series if _key(n) == "value")  # TensorBoard scalar export: the user says what it is
    clock_rate = c.clock_steps_per_s()
    mfu_col = next((n for n in c.series if _key(n) in tl.MFU_NAMES), None)
    if col is not None:
        found_unit, kind = _RATE_INDEX.get(_key(col), (None, "rate"))
        if unit is not None:
            found_unit, kind = ("steps/s", "seconds") if unit == "s/step" else (unit, "rate")
        if found_unit is None:
            raise InputError(f"{where}: say what column {col!r} measures with --unit tokens/s, samples/s, steps/s or "
                             "s/step")
        raw = c.values(col)
        if raw.size and not (raw > 0).any():
            raise InputError(f"{where}: column {col!r} has no positive numbers"
                             + (" (a step time of 0 is not a measurement)" if kind != "rate" else ""))
        raw = raw[raw > 0]
        if kind != "rate":
            seconds = raw / (1000.0 if kind == "ms" else 1.0)
            if seconds.size and float(_median(seconds)) > MAX_STEP_SECONDS:
                raise InputError(f"{where}: column {col!r} reads a median of {float(_median(seconds)):,.0f} s per "
                                 "step, over an hour: that is the time of an epoch or a run, not of one step; give the "
                                 "column of one step's time, or a step and a time column")
            values = 1.0 / seconds
        else:
            values = raw
        how = f"column {col!r}" + ("" if kind == "rate" else f" (time per step{', ms' if kind == 'ms' else ''})")
    elif clock_rate is not None:
        values, found_unit, kind = clock_rate, "steps/s", "rate"
        col = f"{c.step_name} over {c.clock_name}"
        how = f"steps per second from columns {c.step_name!r} and {c.clock_name!r}"
    elif mfu_col is not None and model_params is not None:
        mfu = c.values(mfu_col)
        mfu = mfu[mfu > 0] / (100.0 if np.nanmax(mfu, initial=0) > 1.0 else 1.0)
        values, found_unit, kind, col = mfu * NANOGPT_PEAK_FLOPS / (6.0 * model_params), "tokens/s", "rate", mfu_col
        how = (f"column {mfu_col!r} (mfu) x nanoGPT's 312 TFLOPS reference / (6 x {model_params:g} parameters"
               f"{said.get('model_params', '')})")
    elif summary is not None:
        return _from_summary(summary, log, where, fmt, tokens_per_step, seq_len, said)
    else:
        hint = (" (this log has an mfu column: give --model-params to read tokens/s from it)" if mfu_col else
                " (the Trainer times only the whole run: give a log that ends with its {'train_runtime': ...} line, "
                "or the trainer_state.json saved after training)" if "Hugging Face" in fmt else "")
        raise InputError(f"{where}: no throughput found in this {fmt} (tokens/s, samples/s, step time, or a step "
                         f"and a time column){hint}; name it with --column (columns: "
                         f"{', '.join(sorted(c.names.values()))[:300]})")
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        raise InputError(f"{where}: column {col!r} has no positive numbers")
    drop = max(1, int(math.ceil(WARMUP_SHARE * values.size))) if values.size > MIN_POINTS else 0
    steady = values[drop:]
    if steady.size:
        mid = float(_median(steady))
        odd = (steady > mid * OUTLIER) | (steady < mid / OUTLIER)
        if odd.any():
            warnings.append(f"{int(odd.sum())} point(s) of {col!r} are over {OUTLIER:.0f}x off the run's median and "
                            "were left out (a unit change, a stall or a logger glitch)")
            steady = steady[~odd]
    if steady.size < MIN_POINTS:
        if summary is not None:
            return _from_summary(summary, log, where, fmt, tokens_per_step, seq_len, said)
        raise InputError(f"{where}: only {values.size} throughput points in column {col!r}; log at least "
                         f"{MIN_POINTS + 1} (a few minutes of training) for a steady-state median")
    steps_per_s = None
    if found_unit == "steps/s":
        steps_per_s = float(_median(steady))
        warnings += _cross_check(steps_per_s, clock_rate, col, where, kind)
        if tokens_per_step is not None:
            steady = steady * tokens_per_step
            found_unit, how = "tokens/s", how + f" x {tokens_per_step:g} tokens per step" + said.get("tokens_per_step", "")
    elif found_unit == "tokens/s" and tokens_per_step is not None:
        steps_per_s = float(_median(steady)) / tokens_per_step
        if clock_rate is not None:
            clock = float(_median(clock_rate))
            if not 1 / DISAGREE < steps_per_s / clock < DISAGREE:
                warnings.append(f"{col!r} / --tokens-per-step gives {steps_per_s:.3g} steps/s but the log's step and "
                                f"time columns give {clock:.3g}: check --tokens-per-step")
    elif found_unit == "samples/s" and seq_len is not None:
        steady = steady * seq_len
        found_unit, how = "tokens/s", how + f" x {seq_len:g} tokens per sample" + said.get("seq_len", "")
    warnings += _disagreements(c, col, found_unit, float(_median(steady)), tokens_per_step, seq_len)
    q25, med, q75 = (float(v) for v in np.quantile(steady, (0.25, 0.5, 0.75)))
    if STATED_MARK in how:  # a figure the log stated turned the reading into tokens/s
        if stated.get("processes", 1) > 1:
            warnings.append(f"the log states {stated['processes']:g} processes: its tokens per step are all of "
                            "theirs, so this is the throughput of every GPU of the run together")
    return LogReading(column=str(col), unit=found_unit, points=int(steady.size), warmup_dropped=drop, median=med,
                      q25=q25, q75=q75, how=how, steps_per_s=steps_per_s, warnings=tuple(warnings), format=fmt,
                      stated=stated)


STATED_MARK = " (stated in the log)"


def _stated_defaults(stated: dict[str, float], tokens_per_step: Optional[float], seq_len: Optional[float],
                     model_params: Optional[float]
                     ) -> tuple[Optional[float], Optional[float], Optional[float], dict[str, str]]:
    """The conversion figures the user left out, taken from what the log states (a flag always wins), and the mark
    each one taken adds to the reading's `how`."""
    said: dict[str, str] = {}
    if tokens_per_step is None and stated.get("tokens_per_step"):
        tokens_per_step, said["tokens_per_step"] = stated["tokens_per_step"], STATED_MARK
    if seq_len is None and stated.get("seq_len"):
        seq_len, said["seq_len"] = stated["seq_len"], STATED_MARK
    if model_params is None and stated.get("model_params"):
        model_params, said["model_params"] = stated["model_params"], STATED_MARK
    return tokens_per_step, seq_len, model_params, said


def _cross_check(steps_per_s: float, clock_rate: Optional[np.ndarray], col: str, where: str, kind: str) -> list[str]:
    """A step rate far from what the log's own step and time columns give: a warning at 3x, refused at 10x."""
    if clock_rate is None or clock_rate.size < 2:
        return []
    clock = float(_median(clock_rate))
    ratio = steps_per_s / clock
    if 1 / DISAGREE < ratio < DISAGREE:
        return []
    what = "time per step" if kind != "rate" else "steps per second"
    if 1 / REFUSE < ratio < REFUSE:
        return [f"column {col!r} gives {steps_per_s:.4g} steps/s but the log's step and time columns give "
                f"{clock:.4g} ({max(ratio, 1 / ratio):.1f}x apart): pauses between steps (evaluation, checkpoints, "
                "data loading) or not one step's figure; check which one your runs will see"]
    raise InputError(f"{where}: column {col!r} read as {what} gives {steps_per_s:.4g} steps/s, but the log's step "
                     f"and time columns give {clock:.4g} steps/s ({max(ratio, 1 / ratio):,.0f}x apart): it is not "
                     "one step's figure (an epoch or logging-interval time?); drop --column/--unit to use the step "
                     "and time columns, or name a per-step column")


def _disagreements(c: _Collect, col: str, unit: str, median: float, tokens_per_step: Optional[float],
                   seq_len: Optional[float]) -> list[str]:
    """Other throughput columns of the same log in the same unit that disagree 3x or more with the one read."""
    out = []
    for name in c.series:
        if name == col:
            continue
        found = _RATE_INDEX.get(_key(name))
        if found is None:
            continue
        other = c.values(name)
        other = other[np.isfinite(other) & (other > 0)]
        if other.size < MIN_POINTS:
            continue
        o_unit, kind = found
        v = float(_median(other))
        if kind != "rate":
            v = (1000.0 if kind == "ms" else 1.0) / v
        if o_unit == "steps/s" and unit == "tokens/s" and tokens_per_step:
            v *= tokens_per_step
        elif o_unit == "samples/s" and unit == "tokens/s" and seq_len:
            v *= seq_len
        elif o_unit != unit:
            continue
        if not 1 / DISAGREE < v / median < DISAGREE:
            out.append(f"column {name!r} gives {v:,.4g} {unit}, {max(v / median, median / v):,.0f}x off the "
                       f"{median:,.4g} read from {col!r}: one of them is not this run's throughput (per device? a "
                       "different unit?); choose with --column")
    return out


def _from_summary(summary: tuple[float, str], log: tl.TrainLog, where: str, fmt: str,
                  tokens_per_step: Optional[float], seq_len: Optional[float],
                  said: Optional[dict[str, str]] = None) -> LogReading:
    """The Trainer's closing figures, training time only: one point, no spread of its own."""
    steps_per_s, how = summary
    unit, value = "steps/s", steps_per_s
    batch = log.summary.get("train_batch_size")
    if tokens_per_step is not None:
        unit, value, how = "tokens/s", steps_per_s * tokens_per_step, how + f" x {tokens_per_step:g} tokens per step" \
            + (said or {}).get("tokens_per_step", "")
    elif batch and seq_len is not None:
        unit, value = "tokens/s", steps_per_s * batch * seq_len
        how += f" x train_batch_size {batch:g} x {seq_len:g}{(said or {}).get('seq_len', '')} tokens (one device's batch; with several, give " \
               "--tokens-per-step)"
    elif batch:
        unit, value = "samples/s", steps_per_s * batch
        how += f" x train_batch_size {batch:g} (one device's batch)"
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{where}: the Trainer's summary gives no positive throughput")
    return LogReading(column="train_runtime", unit=unit, points=1, warmup_dropped=0, median=value, q25=value,
                      q75=value, how="run summary: " + how, steps_per_s=steps_per_s,
                      warnings=("one figure for the whole run (the Trainer logs no per-step time): it includes the "
                                "warm-up, so it reads a little slow; no spread",), format=fmt,
                      stated=dict(log.stated))


__all__ = ["LogReading", "MAX_LOG_BYTES", "MIN_POINTS", "UNITS", "WARMUP_SHARE", "read_log"]
