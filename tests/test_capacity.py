"""No build fits because the catalog lacks a part: name it; brand means the maker on the box, chip maker is separate."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.catalog.load import load_catalog
from planner.cli import app
from planner.errors import InputError
from planner.request import Request
from planner.service.capacity import brand_note, catalog_gaps, with_chip_makers_excluded
from planner.solver import recommend


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_four_gpus_without_a_four_slot_board_name_the_missing_board(cat) -> None:
    four = [b.id for b in cat.by_category("motherboard") if (b.gpu_slots_x8 or 0) >= 4 and cat.offer_for(b.id)]
    assert four, "the catalog hosts 4 GPUs (WRX90); leaving those boards out brings the gap back"
    most = max(b.gpu_slots_x8 or 0 for b in cat.by_category("motherboard") if cat.offer_for(b.id) and b.id not in four)
    gaps = catalog_gaps(cat, Request.parse(budget="30000", gpu_count=4, excluded=tuple(four)))
    assert gaps and "known to host 4 GPUs" in gaps[0] and f"the most is {most}" in gaps[0]
    assert catalog_gaps(cat, Request.parse(budget="30000", gpu_count=4)) == []
    assert catalog_gaps(cat, Request.parse(budget="30000", gpu_count=1)) == []
    leave_out = [arg for b in four for arg in ("--exclude", b)]
    res = CliRunner().invoke(app, ["recommend", "--budget", "30000", "--gpus", "4", *leave_out, "--json"])
    assert res.exit_code == 1
    d = json.loads(res.stdout)
    assert d["why_not"]["catalog_gaps"] == gaps
    text = " ".join(CliRunner().invoke(app, ["recommend", "--budget", "30000", "--gpus", "4", *leave_out]).stdout.split())
    assert "known to host" in text and "no compatible combination" not in text


def test_chip_maker_leaves_out_every_card_with_that_chip(cat) -> None:
    req = with_chip_makers_excluded(cat, Request.parse(budget="7000"), ("NVIDIA",))
    rec = recommend(cat, req.model_copy(update={"accepted_warnings": ("gpu_software_support",)}))
    for plan in rec.plans:
        assert cat.chips[plan.chip.id].vendor != "NVIDIA"
    by_brand = recommend(cat, Request.parse(budget="7000", excluded_brands=("NVIDIA",))).plans[0]
    assert by_brand.parts["gpu"].brand != "NVIDIA"  # the box maker is left out...
    with pytest.raises(InputError, match="chip maker"):
        with_chip_makers_excluded(cat, Request.parse(budget="7000"), ("Nvidya",))


def test_brand_nvidia_says_what_it_means(cat) -> None:
    assert brand_note(cat, ("PNY",)) == []
    note = brand_note(cat, ("NVIDIA",))[0]
    assert "maker on the box" in note and "chip maker" in note
    res = CliRunner().invoke(app, ["recommend", "--budget", "7000", "--exclude-brand", "NVIDIA"])
    assert res.exit_code == 0 and "maker on the box" in " ".join(res.stdout.split())
