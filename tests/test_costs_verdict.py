"""The rent-or-buy sentence: what to do, and the break-even in the user's units (sweeps and runs a month)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.costs.verdict import cheapest_rent, rentals_to_show, verdict


def _rent(name: str, cost: str, hours: float, gpu: str = "rtx-4090") -> dict:
    return {"kind": "rent", "name": name, "gpu": gpu, "cost_to_finish": cost, "hours_to_finish": hours}


BUY = {"kind": "buy", "name": "RTX 5090 build", "gpu": "rtx-5090", "cost_to_finish": "6675.02",
       "hours_to_finish": 5.2, "net_cost_over_horizon": "3005.42"}


def test_rent_when_the_sweep_costs_less_rented_and_break_even_in_sweeps() -> None:
    opts = [BUY, _rent("A100 x1", "4.68", 4.1, "a100-80g"), _rent("4090 x1", "2.58", 8.0)]
    evens = [{"vs": "4090 x1", "baseline_hours_per_month": 4499.0, "within_capacity": True},
             {"vs": "A100 x1", "baseline_hours_per_month": 2000.0, "within_capacity": True}]
    v = verdict(opts, evens, runs=8, baseline_hours=7.0, horizon_months=24, currency="EUR")
    assert v.action == "rent" and v.rent_option == "4090 x1"
    assert v.sentence.startswith("Rent: this sweep costs EUR 2.58 on 4090 x1")
    assert v.break_even_sweeps_per_month == pytest.approx(4499.0 / 56)
    assert v.break_even_runs_per_month == pytest.approx(4499.0 / 7)
    assert "80.3 sweeps like this a month" in v.sentence and "over 24 months" in v.sentence
    assert json.dumps(v.to_json())  # JSON-ready


def test_buy_when_the_build_costs_no_more_than_renting() -> None:
    buy = {**BUY, "net_cost_over_horizon": "1.00"}
    v = verdict([buy, _rent("4090 x1", "2.58", 8.0)], [{"vs": "4090 x1", "baseline_hours_per_month": 0.5,
                                                       "within_capacity": True}],
                runs=8, baseline_hours=7.0, horizon_months=24, currency="EUR")
    assert v.action == "buy" and v.sentence.startswith("Buy:")


def test_never_and_beyond_capacity_are_said_in_words() -> None:
    opts = [BUY, _rent("4090 x1", "2.58", 8.0)]
    never = verdict(opts, [{"vs": "4090 x1", "baseline_hours_per_month": None, "within_capacity": None}],
                    runs=8, baseline_hours=7.0, horizon_months=24, currency="EUR")
    assert "never pays off" in never.sentence and never.break_even_sweeps_per_month is None
    beyond = verdict(opts, [{"vs": "4090 x1", "baseline_hours_per_month": 9000.0, "within_capacity": False}],
                     runs=8, baseline_hours=7.0, horizon_months=24, currency="EUR")
    assert "never in practice" in beyond.sentence


def test_without_a_build_the_sentence_still_says_what_to_do() -> None:
    v = verdict([_rent("4090 x1", "2.58", 8.0)], [], runs=8, baseline_hours=7, horizon_months=24, currency="EUR")
    assert v.action == "rent-only" and v.sentence.startswith("Rent:") and "budget" in v.sentence


def test_cheapest_rent_by_family() -> None:
    opts = [_rent("4090", "1", 1), _rent("A100 a", "5", 1, "a100-80g"), _rent("A100 b", "4", 1, "a100-40g")]
    assert cheapest_rent(opts)["name"] == "4090"
    assert cheapest_rent(opts, ("a100",))["name"] == "A100 b"
    opts.append(_rent("H100", "9", 1, "h100-80g"))
    assert rentals_to_show(opts, "4090") == ["4090", "A100 b", "H100"]  # the verdict's, then each family's cheapest
    assert rentals_to_show(opts, "A100 b") == ["A100 b", "H100"]  # each once
    assert rentals_to_show(opts[:1]) == []  # no A100 or H100 offered, none named


def test_costs_json_carries_the_verdict_matching_its_own_numbers() -> None:
    res = CliRunner().invoke(app, ["costs", "--runs", "8", "--hours", "7", "--budget", "7000", "--json"])
    assert res.exit_code == 0, res.stderr
    d = json.loads(res.stdout)
    v = d["verdict"]
    rents = [o for o in d["options"] if o["kind"] == "rent"]
    best = min(rents, key=lambda o: Decimal(o["cost_to_finish"]))
    assert v["rent_cost"] == best["cost_to_finish"] and v["rent_option"] == best["name"]
    be = next(b for b in d["break_even"] if b["vs"] == best["name"])
    assert v["break_even_sweeps_per_month"] == pytest.approx(be["baseline_hours_per_month"] / 56)
    assert v["sentence"].split(":")[0] in ("Rent", "Buy")
    text = CliRunner().invoke(app, ["costs", "--runs", "8", "--hours", "7", "--budget", "7000"]).stdout
    body = text.split("\n\n", 1)[-1] if text.startswith("default:") or text.startswith("profile:") else text
    assert v["sentence"].split(";")[0][:40] in " ".join(text.split())  # said after the profile line, before the table
    assert body is not None
