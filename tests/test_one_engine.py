"""One engine per concept (issue 28 item 3): plan-to-purchase, GPU chip matching, cost curves and sweep hours each
have one implementation that every caller reaches."""

from __future__ import annotations

import json

import pytest

from planner.catalog.load import load_catalog, load_chips
from planner.request import Request


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


# ---- plan-to-purchase ------------------------------------------------------------------------------------

def test_a_checked_build_and_its_saved_plan_buy_the_same(cat, tmp_path) -> None:
    """`costs --budget` (the solver's check report) and `costs --build plan.json` (the saved plan) give one Purchase,
    the owned part's worth included on both paths (the file path used to count it as 0)."""
    from planner.fx import load_rates
    from planner.service.pipeline import costs_build
    from planner.share.plan_file import purchase_from_plan, read_plan
    from planner.solver import recommend

    owned = "case-fractal-meshify-2"
    plan = recommend(cat, Request.parse(budget="7000", owned=(owned,), pinned=(owned,)), alternatives=0).plans[0]
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"plans": [plan.to_json()]}), encoding="utf-8")
    rates = load_rates()
    from_report = costs_build(plan.report, "EUR", rates)
    from_file, _ = purchase_from_plan(read_plan(path), rates, "EUR")
    assert from_file == from_report
    assert from_file.owned_value == cat.offer_for(owned).price > 0
    assert from_file.gpu_price + from_file.platform_price == plan.total


# ---- GPU chip matching -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, chip", [("RTX 3060 LHR", "rtx-3060-12gb"), ("GeForce RTX4090", "rtx-4090"),
                                        ("Tesla V100 SXM2 32GB", "v100-sxm2-32gb"), ("radeon rx 7900-xtx", "rx-7900-xtx")])
def test_the_speed_model_and_the_dataset_importer_match_chips_alike(name, chip) -> None:
    """The speed model's names and PCPartPicker's chipsets go through catalog.match.ChipNames: a spelling one of
    them knows, both know (before: the importer missed 'RTX4090', the speed model 'LHR')."""
    from planner.catalog.importers.pcpp_map import ChipIndex
    from planner.perf.model import load_perf_model

    chips = load_chips()
    assert load_perf_model().resolve(name).id == chip
    assert ChipIndex(chips).match(name, None).id == chip


def test_the_importer_tells_memory_variants_apart() -> None:
    from planner.catalog.importers.pcpp_map import ChipIndex, Skip

    index = ChipIndex(load_chips())
    assert index.match("GeForce RTX 3060", 12).id == "rtx-3060-12gb"
    with pytest.raises(Skip, match="memory size differs"):
        index.match("GeForce RTX 3060", 8)


# ---- cost curves -----------------------------------------------------------------------------------------

def test_the_ui_draws_the_cost_models_curve(monkeypatch) -> None:
    """ui/charts draws planner.costs.compare.cost_curve (there was a second, unread copy in the cost model)."""
    import planner.costs.compare as C
    import ui.charts as charts

    lines = [{"option": "build", "kind": "buy", "fixed": 100.0, "per_baseline_hour": 1.0}]
    seen = []
    real = C.cost_curve
    monkeypatch.setattr(C, "cost_curve", lambda *a, **k: seen.append(a) or real(*a, **k))
    frame = charts.cost_lines(lines, ["build"], 10.0, 2)
    assert seen and frame["cost"].tolist() == [100.0, 120.0]


# ---- sweep hours -----------------------------------------------------------------------------------------

def test_the_solver_notes_count_sweep_hours_with_the_speed_model_formula(cat, monkeypatch) -> None:
    import planner.solver.notes as notes
    from planner.perf.sweep import Estimate, sweep_time
    from planner.solver import recommend

    req = Request.parse(budget="7000", runs=9, baseline_hours=7.0)
    plan = recommend(cat, req, alternatives=0).plans[0]
    from planner.perf.planned_sweep import plan_sweep

    # one formula: the notes read the planned sweep (runs per GPU within VRAM, waves) the solver ranks on
    assert notes.sweep_hours(plan, req) == pytest.approx(plan_sweep(plan, req, 9).sweep.wall_hours)
    monkeypatch.setattr(notes, "plan_sweep", lambda *a, **k: type("S", (), {"sweep": type("W", (), {"wall_hours": 42.0})})())
    assert notes.sweep_hours(plan, req) == 42.0
