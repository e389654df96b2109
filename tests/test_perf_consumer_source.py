"""The consumer-card source of issue 14, round 8 (a cloud's ResNet-50 runs on the RTX 5090, 4090 and 3090): the
selection rule written in data/calibration/README.md holds for every row, the loader reads each used row as a ratio
against the 3090's FP32 (= TF32) run, and the source is its own fold of leave-one-source-out."""

from __future__ import annotations

import pytest

from planner.perf.families import family_of
from planner.perf.sources import load_independent_rows
from conftest import assert_own_loso_fold, csv_rows_fixture
from test_perf_physics import FORBIDDEN  # the held-back sources (tests/ is on sys.path under pytest)

SOURCE = "chenjianyun-resnet50"
CARDS = {"RTX 5090": "rtx-5090", "RTX 4090": "rtx-4090", "RTX 3090": "rtx-3090"}


raw = csv_rows_fixture(SOURCE)


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    # one row per card and precision of the post's table: 3 GeForce cards x (FP32, FP16 mixed)
    assert sorted((r["gpu"], r["precision"]) for r in raw) == sorted(
        (g, p) for g in CARDS for p in ("tf32", "amp"))
    for r in raw:
        assert CARDS[r["gpu"]] == r["chip"] and r["chip"] in chips
        # FP32 of a conv net on Ampere or later runs TF32 convolutions; FP16 mixed precision is amp
        assert (r["precision"], r["precision_reported"].split(" ")[0]) in {("tf32", "FP32"), ("amp", "FP16")}
        assert r["reference"] == "rtx-3090@tf32" and r["batch_size"] == "256"
        assert family_of(r["workload"]) == "cnn-classification" and r["workload_class"] == "cnn"
        assert r["model_params_source"].startswith("approx.") and "input-bound" in r["notes"]
        assert r["url"].startswith("https://") and r["date"] and r["software"]
        assert not any(f.lower() in r["url"].lower() for f in FORBIDDEN)
    refs = [r for r in raw if r["use_in_fit"] != "true"]
    assert [(r["chip"], r["precision"], r["excluded_because"]) for r in refs] == [
        ("rtx-3090", "tf32", "the group's reference itself")]


def test_loader_reads_the_source_as_ratios_to_the_3090_tf32_run(raw, chips) -> None:
    rows = [r for r in load_independent_rows(chips=chips) if r.source == SOURCE]
    used = {(r["chip"], r["precision"]): r for r in raw if r["use_in_fit"] == "true"}
    ref = next(r for r in raw if r["use_in_fit"] != "true")
    assert {(r.chip.id, r.precision) for r in rows} == set(used) and len(rows) == 5
    for row in rows:
        src = used[(row.chip.id, row.precision)]
        assert row.ratio == pytest.approx(float(src["throughput"]) / float(ref["throughput"]))
        assert (row.ref_chip.id, row.ref_precision, row.batch_ratio) == ("rtx-3090", "tf32", 1.0)
        assert row.model_params == float(src["model_params"]) and row.lab == src["lab"]


@pytest.mark.slow
def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "gpu-insights-v1"))
