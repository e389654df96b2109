"""`planner costs`: the JSON contract of issue 5, human output with dates and sources, exit 2 on bad input."""

from __future__ import annotations

import json
import math
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

import planner.cli.costs as cli_costs
from planner.plan_view import read_plan_view
from planner.share.plan_file import purchase_from_plan
from helpers_costs import Est, Sweep
from planner.cli import app

PLAN = Path(__file__).parent / "data" / "costs" / "user-target-build.json"
REAL_SPEED = cli_costs._speed_functions  # kept before the autouse fixture swaps in the fake
USER_CASE = ["costs", "--runs", "8", "--hours", "7", "--build", str(PLAN)]




def fake_speed(workload):
    """Stands in for planner.perf.model: fixed speedups, and sweep_time's documented formula."""
    table = {"rtx-5090": 5.0, "h100-sxm5-80gb": 8.0, "h100-pcie-80gb": 6.0}

    def speedup(chip):
        v = table.get(chip, 4.0)
        return Est(v, v * 0.8, v * 1.2)

    def sweep(runs, baseline_hours, est, gpu_count=1):
        per_run = baseline_hours / est.value
        return Sweep(per_run, math.ceil(runs / gpu_count) * per_run)

    return speedup, sweep


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANNER_FX_DIR", str(tmp_path / "fx"))
    monkeypatch.setattr(cli_costs, "_speed_functions", fake_speed)


def run(*args: str):
    return CliRunner().invoke(app, list(args))


def test_json_contract_for_the_users_case():
    result = run(*USER_CASE, "--provider", "lambda", "--provider", "runpod", "--provider", "vast",
                 "--cloud-gpu", "h100", "--cloud-gpu", "a100", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["currency"] == "EUR"
    assert set(data) >= {"currency", "options", "break_even", "assumptions"}
    kinds = [o["kind"] for o in data["options"]]
    assert kinds[0] == "buy" and kinds.count("buy") == 1 and "rent" in kinds
    for o in data["options"]:
        assert {"kind", "name", "gpu", "gpus", "hours_to_finish", "cost_to_finish", "cost_per_run"} <= set(o)
        assert isinstance(o["gpus"], int) and isinstance(o["hours_to_finish"], float)
        assert Decimal(o["cost_to_finish"]) > 0 and Decimal(o["cost_per_run"]).as_tuple().exponent == -2
        assert o["price_date"] and o["price_source"]  # every price carries its date and source
    providers = {o["provider"] for o in data["options"] if o["kind"] == "rent"}
    assert providers == {"Lambda", "RunPod", "Vast.ai"}
    buy = data["options"][0]
    assert buy["gpu"] == "rtx-5090" and buy["cash_to_finish"] == buy["cost_to_finish"]
    assert Decimal(buy["net_cost_over_horizon"]) < Decimal(buy["cash_to_finish"])
    assert Decimal(buy["purchase"]) == Decimal("6480.00")
    rent_names = {o["name"] for o in data["options"] if o["kind"] == "rent"}
    assert {b["vs"] for b in data["break_even"]} == rent_names
    for b in data["break_even"]:
        assert b["baseline_hours_per_month"] is None or b["baseline_hours_per_month"] >= 0
    a = data["assumptions"]
    assert a["horizon_months"] == 24 and a["kwh_price"] == "0.1940" and a["fx"]["date"] == "2026-10-02"


def test_options_change_the_numbers():
    base = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--json").stdout)
    sold = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--sell-old-gpu", "--json").stdout)
    pricier = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--kwh-price", "0.40", "--json").stdout)
    usd = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--currency", "USD", "--json").stdout)
    b0, b1, b2, b3 = (d["options"][0] for d in (base, sold, pricier, usd))
    assert Decimal(b1["net_cost_over_horizon"]) == Decimal(b0["net_cost_over_horizon"]) - Decimal("150.00")
    assert Decimal(b2["electricity"]) > Decimal(b0["electricity"])
    assert usd["currency"] == "USD" and Decimal(b3["purchase"]) == Decimal("7273.80")  # 6480 x 1.1225
    owned = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--owned", "fixture-meshify-2", "--json").stdout)
    assert Decimal(owned["options"][0]["purchase"]) == Decimal("6350.00")
    ones = json.loads(run(*USER_CASE, "--cloud-gpu", "h100-sxm5", "--gpus", "1", "--json").stdout)
    assert {o["gpus"] for o in ones["options"] if o["kind"] == "rent"} == {1}


def test_rent_only_without_a_build():
    data = json.loads(run("costs", "--runs", "8", "--hours", "7", "--provider", "runpod", "--json").stdout)
    assert data["options"] and all(o["kind"] == "rent" for o in data["options"])
    assert data["break_even"] == []


def test_human_output_shows_dates_and_sources():
    result = run(*USER_CASE, "--provider", "runpod", "--cloud-gpu", "h100-sxm5", "--limit", "3")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "cash to finish" in out and "Net cost over 24 months" in out
    assert "2026-11-09" in out and "runpod.io/pricing" in out and "Break-even" in out
    assert "EDF Tarif Bleu" in out and "ECB rates of 2026-10-02" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["costs", "--runs", "8", "--hours", "-7"], "--hours"),
        (["costs", "--runs", "0", "--hours", "7"], "--runs"),
        (["costs", "--runs", "8", "--hours", "7", "--currency", "XYZ"], "unknown currency"),
        (["costs", "--runs", "8", "--hours", "7", "--currency", "BGN"], "BGN"),
        (["costs", "--runs", "8", "--hours", "7", "--kwh-price", "abc"], "--kwh-price"),
        (["costs", "--runs", "8", "--hours", "7", "--horizon-months", "0"], "--horizon-months"),
        (["costs", "--runs", "8", "--hours", "7", "--build", "nope.json"], "nope.json"),
        (["costs", "--runs", "8", "--hours", "7", "--build", str(PLAN), "--budget", "7000"], "either"),
        (["costs", "--runs", "8", "--hours", "7", "--provider", "nobody"], "no cloud offer"),
        (["costs", "--runs", "8", "--hours", "7", "--gpu-resale", "1.5"], "between 0 and 1"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needle):
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert needle in result.stderr
    assert "Traceback" not in result.output and len(result.stderr.strip().splitlines()) <= 2


def test_bad_plan_files_exit_2(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    no_gpu = tmp_path / "nogpu.json"
    plan = json.loads(PLAN.read_text(encoding="utf-8"))["plans"][0]
    plan["parts"] = [p for p in plan["parts"] if p["category"] != "gpu"]
    no_gpu.write_text(json.dumps(plan), encoding="utf-8")  # a bare plan object is accepted too
    for path, needle in ((broken, "not valid JSON"), (no_gpu, "no GPU part")):
        result = run("costs", "--runs", "8", "--hours", "7", "--build", str(path))
        assert result.exit_code == 2 and needle in result.stderr, result.output


def test_real_speed_model_wiring():
    pytest.importorskip("planner.perf.sweep")
    from planner.costs.compare import Workload, timing_from

    work = Workload(8, 7.0)
    assert REAL_SPEED(work) is None  # the CLI leaves the speed model to the service's compare(), the UI's step too
    from planner.catalog.load import cached_catalog
    from planner.cli.costs import _request
    from planner.service.pipeline import speed_functions

    speedup, sweep = speed_functions(cached_catalog(), _request(work, "EUR"))
    est = speedup("h100-sxm5-80gb")
    t = timing_from(sweep(8, 7.0, est, gpu_count=8), work, est, 8)
    assert 0 < t.wall_low <= t.wall_hours <= t.wall_high
    assert t.wall_hours == pytest.approx(7.0 / est.value)  # one wave of 8 runs on 8 GPUs


def test_budget_goes_through_the_solver(monkeypatch):
    plan = json.loads(PLAN.read_text(encoding="utf-8"))["plans"][0]
    seen = {}

    def fake_solver(budget, currency, work, owned, rates):
        seen.update(budget=budget, currency=currency, runs=work.runs, hours=work.baseline_hours)
        return purchase_from_plan(read_plan_view(plan, "the plan"), rates, currency)[0]

    monkeypatch.setattr(cli_costs, "_solver_build", fake_solver)
    result = run("costs", "--runs", "8", "--hours", "7", "--budget", "7000", "--cloud-gpu", "h100-sxm5", "--json")
    assert result.exit_code == 0, result.output
    assert seen == {"budget": Decimal("7000"), "currency": "EUR", "runs": 8, "hours": 7.0}
    assert json.loads(result.stdout)["options"][0]["kind"] == "buy"


def test_solver_without_a_plan_is_a_clear_error(monkeypatch):
    import planner.service.pipeline

    class Empty:
        plans: list = []

        class recommendation:  # noqa: N801 - stands in for a Recommendation with no why-not
            why_not = None

    monkeypatch.setattr(planner.service.pipeline, "plan", lambda catalog, req, **k: Empty())
    result = run("costs", "--runs", "8", "--hours", "7", "--budget", "7000")
    assert result.exit_code == 1 and "no build within EUR 7 000.00" in result.stderr, result.output  # a result, not bad input
