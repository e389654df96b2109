"""The MLPerf Training v4.0 Fujitsu source of issue 14, round 11 (L40S single-node systems of 8, 14 and 16 GPUs against
a 4-GPU H100 SXM5 node on the same benchmarks): the rule written in data/calibration/README.md holds for every row
(incl. the FP8 BERT pair kept out), the loader reads each used row as an L40S / H100 SXM5 ratio per GPU, and the source
is its own fold of leave-one-source-out."""

from __future__ import annotations

import pytest

from planner.perf.families import family_of
from conftest import (
    assert_amp_row_against, assert_loaded_as_ratios_to, assert_own_loso_fold, assert_use_in_fit, csv_rows_fixture,
    mlperf_place,
)

SOURCE = "mlperf-v4.0-fujitsu"
COMMIT = "62f111b7690f163b269f32e4f93dcaaa13717c9c"
REFERENCE = "GX2560M7_H100_SXM_80GBx4"
# system -> (chip, GPUs per node); each L40S system ran its own benchmarks
SYSTEMS = {REFERENCE: ("h100-sxm5-80gb", 4), "PRIMERGY-CDI-L40Sx8": ("l40s", 8),
           "PRIMERGY-CDI-L40Sx14": ("l40s", 14), "PRIMERGY-CDI-L40Sx16": ("l40s", 16)}
# benchmark directory -> (family by architecture, workload class, the L40S system that ran it)
BENCHMARKS = {"resnet": ("cnn-classification", "cnn", "PRIMERGY-CDI-L40Sx8"),
              "unet3d": ("detection-segmentation", "cnn", "PRIMERGY-CDI-L40Sx14"),
              "ssd": ("detection-segmentation", "cnn", "PRIMERGY-CDI-L40Sx16"),
              "bert": ("transformer-encoder", "transformer", "PRIMERGY-CDI-L40Sx16")}
FP8_PAIR = "bert"


raw = csv_rows_fixture(SOURCE)


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    assert sorted((mlperf_place(r["url"])[1], mlperf_place(r["url"])[0]) for r in raw) == sorted(
        [(b, REFERENCE) for b in BENCHMARKS] + [(b, v[2]) for b, v in BENCHMARKS.items()])
    for r in raw:
        system = mlperf_place(r["url"])[0]
        chip, gpus = SYSTEMS[system]
        assert r["chip"] == chip and chip in chips
        assert f"training_results_v4.0/blob/{COMMIT}/Fujitsu/results/" in r["url"] and r["url"].endswith("/result_0.txt")
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[mlperf_place(r["url"])[1]][:2]
        assert_amp_row_against(r, "h100-sxm5-80gb")
        assert f"node throughput / {gpus}" in r["notes"] and r["date"].startswith("2024-")
        assert_use_in_fit(r, reference_run=system == REFERENCE, fp8_pair=mlperf_place(r["url"])[1] == FP8_PAIR)


def test_loader_reads_the_source_as_per_gpu_ratios_to_the_h100_sxm_run(raw, chips) -> None:
    # an L40S against an H100 SXM5, per GPU: a plausibility bound
    rows = assert_loaded_as_ratios_to(raw, chips, SOURCE, "h100-sxm5-80gb", (0.1, 1.0))
    assert len(rows) == len(BENCHMARKS) - 1 and {r.chip.id for r in rows} == {"l40s"}


@pytest.mark.slow
def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "mlperf-v3.1-asustek"))
