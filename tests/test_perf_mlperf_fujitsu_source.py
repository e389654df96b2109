"""The MLPerf Training v4.0 Fujitsu source of issue 14, round 11 (L40S single-node systems of 8, 14 and 16 GPUs against
a 4-GPU H100 SXM5 node on the same benchmarks): the rule written in data/calibration/README.md holds for every row
(incl. the FP8 BERT pair kept out), the loader reads each used row as an L40S / H100 SXM5 ratio per GPU, and the source
is its own fold of leave-one-source-out."""

from __future__ import annotations

import csv

import pytest

from planner.perf.families import family_of
from planner.perf.sources import INDEPENDENT_CSV, load_independent_rows
from conftest import assert_own_loso_fold
from test_perf_physics import FORBIDDEN  # the held-back sources (tests/ is on sys.path under pytest)

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


def _system(url: str) -> str:
    return url.split("/Fujitsu/results/")[1].split("/")[0]


def _bench(url: str) -> str:
    return url.split("/")[-2]


@pytest.fixture(scope="module")
def raw() -> list[dict[str, str]]:
    with INDEPENDENT_CSV.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["source"] == SOURCE]


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    assert raw, "the source's rows are missing from the calibration file"
    assert sorted((_bench(r["url"]), _system(r["url"])) for r in raw) == sorted(
        [(b, REFERENCE) for b in BENCHMARKS] + [(b, v[2]) for b, v in BENCHMARKS.items()])
    for r in raw:
        system = _system(r["url"])
        chip, gpus = SYSTEMS[system]
        assert r["chip"] == chip and chip in chips
        assert f"training_results_v4.0/blob/{COMMIT}/Fujitsu/results/" in r["url"] and r["url"].endswith("/result_0.txt")
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[_bench(r["url"])][:2]
        assert r["precision"] == "amp" and r["reference"] == "h100-sxm5-80gb@amp"
        assert int(r["batch_size"]) > 0 and float(r["model_params"]) > 0 and r["model_params_source"]
        assert f"node throughput / {gpus}" in r["notes"] and "per GPU" in r["unit"] and r["date"].startswith("2024-")
        assert not any(f.lower() in r["url"].lower() for f in FORBIDDEN)
        if system == REFERENCE:
            assert r["use_in_fit"] == "false" and r["excluded_because"] == "the group's reference itself"
        elif _bench(r["url"]) == FP8_PAIR:
            assert r["use_in_fit"] == "false" and "FP8" in r["excluded_because"]
        else:
            assert r["use_in_fit"] == "true" and not r["excluded_because"]


def test_loader_reads_the_source_as_per_gpu_ratios_to_the_h100_sxm_run(raw, chips) -> None:
    rows = [r for r in load_independent_rows(chips=chips) if r.source == SOURCE]
    assert len(rows) == len(BENCHMARKS) - 1 and {r.chip.id for r in rows} == {"l40s"}
    by_key = {(r["workload"], r["chip"]): r for r in raw}
    for row in rows:
        mine, ref = by_key[(row.workload, "l40s")], by_key[(row.workload, "h100-sxm5-80gb")]
        assert row.ratio == pytest.approx(float(mine["throughput"]) / float(ref["throughput"]))
        assert row.batch_ratio == pytest.approx(float(mine["batch_size"]) / float(ref["batch_size"]))
        assert (row.ref_chip.id, row.ref_precision, row.precision) == ("h100-sxm5-80gb", "amp", "amp")
        assert 0.1 < row.ratio < 1.0  # an L40S against an H100 SXM5, per GPU: a plausibility bound


def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "mlperf-v3.1-asustek"))
