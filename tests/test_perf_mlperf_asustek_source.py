"""The MLPerf Training v3.1 ASUSTeK source of issue 14, round 11 (one submitter's single-node H100 SXM5 and H100 PCIe
systems on the same benchmarks): the rule written in data/calibration/README.md holds for every row (incl. the FP8
BERT pair kept out), the loader reads each used row as a ratio against the H100 SXM5 run, and the source is its own
fold of leave-one-source-out."""

from __future__ import annotations

import pytest

from planner.perf.families import family_of
from conftest import (
    assert_amp_row_against, assert_loaded_as_ratios_to, assert_own_loso_fold, assert_use_in_fit, csv_rows_fixture,
    mlperf_place,
)

SOURCE = "mlperf-v3.1-asustek"
COMMIT = "f33f9444205023cf49bf19ec960992b39663f6fd"
REFERENCE = "ESC-N8-E11"
SYSTEMS = {REFERENCE: "h100-sxm5-80gb", "ESC8000-E11-8xH100-PCIE-80GB": "h100-pcie-80gb"}
# benchmark directory -> (family by architecture, workload class); DLRM is not used
BENCHMARKS = {"resnet": ("cnn-classification", "cnn"), "ssd": ("detection-segmentation", "cnn"),
              "maskrcnn": ("detection-segmentation", "cnn"), "bert": ("transformer-encoder", "transformer"),
              "rnnt": ("rnn-seq2seq", "rnn"), "unet3d": ("detection-segmentation", "cnn")}
FP8_PAIR = "bert"  # FP8 layers on the reference: transcribed, kept out of the fit


raw = csv_rows_fixture(SOURCE)


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    # both systems on every benchmark of the rule, one first-run file each
    assert sorted((mlperf_place(r["url"])[1], r["chip"]) for r in raw) == sorted(
        (b, c) for b in BENCHMARKS for c in SYSTEMS.values())
    for r in raw:
        system, name = mlperf_place(r["url"])[0], r["url"].rsplit("/", 1)[1]
        assert SYSTEMS[system] == r["chip"] and r["chip"] in chips
        assert f"training_results_v3.1/blob/{COMMIT}/ASUSTeK/results/" in r["url"]
        # the first run file: result_0, or result_1 where the directory starts at 1 (the PCIe system, the ref's ssd)
        first = "result_1.txt" if system != REFERENCE or mlperf_place(r["url"])[1] == "ssd" else "result_0.txt"
        assert name == first
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[mlperf_place(r["url"])[1]]
        assert_amp_row_against(r, "h100-sxm5-80gb")
        assert "node throughput / 8" in r["notes"] and r["date"].startswith("2023-")
        assert_use_in_fit(r, reference_run=system == REFERENCE, fp8_pair=mlperf_place(r["url"])[1] == FP8_PAIR)
    assert sum(r["use_in_fit"] == "true" for r in raw) == len(BENCHMARKS) - 1


def test_loader_reads_the_source_as_ratios_to_the_h100_sxm_run(raw, chips) -> None:
    # a 350 W PCIe board against the 700 W SXM5 board: a plausibility bound
    rows = assert_loaded_as_ratios_to(raw, chips, SOURCE, "h100-sxm5-80gb", (0.4, 1.0))
    assert len(rows) == len(BENCHMARKS) - 1 and {r.chip.id for r in rows} == {"h100-pcie-80gb"}
    assert not any(family_of(r.workload) == "transformer-encoder" for r in rows)  # the FP8 BERT pair is out


@pytest.mark.slow
def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "mlperf-v2.0-dell"))
