"""A price a person typed or a shared list gave ('2 349,00 € @ LDLC'), read into an amount, a currency and a shop."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Optional

from planner.errors import InputError
from planner.money import check_currency, read_amount
from planner.prices.sanity import amount_problem

_EX_VAT = re.compile(r"\b(?:HT|H\.T\.|hors\s+taxes?|ex\.?\s*VAT|excl\.?\s*VAT|excluding\s+VAT|net|o\.?\s*MwSt\.?|"
                     r"zzgl\.?\s*MwSt\.?)\s*$", re.I)
_INCL_VAT = re.compile(r"\b(?:TTC|incl\.?\s*VAT|including\s+VAT|inkl\.?\s*MwSt\.?|VAT\s+incl\.?)\s*$", re.I)


def read_given_price(text: str, currency: Optional[str] = None) -> tuple[Decimal, str]:
    """(amount, currency) of a price a person typed: '2349', '2 349,00 €', '2349 EUR', 'USD 1999.99 incl. VAT'.
    An ex-VAT price is refused (every price in the planner is what a buyer pays, VAT included); so is an amount a
    shop could not charge. Text without a currency is in `currency` (EUR when not given)."""
    raw = " ".join(str(text).split())
    if _EX_VAT.search(raw):
        raise InputError(f"price {raw[:40]!r} is without VAT; give the price a buyer pays, VAT included")
    raw = _INCL_VAT.sub("", raw).strip()
    got = read_amount(raw, "price")
    cur = check_currency(currency) if currency else None
    if got.currency and cur and got.currency != cur:
        raise InputError(f"price {raw!r} is in {got.currency} but --currency says {cur}; give one")
    problem = amount_problem(got.value)
    if problem:
        raise InputError(f"price {raw!r}: {problem}")
    return got.value, got.currency or cur or "EUR"



_NO_PRICE = re.compile(r"^(?:|owned|no prices? available|-|—|n/?a)$", re.I)


def read_price_cell(cell: str, currency: Optional[str] = None) -> Optional[tuple[Decimal, str, Optional[str]]]:
    """(amount, currency, shop) of a build list's price cell ('2 349,00 € @ LDLC', '$549.99 @ Amazon',
    'Purchased For 100,00 €'); None for a cell without a price ('', 'owned', 'No Prices Available'). A cell that
    names a price that cannot be read raises InputError."""
    text = re.sub(r"[*_`]", "", " ".join(str(cell).split())).strip()
    text = re.sub(r"^(?:purchased\s+for|price:?)\s*", "", text, flags=re.I)
    if _NO_PRICE.match(text):
        return None
    amount_text, _, shop = text.partition(" @ ")
    amount, cur = read_given_price(amount_text, currency)
    return amount, cur, (" ".join(shop.split())[:80] or None)
