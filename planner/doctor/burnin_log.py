"""The burn-in's nvidia-smi log read once: per-GPU samples, rows of a GPU that stopped answering, logger restarts
and the doctor's own findings (planner/doctor/smi.py parses each line; this module keeps what the burn-in judges)."""

from __future__ import annotations

import csv
import functools
import re
import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from planner.doctor.smi import LOADED_UTIL, LOST, MAX_GPUS, SmiLog, SmiRow, csv_header, csv_row
from planner.doctor.textio import Source, open_text, whole_lines
from planner.errors import InputError
from planner.settings import GPU_HOT_C

SMI_FIELDS = ("timestamp", "index", "name", "temperature.gpu", "clocks.sm", "clocks_throttle_reasons.active",
              "power.draw", "power.limit", "utilization.gpu")
SMI_COMMAND = f"nvidia-smi --query-gpu={','.join(SMI_FIELDS)} --format=csv -l 5"
# A reading outside these bounds is a sensor or logger error, not a measurement: -40 °C and 255 °C are what a
# failed sensor reports, 0 MHz under load is a clock nvidia-smi could not read.
TEMP_RANGE_C = (5.0, 150.0)
CLOCK_RANGE_MHZ = (100.0, 10_000.0)  # a GPU under load never clocks under 100 MHz (idle clocks are 200-300)
YEARS = (1990, 2200)  # a timestamp outside these years is not a reading (and year 9999 would overflow the arithmetic)
_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")
_BUS_ID = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")


@dataclass(frozen=True, slots=True)
class Sample:
    """One GPU at one instant; None = not measured ([N/A], [Not Supported], out of range)."""

    time: datetime
    util: Optional[float]
    temp: Optional[float]
    clock: Optional[float]
    power: Optional[float]
    reasons: Optional[int]

    @property
    def loaded(self) -> bool:
        return self.util is not None and self.util >= LOADED_UTIL


@dataclass(frozen=True, slots=True)
class Lost:
    """A row or line saying the GPU no longer answers (`[GPU requires reset]`, `[Unknown Error]`, `GPU is lost`)."""

    gpu: str
    time: Optional[datetime]
    text: str


@dataclass(frozen=True, slots=True)
class Restart:
    """The header written again: the logger started anew (after `after`, the last row before; `at`, the first after)."""

    after: Optional[datetime]
    at: Optional[datetime]

    @property
    def hole_s(self) -> Optional[float]:
        return (self.at - self.after).total_seconds() if self.after and self.at else None


@dataclass
class SmiSeries:
    name: str
    samples: dict[str, list[Sample]]
    lost: list[Lost] = field(default_factory=list)
    restarts: list[Restart] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the doctor's problems (§7) other than the throttle bits
    notes: list[str] = field(default_factory=list)
    has_clock: bool = True

    @functools.cached_property
    def interval_s(self) -> float:
        """The sampling interval: the median step between one GPU's samples (5 s when it cannot be told)."""
        steps = [(b.time - a.time).total_seconds() for s in self.samples.values() for a, b in zip(s, s[1:])]
        steps = [d for d in steps if d > 0]
        return statistics.median(steps) if steps else 5.0


_FAST_TIME = re.compile(r"(\d{4})[/-](\d\d)[/-](\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?")


@functools.lru_cache(maxsize=256)  # every GPU of one sampling instant has the same timestamp
def parse_time(text: str) -> Optional[datetime]:
    text = text.strip()
    fast = _FAST_TIME.fullmatch(text)
    if fast:
        try:
            y, mo, d, h, mi, sec = (int(g) for g in fast.groups()[:6])
            exact = datetime(y, mo, d, h, mi, sec, int((fast.group(7) or "0").ljust(6, "0")))
        except ValueError:
            return None
        return exact if YEARS[0] <= exact.year <= YEARS[1] else None
    when: Optional[datetime] = None
    for fmt in _TIME_FORMATS:
        try:
            when = datetime.strptime(text, fmt)
            break
        except ValueError:
            continue
    if when is None:
        try:
            when = datetime.fromisoformat(text).replace(tzinfo=None)
        except ValueError:
            return None
    return when if YEARS[0] <= when.year <= YEARS[1] else None


def _within(value: Optional[float], bounds: tuple[float, float]) -> Optional[float]:
    return value if value is not None and bounds[0] <= value < bounds[1] else None


def _sample(row: SmiRow, when: datetime) -> Sample:
    util = row.util if row.util is not None and 0 <= row.util <= 100 else None
    return Sample(when, util, _within(row.temp, TEMP_RANGE_C), _within(row.clock, CLOCK_RANGE_MHZ), row.power,
                  row.reasons if row.reasons_read else None)


def _gpu_in(text: str) -> str:
    m = _BUS_ID.search(text)
    return m.group(0) if m else "?"


def read_smi_series(source: Source) -> SmiSeries:
    """Per-GPU samples of an `nvidia-smi --query-gpu=... --format=csv -l N` log, in one pass with one parser."""
    with open_text(source) as stream:
        name = stream.name
        # a line is split at a lone CR too: CR-only line ends (old Mac tools, some serial loggers) are still lines
        lines = (part for ln in whole_lines(stream.lines, name) for part in ln.rstrip("\r\n").split("\r")
                 if part.strip())
        first = next(lines, "")
        fields = csv_header(first)
        if fields is None:
            raise InputError(f"{name}: not an nvidia-smi --format=csv log (first line {first.strip()[:60]!r}); "
                             f"record one with `{SMI_COMMAND}`")
        missing = [f for f, role in (("timestamp", "time"), ("temperature.gpu", "temp"), ("utilization.gpu", "util"),
                                     ("clocks_throttle_reasons.active", "reasons")) if role not in fields.values()]
        if missing:
            raise InputError(f"{name}: the burn-in needs {', '.join(missing)} in the log; record it with "
                             f"`{SMI_COMMAND}`")
        roles = list(fields.values())
        out = SmiSeries(name, {}, has_clock="clock" in roles)
        out.notes += [f"column {role} appears {roles.count(role)} times: where they disagree the worse value is used "
                      "and an unreadable one counts as not measured" for role in sorted(set(roles)) if roles.count(role) > 1]
        doctor = SmiLog(name, GPU_HOT_C)
        doctor.feed(first)
        header, last, restart_after, restarting, undated, unread = first.strip(), None, None, False, 0, 0
        for line in lines:
            text = line.strip()
            if text == header:
                restarting, restart_after = True, last
                continue
            try:
                cells = next(csv.reader([line]), [])
            except csv.Error:
                cells = []
            if len(cells) < 2:
                if LOST.search(text):
                    out.lost.append(Lost(_gpu_in(text), last, text[:80]))
                else:
                    unread += 1
                continue
            row = csv_row(cells, fields, 0)
            when = parse_time(row.time)
            if row.lost:
                out.lost.append(Lost(row.gpu, when or last, row.lost))
                continue
            if when is None:
                undated += 1
                continue
            doctor.add(row)
            if restarting:
                out.restarts.append(Restart(restart_after, when))
                restarting = False
            if len(out.samples) < MAX_GPUS or row.gpu in out.samples:
                out.samples.setdefault(row.gpu, []).append(_sample(row, when))
            last = when if last is None or when > last else last
        if restarting:
            out.restarts.append(Restart(restart_after, None))
    if not out.samples and not out.lost:
        raise InputError(f"{name}: no dated samples (timestamps like 2026/12/05 21:00:05.123 expected)")
    if undated > sum(len(s) for s in out.samples.values()):
        raise InputError(f"{name}: {undated} rows have no readable timestamp")
    if undated or unread:
        out.notes.append(f"{undated + unread} line(s) not understood (no readable timestamp or not a CSV row)")
    for samples in out.samples.values():
        samples.sort(key=lambda s: s.time)
    out.problems = [f.message for f in doctor.findings() if f.severity == "problem" and f.kind != "hw_slowdown"]
    return out
