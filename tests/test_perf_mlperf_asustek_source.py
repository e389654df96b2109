"""The MLPerf Training v3.1 ASUSTeK source of issue 14, round 11 (one submitter's single-node H100 SXM5 and H100 PCIe
systems on the same benchmarks): the rule written in data/calibration/README.md holds for every row (incl. the FP8
BERT pair kept out), the loader reads each used row as a ratio against the H100 SXM5 run, and the source is its own
fold of leave-one-source-out."""

from __future__ import annotations

import csv

import pytest

from planner.perf.families import family_of
from planner.perf.sources import INDEPENDENT_CSV, load_independent_rows
from conftest import assert_own_loso_fold
from test_perf_physics import FORBIDDEN  # the held-back sources (tests/ is on sys.path under pytest)

SOURCE = "mlperf-v3.1-asustek"
COMMIT = "f33f9444205023cf49bf19ec960992b39663f6fd"
REFERENCE = "ESC-N8-E11"
SYSTEMS = {REFERENCE: "h100-sxm5-80gb", "ESC8000-E11-8xH100-PCIE-80GB": "h100-pcie-80gb"}
# benchmark directory -> (family by architecture, workload class); DLRM is not used
BENCHMARKS = {"resnet": ("cnn-classification", "cnn"), "ssd": ("detection-segmentation", "cnn"),
              "maskrcnn": ("detection-segmentation", "cnn"), "bert": ("transformer-encoder", "transformer"),
              "rnnt": ("rnn-seq2seq", "rnn"), "unet3d": ("detection-segmentation", "cnn")}
FP8_PAIR = "bert"  # FP8 layers on the reference: transcribed, kept out of the fit


def _system(url: str) -> str:
    return url.split("/ASUSTeK/results/")[1].split("/")[0]


def _bench(url: str) -> str:
    return url.split("/")[-2]


@pytest.fixture(scope="module")
def raw() -> list[dict[str, str]]:
    with INDEPENDENT_CSV.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["source"] == SOURCE]


def test_rows_follow_the_written_selection_rule(raw, chips) -> None:
    assert raw, "the source's rows are missing from the calibration file"
    # both systems on every benchmark of the rule, one first-run file each
    assert sorted((_bench(r["url"]), r["chip"]) for r in raw) == sorted(
        (b, c) for b in BENCHMARKS for c in SYSTEMS.values())
    for r in raw:
        system, name = _system(r["url"]), r["url"].rsplit("/", 1)[1]
        assert SYSTEMS[system] == r["chip"] and r["chip"] in chips
        assert f"training_results_v3.1/blob/{COMMIT}/ASUSTeK/results/" in r["url"]
        # the first run file: result_0, or result_1 where the directory starts at 1 (the PCIe system, the ref's ssd)
        first = "result_1.txt" if system != REFERENCE or _bench(r["url"]) == "ssd" else "result_0.txt"
        assert name == first
        assert (family_of(r["workload"]), r["workload_class"]) == BENCHMARKS[_bench(r["url"])]
        assert r["precision"] == "amp" and r["reference"] == "h100-sxm5-80gb@amp"
        assert int(r["batch_size"]) > 0 and float(r["model_params"]) > 0 and r["model_params_source"]
        assert "per GPU" in r["unit"] and "node throughput / 8" in r["notes"] and r["date"].startswith("2023-")
        assert not any(f.lower() in r["url"].lower() for f in FORBIDDEN)
        if system == REFERENCE:
            assert r["use_in_fit"] == "false" and r["excluded_because"] == "the group's reference itself"
        elif _bench(r["url"]) == FP8_PAIR:
            assert r["use_in_fit"] == "false" and "FP8" in r["excluded_because"]
        else:
            assert r["use_in_fit"] == "true" and not r["excluded_because"]
    assert sum(r["use_in_fit"] == "true" for r in raw) == len(BENCHMARKS) - 1


def test_loader_reads_the_source_as_ratios_to_the_h100_sxm_run(raw, chips) -> None:
    rows = [r for r in load_independent_rows(chips=chips) if r.source == SOURCE]
    assert len(rows) == len(BENCHMARKS) - 1 and {r.chip.id for r in rows} == {"h100-pcie-80gb"}
    assert not any(family_of(r.workload) == "transformer-encoder" for r in rows)  # the FP8 BERT pair is out
    by_key = {(r["workload"], r["chip"]): r for r in raw}
    for row in rows:
        mine, ref = by_key[(row.workload, "h100-pcie-80gb")], by_key[(row.workload, "h100-sxm5-80gb")]
        assert row.ratio == pytest.approx(float(mine["throughput"]) / float(ref["throughput"]))
        assert row.batch_ratio == pytest.approx(float(mine["batch_size"]) / float(ref["batch_size"]))
        assert (row.ref_chip.id, row.ref_precision, row.precision) == ("h100-sxm5-80gb", "amp", "amp")
        assert 0.4 < row.ratio < 1.0  # a 350 W PCIe board against the 700 W SXM5 board: a plausibility bound


def test_the_source_is_its_own_leave_one_source_out_fold(chips) -> None:
    assert_own_loso_fold(chips, SOURCE, others=("nvidia-dle", "mlperf-v2.0-dell"))
