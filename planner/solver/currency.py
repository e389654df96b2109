"""Convert offer prices and budgets to and from EUR, the solver's internal currency (ECB rates)."""

from __future__ import annotations

from decimal import Decimal
from functools import lru_cache

from planner.errors import CurrencyError
from planner.money import check_currency


@lru_cache(maxsize=1)
def _rates():
    from planner.costs.fx import load_rates  # local import: only needed for non-EUR amounts
    return load_rates()


def convert(amount: Decimal, from_ccy: str, to_ccy: str) -> Decimal:
    src, dst = check_currency(from_ccy), check_currency(to_ccy)
    if src == dst:
        return amount
    try:
        from planner.costs.fx import convert as fx_convert
    except ImportError:  # pragma: no cover - fx ships with the package
        raise CurrencyError(f"no exchange rates available to convert {src} to {dst}") from None
    return fx_convert(amount, src, dst, _rates())


def to_eur(amount: Decimal, currency: str) -> Decimal:
    return convert(amount, currency, "EUR")


def from_eur(amount: Decimal, currency: str) -> Decimal:
    return convert(amount, "EUR", currency)
