"""The verified-rows register (issue 34 item 8): every register row names its source and date, and every part of
the default plans is either in the register or marked "unverified" in the plan itself (text, JSON, exports)."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.catalog.load import load_catalog
from planner.catalog.verified import REGISTER_FILE, load_register
from planner.cli import app
from planner.errors import CatalogError
from planner.plan_view import UNVERIFIED_MARK

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUDGETS = ("1500", "7000", "25000")  # a small, the headline and a large plan (docs/solver.md's table)

pytestmark = pytest.mark.usefixtures("no_price_history")


def test_every_register_row_names_a_source_address_a_past_date_and_a_catalog_part(cat) -> None:
    register = load_register(REPO / "data")
    assert register, "data/verified_rows.csv is shipped and not empty"
    for pid, row in register.items():
        assert pid in cat.parts, f"{pid}: not a catalog part"
        assert row.sources() and all(s.startswith(("http://", "https://")) for s in row.sources()), pid
        assert row.read_on <= date.today(), pid
        assert row.facts.strip(), pid


def test_the_2022_prime_tx_1600_no_longer_carries_an_atx31_id(cat) -> None:
    for p in cat.by_category("psu"):
        if "atx31" in p.id:
            assert p.atx_version == "3.1", f"{p.id} is ATX {p.atx_version} but its id says atx31"
    old = cat.parts["psu-seasonic-prime-tx-1600-ssr-1600tr-2022"]
    assert old.atx_version == "2.x" and old.cable_12v2x6_w == 450 and "SSR-1600TR" in old.name
    assert "SSR-1600TR2" in cat.parts["psu-seasonic-prime-tx-1600-atx31-2024"].name  # the exact SKU named


def test_a_register_row_without_an_address_or_with_a_future_date_is_refused(tmp_path) -> None:
    (tmp_path / REGISTER_FILE).write_text("part_id,facts,source_url,read_on,verdict,notes\n"
                                          "psu-x,length,maker page (not recorded),2026-01-01,confirmed,\n")
    with pytest.raises(CatalogError, match="source_url"):
        load_register(tmp_path)
    (tmp_path / REGISTER_FILE).write_text("part_id,facts,source_url,read_on,verdict,notes\n"
                                          "psu-x,length,https://example.org/a,2999-01-01,confirmed,\n")
    with pytest.raises(CatalogError, match="future"):
        load_register(tmp_path)


@pytest.fixture(scope="module")
def plans() -> dict[str, dict]:
    out = {}
    for budget in DEFAULT_BUDGETS:
        res = CliRunner().invoke(app, ["recommend", budget, "--json"])
        assert res.exit_code == 0, res.output
        out[budget] = json.loads(res.stdout)
    return out


def test_every_part_of_the_default_plans_is_in_the_register_or_marked_unverified(plans, cat) -> None:
    register = load_register(REPO / "data") or {}
    marked = 0
    for budget, data in plans.items():
        for plan in data["plans"]:
            for line in plan["parts"]:
                row = register.get(line["id"])
                passes = row is not None and row.passes
                assert line["verified"] is passes, (budget, line["id"])
                marked += not passes
    assert marked, "some default rows are still unverified: the test must see the mark"


def test_the_text_plan_marks_exactly_the_unverified_rows(plans) -> None:
    res = CliRunner().invoke(app, ["recommend", "7000"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    first = plans["7000"]["plans"][0]
    table = res.stdout.split("Speed:")[0]
    rows = table.splitlines()
    for line in first["parts"]:
        # a narrow terminal wraps a row over several lines: the row is its first line plus the lines whose type cell
        # is blank (the next part's row starts with its own type)
        i = next(i for i, r in enumerate(rows) if line["name"][:12] in r)
        row = rows[i]
        j = i + 1
        while j < len(rows) and rows[j].startswith("│") and rows[j][1:].split("│")[0].strip() == "":
            row += " " + rows[j]
            j += 1
        assert (UNVERIFIED_MARK in " ".join(row.split())) is (not line["verified"]), line["name"]
    assert "data/verified_rows.csv" in res.stdout  # the mark is explained once


def test_the_markdown_export_marks_unverified_rows() -> None:
    from planner.service import build_from_catalog
    from planner.share import to_markdown

    cat = load_catalog(REPO / "data")
    build = build_from_catalog(cat, [("mb-asus-proart-x870e-creator-wifi", 1), ("case-lianli-a3-matx", 1)])
    md = to_markdown(build).splitlines()
    assert UNVERIFIED_MARK not in next(r for r in md if "ProArt" in r)
    assert UNVERIFIED_MARK in next(r for r in md if "A3-mATX" in r)


def test_a_catalog_without_a_register_marks_nothing(tmp_path) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    (data / REGISTER_FILE).unlink()
    cat = load_catalog(data)
    assert cat.register is None and cat.verified("case-fractal-torrent") is None


def test_the_web_ui_build_table_marks_unverified_rows() -> None:
    from planner.service import build_from_catalog
    from ui.view import build_rows

    cat = load_catalog(REPO / "data")
    rows = build_rows(build_from_catalog(cat, [("cpu-amd-ryzen9-9900x", 1), ("cpu-amd-ryzen5-7600", 1)]), cat)
    specs = {r["id"]: r["Specs"] for r in rows}
    assert specs == {"cpu-amd-ryzen9-9900x": "checked", "cpu-amd-ryzen5-7600": "unverified"}
