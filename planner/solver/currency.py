"""Offer prices and budgets to and from EUR, the solver's internal currency, at the run's ECB reference rates."""

from __future__ import annotations

from decimal import Decimal

from planner.fx import convert as fx_convert
from planner.fx import reference_rates
from planner.money import check_currency


def convert(amount: Decimal, from_ccy: str, to_ccy: str) -> Decimal:
    """amount in to_ccy, rounded to the cent as a price is shown (planner.fx.convert)."""
    src, dst = check_currency(from_ccy), check_currency(to_ccy)
    return amount if src == dst else fx_convert(amount, src, dst, reference_rates())


def to_eur(amount: Decimal, currency: str) -> Decimal:
    return convert(amount, currency, "EUR")


def from_eur(amount: Decimal, currency: str) -> Decimal:
    return convert(amount, "EUR", currency)
