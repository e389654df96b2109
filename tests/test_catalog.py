"""Shipped catalog invariants, and malformed-CSV errors that name the file, the row and the field."""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest

from planner.catalog.load import SHIPPED_DATA_DIR, load_catalog
from planner.errors import CatalogError
from planner.catalog.models import (
    ARCHITECTURES, CATEGORIES, EFFICIENCIES, FORM_FACTORS, MEMORY_TYPES, PRICE_SOURCES, SOCKETS,
)
from planner.catalog.invariants import catalog_invariants

REPO = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("no_price_history")


# ---- invariants of the shipped catalog -------------------------------------------------------------

def test_shipped_catalog_has_no_invariant_violation(cat) -> None:
    assert catalog_invariants(cat) == []


def test_ids_unique_across_all_files() -> None:
    ids: list[str] = []
    for c in CATEGORIES:
        with (SHIPPED_DATA_DIR / f"{c}.csv").open(newline="", encoding="utf-8-sig") as fh:
            ids += [row["id"] for row in csv.DictReader(fh)]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    assert dupes == []


def test_every_category_file_is_loaded(cat) -> None:
    for c in CATEGORIES:
        with (SHIPPED_DATA_DIR / f"{c}.csv").open(newline="", encoding="utf-8-sig") as fh:
            rows = [r for r in csv.DictReader(fh) if any((v or "").strip() for v in r.values())]
        assert len(cat.by_category(c)) == len(rows), c


def test_known_enums(cat) -> None:
    for p in cat.parts.values():
        assert p.category in CATEGORIES
        if p.category in ("cpu", "motherboard"):
            assert p.socket in SOCKETS, p.id
        if p.category == "cpu":
            assert set(p.memory_types) <= set(MEMORY_TYPES) and p.memory_types, p.id
            assert p.threads >= p.cores, p.id
        if p.category in ("motherboard", "memory"):
            assert p.memory_type in MEMORY_TYPES, p.id
        if p.category == "motherboard":
            assert p.form_factor in FORM_FACTORS, p.id
        if p.category == "case":
            assert p.form_factors and set(p.form_factors) <= set(FORM_FACTORS), p.id
        if p.category == "cooler":
            assert p.type in ("air", "aio") and set(p.sockets) <= set(SOCKETS), p.id
            assert (p.height_mm is not None) if p.type == "air" else (p.radiator_mm in (120, 140, 240, 280, 360, 420))
        if p.category == "psu":
            assert p.efficiency in EFFICIENCIES and p.atx_version in ("2.x", "3.0", "3.1"), p.id
    for chip in cat.chips.values():
        assert chip.architecture in ARCHITECTURES


def test_every_card_points_to_a_known_chip_with_matching_vram(cat) -> None:
    for g in cat.by_category("gpu"):
        assert g.chip in cat.chips, g.id
        assert g.vram_gb == cat.chips[g.chip].vram_gb, g.id


def test_every_part_has_a_positive_sourced_offer(cat) -> None:
    for p in cat.parts.values():
        assert p.source.strip(), p.id
        offers = cat.offers.get(p.id)
        assert offers, f"{p.id} has no offer"
        for o in offers:
            assert o.price > 0 and isinstance(o.price, Decimal), p.id
            assert o.currency == "EUR" or len(o.currency) == 3
            assert o.source in PRICE_SOURCES and o.retailer.strip(), p.id
            assert o.observed_on is not None
            if o.source == "estimate":
                assert o.note and o.note.strip(), f"{p.id}: estimate without a note"


def test_minimum_coverage_of_issue_2(cat) -> None:
    n = {c: len(cat.by_category(c)) for c in CATEGORIES}
    assert n["gpu"] >= 40 and len({g.chip for g in cat.by_category("gpu")}) >= 15
    assert n["cpu"] >= 15 and n["motherboard"] >= 20 and n["memory"] >= 12
    assert sum(1 for s in cat.by_category("storage") if s.interface == "NVMe") >= 8
    assert n["cooler"] >= 12 and n["psu"] >= 15 and n["case"] >= 12
    assert any("Meshify 2" == c.name.replace("Fractal Design ", "") for c in cat.by_category("case"))
    for chip in ("gtx-1080-ti", "rtx-5090", "rtx-4090", "rtx-3090", "a100-sxm4-80gb", "h100-sxm5-80gb"):
        assert chip in cat.chips


# ---- malformed CSV: copies of the shipped files, broken one way each --------------------------------

def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "cat"
    (out / "offers").mkdir(parents=True)
    for c in CATEGORIES:
        shutil.copy(SHIPPED_DATA_DIR / f"{c}.csv", out / f"{c}.csv")
    shutil.copy(SHIPPED_DATA_DIR / "gpu_chips.csv", out / "gpu_chips.csv")
    for f in (SHIPPED_DATA_DIR / "offers").glob("*.csv"):
        shutil.copy(f, out / "offers" / f.name)
    return out


def _rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        r = csv.DictReader(fh)
        return list(r.fieldnames or []), list(r)


def _write(path: Path, header: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


def _error(root: Path) -> str:
    with pytest.raises(CatalogError) as exc:
        load_catalog(root)
    msg = str(exc.value)
    assert "\n" not in msg and "Traceback" not in msg
    return msg


def test_bad_number_names_file_row_field(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "cpu.csv")
    rows[2]["cores"] = "sixteen"
    _write(root / "cpu.csv", header, rows)
    msg = _error(root)
    assert "cpu.csv" in msg and "row 4" in msg and "'cores'" in msg and "sixteen" in msg
    assert rows[2]["id"] in msg


def test_unknown_enum_value(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "motherboard.csv")
    rows[0]["socket"] = "AM6"
    _write(root / "motherboard.csv", header, rows)
    msg = _error(root)
    assert "motherboard.csv" in msg and "row 2" in msg and "'socket'" in msg and "AM6" in msg


def test_unknown_column(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "case.csv")
    for r in rows:
        r["colour"] = "black"
    _write(root / "case.csv", header + ["colour"], rows)
    msg = _error(root)
    assert "case.csv" in msg and "unknown column 'colour'" in msg


def test_missing_required_column(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "psu.csv")
    for r in rows:
        del r["wattage_w"]
    _write(root / "psu.csv", [h for h in header if h != "wattage_w"], rows)
    msg = _error(root)
    assert "psu.csv" in msg and "missing required column 'wattage_w'" in msg


def test_unknown_chip(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "gpu.csv")
    rows[5]["chip"] = "rtx-9999"
    _write(root / "gpu.csv", header, rows)
    msg = _error(root)
    assert "gpu.csv" in msg and rows[5]["id"] in msg and "unknown chip 'rtx-9999'" in msg


def test_duplicate_id(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "memory.csv")
    _write(root / "memory.csv", header, rows + [dict(rows[1])])
    msg = _error(root)
    assert "memory.csv" in msg and f"duplicate part id {rows[1]['id']!r}" in msg


def test_duplicate_id_across_files(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "storage.csv")
    rows[0]["id"] = _rows(root / "cpu.csv")[1][0]["id"]
    _write(root / "storage.csv", header, rows)
    assert "duplicate part id" in _error(root)


def test_extra_cells(tmp_path) -> None:
    root = _copy(tmp_path)
    path = root / "cooler.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3] + ",surplus"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    msg = _error(root)
    assert "cooler.csv" in msg and "row 4" in msg and "more cells than header columns" in msg


def test_bad_offer_price_and_unknown_offer_part(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "offers" / "cpu.csv")
    rows[0]["price"] = "-5"
    _write(root / "offers" / "cpu.csv", header, rows)
    msg = _error(root)
    assert "cpu.csv" in msg and "row 2" in msg and "'price'" in msg and "-5" in msg
    rows[0]["price"] = "100"
    rows[0]["part_id"] = "cpu-does-not-exist"
    _write(root / "offers" / "cpu.csv", header, rows)
    assert "offer for unknown part id 'cpu-does-not-exist'" in _error(root)


def test_unknown_price_source_is_rejected(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "offers" / "memory.csv")
    rows[1]["source"] = "a friend said so"
    _write(root / "offers" / "memory.csv", header, rows)
    msg = _error(root)
    assert "row 3" in msg and "'source'" in msg


def test_missing_directory_and_empty_directory(tmp_path) -> None:
    assert "does not exist" in _error(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    assert "holds no category file" in _error(tmp_path / "empty")


def test_row_number_is_the_file_line_even_after_a_comment(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "cpu.csv")
    rows[0]["cores"] = "many"
    _write(root / "cpu.csv", header, rows)
    path = root / "cpu.csv"
    path.write_text("# CPUs, edited by hand\n" + path.read_text(encoding="utf-8"), encoding="utf-8")
    assert "row 3" in _error(root)  # line 1 comment, line 2 header, line 3 the bad row


# ---- the CLI shows catalog errors in one line, exit 2 ------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from planner.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_validate_cli_reports_bad_row_in_one_line(tmp_path) -> None:
    root = _copy(tmp_path)
    header, rows = _rows(root / "cpu.csv")
    rows[2]["cores"] = "sixteen"
    _write(root / "cpu.csv", header, rows)
    r = _cli("catalog", "validate", "--catalog", str(root))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert "cpu.csv" in lines[0] and "row 4" in lines[0] and "cores" in lines[0]
    assert "Traceback" not in r.stderr + r.stdout


def test_validate_cli_on_shipped_catalog() -> None:
    from typer.testing import CliRunner

    from planner.cli import app

    res = CliRunner().invoke(app, ["catalog", "validate", "--json"])
    assert res.exit_code == 0, res.output
    import json

    data = json.loads(res.stdout)
    assert data["ok"] is True and data["issues"] == []
    assert set(data["counts"]) == set(CATEGORIES) and all(v > 0 for v in data["counts"].values())


def test_catalog_list_json_contract() -> None:
    import json

    from typer.testing import CliRunner

    from planner.cli import app

    res = CliRunner().invoke(app, ["catalog", "list", "--json"])
    assert res.exit_code == 0
    items = json.loads(res.stdout)
    assert isinstance(items, list) and items
    for it in items:
        assert it["category"] in CATEGORIES and it["id"] and it["name"]
        assert set(it["price"]) >= {"amount", "currency"} and it["price"]["currency"] == "EUR"
        assert Decimal(it["price"]["amount"]) > 0
        if it["category"] == "gpu":
            assert {"chip", "vram_gb", "length_mm"} <= set(it)
    res = CliRunner().invoke(app, ["catalog", "list", "--category", "psu", "--json"])
    assert {i["category"] for i in json.loads(res.stdout)} == {"psu"}
    res = CliRunner().invoke(app, ["catalog", "list", "--category", "toaster", "--json"])
    assert res.exit_code == 2 and "unknown category" in res.stderr
