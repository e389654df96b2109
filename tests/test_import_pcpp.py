"""PCPartPicker dataset import: field mappings, unknown -> empty, skips by reason, and the real snapshot solves."""

from __future__ import annotations

import math

import re

import csv
import json
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from typer.testing import CliRunner

from planner.errors import CatalogError  # noqa: E402
from planner.catalog.load import load_catalog
from planner.compat.checker import check_parts
from planner.cli import app
from planner.catalog.importers import import_pcpp
from planner.catalog.importers.pcpp import SOURCE_FILES, gapless_columns, slug
from planner.catalog.importers.pcpp_map import atx_version_from_name, brand_of
from planner.catalog.models import CATEGORIES, OptStr, Severity
from planner.request import Request
from planner.solver import recommend
from planner.catalog.invariants import catalog_invariants

SMALL = {
    "video-card.json": [
        {"name": "MSI GeForce RTX 3060 Ventus 2X 12G", "price": 299.97, "chipset": "GeForce RTX 3060 12GB",
         "memory": 12, "core_clock": 1320, "boost_clock": 1777, "color": "Black", "length": 235},
        {"name": "NVIDIA Founders Edition", "price": 1999.99, "chipset": "GeForce RTX 5090", "memory": 32,
         "core_clock": 2010, "boost_clock": 2410, "color": "Black", "length": None},
        {"name": "Asus DUAL", "price": 399.0, "chipset": "GeForce RTX 4060 Ti", "memory": 8, "length": 227},
        {"name": "Acme Imaginary", "price": 99.0, "chipset": "Radeon RX 9999 ZZ", "memory": 4, "length": 200},
        {"name": "Unpriced 4090", "price": None, "chipset": "GeForce RTX 4090", "memory": 24, "length": 304},
    ],
    "cpu.json": [
        {"name": "AMD Ryzen 7 9800X3D", "price": 451.5, "core_count": 8, "microarchitecture": "Zen 5", "tdp": 120,
         "graphics": "Radeon"},
        {"name": "Intel Core i7-14700K", "price": 329.0, "core_count": 20, "microarchitecture": "Raptor Lake Refresh",
         "tdp": 125, "graphics": "Intel UHD Graphics 770"},
        {"name": "Intel Core Ultra 7 265K", "price": 259.0, "core_count": 20, "microarchitecture": "Arrow Lake",
         "tdp": 125, "graphics": None},
        {"name": "AMD Ryzen 5 5600X", "price": 120.0, "core_count": 6, "microarchitecture": "Zen 3", "tdp": 65},
        {"name": "Intel Core i7-4790K", "price": 80.0, "core_count": 4, "microarchitecture": "Haswell", "tdp": 88},
        {"name": "AMD Threadripper 7980X", "price": 4999.0, "core_count": 64, "microarchitecture": "Zen 4", "tdp": 350},
        {"name": "AMD Ryzen 5 7600", "price": 180.0, "core_count": 6, "microarchitecture": "Zen 4", "tdp": None},
    ],
    "motherboard.json": [
        {"name": "Asus ROG STRIX X870E-E GAMING WIFI", "price": 499.0, "socket": "AM5", "form_factor": "ATX",
         "max_memory": 192, "memory_slots": 4},
        {"name": "MSI PRO B650M-A WIFI", "price": 159.0, "socket": "AM5", "form_factor": "Micro ATX",
         "max_memory": None, "memory_slots": 4},
        {"name": "Gigabyte B760M DS3H DDR4", "price": 99.0, "socket": "LGA1700", "form_factor": "Micro ATX",
         "max_memory": 128, "memory_slots": 4},
        {"name": "ASRock B660M Pro RS", "price": 89.0, "socket": "LGA1700", "form_factor": "Micro ATX",
         "max_memory": 128, "memory_slots": 4},
        {"name": "Asus ROG STRIX B550-I GAMING", "price": 199.0, "socket": "AM4", "form_factor": "Mini ITX",
         "max_memory": 64, "memory_slots": 2},
        {"name": "Old board", "price": 50.0, "socket": "LGA1151", "form_factor": "ATX", "max_memory": 64,
         "memory_slots": 4},
        {"name": "Asus Pro WS Z890-ACE", "price": 699.0, "socket": "LGA1851", "form_factor": "XL ATX",
         "max_memory": 256, "memory_slots": 4},
    ],
    "memory.json": [
        {"name": "Corsair Vengeance RGB 32 GB", "price": 94.99, "speed": [5, 6000], "modules": [2, 16],
         "cas_latency": 36},
        {"name": "Corsair Vengeance LPX 16 GB", "price": 39.99, "speed": [4, 3200], "modules": [2, 8],
         "cas_latency": None},
        {"name": "Kingston 8 GB", "price": 19.99, "speed": [3, 1600], "modules": [1, 8], "cas_latency": 11},
        {"name": "Kingston Server Premier 32 GB", "price": 120.0, "speed": [5, 4800], "modules": [1, 32]},
        {"name": "Crucial CT2K16G56C46S5 32 GB", "price": 80.0, "speed": [5, 5600], "modules": [2, 16]},
    ],
    "internal-hard-drive.json": [
        {"name": "Samsung 990 Pro", "price": 169.99, "capacity": 2000, "type": "SSD",
         "form_factor": "M.2-2280", "interface": "M.2 PCIe 4.0 X4"},
        {"name": "Crucial MX500 M.2", "price": 59.99, "capacity": 1000, "type": "SSD",
         "form_factor": "M.2-2280", "interface": "M.2 SATA"},
        {"name": "Seagate IronWolf", "price": 99.99, "capacity": 4000, "type": 5400, "form_factor": 3.5,
         "interface": "SATA 6.0 Gb/s"},
        {"name": "Seagate Exos", "price": 199.0, "capacity": 16000, "type": 7200, "form_factor": 3.5,
         "interface": "SAS 12.0 Gb/s"},
    ],
    "cpu-cooler.json": [
        {"name": "Arctic Liquid Freezer III 360", "price": 89.99, "size": 360, "rpm": [200, 1800]},
        {"name": "Thermalright Peerless Assassin 120 SE", "price": 34.9, "size": None},
    ],
    "power-supply.json": [
        {"name": "MSI MAG A850GL PCIE5", "price": 109.99, "type": "ATX", "efficiency": "gold", "wattage": 850},
        {"name": "Corsair SF750", "price": 169.99, "type": "SFX", "efficiency": "platinum", "wattage": 750},
        {"name": "Generic 500", "price": 29.99, "type": "ATX", "efficiency": None, "wattage": 500},
        {"name": "Basic 400", "price": 24.99, "type": "ATX", "efficiency": "plus", "wattage": 400},
        {"name": "Slim 300", "price": 39.99, "type": "TFX", "efficiency": "bronze", "wattage": 300},
    ],
    "case.json": [
        {"name": "Fractal Design Meshify 2", "price": 149.99, "type": "ATX Mid Tower", "psu": None},
        {"name": "Lian Li A3-mATX", "price": 69.99, "type": "MicroATX Mini Tower"},
        {"name": "Cooler Master MasterBox NR200", "price": 89.99, "type": "Mini ITX Desktop"},
        {"name": "Silverstone ML06B", "price": 79.99, "type": "HTPC"},
    ],
}


def write_dataset(root: Path, data: dict = SMALL) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, rows in data.items():
        (root / name).write_text(json.dumps(rows), encoding="utf-8")
    return root


def item(cat, category: str, n: int):
    """The part imported from record n of the category's dataset file (its source says so)."""
    return next(p for p in cat.by_category(category) if p.source.endswith(f"item {n}"))


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fp:
        return list(csv.DictReader(fp))


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    src = write_dataset(tmp_path_factory.mktemp("pcpp-src"))
    out = tmp_path_factory.mktemp("pcpp-out")
    report = import_pcpp(src, out)
    return src, out, report, load_catalog(out)


def test_small_import_counts_and_skip_reasons(small):
    _, _, report, _ = small
    gpu = report.categories["gpu"]
    assert (gpu.read, gpu.priced, gpu.written, gpu.offers) == (5, 4, 3, 3)  # the 4060 Ti 8 GB chip is known now
    assert gpu.skipped["no price in the snapshot"] == 1
    assert gpu.skipped["GPU chip not in our chip table"] == 1  # an unknown chipset
    assert gpu.details["Radeon RX 9999 ZZ"] == 1
    cpu = report.categories["cpu"]
    assert cpu.written == 5  # the Threadripper 7980X too: sTR5 from its model number
    assert cpu.skipped == {"socket not derivable from the microarchitecture": 1, "no TDP": 1}
    mb = report.categories["motherboard"]
    assert mb.written == 4 and mb.skipped["LGA1700 board whose name does not say DDR4 or DDR5"] == 1
    assert mb.skipped["LGA1151 board whose name does not give its chipset (100/200 and 300 series take different CPUs)"] == 1
    assert mb.skipped["board form factor not modelled"] == 1
    assert report.categories["memory"].written == 2 and sum(report.categories["memory"].skipped.values()) == 3
    assert report.categories["storage"].written == 3
    assert report.categories["psu"].skipped == {"PSU form factor not modelled (TFX, Flex ATX, ...)": 1}
    assert report.categories["case"].skipped == {"case type does not say which boards fit (HTPC or none)": 1}
    assert report.total("written") == report.total("offers") == 3 + 5 + 4 + 2 + 3 + 2 + 4 + 3


def test_ids_come_from_maker_and_model_and_offers_are_usd_listed(small):
    _, out, _, cat = small
    gpus = {p.id: p for p in cat.by_category("gpu")}
    assert len(gpus) == 3 and all(i.startswith("pcpp-gpu-") and not i[len("pcpp-gpu-"):].isdigit() for i in gpus)
    first = next(p for p in gpus.values() if "item 0" in p.source)
    assert first.id == "pcpp-gpu-" + slug(first.name)
    offer = cat.offer_for(first.id)
    assert offer.price == Decimal("299.97") and offer.currency == "USD" and offer.source == "listed"
    assert offer.observed_on == date(2025, 7, 23) and offer.retailer == "PCPartPicker US lowest (dataset snapshot)"
    assert "video-card.json item 0" in first.source
    assert catalog_invariants(cat) == []
    assert not (out / "gpu_chips.csv").exists()  # the shipped chip table is reused


def test_gpu_mapping(small):
    cat = small[3]
    g = item(cat, "gpu", 0)
    assert (g.chip, g.vram_gb, g.length_mm, g.tgp_w) == ("rtx-3060-12gb", 12, 235, cat.chips["rtx-3060-12gb"].tdp_w)
    assert "chip reference TDP" in g.notes
    assert (g.slots, g.power_12v2x6, g.power_8pin, g.cooling) == (None, None, None, None)
    fe = item(cat, "gpu", 1)
    assert fe.chip == "rtx-5090" and fe.length_mm is None and fe.brand == "NVIDIA"
    assert fe.name == "NVIDIA Founders Edition (GeForce RTX 5090)"


def test_cpu_mapping(small):
    cat = small[3]
    ryzen, i7, ultra, zen3 = (item(cat, "cpu", i) for i in range(4))
    assert (ryzen.socket, ryzen.memory_types, ryzen.cores, ryzen.threads, ryzen.base_power_w) == (
        "AM5", ["DDR5"], 8, 16, 120)
    assert ryzen.package_power_w is None and ryzen.max_memory_gb is None and ryzen.integrated_graphics is True
    assert (i7.socket, i7.memory_types, i7.threads) == ("LGA1700", ["DDR4", "DDR5"], 20)
    assert "lower bound" in i7.notes
    assert (ultra.socket, ultra.memory_types, ultra.integrated_graphics) == ("LGA1851", ["DDR5"], None)
    assert (zen3.socket, zen3.memory_types) == ("AM4", ["DDR4"])
    assert "microarchitecture 'Zen 5'" in ryzen.notes


def test_board_memory_storage_mapping(small):
    cat = small[3]
    x870e, b650m, b760, b550i = (item(cat, "motherboard", i) for i in (0, 1, 2, 4))
    assert (x870e.form_factor, x870e.memory_type, x870e.chipset, x870e.dimm_slots, x870e.max_memory_gb) == (
        "ATX", "DDR5", "X870E", 4, 192)
    assert (b650m.form_factor, b650m.max_memory_gb, b650m.m2_slots, b650m.pcie_x16_slots) == ("mATX", None, None, None)
    assert (b760.memory_type, b760.chipset) == ("DDR4", "B760") and "read from the name" in b760.notes
    assert (b550i.form_factor, b550i.memory_type) == ("ITX", "DDR4")
    kit, lpx = item(cat, "memory", 0), item(cat, "memory", 1)
    assert (kit.memory_type, kit.speed_mts, kit.modules, kit.module_gb, kit.cas_latency, kit.ecc) == (
        "DDR5", 6000, 2, 16, 36, None)
    assert (lpx.memory_type, lpx.cas_latency) == ("DDR4", None)
    nvme, m2sata, hdd = (item(cat, "storage", i) for i in range(3))
    assert (nvme.interface, nvme.form_factor, nvme.pcie_gen, nvme.capacity_gb) == ("NVMe", "M.2-2280", 4, 2000)
    assert (m2sata.interface, m2sata.needs_m2) == ("SATA", True)
    assert (hdd.interface, hdd.form_factor, hdd.read_mbs) == ("SATA", "3.5", None)


def test_cooler_psu_case_mapping(small):
    _, out, report, cat = small
    aio, air = item(cat, "cooler", 0), item(cat, "cooler", 1)
    assert (aio.type, aio.radiator_mm, aio.sockets, aio.cooling_capacity_w) == ("aio", 360, [], None)
    assert (air.type, air.height_mm, air.radiator_mm) == ("air", None, None)
    msi, sfx, generic, basic = (item(cat, "psu", i) for i in range(4))
    assert (msi.wattage_w, msi.efficiency, msi.form_factor) == (850, "gold", "ATX")
    assert (sfx.form_factor, sfx.efficiency) == ("SFX", "platinum")
    assert generic.efficiency == "none" and "unknown" in generic.notes
    assert basic.efficiency == "white"
    assert msi.connectors_12v2x6 is None and msi.length_mm is None
    # Only one PSU's name says ATX 3.x; whatever the model does with the others' gap, nothing is invented.
    assert all(p.atx_version in (None, "3.0") for p in (msi, sfx, generic, basic))
    assert sfx.atx_version is None and generic.atx_version is None
    tower, matx, itx = (item(cat, "case", i) for i in range(3))
    assert (tower.form_factors, tower.psu_form_factors) == (["ATX", "mATX", "ITX"], ["ATX"])
    assert (matx.form_factors, matx.psu_form_factors) == (["mATX", "ITX"], ["ATX"])
    assert (itx.form_factors, itx.psu_form_factors) == (["ITX"], [])
    assert (tower.max_gpu_length_mm, tower.max_cooler_height_mm, tower.expansion_slots, tower.radiator_top) == (
        None, None, None, [])


def test_atx_version_and_brand_from_names():
    assert atx_version_from_name("SeaSonic PRIME TX-1600 ATX 3.1")[0] == "3.1"
    assert atx_version_from_name("Antec NE1000G M ATX3.0")[0] == "3.0"
    assert atx_version_from_name("SeaSonic Focus GX V4 ATX 3 (2024)")[0] == "3.0"
    assert atx_version_from_name("MSI MAG A750GL PCIE5")[0] == "3.0"
    assert "name" in atx_version_from_name("MSI MAG A750GL PCIE5")[1]
    assert atx_version_from_name("Corsair RM850x (2021)") == (None, None)
    assert atx_version_from_name("Thermaltake ATX 2.4 600") == (None, None)
    assert brand_of("Western Digital WD_Black SN850X") == "Western Digital"
    assert brand_of("be quiet! Pure Loop 2") == "be quiet!"
    assert brand_of("G.Skill Trident Z5") == "G.Skill"


class _Strict(BaseModel):
    id: str
    version: Literal["3.0", "3.1", None] = None  # no blank-to-None: an empty CSV cell is refused
    note: OptStr = None


def test_columns_that_cannot_hold_gaps_are_left_out_not_invented():
    both = [{"id": "a", "version": "3.0", "note": None}, {"id": "b", "version": "3.1", "note": "x"}]
    assert gapless_columns(_Strict, both) == (["id", "version", "note"], {})
    gap = [{"id": "a", "version": "3.0", "note": None}, {"id": "b", "version": None, "note": None}]
    assert gapless_columns(_Strict, gap) == (["id", "note"], {"version": 1})


def test_all_keeps_unpriced_parts_without_offers(tmp_path):
    src = write_dataset(tmp_path / "src")
    report = import_pcpp(src, tmp_path / "out", include_unpriced=True)
    cat = load_catalog(tmp_path / "out")
    assert report.categories["gpu"].written == 4 and report.categories["gpu"].offers == 3
    assert item(cat, "gpu", 4).chip == "rtx-4090" and cat.offer_for(item(cat, "gpu", 4).id) is None


def test_bad_sources_are_one_line_errors(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["catalog", "import-pcpp", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "does not exist" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    partial = write_dataset(tmp_path / "partial", {"cpu.json": []})
    res = runner.invoke(app, ["catalog", "import-pcpp", str(partial), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "missing video-card.json" in res.stderr
    (tmp_path / "broken").mkdir()
    write_dataset(tmp_path / "broken")
    (tmp_path / "broken" / "cpu.json").write_text("{not json", encoding="utf-8")
    res = runner.invoke(app, ["catalog", "import-pcpp", str(tmp_path / "broken"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "not valid JSON" in res.stderr
    res = runner.invoke(app, ["catalog", "import-pcpp", str(tmp_path / "broken")])
    assert res.exit_code == 2 and "--out" in res.stderr


def test_an_unwritable_out_is_one_line_exit_2(tmp_path):
    """--out under a file, or a directory where the report goes: one `cannot write` line naming the path, exit 2,
    no traceback and no temporary file left (the report is written atomically, planner.atomicfile)."""
    runner = CliRunner()
    src = write_dataset(tmp_path / "src")
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    res = runner.invoke(app, ["catalog", "import-pcpp", str(src), "--out", str(blocker / "cat")])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "cannot write the catalog" in res.stderr and "a-file" in res.stderr and "writable directory" in res.stderr
    assert blocker.read_text(encoding="utf-8") == "mine"
    out = tmp_path / "cat"
    (out / "import-report.json").mkdir(parents=True)  # the report's name is taken by a directory
    res = runner.invoke(app, ["catalog", "import-pcpp", str(src), "--out", str(out)])
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "cannot write the import report" in res.stderr and "import-report.json" in res.stderr
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporary file or staging left


def test_cli_import_json_and_generate(tmp_path):
    runner = CliRunner()
    src = write_dataset(tmp_path / "src")
    res = runner.invoke(app, ["catalog", "import-pcpp", str(src), "--out", str(tmp_path / "cat"), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["totals"]["written"] == 26 and data["currency"] == "USD"
    assert data["categories"]["cpu"]["skipped"]["no TDP"] == 1
    res = runner.invoke(app, ["catalog", "generate", "--parts", "80", "--out", str(tmp_path / "syn"), "--seed", "4",
                              "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["parts"] == sum(len(load_catalog(tmp_path / "syn").by_category(c))
                                                  for c in CATEGORIES)
    res = runner.invoke(app, ["catalog", "generate", "--parts", "3", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "--parts" in res.stderr


# ---- the real snapshot ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real(shared_dir, tmp_path_factory):
    src = shared_dir / "datasets" / "pc-part-dataset"
    out = tmp_path_factory.mktemp("pcpp-real")
    report = import_pcpp(src, out)
    return report, load_catalog(out), out


def test_real_dataset_imports_and_validates(real):
    report, cat, _ = real
    for c in CATEGORIES:
        assert len(cat.by_category(c)) > 0, c
        assert report.categories[c].written == len(cat.by_category(c))
        assert report.categories[c].read > report.categories[c].written
    assert set(SOURCE_FILES) == set(CATEGORIES)
    assert all(g.chip in cat.chips for g in cat.by_category("gpu"))
    assert catalog_invariants(cat) == []
    assert {o.currency for offers in cat.offers.values() for o in offers} == {"USD"}


def test_real_dataset_solves_to_a_checked_build_with_unverified_rules(real):
    _, cat, _ = real
    # the dataset has no GPU connector or PSU cable counts: unknown is not yes, so the solver asks for pins
    blocked = recommend(cat, Request(budget=Decimal(3000), currency="USD", gpu_count=1, strict=True))
    assert blocked.status == "infeasible" and "unknown is not yes" in blocked.why_not.conflicts[0]
    pins = tuple(re.findall(r"--pin (\S+)", blocked.why_not.suggestions[0]))
    assert pins
    rec = recommend(cat, Request(budget=Decimal(3000), currency="USD", gpu_count=1, pinned=pins), alternatives=1)
    assert rec.status == "optimal" and len(rec.plans) >= 1
    assert rec.stats["after_pruning"] < rec.stats["candidates"]
    for plan in rec.plans:
        assert plan.report.problems == []
        assert plan.total <= Decimal(3000) and plan.currency == "USD"
        again = check_parts(cat, list(plan.parts.values()))
        assert [f for f in again.findings if f.severity == Severity.PROBLEM] == []
        unverified = {f.rule for f in plan.report.unverified}
        assert {"cooler_socket", "gpu_length", "m2_slots", "gpu_connectors"} <= unverified, unverified


def test_recommend_cli_on_imported_catalog(real):
    _, _, out = real
    args = ["recommend", "--catalog", str(out), "--budget", "2500", "--currency", "USD", "--gpus", "1", "--json"]
    res = CliRunner().invoke(app, args + ["--strict"])  # without --strict: a build and its checklist (issue 26)
    assert res.exit_code == 1, res.output  # no build fits is a result (exit 1), not bad input
    data = json.loads(res.stdout)
    assert data["status"] == "infeasible"  # unknown connector data: the answer names the parts to pin
    pins = re.findall(r"--pin (\S+)", data["why_not"]["suggestions"][0])
    res = CliRunner().invoke(app, args + [x for p in pins for x in ("--pin", p)])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["status"] == "optimal"
    plan = data["plans"][0]
    assert plan["total"]["currency"] == "USD" and Decimal(plan["total"]["amount"]) <= 2500
    assert {p["retailer"] for p in plan["parts"]} == {"PCPartPicker US lowest (dataset snapshot)"}


# ---- issue 29 item 7: ids from content, prices by id, never a catalog the loader refuses, kits keep modules ----

def _reversed(data: dict) -> dict:
    return {name: list(reversed(rows)) for name, rows in data.items()}


def test_a_reimport_in_another_order_keeps_every_id_and_its_price(tmp_path):
    a = import_pcpp(write_dataset(tmp_path / "a-src"), tmp_path / "a")
    b = import_pcpp(write_dataset(tmp_path / "b-src", _reversed(SMALL)), tmp_path / "b")
    cat_a, cat_b = load_catalog(a.out), load_catalog(b.out)
    assert set(cat_a.parts) == set(cat_b.parts)
    for pid, part in cat_a.parts.items():
        assert cat_b.parts[pid].name == part.name  # the same id names the same product
        assert cat_a.offer_for(pid).price == cat_b.offer_for(pid).price  # and carries its own price


def test_colliding_names_get_deterministic_suffixes(tmp_path):
    twins = dict(SMALL)
    card = SMALL["video-card.json"][0]
    twins["video-card.json"] = [card, dict(card, price=999.99), dict(card, price=1.5)]
    a = load_catalog(import_pcpp(write_dataset(tmp_path / "a-src", twins), tmp_path / "a").out)
    b = load_catalog(import_pcpp(write_dataset(tmp_path / "b-src", _reversed(twins)), tmp_path / "b").out)
    ids = sorted(p.id for p in a.by_category("gpu"))
    assert len(set(ids)) == 3 and len({i.split("-v")[0] for i in ids}) == 1
    assert {i: a.offer_for(i).price for i in ids} == {i: b.offer_for(i).price for i in ids}


def test_a_collision_suffix_never_meets_another_products_name(tmp_path):
    """Two 'Enthoo Pro' rows beside an 'Enthoo Pro 2': numbering the twins -2 gave the second the id of the other
    product, and the import of the full dataset (--all) was refused for a duplicate id."""
    cases = dict(SMALL)
    case = SMALL["case.json"][0]
    cases["case.json"] = [dict(case, name="Phanteks Enthoo Pro", color="Black"),
                          dict(case, name="Phanteks Enthoo Pro", color="White"),
                          dict(case, name="Phanteks Enthoo Pro 2", color="Black")]
    cat = load_catalog(import_pcpp(write_dataset(tmp_path / "src", cases), tmp_path / "out").out)
    ids = [p.id for p in cat.by_category("case")]
    assert len(ids) == len(set(ids)) == 3 and "pcpp-case-phanteks-enthoo-pro-2" in ids


def test_a_catalog_the_loader_would_refuse_is_never_written(tmp_path, monkeypatch):
    from planner.catalog.importers import pcpp
    from planner.errors import CatalogError

    real_load = pcpp.load_catalog

    def refuse(path):
        real_load(path)
        raise CatalogError("duplicate part id 'x'")

    monkeypatch.setattr(pcpp, "load_catalog", refuse)
    out = tmp_path / "out"
    with pytest.raises(CatalogError, match="would not load, nothing written"):
        import_pcpp(write_dataset(tmp_path / "src"), out)
    assert not list(out.glob("*.csv")) and not (out / "offers").exists() or not list((out / "offers").glob("*"))


def test_real_dataset_round_trip_with_stable_ids_and_kits(real):
    report, cat, out = real
    again = load_catalog(out)
    assert set(again.parts) == set(cat.parts) and len(cat.parts) == report.total("written")
    assert not [p.id for p in cat.parts.values() if p.id.split("-", 2)[2].isdigit()]  # no row positions
    kits = [p for p in cat.by_category("memory") if "2x16 GB" in p.name]
    assert kits and all(p.modules == 2 and p.module_gb == 16 for p in kits)  # a 2 x 16 GB kit stays two modules
    assert {p.modules for p in cat.by_category("memory")} >= {1, 2, 4}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(names=st.lists(st.text(min_size=1, max_size=40), min_size=1, max_size=6),
       prices=st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8)),
                       min_size=6, max_size=6))
def test_fuzz_hostile_records_import_to_a_catalog_that_loads(tmp_path_factory, names, prices):
    data = dict(SMALL)
    data["case.json"] = SMALL["case.json"] + [
        {"name": n, "price": p, "type": "ATX Mid Tower"} for n, p in zip(names, prices)]
    root = tmp_path_factory.mktemp("fz")
    src = write_dataset(root / "src", data)
    if any(isinstance(p, float) and not math.isfinite(p) for p in prices[:len(names)]):
        # NaN/Infinity make a file that is not JSON: refused in one line naming it, nothing written
        with pytest.raises(CatalogError, match="not acceptable JSON"):
            import_pcpp(src, root / "out")
        assert not (root / "out").exists() or not any((root / "out").iterdir())
        return
    report = import_pcpp(src, root / "out")
    cat = load_catalog(root / "out")
    assert len(cat.by_category("case")) == report.categories["case"].written
    assert len({p.id for p in cat.parts.values()}) == len(cat.parts)


@pytest.mark.parametrize("name,arch,socket", [
    ("AMD Ryzen 7 1700", "Zen", "AM4"), ("AMD Ryzen 5 2600", "Zen+", "AM4"), ("AMD Ryzen 9 3900X", "Zen 2", "AM4"),
    ("Intel Core i7-9700K", "Coffee Lake Refresh", "LGA1151"), ("Intel Core i7-7740X", "Kaby Lake", "LGA2066"),
    ("Intel Core i9-7900X", "Skylake", "LGA2066"), ("Intel Core i7-6950X", "Broadwell", "LGA2011-3"),
    ("Intel Core i7-5930K", "Haswell", "LGA2011-3"), ("Intel Core i7-4790K", "Haswell", None),
])
def test_older_desktop_generations_get_their_socket(name: str, arch: str, socket) -> None:
    from planner.catalog.importers import pcpp_map as M

    rec = {"name": name, "core_count": 6, "microarchitecture": arch, "tdp": 95}
    if socket is None:
        with pytest.raises(M.Skip):
            M.map_cpu(rec)
        return
    mapped = M.map_cpu(rec)
    assert mapped.row["socket"] == socket and mapped.row["threads"] == 6  # threads unknown: the lower bound
    assert any("lower bound" in n for n in mapped.notes)


@pytest.mark.parametrize("name,socket,platform", [
    ("AMD Threadripper 1950X", "sTR4", None), ("AMD Threadripper 2990WX", "sTR4", None),
    ("AMD Threadripper 3990X", "sTRX4", None), ("AMD Ryzen Threadripper PRO 5975WX", "sWRX8", None),
    ("AMD Ryzen Threadripper 7980X", "sTR5", "threadripper"), ("AMD Threadripper PRO 9995WX", "sTR5", "threadripper-pro"),
])
def test_threadrippers_get_their_socket_from_the_model_number(name: str, socket: str, platform) -> None:
    from planner.catalog.importers import pcpp_map as M

    mapped = M.map_cpu({"name": name, "core_count": 16, "microarchitecture": "Zen+", "tdp": 180})
    assert mapped.row["socket"] == socket and mapped.row.get("platform") == platform
    assert mapped.row["threads"] == 32 and mapped.row["memory_types"] == (["DDR5"] if socket == "sTR5" else ["DDR4"])


@pytest.mark.parametrize("rec,socket,platforms", [
    ({"name": "Asus ROG ZENITH EXTREME ALPHA X399", "socket": "sTR4"}, "sTR4", ""),
    ({"name": "Gigabyte TRX40 AORUS MASTER", "socket": "sTRX4"}, "sTRX4", ""),
    ({"name": "Asus X99-E WS/USB 3.1", "socket": "LGA2011-3"}, "LGA2011-3", ""),
    ({"name": "Asus WS X299 SAGE", "socket": "LGA2066"}, "LGA2066", ""),
    ({"name": "Asus ROG STRIX Z270-E GAMING", "socket": "LGA1151"}, "LGA1151", "LGA1151-skylake-kaby"),
    ({"name": "MSI Z390-A PRO", "socket": "LGA1151"}, "LGA1151", "LGA1151-coffee-lake"),
    ({"name": "Asus X99-E-10G WS", "socket": "LGA2011-3 Narrow"}, "LGA2011-3", ""),
])
def test_older_platform_boards_are_imported_with_ddr4_and_their_platform(rec: dict, socket: str, platforms: str) -> None:
    from planner.catalog.importers import pcpp_map as M

    mapped = M.map_motherboard({**rec, "form_factor": "ATX", "memory_slots": 8, "max_memory": 128})
    assert mapped.row["socket"] == socket and mapped.row["memory_type"] == "DDR4"
    assert mapped.row.get("cpu_platforms", "") == platforms


def test_a_skylake_cpu_on_a_coffee_lake_board_is_flagged() -> None:
    """Same LGA1151 socket, different platforms: the checker says so (the rule the solver uses too)."""
    from planner.catalog.load import load_catalog
    from planner.catalog.models import Cpu, Motherboard
    from planner.compat.checker import check_parts

    cpu = Cpu(id="cpu-i7-7700k", name="Intel Core i7-7700K", brand="Intel", source="test", socket="LGA1151", cores=4,
              threads=8, base_power_w=91, memory_types="DDR4", platform="LGA1151-skylake-kaby")
    board = Motherboard(id="mb-z390", name="MSI Z390-A PRO", brand="MSI", source="test", socket="LGA1151",
                        chipset="Z390", form_factor="ATX", memory_type="DDR4", dimm_slots=4,
                        cpu_platforms="LGA1151-coffee-lake")
    found = [f for f in check_parts(load_catalog(), [cpu, board]).findings if f.rule == "cpu_platform"]
    assert found and "Coffee Lake" in found[0].message
