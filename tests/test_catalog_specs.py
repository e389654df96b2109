"""Catalog rows against the dated spec entries they were verified with (tests/data/real/specs, issue 34 item 8): a
row edited away from its source, or a fit limit made more generous than the source allows, fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.verified import load_register

REPO = Path(__file__).resolve().parents[1]
SPECS = Path(__file__).parent / "data" / "real" / "specs"
MANIFEST = json.loads((SPECS / "manifest.json").read_text(encoding="utf-8"))
SOCKET = {"LGA 1700": "LGA1700", "LGA 1851": "LGA1851"}


def spec(pid: str) -> dict:
    return json.loads((SPECS / MANIFEST[pid]["file"]).read_text(encoding="utf-8"))


def test_every_spec_file_is_listed_and_cited_by_the_register() -> None:
    on_disk = {p.name for p in SPECS.glob("*.json")} - {"manifest.json"}
    assert on_disk == {m["file"] for m in MANIFEST.values()}
    register = load_register(REPO / "data")
    for pid, m in MANIFEST.items():
        assert pid in register, pid
        assert m["source_path"] in register[pid].source_url, (pid, "the register cites the entry it rests on")


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("gpu-")))
def test_gpu_rows_match_their_spec_entry(cat, pid) -> None:
    g, s = cat.parts[pid], spec(pid)
    pc = s["power_connectors"]
    assert abs(g.length_mm - s["length"]) <= 1, (g.length_mm, s["length"])
    assert g.tgp_w >= s["tdp"]  # a board-partner OC row may sit above the reference figure, never below it
    assert g.slots >= s.get("total_slot_width", g.slots)
    assert g.power_12v2x6 == pc.get("pcie_12V_2x6", 0) + pc.get("pcie_12VHPWR", 0)
    assert g.power_8pin == pc.get("pcie_8_pin", 0)
    assert g.vram_gb == s.get("memory", g.vram_gb)


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("cpu-")))
def test_cpu_rows_match_their_spec_entry(cat, pid) -> None:
    c, s = cat.parts[pid], spec(pid)
    sp = s["specifications"]
    assert (c.cores, c.threads) == (s["cores"]["total"], s["cores"]["threads"])
    assert c.base_power_w == sp["tdp"]
    assert c.package_power_w == (sp.get("ppt") or c.package_power_w)  # Threadripper entries give no PPT
    assert c.socket == SOCKET.get(s["socket"], s["socket"])


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("psu-")))
def test_psu_rows_are_no_bolder_than_their_spec_entry(cat, pid) -> None:
    p, s = cat.parts[pid], spec(pid)
    assert p.wattage_w == s["wattage"]
    assert p.length_mm >= s["length"]  # a longer row only refuses more cases
    native = s["connectors"].get("pcie_12vhpwr") or 0
    if native:  # the entry counts native 16-pin cables: the row may not claim more
        assert (p.connectors_12v2x6 or 0) <= native


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("mb-")))
def test_board_rows_match_their_spec_entry(cat, pid) -> None:
    b, s = cat.parts[pid], spec(pid)
    assert b.dimm_slots == s["memory"]["slots"]
    assert b.socket == s["socket"]
    wide = sum(x["quantity"] for x in s["pcie_slots"] if x["lanes"] >= 8 and x["gen"] == "5.0")
    if b.gpu_slots_x8:  # the CPU slots a second (third) card can run in at x8 or wider
        assert b.gpu_slots_x8 <= max(wide, 1)
    assert (b.max_memory_gb or 0) <= max(s["memory"]["max"], 1) * (1024 if s["memory"]["max"] <= 4 else 1)
    if s.get("m2_slots"):  # the entry lists each M.2 socket: the row may not promise more drives than the board takes
        assert (b.m2_slots or 0) <= len(s["m2_slots"]), (b.m2_slots, len(s["m2_slots"]))


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("mem-")))
def test_memory_rows_match_their_spec_entry(cat, pid) -> None:
    m, s = cat.parts[pid], spec(pid)
    assert (m.modules, m.module_gb) == (s["modules"]["quantity"], s["modules"]["capacity_gb"])
    assert (m.speed_mts, m.cas_latency) == (s["speed"], s["cas_latency"])
    assert m.ecc is (s["ecc"] == "ECC")


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("ssd-")))
def test_storage_rows_match_their_spec_entry(cat, pid) -> None:
    d, s = cat.parts[pid], spec(pid)
    assert d.capacity_gb == s["capacity"] and d.form_factor == s["form_factor"]
    assert f"PCIe {d.pcie_gen}.0" in s["interface"]


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("cooler-")))
def test_cooler_rows_match_their_spec_entry(cat, pid) -> None:
    c, s = cat.parts[pid], spec(pid)
    sockets = {SOCKET.get(x, x) for x in s["cpu_sockets"]}
    assert set(c.sockets) <= sockets, set(c.sockets) - sockets
    if s.get("height"):
        assert c.height_mm >= s["height"]
    if s.get("radiator_size"):
        assert c.radiator_mm == s["radiator_size"]


@pytest.mark.parametrize("pid", sorted(p for p in MANIFEST if p.startswith("case-")))
def test_case_limits_are_no_more_generous_than_their_spec_entry(cat, pid) -> None:
    c, s = cat.parts[pid], spec(pid)
    assert c.max_gpu_length_mm <= s["max_video_card_length"]
    if s.get("max_cpu_cooler_height"):
        assert c.max_cooler_height_mm <= s["max_cpu_cooler_height"]
    assert c.expansion_slots <= s["expansion_slots"]
    if s.get("max_psu_length"):
        assert c.max_psu_length_mm <= s["max_psu_length"]
