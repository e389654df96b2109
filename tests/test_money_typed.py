"""Budgets as people type them: one reader for the CLI, the UI and the permalink token."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from hypothesis import given, strategies as st
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import InputError
from planner.money import parse_amount, read_amount
from planner.request import Request
from planner.share import decode_token, encode_token


@pytest.mark.parametrize("text, value, currency", [
    ("7000", "7000", None), ("7k", "7000", None), ("7K", "7000", None), ("€7000", "7000", "EUR"),
    ("7 000 €", "7000", "EUR"), ("7\u202f000\u00a0€", "7000", "EUR"), ("7000 EUR", "7000", "EUR"),
    ("EUR 7k", "7000", "EUR"), ("7k€", "7000", "EUR"), ("7,5k", "7500", None), ("7.5k", "7500", None),
    ("7 000,50 €", "7000.50", "EUR"), ("7.000,50", "7000.50", None), ("7,000.50", "7000.50", None),
    ("$7,500", "7500", "USD"), ("7,50", "7.50", None), ("12.345.678", "12345678", None),
    ("7000 euros", "7000", "EUR"), ("1.2M", "1200000", None),
])
def test_amounts_as_written(text: str, value: str, currency: str | None) -> None:
    got = read_amount(text, "budget")
    assert got.value == Decimal(value) and got.currency == currency


@pytest.mark.parametrize("text", ["7.000", "7,000", "7.000 €", "15,000k"])
def test_a_lone_separator_before_three_digits_is_asked_back(text: str) -> None:
    with pytest.raises(InputError, match="ambiguous.*or.*write"):
        read_amount(text, "budget")


@pytest.mark.parametrize("text, why", [("abc", "no number"), ("7..0", "not a number"),
                                       ("7000 bananas", "not a currency"), ("€7000 USD", "two currencies"),
                                       ("1,00,000", "not a number")])
def test_nonsense_is_one_clear_line(text: str, why: str) -> None:
    with pytest.raises(InputError, match=why) as err:
        read_amount(text, "budget")
    assert "\n" not in str(err.value)


def test_a_currency_in_the_text_must_agree_with_the_currency_field() -> None:
    assert parse_amount("€7000", "budget", "EUR") == 7000
    with pytest.raises(InputError, match="in USD but the currency is EUR"):
        Request.parse(budget="$7000", currency="EUR")
    assert Request.parse(budget="$7000").currency == "USD"  # an unset currency comes from the text
    assert Request.parse(budget="7k").currency == "EUR"


@given(st.integers(min_value=1, max_value=9_999_999))
def test_grouped_forms_read_back_to_the_same_number(n: int) -> None:
    spaced = f"{n:,}".replace(",", " ")
    assert read_amount(spaced + " €").value == n
    assert read_amount(f"{n:,}.00").value == n  # English grouping with a decimal part is not ambiguous
    assert read_amount(f"{n:,}".replace(",", ".") + ",00").value == n


def test_token_and_requirements_read_the_same_way() -> None:
    inputs = Request.parse(budget="7 000 €")
    assert inputs.budget == Decimal("7000.00") and inputs.currency == "EUR"
    token = encode_token(inputs, [])
    assert decode_token(token).inputs.budget == Decimal("7000.00")
    with pytest.raises(InputError, match="ambiguous"):
        Request.parse(budget="7.000")


@pytest.mark.parametrize("typed", ["7k", "€7000", "7 000 €", "7000 EUR"])
def test_cli_recommend_takes_typed_budgets(typed: str) -> None:
    res = CliRunner().invoke(app, ["recommend", "--budget", typed, "--json"])
    assert res.exit_code == 0, res.stderr
    total = json.loads(res.stdout)["plans"][0]["total"]
    assert total["currency"] == "EUR" and 5000 < Decimal(total["amount"]) <= 7000


def test_cli_ambiguous_budget_is_exit_2_with_a_question() -> None:
    res = CliRunner().invoke(app, ["recommend", "--budget", "7.000"])
    assert res.exit_code == 2
    assert "ambiguous" in res.stderr and "Traceback" not in res.stderr and res.stderr.count("\n") <= 2


def test_cli_costs_reads_the_budget_the_same_way() -> None:
    res = CliRunner().invoke(app, ["costs", "--runs", "8", "--hours", "7", "--budget", "7.000"])
    assert res.exit_code == 2 and "ambiguous" in res.stderr


def test_no_build_fits_exits_1_with_the_why_not() -> None:
    res = CliRunner().invoke(app, ["recommend", "--budget", "2500", "--min-vram", "32"])
    assert res.exit_code == 1
    assert "No build fits" in res.stdout and "32 GB" in res.stdout
    res = CliRunner().invoke(app, ["costs", "--runs", "8", "--hours", "7", "--budget", "900"])
    assert res.exit_code == 1 and "no build within" in res.stderr
