"""Upgrade first (issue 34 item 7): a user who owns a machine (the README's 5600G / X570 / DDR4 box with a 600 W PSU and a
GTX 1080 Ti) gets, at EUR 1 500, a GPU swap into that box (and a PSU when the old one cannot carry the card) before
a build that replaces parts they own; the plan says what the upgrade keeps."""

from __future__ import annotations

import pytest

from planner.request import Request
from planner.service import load_priced_catalog, plan
from planner.solver.notes import sweep_hours

BOX = ("cpu-amd-ryzen5-5600g", "mb-msi-mpg-x570-gaming-edge-wifi", "mem-gskill-ripjaws-v-ddr4-4x16-3200-cl16",
       "psu-bequiet-pure-power-11-600", "case-fractal-meshify-2", "cooler-bequiet-pure-rock-2",
       "ssd-samsung-990-pro-1tb", "gpu-nvidia-gtx1080ti-fe")

pytestmark = pytest.mark.usefixtures("no_price_history")


@pytest.fixture(scope="module")
def catalog():
    return load_priced_catalog(None, use_history=False)


def test_at_1500_the_owned_box_is_upgraded_not_replaced(catalog) -> None:
    req = Request.parse(budget="1500", owned=BOX)
    planned = plan(catalog, req)
    first = planned.plans[0]
    ids = {p.id for p in first.parts.values()}
    kept = set(BOX) - {"psu-bequiet-pure-power-11-600", "gpu-nvidia-gtx1080ti-fe"}
    assert kept <= ids, f"the upgrade replaces owned parts: {kept - ids}"
    bought = {c for c, p in first.parts.items() if p.id not in first.owned}
    assert bought <= {"gpu", "psu"} and "gpu" in bought
    note = first.notes[0]
    assert note.startswith("upgrade of your machine: keeps your")
    for pid in kept:
        assert catalog.parts[pid].name in note
    if "psu" in bought:
        assert "cannot carry the new card" in note
    # the build that replaces owned parts follows, and the upgrade is at least as fast
    assert len(planned.plans) >= 2
    other = planned.plans[1]
    assert not kept <= {p.id for p in other.parts.values()}
    assert sweep_hours(first, req) <= sweep_hours(other, req) * 1.02
    assert first.total <= req.budget


def test_without_owned_parts_nothing_changes(catalog) -> None:
    planned = plan(catalog, Request.parse(budget="1500"))
    assert not any(n.startswith("upgrade of your machine") for n in planned.plans[0].notes)


def test_the_cli_leads_with_the_upgrade(catalog) -> None:
    from typer.testing import CliRunner

    from planner.cli import app

    args = ["recommend", "1500"] + [x for pid in BOX for x in ("--owned", pid)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    flat = " ".join(res.stdout.split())
    assert flat.index("upgrade of your machine") < flat.index("Alternative 1")


def test_owned_parts_stored_in_the_profile_lead_with_the_upgrade_too(catalog) -> None:
    """Issue 34 item 7: 'when owned parts are known (the workload profile can hold them), lead with the upgrade'. The
    box stored once with `planner profile set --owned ...` (in this test's own PLANNER_HOME) and a plain
    `planner recommend 1500` keeps the owned platform, as --owned does."""
    from typer.testing import CliRunner

    from planner.cli import app

    stored = CliRunner().invoke(app, ["profile", "set"] + [x for pid in BOX for x in ("--owned", pid)])
    assert stored.exit_code == 0, stored.output
    res = CliRunner().invoke(app, ["recommend", "1500", "--json"])
    assert res.exit_code == 0, res.output
    import json

    first = json.loads(res.stdout)["plans"][0]
    kept = set(BOX) - {"psu-bequiet-pure-power-11-600", "gpu-nvidia-gtx1080ti-fe"}
    assert kept <= {line["id"] for line in first["parts"] if line["owned"]}, first["parts"]
    assert any(n.startswith("upgrade of your machine") for n in first["notes"]), first["notes"]
