"""Try before you buy: the cheapest rental of a candidate card (or its nearest), a 30-minute measurement's cost and
the steps to `planner calibrate`; the added consumer-card and EU rentals are dated and sourced."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.costs.cloud import ADDED_PRICES_PATH, CloudOffer, latest_offers, load_cloud_offers
from planner.costs.trial import TRIAL_MINUTES, trial_cost, trial_for
from planner.perf.model import load_perf_model

RATES = {"USD": Decimal("1.25")}  # 1 EUR = 1.25 USD: easy to check by hand


def offer(chip: str, price: str, provider: str = "P", currency: str = "USD", gpus: int = 1) -> CloudOffer:
    return CloudOffer(provider=provider, offer="on-demand", billing="on-demand", gpu_name=chip, chip=chip, vram_gb=24,
                      gpus_per_instance=gpus, price_per_gpu_hour=Decimal(price), currency=currency,
                      observed_on="2026-10-01", source="https://example.test/prices")


@pytest.fixture(scope="module")
def model():
    return load_perf_model()


def speed(model):
    return lambda c: model.speedup(c).value


def test_cheapest_exact_rental_and_its_cost(model) -> None:
    offers = [offer("rtx-4090", "0.74", "A"), offer("rtx-4090", "0.34", "B"), offer("rtx-4090", "0.20", "C", gpus=8),
              offer("rtx-5090", "0.10", "D")]
    t = trial_for(model.chips["rtx-4090"], offers, model.chips, speed(model), rates=RATES)
    assert t.exact and t.offer.provider == "B"  # the 8-GPU instance bills 8 GPUs: 0.80/h is dearer than 0.34
    assert t.cost == Decimal("0.14")  # 0.34 USD x 0.5 h / 1.25
    assert trial_cost(offers[2], "EUR", RATES) == Decimal("0.64")
    assert any("planner calibrate" in s for s in t.steps) and TRIAL_MINUTES == 30


def test_a_card_without_a_rental_gets_the_nearest_of_its_architecture(model) -> None:
    offers = [offer("rtx-5090", "0.69"), offer("rtx-4090", "0.34"), offer("h100-sxm5-80gb", "2.0")]
    t = trial_for(model.chips["rtx-5080"], offers, model.chips, speed(model), rates=RATES)
    assert not t.exact and t.rented_chip_name == "GeForce RTX 5090" and "same blackwell architecture" in t.why_nearest
    assert trial_for(model.chips["rtx-5080"], [], model.chips, speed(model), rates=RATES) is None


def test_added_rentals_are_dated_sourced_and_include_consumer_and_eu_offers() -> None:
    added = load_cloud_offers(ADDED_PRICES_PATH)
    assert all(o.observed_on and o.source.startswith(("https://", "api-evangelist/")) for o in added)
    assert {"rtx-5090", "rtx-4090"} <= {o.chip for o in added}
    eu = [o for o in added if o.provider in ("Scaleway", "OVHcloud")]
    assert eu and all(o.currency == "EUR" and "VAT" in (o.note or "") for o in eu)
    assert not any(o.chip == "rtx-5080" for o in added)  # no dated public price found: no invented row
    everything = latest_offers(load_cloud_offers())
    assert any(o.chip == "rtx-5090" for o in everything)  # the default catalog includes them


def test_recommend_names_a_rental_per_top_candidate(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    r = CliRunner().invoke(app, ["recommend", "7000", "--model-params", "15e6", "--json"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    trials = d["try_before_you_buy"]
    served = {g for t in trials for g in t["for_gpus"]}
    assert d["plans"][0]["gpu"]["name"] in served
    for t in trials:
        assert Decimal(t["cost"]["amount"]) > 0 and t["cost"]["currency"] == "EUR" and t["minutes"] == 30
        assert t["price_observed_on"] != "undated" and t["price_source"]
        assert "planner calibrate" in t["steps"][-1]
    text = CliRunner().invoke(app, ["recommend", "7000", "--model-params", "15e6"]).output
    assert "try before you buy" in text and "planner calibrate LOG" in text


def test_what_would_decide_and_try_before_you_buy_name_the_same_rentable_card(tmp_path, monkeypatch) -> None:
    """Issue 36: 'what would decide' said to rent an RTX 5080 while 'try before you buy' said no dated 5080 rental
    exists and rented a 5090; both now name the card the dated price list rents."""
    import json as _json

    from typer.testing import CliRunner as _Runner

    from planner.cli import app as _app

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    data = _json.loads(_Runner().invoke(_app, ["recommend", "--budget", "7000", "--json"]).stdout)
    sbs = data.get("side_by_side") or {}
    decide = next((d for d in sbs.get("what_would_decide", []) if d.startswith("a measurement:")), None)
    assert decide is not None, "the default request has builds too close to call"
    trials = data["try_before_you_buy"]
    modelled = {b["gpu"]["name"] for b in sbs["builds"] if b["speedup_basis"] != "measured"}
    served = {name: t for t in trials for name in t["for_gpus"]}
    assert modelled <= set(served), (modelled, served)  # every card to decide on has its trial
    for name in modelled:
        t = served[name]
        assert f"a rented {t['rent']}" in decide or f"and a {t['rent']}" in decide  # the same rentable card
        if not t["exact_card"]:  # not rentable itself: never told to rent it
            assert f"rented {name}," not in decide and f"rented {name} " not in decide
            assert "stands in for the" in decide and name in decide.split("stands in for the", 1)[1]
