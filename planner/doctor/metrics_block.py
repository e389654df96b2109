"""Read metric CSV rows a block at a time (pandas, numpy): the same series as row by row, several times faster."""

from __future__ import annotations

import csv
import io
import itertools
import math
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from planner.doctor import metrics_io as mio
from planner.errors import InputError

if TYPE_CHECKING:
    from planner.doctor.metrics_io import MetricSeries, _Builder

BLOCK_ROWS = 16_384  # rows parsed together; memory stays a few MB whatever the file length
Cells = np.ndarray | Sequence[str]  # a column: numbers parsed by pandas, or the csv module's strings
_BOOLEAN_WORDS = re.compile(r"(?i)true|false")
_NEUMAIER_SUM = sys.version_info >= (3, 12)  # CPython 3.12 made sum() of floats compensated (Neumaier)


def _numbers(cells: Cells, col: str, nums: Sequence[int], name: str) -> tuple[np.ndarray, np.ndarray]:
    """(values, explicit non-finite mask) of one column, as metrics_io._float would give cell by cell."""
    if isinstance(cells, np.ndarray):  # parsed by pandas: every cell was a number
        return cells, ~np.isfinite(cells)
    try:
        values = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
    except ValueError:  # missing cells, '95 %' and the like: the exact per-cell rules (errors carry the line)
        pairs = [mio._float(c, col, n, name) for c, n in zip(cells, nums)]
        return (np.fromiter((v for v, _ in pairs), dtype=np.float64, count=len(pairs)),
                np.fromiter((e for _, e in pairs), dtype=bool, count=len(pairs)))
    return values, ~np.isfinite(values)  # every cell was a number, so a NaN/inf was written as such


def _epochs(cells: Cells, nums: Sequence[int], name: str) -> np.ndarray:
    """Epoch seconds of a time column, as metrics_io._epoch would give cell by cell."""
    try:
        v = np.fromiter(map(float, cells), dtype=np.float64, count=len(cells))
    except ValueError:
        v = None
    if v is not None:
        with np.errstate(invalid="ignore"):
            seconds = np.where(v > 1e11, v / 1000.0, v)
            if np.all(np.isfinite(seconds) & (seconds >= mio.EPOCH_MIN) & (seconds <= mio.EPOCH_MAX)):
                return seconds
    return np.fromiter((mio._epoch(c, n, name) for c, n in zip(cells, nums)), dtype=np.float64, count=len(cells))


def read_csv(lines: Iterator[str], b: _Builder) -> None:
    """Header, then blocks of rows: pandas' C parser for plain numeric blocks, else the csv module, else row by
    row, so every row gets the same values and every error the same first line as when read row by row."""
    name = b.series.name
    reader = csv.reader(lines)
    try:
        header = next(reader, None)
    except csv.Error as exc:
        raise InputError(f"{name}: malformed CSV near line {reader.line_num}: {exc}") from None
    if not header or not any(h.strip() for h in header):
        raise InputError(f"{name}: no header row")
    header = [h.strip().lstrip("\ufeff") for h in header]
    b.check_header(header)
    b.plan(header)
    consumed = reader.line_num  # physical lines read so far
    while True:
        block = list(itertools.islice(lines, BLOCK_ROWS))
        if not block:
            return
        if _add_plain(b, block, consumed, header):
            consumed += len(block)
        else:
            consumed = _add_csv(b, block, lines, consumed, header)


def _add_plain(b: _Builder, block: list[str], consumed: int, header: list[str]) -> bool:
    """One line per row, no quotes, every line with the header's width: parse the numeric columns with pandas."""
    text = "".join(block)
    width = len(header)
    if ('"' in text or text.count("\r") != text.count("\r\n") or text.count(",") != (width - 1) * len(block)
            or _BOOLEAN_WORDS.search(text)):  # pandas reads TRUE/FALSE as numbers, float() does not
        return False
    numeric = {i for i, col in b._plan or [] if (b.mapping[col] or ("",))[0] != "time"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            frame = pd.read_csv(io.StringIO(text), header=None, engine="c", na_filter=False,
                                dtype={i: (np.float64 if i in numeric else object) for i in range(width)})
    except (ValueError, pd.errors.ParserError):  # a cell that is not a plain number (NaN, '', '95 %', ...)
        return False
    if frame.shape != (len(block), width):
        return False  # a line with fewer fields, or one pandas saw differently
    nums = range(consumed + 1, consumed + len(block) + 1)

    def column(i: int) -> Cells:
        series = frame[i]
        return series.to_numpy(dtype=np.float64) if i in numeric else series.tolist()

    return add_block(b, len(block), nums, header, column)


def _add_csv(b: _Builder, block: list[str], lines: Iterator[str], consumed: int, header: list[str]) -> int:
    """The block through the csv module (a quoted field may run past it), then row by row if needed."""
    name = b.series.name
    reader = csv.reader(itertools.chain(block, lines))
    rows: list[list[str]] = []
    nums: list[int] = []  # the line each row ends on, for messages
    broken: str | None = None
    try:
        for row in reader:
            rows.append(row)
            nums.append(consumed + reader.line_num)
            if reader.line_num >= len(block):
                break
    except csv.Error as exc:  # the rows before it are still judged first, as when reading row by row
        broken = f"{name}: malformed CSV near line {consumed + reader.line_num}: {exc}"
    if broken is not None or not add_rows(b, rows, nums, header):
        for row, number in zip(rows, nums):
            if not any(c.strip() for c in row):
                continue
            if len(row) > len(header):
                raise InputError(f"{name}: line {number} has {len(row)} fields, header has {len(header)}")
            b.add_cells(row, header, number)
    if broken is not None:
        raise InputError(broken)
    return consumed + reader.line_num


def add_rows(b: _Builder, rows: list[list[str]], nums: list[int], header: list[str]) -> bool:
    """Rows split by the csv module, all of the header's width; False (nothing changed) otherwise."""
    if not rows or set(map(len, rows)) != {len(header)}:
        return False
    columns = list(zip(*rows))
    return add_block(b, len(rows), nums, header, columns.__getitem__, rows)


def add_block(b: _Builder, m: int, nums: Sequence[int], header: list[str], column: Callable[[int], Cells],
              rows: list[list[str]] | None = None) -> bool:
    """Append m rows given column by column; False (and nothing changed) when they need the per-row path
    (blank rows, or an error whose line must be the first one in file order)."""
    if b._plan is None:
        b.plan(header)
    s = b.series
    steps = np.arange(s.total_rows + 1, s.total_rows + m + 1, dtype=np.float64)
    epochs = np.full(m, math.nan)
    values: dict[tuple[str, int | None], np.ndarray] = {}
    flags: dict[str, np.ndarray] = {}
    expected: int | None = None
    try:
        last = {col: i for i, col in b._plan or []}  # a repeated column name: its last cell counts, as in a dict
        for col, i in last.items():
            target = b.mapping[col]
            assert target is not None
            role, gpu = target
            if role == "time":
                epochs = _epochs(column(i), nums, s.name)
                continue
            v, explicit = _numbers(column(i), col, nums, s.name)
            finite = np.isfinite(v)
            if role == "step":
                if np.any(finite & (np.abs(np.where(finite, v, 0.0)) > mio.MAX_STEP)):
                    return False  # the per-row path raises with the right line
                steps = np.where(finite, v, steps)
            elif role == "expected":
                ok = np.flatnonzero(finite & (np.where(finite, v, 0.0) > 0))
                if ok.size:
                    expected = int(v[ok[-1]])
            else:
                scale = b.inverse.get(col)
                if scale is not None:  # a time per step read as throughput: steps per second
                    with np.errstate(divide="ignore", invalid="ignore"):
                        v = np.where(explicit | np.isnan(v), v, np.where(v > 0, scale / v, math.nan))
                values[target] = v
                if explicit.any():
                    flags[role if gpu is None else f"gpu{gpu}_{role}"] = explicit
    except InputError:
        return False  # replayed row by row so the first bad cell in file order is the one reported
    if rows is not None and any(np.isnan(v).any() for v in values.values()) and any(
            not "".join(r).strip() for r in rows):
        return False  # a blank row is skipped, not a row of NaN: rare, so row by row
    if expected is not None:
        s.expected_steps = expected
    if s.first_step is None:
        s.first_step = float(steps[0])
    s.last_step = float(steps[-1])
    s.total_rows += m
    _append(b, steps, epochs, values, flags)
    return True


def _append(b: _Builder, steps: np.ndarray, epochs: np.ndarray, values: dict, flags: dict[str, np.ndarray]) -> None:
    """Add rows, folding whole buckets and halving the kept rows exactly where the per-row path would."""
    s = b.series
    m, pos = len(steps), 0
    while pos < m:
        limit = 2 * mio.KEPT_ROWS
        if s.bucket == 1:
            take = min(m - pos, limit - len(s.steps))
        else:
            take = min(m - pos, (limit - b.folded) * s.bucket - (len(s.steps) - b.folded))
        end = pos + take
        base = len(s.steps)
        arrays = [(b._array(target), v) for target, v in values.items()]  # created as the first cell would
        mio._pad(s)
        for arr, v in arrays:
            arr.frombytes(v[pos:end].tobytes())
        s.steps.frombytes(steps[pos:end].tobytes())
        s.epoch_s.frombytes(epochs[pos:end].tobytes())
        for label, mask in flags.items():
            hits = np.flatnonzero(mask[pos:end])
            if hits.size:
                s.nonfinite.setdefault(label, []).extend((hits + base).tolist())
        pos = end
        if s.bucket > 1:
            whole = (len(s.steps) - b.folded) // s.bucket
            if whole:
                _fold(s, b.folded, whole)
                b.folded += whole
        if (b.folded if s.bucket > 1 else len(s.steps)) >= limit:
            mio.compact(s)
            b.folded, b._arrays = len(s.steps), {}


def _fold(s: MetricSeries, start: int, whole: int) -> None:
    """Rows from `start` become `whole` buckets of s.bucket rows (what fold_tail does one bucket at a time)."""
    size = s.bucket
    stop = start + whole * size
    for arr in list(s.values.values()) + [a for per in s.per_gpu.values() for a in per.values()]:
        seg = np.array(arr[start:stop], dtype=np.float64).reshape(whole, size)
        rest = arr[stop:]
        del arr[start:]
        arr.frombytes(bucket_means(seg).tobytes())
        arr.extend(rest)
    for name in ("steps", "epoch_s"):
        arr = getattr(s, name)
        firsts, rest = arr[start:stop:size], arr[stop:]
        del arr[start:]
        arr.extend(firsts)
        arr.extend(rest)
    for rows in s.nonfinite.values():
        cut = next((k for k in range(len(rows) - 1, -1, -1) if rows[k] < start), -1) + 1
        moved = sorted({start + (r - start) // size if r < stop else r - stop + start + whole for r in rows[cut:]})
        del rows[cut:]
        rows.extend(moved)


def bucket_means(seg: np.ndarray) -> np.ndarray:
    """Per row of seg: sum(finite) / len(finite) with the exact float sum CPython's sum() gives (NaN if none)."""
    finite = np.isfinite(seg)
    x = np.where(finite, seg, 0.0)  # adding 0.0 leaves both sums and the compensation as they were
    total = np.zeros(seg.shape[0])
    with np.errstate(invalid="ignore", over="ignore"):
        if _NEUMAIER_SUM:
            comp = np.zeros(seg.shape[0])
            for j in range(seg.shape[1]):
                xj = x[:, j]
                t = total + xj
                comp += np.where(np.abs(total) >= np.abs(xj), (total - t) + xj, (xj - t) + total)
                total = t
            total = np.where((comp != 0) & np.isfinite(comp), total + comp, total)
        else:
            for j in range(seg.shape[1]):
                total = total + x[:, j]
        count = finite.sum(axis=1)
        return np.where(count > 0, total / np.maximum(count, 1), math.nan)
