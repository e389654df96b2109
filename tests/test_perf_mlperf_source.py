"""The MLPerf Training v0.7 source of issue 14, round 10 (NVIDIA's DGX-1 and DGX A100 runs of the same benchmarks):
the selection rule written in data/calibration/README.md holds for every row, the loader reads each used row as a
ratio against the DGX-1 (V100 SXM2 16GB) run with both sides' batches, and the source is its own fold of
leave-one-source-out."""

from __future__ import annotations

import pytest

from planner.perf.families import family_of
from conftest import (
    assert_amp_row_against, assert_loaded_as_ratios_to, assert_own_loso_fold, csv_rows_fixture, mlperf_place,
)

SOURCE = "mlperf-v0.7-nvidia"
COMMIT = "c66406115bb3c60cb9c49889b076727ccecba31e"
# benchmark directory -> (family by architecture, workload class), as the README rule says
BENCHMARKS = {"resnet": ("cnn-classification", "cnn"), "ssd": ("detection-segmentation", "cnn"),
              "maskrcnn": ("detection-segmentation", "cnn"), "gnmt": ("rnn-seq2seq", "rnn"),
              "transformer": ("transformer-encoder", "transformer"), "bert": ("transformer-encoder", "transformer")}
SYSTEMS = {"dgx1": "v100-sxm2-16gb", "dgxa100": "a100-sxm4-40gb"}


raw = csv_rows_fixture(SOURCE)


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    # one DGX-1 and one DGX A100 row per benchmark run single-node on both systems, result_0 only
    assert sorted((mlperf_place(r["url"])[1], r["chip"]) for r in raw) == sorted(
        (b, c) for b in BENCHMARKS for c in SYSTEMS.values())
    for r in raw:
        system = r["url"].split("/NVIDIA/results/")[1].split("_ngc20.06_")[0]
        assert SYSTEMS[system] == r["chip"] and r["chip"] in chips
        assert f"training_results_v0.7/blob/{COMMIT}/" in r["url"] and r["url"].endswith("/result_0.txt")
        assert "_n" not in system  # no multi-node directory
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[mlperf_place(r["url"])[1]]
        assert_amp_row_against(r, "v100-sxm2-16gb")
        assert "allreduce" in r["notes"] and r["date"].startswith("2020-0")
    refs = [r for r in raw if r["use_in_fit"] != "true"]
    assert {r["chip"] for r in refs} == {"v100-sxm2-16gb"} and len(refs) == len(BENCHMARKS)
    assert all(r["excluded_because"] == "the group's reference itself" for r in refs)
    # the two systems ran their own tuned batches: recorded per side (BERT 6 vs 32 per GPU)
    bert = {r["chip"]: r["batch_size"] for r in raw if mlperf_place(r["url"])[1] == "bert"}
    assert bert == {"v100-sxm2-16gb": "6", "a100-sxm4-40gb": "32"}


def test_loader_reads_the_source_as_ratios_to_the_dgx1_run(raw, chips) -> None:
    # an A100 node over a V100 node of the same round: a plausibility bound on the ratio
    rows = assert_loaded_as_ratios_to(raw, chips, SOURCE, "v100-sxm2-16gb", (1.5, 3.5))
    assert len(rows) == len(BENCHMARKS) and {r.chip.id for r in rows} == {"a100-sxm4-40gb"}


@pytest.mark.slow
def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "gpu-insights-v1"))
