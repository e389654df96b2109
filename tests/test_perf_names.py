"""The chip table and GPU name resolution: verbatim spec names, short forms, cloud and calibration names, errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.errors import CatalogError, UnknownPartError
from planner.catalog.models import ARCHITECTURES
from planner.catalog.match import ChipNames, chip_key
from planner.perf.model import PerfModel, load_perf_model

CONTRACT_IDS = set("""
gtx-1070 gtx-1080 gtx-1080-ti titan-xp titan-v rtx-2080 rtx-2080-ti titan-rtx quadro-rtx-6000 quadro-rtx-8000 t4
v100-pcie-16gb v100-sxm2-16gb v100-sxm2-32gb rtx-3060-12gb rtx-3070 rtx-3080-10gb rtx-3090 rtx-3090-ti rtx-a4000
rtx-a5000 rtx-a6000 a10 a40 a100-pcie-40gb a100-sxm4-40gb a100-pcie-80gb a100-sxm4-80gb rtx-4060-ti-16gb rtx-4070
rtx-4070-super rtx-4070-ti rtx-4070-ti-super rtx-4080 rtx-4080-super rtx-4090 l4 l40s rtx-6000-ada h100-pcie-80gb
h100-sxm5-80gb h100-nvl-94gb h200-sxm-141gb gh200-96gb rtx-5060-ti-16gb rtx-5070 rtx-5070-ti rtx-5080 rtx-5090
rtx-pro-6000-blackwell b200-180gb rx-7900-xtx radeon-pro-w7900 rx-9070-xt
""".split())


@pytest.fixture(scope="module")
def model() -> PerfModel:
    return load_perf_model()


def _column(path: Path, col: str) -> list[str]:
    with path.open(newline="", encoding="utf-8") as fh:
        return [r[col] for r in csv.DictReader(line for line in fh if not line.startswith("#"))]


def test_table_has_every_contract_id(model: PerfModel) -> None:
    assert CONTRACT_IDS <= set(model.chips)
    # optional extras: b300 (sourced specs found) and the 300 W Max-Q board (power-limited variant, issue 14); chips
    # that posted build lists and the part dataset name (issue 38)
    posted = set("gtx-1060-3gb gtx-1060-6gb rtx-2060 rtx-2070 rtx-2070-super rtx-2080-super rtx-3060-ti rtx-3070-ti "
                 "rtx-3080-12gb rtx-3080-ti rtx-4060 rtx-4060-ti-8gb rx-470-8gb rx-570-8gb rx-580-8gb".split())
    assert set(model.chips) - CONTRACT_IDS <= {"b300-288gb", "rtx-pro-6000-blackwell-maxq"} | posted


def test_rows_are_sourced_and_consistent(model: PerfModel) -> None:
    for chip in model.chips.values():
        assert chip.architecture in ARCHITECTURES
        assert chip.source.strip()
        if chip.vendor == "AMD":
            assert not chip.has_tensor_cores
        if chip.has_tensor_cores:
            assert chip.fp16_tensor_tflops_fp32acc, chip.id
        if chip.segment == "datacenter":
            assert chip.recommended_psu_w is None, chip.id
        if chip.fp16_tensor_tflops_fp16acc and chip.fp16_tensor_tflops_fp32acc:
            assert chip.fp16_tensor_tflops_fp16acc >= chip.fp16_tensor_tflops_fp32acc


def test_geforce_fp32_accumulate_is_half_rate(model: PerfModel) -> None:
    for cid in ("rtx-2080-ti", "rtx-3090", "rtx-4090", "rtx-5090"):
        c = model.chips[cid]
        assert c.fp16_tensor_tflops_fp32acc == pytest.approx(c.fp16_tensor_tflops_fp16acc / 2, rel=0.01)
    for cid in ("titan-rtx", "rtx-a6000", "a100-sxm4-80gb"):  # pro and datacenter cards keep full rate
        c = model.chips[cid]
        assert c.fp16_tensor_tflops_fp32acc == pytest.approx(c.fp16_tensor_tflops_fp16acc)


def test_spec_values_copied_from_shared_specs(model: PerfModel, shared_dir: Path) -> None:
    with (shared_dir / "facts" / "gpu-specs.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            chip = model.resolve(row["gpu"])
            assert chip.name == row["gpu"]
            assert chip.mem_bandwidth_gbs == pytest.approx(float(row["mem_bandwidth_gbs"]))
            assert chip.fp32_tflops == pytest.approx(float(row["fp32_tflops"]))
            assert chip.tdp_w == int(row["tdp_w"])


@pytest.mark.parametrize("name, chip_id", [
    ("RTX 4090", "rtx-4090"), ("rtx4090", "rtx-4090"), ("geforce rtx 4090", "rtx-4090"), ("4090", "rtx-4090"),
    ("A100 80GB", "a100-sxm4-80gb"), ("A100", "a100-sxm4-80gb"), ("a100-80g", "a100-sxm4-80gb"),
    ("A100 40GB PCIe", "a100-pcie-40gb"), ("H100 SXM", "h100-sxm5-80gb"), ("HGX H100", "h100-sxm5-80gb"),
    ("h100 pcie", "h100-pcie-80gb"), ("GTX 1080 Ti", "gtx-1080-ti"), ("1080ti", "gtx-1080-ti"),
    ("RTX 3080", "rtx-3080-10gb"), ("Quadro RTX 6000", "quadro-rtx-6000"), ("RTX 6000 Ada", "rtx-6000-ada"),
    ("RTX PRO 6000", "rtx-pro-6000-blackwell"), ("rx 7900 xtx", "rx-7900-xtx"), ("rtx-5090", "rtx-5090"),
])
def test_short_forms(model: PerfModel, name: str, chip_id: str) -> None:
    assert model.resolve(name).id == chip_id


def test_cloud_and_calibration_names_resolve_to_one_chip(model: PerfModel, shared_dir: Path) -> None:
    facts = shared_dir / "facts"
    names = set(_column(facts / "cloud-gpu-prices.csv", "gpu")) | set(_column(facts / "gpu-training-benchmarks-calibration.csv", "gpu"))
    assert len(names) > 30
    for name in names:
        chip = model.resolve(name)  # raises if unknown; the index forbids a name matching two chips
        assert chip.id in model.chips


def test_calibration_v100_and_tesla_names(model: PerfModel) -> None:
    assert model.resolve("Tesla V100 32GB").id == "v100-sxm2-32gb"
    assert model.resolve("Tesla V100").id == "v100-sxm2-16gb"
    assert model.resolve("NVIDIA A40").id == "a40"


def test_unknown_name_lists_close_matches(model: PerfModel) -> None:
    with pytest.raises(UnknownPartError) as err:
        model.resolve("RTX 6000")
    msg = str(err.value)
    assert "did you mean" in msg and "Quadro RTX 6000" in msg and "RTX 6000 Ada Generation" in msg
    with pytest.raises(UnknownPartError, match="did you mean.*RTX 4090"):
        model.resolve("RTX 4090X")
    with pytest.raises(UnknownPartError):
        model.resolve("Voodoo 5")


def test_name_keys_ignore_case_punctuation_and_vendor() -> None:
    assert chip_key("NVIDIA GeForce RTX-4090") == chip_key("rtx 4090") == "rtx4090"
    assert chip_key("AMD Radeon RX 7900 XTX") == "rx7900xtx"


def test_a_name_claimed_by_two_chips_is_rejected(model: PerfModel) -> None:
    a, b = model.chips["rtx-3090"], model.chips["rtx-4090"]
    clash = {a.id: a, b.id: b.model_copy(update={"aliases": ["RTX 3090"]})}
    with pytest.raises(CatalogError, match="matches both"):
        ChipNames(clash)
