"""The one signal engine: the same readers, windows and thresholds for `doctor metrics` (after the run) and
`doctor watch` (while it runs), so both report the same findings on the same rows by construction."""

from __future__ import annotations

import csv
import json
import math
from typing import Any, Optional

from planner.doctor import metrics_block
from planner.doctor import metrics_io as mio
from planner.doctor.metrics import find_issues
from planner.settings import GPU_HOT_C
from planner.doctor.report import MetricFinding, MetricsReport
from planner.errors import InputError
from planner.perf.trainlog import flat


TEMP_LIMIT_RANGE_C = (20, 130)  # a --temp-limit the doctor can mean: room temperature to past any GPU's slowdown


def check_temp_limit(value: float) -> None:
    """--temp-limit of `doctor smi`, `doctor metrics` and `doctor watch` alike: a GPU temperature in range."""
    low, high = TEMP_LIMIT_RANGE_C
    if not (math.isfinite(value) and low <= value <= high):
        raise InputError(f"--temp-limit {value:g} °C is out of range ({low}-{high} °C)")


def check_expected_steps(value: Optional[int]) -> None:
    """--expected-steps of `doctor metrics` and `doctor watch` alike: a positive number of steps."""
    if value is not None and value <= 0:
        raise InputError(f"--expected-steps must be positive, got {value}")


def metrics_report(series: mio.MetricSeries, *, expected_steps: Optional[int] = None,
                   temp_limit_c: float = GPU_HOT_C) -> MetricsReport:
    """Findings and the reading summary for a parsed series: what `doctor metrics` prints and the watch raises."""
    findings = find_issues(series, expected_steps=expected_steps, temp_limit_c=temp_limit_c)
    return MetricsReport(
        findings=findings,
        rows=series.total_rows,
        first_step=int(series.first_step) if series.first_step is not None else None,
        last_step=int(series.last_step) if series.last_step is not None else None,
        columns=dict(series.roles),
        ignored=list(series.ignored),
        format=series.format,
        notes=list(series.notes),
    )


def finding_key(f: MetricFinding) -> str:
    """What a finding is about (its kind and subject, e.g. 'thermal_throttling:GPU1'): as the run grows, a finding
    with this key whose steps overlap one already said is the same finding (its start may move with the baseline)."""
    return f"{f.kind}:{f.message.split(' ', 1)[0][:24]}"


class MetricsFeed:
    """Lines of a metrics file as they arrive (the watch's chunks) into the reader `doctor metrics` uses; rows a
    logger left half-written or malformed are counted and skipped instead of stopping the watch."""

    def __init__(self, name: str, columns: Optional[dict[str, tuple[str, Optional[int]]]] = None) -> None:
        self.name, self.columns = name, columns
        self.builder: Optional[mio._Builder] = None
        self.header: Optional[list[str]] = None
        self.header_line = ""
        self.consumed = 0  # physical lines read, for messages
        self.bad_lines = 0

    @property
    def rows(self) -> int:
        return self.builder.series.total_rows if self.builder is not None else 0

    def feed(self, lines: list[str]) -> None:
        lines = [ln for ln in lines if ln.strip()]
        if not lines:
            return
        if self.builder is None:
            if "\x00" in lines[0]:  # what `doctor metrics` refuses, said the same way
                raise InputError(f"{self.name}: NUL bytes in the first line: a binary file or UTF-16 text, not a "
                                 "metrics CSV or JSONL; give the file the logger writes (UTF-8)")
            fmt = "jsonl" if lines[0].lstrip().lstrip("\ufeff").startswith("{") else "csv"
            self.builder = mio._Builder(self.name, fmt, self.columns)
        if self.builder.series.format == "jsonl":
            self._jsonl(lines)
        else:
            self._csv(lines)

    def _jsonl(self, lines: list[str]) -> None:
        b = self.builder
        assert b is not None
        for line in lines:
            self.consumed += 1
            try:
                obj = json.loads(line)
                if not isinstance(obj, dict):
                    raise ValueError
                row = flat(obj)
                self._check(row)
                b.add(row, self.consumed)
            except (ValueError, RecursionError, InputError):
                self.bad_lines += 1

    def _check(self, row: dict[str, Any]) -> None:
        """Raise InputError if a mapped cell would be refused, before the row touches the arrays."""
        b = self.builder
        assert b is not None
        for col, raw in row.items():
            if col not in b.mapping:
                b._map(col)
            target = b.mapping.get(col)
            if target is None:
                continue
            if target[0] == "time":
                mio._epoch(raw, self.consumed, self.name)
            else:
                value, _ = mio._float(raw, col, self.consumed, self.name)
                if target[0] == "step" and math.isfinite(value) and abs(value) > mio.MAX_STEP:
                    raise InputError("step")

    def _csv(self, lines: list[str]) -> None:
        b = self.builder
        assert b is not None
        if self.header is None:
            first = lines.pop(0)
            try:
                header = [h.strip().lstrip("\ufeff") for h in next(csv.reader([first]), [])]
            except csv.Error:
                header = []
            self.consumed += 1
            if not any(header):
                raise InputError(f"{self.name}: no header row")
            b.check_header(header)
            b.plan(header)
            self.header, self.header_line = header, first.strip()
        elif lines[0].strip() == self.header_line:
            lines.pop(0)  # the header again: a logger that rewrote the file, or copytruncate and a restart
            self.consumed += 1
        if not lines:
            return
        block = [ln if ln.endswith("\n") else ln + "\n" for ln in lines]
        start = self.consumed
        self.consumed += len(block)
        if metrics_block._add_plain(b, block, start, self.header):
            return
        rows: list[list[str]] = []
        nums: list[int] = []
        for n, line in enumerate(block, start + 1):
            try:
                rows.append(next(csv.reader([line]), []))
                nums.append(n)
            except csv.Error:
                self.bad_lines += 1
        try:
            if metrics_block.add_rows(b, rows, nums, self.header):
                return
        except InputError:
            pass
        for row, n in zip(rows, nums):
            if not any(c.strip() for c in row):
                continue
            try:
                if len(row) > len(self.header):
                    raise InputError("width")
                self._check({col: row[i] for i, col in b._plan or [] if i < len(row)})
                b.add_cells(row, self.header, n)
            except InputError:
                self.bad_lines += 1

    def series(self) -> Optional[mio.MetricSeries]:
        """The rows so far as `read_metrics` would give them (None before the first metric row)."""
        if self.builder is None or not self.builder.series.steps:
            return None
        s = self.builder.series
        mio._pad(s)
        s.ignored = list(self.builder.ignored)
        return s
