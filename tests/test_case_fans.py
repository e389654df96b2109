"""Cases record the intake fans fitted as shipped, per position (issue 34 item 2): every row's `intake_fans` parses,
each position at most once, and a row whose notes say it "ships with" fans records them."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from planner.catalog.models import Case
from planner.compat.rules.sustain import FAN_CFM, shipped_intake_cfm

CASE_CSV = Path(__file__).resolve().parents[1] / "data" / "case.csv"
SPEC_LISTS = Path(__file__).resolve().parent / "data" / "real" / "case-specs"
SPEC_FILES = {"case-fractal-torrent": "fractal-torrent.md", "case-fractal-define-7": "fractal-define-7.md"}


def _rows() -> list[dict[str, str]]:
    with CASE_CSV.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_every_case_row_records_intake_fans_as_position_count_and_size_once_per_position(cat) -> None:
    rows = _rows()
    assert len(rows) == len(cat.by_category("case"))
    for row in rows:
        raw = [item for item in row["intake_fans"].split(";") if item]
        positions = [item.split(":")[0] for item in raw]
        assert len(positions) == len(set(positions)), f"{row['id']}: a position twice in {row['intake_fans']!r}"
        case = cat.get(row["id"])
        for item in raw:
            where, fans = item.split(":")
            count, size = (int(x) for x in fans.split("x"))
            assert case.shipped_intake(where) == (count, size), (row["id"], item)
            assert size in FAN_CFM, f"{row['id']}: no airflow figure for a {size} mm fan"


def test_a_case_whose_notes_say_it_ships_with_fans_records_them(cat) -> None:
    shipping = [r["id"] for r in _rows() if re.search(r"\bships with\b", r["notes"], re.IGNORECASE)]
    assert shipping, "at least the Torrent's notes say what it ships with"
    for pid in shipping:
        assert cat.get(pid).intake_fans, f"{pid}: its notes say it ships with fans, intake_fans is empty"


def test_the_sourced_shipped_fans_feed_the_intake_a_front_radiator_replaces(cat) -> None:
    # North and Define 7 ship two 140 mm front fans (sources in their notes): a front radiator replaces those two
    for pid in ("case-fractal-north", "case-fractal-define-7"):
        case = cat.get(pid)
        assert case.shipped_intake("front") == (2, 140)
        assert shipped_intake_cfm(case) == 2 * FAN_CFM[140]


@pytest.mark.parametrize("bad", ["front:2x150", "top:1x140", "front:0x140", "front2x140", "rear:1x120"])
def test_a_malformed_or_exhaust_position_is_refused_with_a_clear_message(bad: str) -> None:
    with pytest.raises(ValidationError, match="intake fans"):
        Case(id="case-x", name="X", brand="X", form_factors=["ATX"], intake_fans=[bad], source="t", notes="t")


def test_the_torrent_records_its_bottom_radiator_mounts_and_the_gpu_limit_with_its_shipped_front_fans(cat) -> None:
    # Fractal's spec list (quoted in d893a/local-ml-models, see the row's notes): bottom radiator up to 360/420 mm;
    # GPU 461 mm without, 423 mm with a front fan mounted - and the Torrent ships with its front fans fitted
    torrent = cat.get("case-fractal-torrent")
    assert {360, 420} <= set(torrent.radiator_bottom)
    assert not torrent.radiator_top
    assert torrent.max_gpu_length_mm == 423
    assert torrent.shipped_intake("front") == (2, 180) and torrent.shipped_intake("bottom") == (3, 140)


def _spec(name: str) -> dict[str, str]:
    """The maker's spec list as quoted (tests/data/real/case-specs): item name -> text, e.g. 'Front fan' -> '...'."""
    items = {}
    for line in (SPEC_LISTS / name).read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*-\s+([A-Za-z ]+?):\s*(.*)", line)
        if m:
            items.setdefault(m.group(1), m.group(2))
    return items


def _radiator_sizes(text: str) -> set[int]:
    head = re.split(r"[,(]", text)[0]  # "Up to 360/420 mm, including 360x180 mm" -> "Up to 360/420 mm"
    return {int(n) for n in re.findall(r"\d{3}", head)}


@pytest.mark.parametrize("pid", sorted(SPEC_FILES))
def test_rows_match_the_makers_spec_list_on_mounts_shipped_fans_and_gpu_length_as_shipped(cat, pid: str) -> None:
    spec, case = _spec(SPEC_FILES[pid]), cat.get(pid)
    assert {"Front fan", "Front radiator", "CPU cooler max height"} <= set(spec), f"{pid}: the spec list did not parse"
    for position in ("front", "bottom"):
        text = spec.get(f"{position.capitalize()} fan", "")
        m = re.search(r"\((\d+)\s*x\s*[^)]*?GP-(\d\d)[^)]*?included", text)
        expected = (int(m.group(1)), int(m.group(2)) * 10) if m else None
        assert case.shipped_intake(position) == expected, (pid, position, text)
    for position in ("front", "top", "rear", "bottom"):
        listed = _radiator_sizes(spec.get(f"{position.capitalize()} radiator", ""))
        row = set(getattr(case, f"radiator_{position}"))
        assert listed <= row and max(listed, default=0) == max(row, default=0), (pid, position, listed, row)
    with_fans = re.search(r"(\d+) mm (?:w/|with) front fan", spec["GPU max length"] + " " + " ".join(spec.values()))
    assert with_fans and case.max_gpu_length_mm == int(with_fans.group(1)), pid
    assert case.max_cooler_height_mm == int(re.search(r"\d+", spec["CPU cooler max height"]).group())
