"""Prices a person gives (`planner prices add/forget`) and a shared list's prices kept on import: stored in the
price history, checked like a scraped price, and used by the next answer."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.prices.given import read_given_price, read_price_cell

FRIEND = Path(__file__).parent / "data" / "real" / "lists" / "friend_rtx5090_fr.md"
FE = "gpu-nvidia-rtx5090-fe"


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    return tmp_path / "home"


def cli(*args: str):
    return CliRunner().invoke(app, list(args))


def recommend_json(*extra: str) -> dict:
    res = cli("recommend", "--budget", "7000", "--gpus", "1", "--json", *extra)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def gpu_line(data: dict) -> dict:
    return next(ln for ln in data["plans"][0]["parts"] if ln["category"] == "gpu")


def test_a_price_reads_as_people_write_it_and_an_ex_vat_one_is_refused() -> None:
    assert read_given_price("2 349,00 €") == (Decimal("2349.00"), "EUR")
    assert read_given_price("1999.99 USD incl. VAT") == (Decimal("1999.99"), "USD")
    assert read_price_cell("2 349,00 € @ LDLC") == (Decimal("2349.00"), "EUR", "LDLC")
    assert read_price_cell("owned") is None and read_price_cell("No Prices Available") is None
    with pytest.raises(Exception, match="without VAT"):
        read_given_price("1958 HT")


def test_prices_add_changes_the_next_answer_and_forget_undoes_it(home) -> None:
    first = recommend_json()
    before = gpu_line(first)
    assert before["id"] == FE and before["price"]["amount"] == "4200.00"
    res = cli("prices", "add", "RTX 5090 Founders Edition", "2 349,00 €", "--shop", "LDLC",
              "--url", "https://www.ldlc.com/fiche/PB00000000.html", "--date", "2026-12-04")
    assert res.exit_code == 0, res.output
    assert (home / "prices.sqlite").exists()  # under PLANNER_HOME, in the one price history
    after = recommend_json()
    line = gpu_line(after)
    assert line["price"]["amount"] == "2349.00" and line["price_source"] == "yours"
    assert line["retailer"] == "LDLC" and line["price_observed_on"] == "2026-12-04"
    assert line["price_kind"] == "yours" and line["price_seen_on"] == "2026-12-04"
    same_rest = [ln for ln in after["plans"][0]["parts"] if ln["category"] != "gpu"] == \
        [ln for ln in first["plans"][0]["parts"] if ln["category"] != "gpu"]
    if same_rest:  # the same build around the card: exactly 4200 - 2349 cheaper
        assert Decimal(recommend_total(after)) == Decimal(recommend_total(first)) - 1851
    assert Decimal(recommend_total(after)) < Decimal(recommend_total(first))
    assert [g["id"] for g in after["given_prices"]] == [FE]
    text = cli("recommend", "--budget", "7000", "--gpus", "1").stdout
    assert "Planned at 1 price you gave" in " ".join(text.split())
    assert cli("catalog", "list", "-c", "gpu", "--json").exit_code == 0
    listed = {p["id"]: p for p in json.loads(cli("catalog", "list", "-c", "gpu", "--json").stdout)}
    assert listed[FE]["price"]["amount"] == "2349.00" and listed[FE]["price_source"] == "yours"
    res = cli("prices", "forget", FE)
    assert res.exit_code == 0 and "forgot 1" in res.stdout
    assert gpu_line(recommend_json())["price"]["amount"] == "4200.00"


def recommend_total(data: dict) -> str:
    return data["plans"][0]["total"]["amount"]


def test_a_price_far_from_the_others_needs_force(home) -> None:
    res = cli("prices", "add", FE, "900")  # -79 % from the catalog's 4200: a typo or a scam until you say so
    assert res.exit_code == 2 and "--force" in res.output and "not stored" in res.output
    assert gpu_line(recommend_json())["price"]["amount"] == "4200.00"
    res = cli("prices", "add", FE, "900", "--force", "--json")
    assert res.exit_code == 0 and "--force" in json.loads(res.stdout)["reason"]
    assert gpu_line(recommend_json())["price"]["amount"] == "900.00"


@pytest.mark.parametrize("args, words", [
    ((FE, "2349 HT"), "without VAT"),
    ((FE, "2349 XYZ"), "not a currency"),
    ((FE, "2349", "--shop", "LDLC", "--currency", "USD"), "shop prices in EUR"),
    ((FE, "2349", "--date", "2999-01-01"), "future"),
    ((FE, "2349", "--url", "javascript:alert(1)"), "http"),
    (("no such card at all", "2349"), "part"),
])
def test_bad_prices_are_one_line_and_exit_2(home, args, words) -> None:
    res = cli("prices", "add", *args)
    assert res.exit_code == 2, res.output
    assert words in res.output and "Traceback" not in res.output


def test_the_friends_list_kept_is_what_recommend_plans_with(home) -> None:
    res = cli("share", "import", str(FRIEND))
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())
    assert "EUR 2 349.00" in out and "EUR -1 851.00" in out  # his price beside the catalog's, per line
    assert "The list's total: EUR 4 568.53" in out and "not kept" in out
    assert gpu_line(recommend_json())["price"]["amount"] == "4200.00"  # asked, not assumed
    res = cli("share", "import", str(FRIEND), "--keep-prices", "--json")
    data = json.loads(res.stdout)
    assert data["kept_prices"] == {"asked": True, "kept": 8, "refused": []}
    assert data["build"]["total"] == {"amount": "4568.53", "currency": "EUR"}
    plan = recommend_json()
    line = gpu_line(plan)
    assert line["price"]["amount"] == "2349.00" and line["price_kind"] == "from the shared list"
    assert line["retailer"] == "LDLC"
    assert {g["kind"] for g in plan["given_prices"]} == {"from the shared list"} and len(plan["given_prices"]) == 8
    text = " ".join(cli("recommend", "--budget", "7000").stdout.split())
    # said before the build (after the line naming the workload profile used)
    assert "Planned at 8 prices kept from a shared list" in text.split("Recommended")[0]
    assert cli("prices", "forget", FE, "--shared").exit_code == 0
    assert gpu_line(recommend_json())["price"]["amount"] == "4200.00"


def test_a_lists_implausible_or_ex_vat_price_is_not_kept_and_says_why(home, tmp_path) -> None:
    text = FRIEND.read_text(encoding="utf-8")
    text = text.replace("2 349,00 € @ LDLC", "349,00 € @ LDLC")  # a typo: -92 % from the catalog's 4 200
    text = text.replace("329,90 € @ LDLC", "274,92 € HT @ LDLC")  # without VAT: not what a buyer pays
    bad = tmp_path / "bad.md"
    bad.write_text(text, encoding="utf-8")
    res = cli("share", "import", str(bad), "--keep-prices")
    assert res.exit_code == 0, res.output
    out = " ".join(res.stdout.split())
    assert "without VAT" in out and "AMD Ryzen 7 9700X" in out  # the line priced from the catalog, said so
    assert "not kept" in out and "gpu-nvidia-rtx5090-fe at 349.00 EUR" in out and "--force" in out
    data = json.loads(cli("share", "import", str(bad), "--json").stdout)
    assert {p["id"] for p in data["list_prices"]} >= {FE} and "cpu-amd-ryzen7-9700x" not in \
        {p["id"] for p in data["list_prices"]}
    assert gpu_line(recommend_json())["price"]["amount"] == "4200.00"  # the typo never reached a plan
