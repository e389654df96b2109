"""Long metrics files: rows beyond the kept count are averaged into buckets, so memory does not grow with the run."""

from __future__ import annotations

import math

from planner.doctor import diagnose_metrics
from planner.doctor.metrics_io import read_metrics


def test_long_run_is_bucketed_with_exact_totals_and_nan_kept(tmp_path, monkeypatch):
    monkeypatch.setattr("planner.doctor.metrics_io.KEPT_ROWS", 500)
    rows = 7_919  # not a power of two: a bucket is still being filled at the end
    path = tmp_path / "long.csv"
    with path.open("w") as fh:
        fh.write("step,loss,tokens_per_s\n")
        for step in range(1, rows + 1):
            loss = "nan" if 6_000 <= step < 6_040 else f"{4.0 / (1 + step / 500):.5f}"
            fh.write(f"{step},{loss},{1000 if step < 7_000 else 300}\n")
    series = read_metrics(path)
    assert series.total_rows == rows and series.first_step == 1 and series.last_step == rows
    assert len(series.steps) <= 2 * 500 and series.bucket > 1  # bounded, whatever the length
    assert list(series.steps) == sorted(series.steps)
    kept = list(series.values["loss"])
    blown = {i for i, x in enumerate(kept) if not math.isfinite(x)}
    assert blown <= set(series.nonfinite["loss"])  # a bucket is NaN only when all its rows were...
    assert len(blown) < len(series.nonfinite["loss"]) + 1 and len(blown) < len(kept) // 10
    nan_steps = [series.steps[i] for i in series.nonfinite["loss"]]
    assert nan_steps and all(6_000 - series.bucket < s <= 6_040 for s in nan_steps)  # ...and keep where NaN was
    report = diagnose_metrics(path, expected_steps=10_000)
    kinds = {f.kind for f in report.findings}
    assert {"nan_loss", "throughput_drop", "run_stopped"} <= kinds
    assert report.rows == rows and report.last_step == rows
    stopped = next(f for f in report.findings if f.kind == "run_stopped")
    assert f"step {rows} of 10000" in stopped.message
    assert any("buckets of" in n for n in report.notes)


def test_short_run_is_not_bucketed(tmp_path):
    path = tmp_path / "short.csv"
    path.write_text("step,loss\n" + "".join(f"{s},{1.0 / s}\n" for s in range(1, 301)))
    series = read_metrics(path)
    assert series.bucket == 1 and len(series.steps) == 300 and not any("buckets" in n for n in series.notes)
