"""Owned parts the plan leaves out say why; a warning the solver avoids can be accepted by name."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.catalog.load import load_catalog
from planner.cli import app
from planner.errors import InputError
from planner.request import Request
from planner.service.answer import OwnedNotUsed
from planner.service.owned import warning_rules, why_unused
from planner.service.pipeline import plan
from planner.solver import recommend

OLD_BOX = ["cpu-amd-ryzen5-5600g", "mb-msi-mpg-x570-gaming-edge-wifi", "mem-gskill-ripjaws-v-ddr4-4x16-3200-cl16"]


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


def test_each_owned_part_left_out_gets_a_reason(cat) -> None:
    req = Request.parse(budget="7000", owned=tuple(OLD_BOX))
    plan = recommend(cat, req).plans[0].view()
    left_out = [i for i in OLD_BOX if i not in plan.part_ids()]
    assert left_out, "the user's case: the old AM4 platform is not used with a fast GPU"
    entries = why_unused(cat, req, plan, lambda r: recommend(cat, r))
    assert [e["id"] for e in entries] == left_out
    cpu = next(e for e in entries if e["id"] == "cpu-amd-ryzen5-5600g")
    assert "AM4" in cpu["reason"] or "socket" in cpu["reason"]
    # the AM4 CPU's own warning is named (the old box's 4-DIMM kit adds memory_per_channel, issue 34 item 4;
    # psu_right_sized may follow, the PSU was sized for the 9900X: issue 26)
    assert "cpu_cores_per_gpu" in cpu["accept"], cpu["accept"]
    said = OwnedNotUsed(**cpu)  # the Answer's typed entry says it
    assert said.sentence().startswith("AMD Ryzen 5 5600G (owned) not used: ")
    assert "--accept-warning cpu_cores_per_gpu" in said.sentence()
    assert "--accept-warning" not in said.sentence(flag=None) and "'enough CPU" in said.sentence(flag=None)


def test_accepting_the_warning_lets_the_solver_keep_the_owned_parts(cat) -> None:
    # one GPU (two need an x8/x8 board the old AM4 box lacks) and goal "minimum" (cost right after speed): the free
    # owned parts win when allowed; under the default expert goal build quality comes before reusing them
    strict = recommend(cat, Request.parse(budget="7000", owned=tuple(OLD_BOX), goal="minimum", gpu_count=1)).plans[0]
    relaxed = recommend(cat, Request.parse(budget="7000", owned=tuple(OLD_BOX), goal="minimum", gpu_count=1,
                                                accepted_warnings=("cpu_cores_per_gpu",))).plans[0]
    ids = {p.id for p in relaxed.parts.values()}
    assert "cpu-amd-ryzen5-5600g" in ids and relaxed.total < strict.total
    assert "cpu_cores_per_gpu" in [f.rule for f in relaxed.report.warnings]  # still shown, now accepted
    assert not [f for f in strict.report.warnings if f.rule == "cpu_cores_per_gpu"]


def test_only_warning_rules_can_be_accepted() -> None:
    assert "cpu_cores_per_gpu" in warning_rules() and "cpu_socket" not in warning_rules()
    with pytest.raises(InputError, match="cpu_socket.*choose from"):  # checked where the rules are known
        plan(load_catalog(), Request.parse(budget="7000", accepted_warnings=("cpu_socket",)))


def test_cli_accept_warning_and_owned_not_used() -> None:
    base = ["recommend", "--budget", "7000", *[a for i in OLD_BOX for a in ("--owned", i)], "--json"]
    res = CliRunner().invoke(app, base)
    assert res.exit_code == 0, res.stderr
    notes = json.loads(res.stdout)["owned_not_used"]
    assert {n["id"] for n in notes} >= {"cpu-amd-ryzen5-5600g"}
    res = CliRunner().invoke(app, base + ["--accept-warning", "cpu_cores_per_gpu", "--goal", "minimum", "--gpus", "1"])
    d = json.loads(res.stdout)
    assert "cpu-amd-ryzen5-5600g" in {p["id"] for p in d["plans"][0]["parts"]}
    bad = CliRunner().invoke(app, ["recommend", "--budget", "7000", "--accept-warning", "nope"])
    assert bad.exit_code == 2 and "choose from" in bad.stderr
