"""The MLPerf Training v2.0 Dell source of issue 14, round 11 (one submitter's single-node A100 systems on the same
benchmarks): the selection rule written in data/calibration/README.md holds for every row, the loader reads each used
row as a ratio against the A100 SXM4 80GB run with both sides' batches, and the source is its own fold of
leave-one-source-out."""

from __future__ import annotations

import pytest

from planner.perf.families import family_of
from conftest import (
    assert_amp_row_against, assert_loaded_as_ratios_to, assert_own_loso_fold, csv_rows_fixture, mlperf_place,
)

SOURCE = "mlperf-v2.0-dell"
COMMIT = "a6ae3e16d97bca208ee5510f3614fcd4fa923650"
REFERENCE = "XE8545x4A100-SXM-80GB"
# single-node system -> chip, one system per GPU model (the rule); multi-node and A30 systems are not used
SYSTEMS = {REFERENCE: "a100-sxm4-80gb", "XE8545x4A100-SXM-40GB": "a100-sxm4-40gb",
           "R750xax4A100-PCIE-80GB-NVBRIDGE": "a100-pcie-80gb"}
# benchmark directory -> (family by architecture, workload class); v2.0's "ssd" directory holds RetinaNet
BENCHMARKS = {"resnet": ("cnn-classification", "cnn"), "ssd": ("detection-segmentation", "cnn"),
              "maskrcnn": ("detection-segmentation", "cnn"), "bert": ("transformer-encoder", "transformer"),
              "rnnt": ("rnn-seq2seq", "rnn")}
# the pairs the rule names: benchmarks with a result on the reference AND the compared system
PAIRS = {("resnet", "a100-sxm4-40gb"), ("maskrcnn", "a100-sxm4-40gb"), ("bert", "a100-sxm4-40gb"),
         ("resnet", "a100-pcie-80gb"), ("ssd", "a100-pcie-80gb"), ("bert", "a100-pcie-80gb"),
         ("rnnt", "a100-pcie-80gb")}


raw = csv_rows_fixture(SOURCE)


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    used = {(mlperf_place(r["url"])[1], r["chip"]) for r in raw if r["use_in_fit"] == "true"}
    assert used == PAIRS and len(used) == sum(r["use_in_fit"] == "true" for r in raw)
    refs = [r for r in raw if r["use_in_fit"] != "true"]
    # one reference run per benchmark that has a pair, on the A100 SXM4 80GB system, kept out of the fit
    assert sorted(mlperf_place(r["url"])[1] for r in refs) == sorted({b for b, _ in PAIRS})
    assert all(mlperf_place(r["url"])[0] == REFERENCE and r["excluded_because"] == "the group's reference itself" for r in refs)
    for r in raw:
        system = mlperf_place(r["url"])[0]
        assert SYSTEMS[system] == r["chip"] and r["chip"] in chips
        assert not system[0].isdigit()  # "2xXE8545...", "16x..." are multi-node systems
        assert f"training_results_v2.0/blob/{COMMIT}/Dell/results/" in r["url"] and r["url"].endswith("/result_0.txt")
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[mlperf_place(r["url"])[1]]
        assert_amp_row_against(r, "a100-sxm4-80gb")
        assert "node throughput / 4" in r["notes"] and r["date"].startswith("2022-05")
    # each side ran its own tuned micro batch: recorded per side (BERT 64 / 32 / 56, RNN-T 128 / 192)
    batch = {(mlperf_place(r["url"])[1], r["chip"]): r["batch_size"] for r in raw}
    assert (batch[("bert", "a100-sxm4-80gb")], batch[("bert", "a100-sxm4-40gb")], batch[("bert", "a100-pcie-80gb")]) \
        == ("64", "32", "56")
    assert (batch[("rnnt", "a100-sxm4-80gb")], batch[("rnnt", "a100-pcie-80gb")]) == ("128", "192")


def test_loader_reads_the_source_as_ratios_to_the_sxm4_80gb_run(raw, chips) -> None:
    # an A100 variant against the 500 W SXM4 80GB board of the same submitter and round: a plausibility bound
    rows = assert_loaded_as_ratios_to(raw, chips, SOURCE, "a100-sxm4-80gb", (0.5, 1.2))
    assert len(rows) == len(PAIRS) and {r.chip.id for r in rows} == {"a100-sxm4-40gb", "a100-pcie-80gb"}


@pytest.mark.slow
def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "mlperf-v0.7-nvidia"))
