"""Issue 34 item 3: count the PSU's native 12V-2x6 cables against the GPUs and say when a card runs on the adapter,
also where the gpu_adapter warning lets it pass (a card of 300 W or less, whose adapter is a rated feed)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.catalog.load import load_catalog
from planner.cli import app
from planner.compat.rules.power_rules import GpuAdapter, cards_on_adapters

GPU = "gpu-nvidia-rtx5070-fe"  # 250 W, one 16-pin input


def plan(psu: str) -> dict:
    r = CliRunner().invoke(app, ["recommend", "--budget", "9000", "--gpus", "2", "--pin", GPU, "--pin", psu, "--json",
                                "--accept-warning", "psu_right_sized"])  # a 1500 W unit for two 250 W cards
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["plans"][0]


@pytest.mark.parametrize("psu", ["psu-corsair-hx1200i-2025", "psu-corsair-hx1500i-2025"])
def test_a_card_on_the_adapter_is_named_in_the_plan(psu: str) -> None:
    cat = load_catalog()
    p, g = cat.get(psu), cat.get(GPU)
    assert not GpuAdapter.wanted(g, cat.chips), "a card the warning covers would prove nothing here"
    expected = cards_on_adapters(p, g, 2)
    notes = [n for n in plan(psu)["notes"] if "8-pin-to-16-pin adapter" in n]
    if expected:
        assert len(notes) == 1 and notes[0].startswith(f"{expected} of the 2 card(s)")
        assert f"has {p.connectors_12v2x6} native 12V-2x6 cable(s)" in notes[0]
    else:
        assert not notes


def test_the_pinned_psus_differ_in_native_cables() -> None:
    cat = load_catalog()
    g = cat.get(GPU)
    assert [cards_on_adapters(cat.get(p), g, 2) for p in ("psu-corsair-hx1200i-2025", "psu-corsair-hx1500i-2025")] \
        == [1, 0]
