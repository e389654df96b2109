"""The numpy block path of the metrics reader gives exactly the series and findings of the row-by-row path."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.doctor import metrics_block
from planner.doctor.metrics import find_issues
from planner.doctor.metrics_io import read_metrics
from planner.errors import InputError


def _cell(rng: random.Random, kind: str, row: int) -> str:
    pick = rng.random()
    if pick < 0.03 and kind == "time":
        return rng.choice(["", "none", "2023-11-14T22:13:20Z", "1700000000123"])  # ISO and epoch ms too
    if pick < 0.03:
        return rng.choice(["", "nan", "inf", "-inf", "none", " 7 ", "95%", "NaN"])
    if kind == "step":
        return str(row if rng.random() > 0.01 else max(1, row - 40))  # an occasional restart
    if kind == "time":
        return f"{1_700_000_000 + row * 10 + (600 if rng.random() < 0.002 else 0)}"
    return f"{rng.uniform(-5, 100):.6g}"


def _csv(seed: int, rows: int, short_every: int = 0) -> bytes:
    rng = random.Random(seed)
    kinds = ["step", "loss", "tokens_per_s", "gpu0_util", "gpu1_util", "gpu0_temp", "gpu1_temp", "grad_norm",
             "time", "note"]
    out = [",".join(kinds)]
    for n in range(1, rows + 1):
        cells = [_cell(rng, k, n) if k != "note" else "x" for k in kinds]
        if short_every and n % short_every == 0:
            cells = cells[: rng.randint(1, len(cells) - 1)]
        if rng.random() < 0.002:
            cells = [""] * len(cells)  # a blank row
        out.append(",".join(cells))
    return ("\n".join(out) + "\n").encode()


def _read(data: bytes, monkeypatch: pytest.MonkeyPatch, *, blocks: bool):
    with monkeypatch.context() as m:
        if not blocks:
            m.setattr(metrics_block, "add_block", lambda *a, **k: False)
        return read_metrics(data)


def _same(a, b) -> None:
    assert (a.total_rows, a.bucket, a.first_step, a.last_step, a.expected_steps) == (
        b.total_rows, b.bucket, b.first_step, b.last_step, b.expected_steps)
    assert a.steps.tobytes() == b.steps.tobytes() and a.epoch_s.tobytes() == b.epoch_s.tobytes()
    assert list(a.values) == list(b.values)
    assert all(a.values[k].tobytes() == b.values[k].tobytes() for k in a.values)
    assert {r: {g: x.tobytes() for g, x in p.items()} for r, p in a.per_gpu.items()} == {
        r: {g: x.tobytes() for g, x in p.items()} for r, p in b.per_gpu.items()}
    assert a.nonfinite == b.nonfinite and a.roles == b.roles and a.notes == b.notes
    assert find_issues(a) == find_issues(b)


@pytest.mark.parametrize("rows,short_every", [(90, 0), (1_000, 0), (2_345, 0), (1_500, 97)])
def test_blocks_equal_rows_across_buckets(rows: int, short_every: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("planner.doctor.metrics_io.KEPT_ROWS", 40)  # several halvings: buckets of 2 .. 32 rows
    monkeypatch.setattr(metrics_block, "BLOCK_ROWS", 37)  # blocks that straddle bucket and halving edges
    data = _csv(rows, rows, short_every)
    fast, slow = _read(data, monkeypatch, blocks=True), _read(data, monkeypatch, blocks=False)
    assert fast.bucket > 1 or rows < 80
    _same(fast, slow)


def test_plain_blocks_take_the_pandas_path(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = metrics_block._add_plain
    monkeypatch.setattr(metrics_block, "_add_plain", lambda *a: calls.append(real(*a)) or calls[-1])
    series = read_metrics(b"step,loss\r\n" + b"".join(b"%d,%f\r\n" % (n, 1 / n) for n in range(1, 50_000)))
    assert len(calls) == 4 and all(calls) and series.total_rows == 49_999


def test_repeated_columns_take_the_last_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [f"{n * 10},{1 / n},{'nan' if n % 7 == 0 else n + 1000},{'inf' if n % 11 == 0 else n % 5}"
            for n in range(1, 3000)]
    data = ("step,loss,step,loss\n" + "\n".join(rows) + "\n").encode()
    _same(_read(data, monkeypatch, blocks=True), _read(data, monkeypatch, blocks=False))


@pytest.mark.parametrize("bad,line", [("abc", 7), ("1e16", 5)])
def test_first_bad_line_is_reported_as_row_by_row(bad: str, line: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [f"{n},{1 / n}" for n in range(1, 30)]
    rows[line - 2] = f"{bad},0.5" if bad == "1e16" else f"{line - 1},{bad}"
    rows[20] = "21,also-bad"
    data = ("step,loss\n" + "\n".join(rows) + "\n").encode()
    with pytest.raises(InputError) as fast:
        _read(data, monkeypatch, blocks=True)
    with pytest.raises(InputError) as slow:
        _read(data, monkeypatch, blocks=False)
    assert str(fast.value) == str(slow.value) and f"row {line}" in str(fast.value)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), min_size=2, max_size=64),
       st.sampled_from([2, 4, 8, 16]))
def test_bucket_means_match_python_sum(xs: list[float], size: int) -> None:
    xs = (xs * size)[: size * max(1, len(xs) // size)]
    whole = len(xs) // size
    got = metrics_block.bucket_means(np.array(xs[: whole * size]).reshape(whole, size))
    for k in range(whole):
        finite = [x for x in xs[k * size:(k + 1) * size] if np.isfinite(x)]
        want = sum(finite) / len(finite) if finite else float("nan")
        assert np.array([want]).tobytes() == np.array([got[k]]).tobytes()


_CELL_TEXT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=-1e6, max_value=1e6).map(lambda x: f"{x:.5f}"),
    st.text(alphabet="0123456789.eE+-_ infatyINFTRUEFALSn%\t", min_size=0, max_size=8),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10**6).map(str), _CELL_TEXT, _CELL_TEXT), min_size=1, max_size=40))
def test_pandas_blocks_read_cells_like_float(rows: list[tuple[str, str, str]]) -> None:
    """Cells pandas might read differently from float() (TRUE, '1_0', 'inf ', '95%') give the per-row result."""
    data = ("step,loss,gpu_util\n" + "".join(",".join(r) + "\n" for r in rows)).encode()
    outcomes = []
    for blocks in (True, False):
        with pytest.MonkeyPatch.context() as m:
            if not blocks:
                m.setattr(metrics_block, "add_block", lambda *a, **k: False)
            try:
                outcomes.append(read_metrics(data))
            except InputError as exc:
                outcomes.append(str(exc))
    fast, slow = outcomes
    if isinstance(fast, str) or isinstance(slow, str):
        assert fast == slow
    else:
        _same(fast, slow)
