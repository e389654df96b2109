"""Is this a price a consumer pays? Hard bounds, words around a price (ex-VAT, instalment, struck, 'from'), category ranges."""

from __future__ import annotations

import functools
import re
from datetime import date
from decimal import Decimal
from typing import Optional

from planner.errors import PlannerError

# Any amount outside this range is a misreading (1e300, 1e32, 0.000001), in any currency we price in.
MIN_AMOUNT = Decimal("0.01")
MAX_AMOUNT = Decimal("10000000")

# Sane EUR ranges per catalog category, new or used. ESTIMATES (2026-12, from the catalog's own price spread
# and French retail listings): a price outside is a misreading (a cable listed as a GPU, a bundle, cents).
CATEGORY_RANGE_EUR: dict[str, tuple[Decimal, Decimal]] = {
    "gpu": (Decimal(40), Decimal(40000)),
    "cpu": (Decimal(20), Decimal(20000)),
    "motherboard": (Decimal(30), Decimal(3000)),
    "memory": (Decimal(8), Decimal(15000)),
    "storage": (Decimal(10), Decimal(10000)),
    "psu": (Decimal(15), Decimal(2000)),
    "case": (Decimal(15), Decimal(2000)),
    "cooler": (Decimal(5), Decimal(1000)),
}

_TAX = r"(?:vat|tva|mwst\.?|ust\.?|iva|btw|tax(?:es)?|taxe?s?|gst)"
_EX_VAT_BEFORE = re.compile(
    rf"(?:\b(?:excl?\.?|excluding|exclusive of|ex\.?|hors|ohne|sin|sans|senza|zzgl\.?|plus|before)\s*{_TAX}|"
    rf"\b(?:HT|H\.T\.?|net(?:to)?|netto-?preis|prix ht)|{_TAX}\s*(?:excl?\.?|excluded|exclusive))\W{{0,4}}$",
    re.I,
)
_EX_VAT_AFTER = re.compile(
    rf"^\W{{0,3}}(?:HT\b|H\.T\b|hors\s+tax|excl?\b\.?|excluding|ex\.?\s*{_TAX}|ohne\s+mwst|zzgl|sin\s+iva|"
    rf"senza\s+iva|sans\s+tva|\+\s*{_TAX}|plus\s+{_TAX}|net(?:to)?\b|{_TAX}\s+excl)",
    re.I,
)
_INSTALMENT_AFTER = re.compile(
    r"^\W{0,3}(?:/\s*(?:mois|month|mo|monat|mes|mese)\b|par mois|per month|a month|monthly|mensuel|"
    r"pro monat|im monat|al mes|al mese|x\s*\d+\s*(?:mois|months?|mensualit))",
    re.I,
)
_INSTALMENT_BEFORE = re.compile(
    r"(?:\d+\s*[x×]\s*|\d+\s*(?:mensualités|monthly payments|monatsraten|rate|cuotas)\s*(?:de|of|von|da)?\s*|"
    r"financement|finanzierung|financing|dès\s+\S+\s*/\s*mois\s*|mensualité)\W{0,3}$",
    re.I,
)
_STRUCK_BEFORE = re.compile(
    r"(?:prix barré|prix de référence|prix conseillé|ancien prix|au lieu de|\bwas|\bstatt|\buvp|"
    r"\bunverbindliche preisempfehlung|list price|\brrp|\bmsrp|\bregular price|\bprecio anterior|"
    r"\bprezzo consigliato|\bavant)\W{0,4}$",
    re.I,
)
_FROM_BEFORE = re.compile(
    r"(?:à partir de|\bdès|\bfrom|\bstarting at|\bstarting from|\bab|\bdesde|\ba partire da|\bvanaf|"
    r"\boffres?\s+dès|\bangebote?\s+ab|\boffers?\s+from)\W{0,4}$",
    re.I,
)


def context_problem(before: str, after: str) -> Optional[str]:
    """Why a price with this text before/after it on the same line is not what a buyer pays, or None."""
    b = before[-60:]
    a = after[:40]
    if _EX_VAT_BEFORE.search(b) or _EX_VAT_AFTER.search(a):
        return "ex-VAT price"
    if _INSTALMENT_AFTER.search(a) or _INSTALMENT_BEFORE.search(b):
        return "instalment, not the price"
    if _STRUCK_BEFORE.search(b):
        return "struck-through (former) price"
    if _FROM_BEFORE.search(b):
        return "a 'from' price (several offers or variants)"
    return None


def amount_problem(amount: Decimal) -> Optional[str]:
    """A misread amount: not finite, negative, zero, below a cent or absurdly large."""
    if not amount.is_finite():
        return "not a finite amount"
    if amount < MIN_AMOUNT:
        return f"amount {amount} below {MIN_AMOUNT}"
    if amount >= MAX_AMOUNT:
        return f"amount {amount:.3g} above {MAX_AMOUNT}"
    return None


@functools.lru_cache(maxsize=2)
def _rates(day: date) -> object:
    """The ECB rates, read once a day per process (a refresh checks many offers)."""
    from planner.fx import load_rates

    return load_rates(today=day)


def in_eur(amount: Decimal, currency: str) -> Optional[Decimal]:
    """amount in EUR with the ECB rates, None when the currency has no rate (the range check is skipped)."""
    if currency == "EUR":
        return amount
    try:
        from planner.fx import convert_exact

        return convert_exact(amount, currency, "EUR", _rates(date.today()))
    except (PlannerError, OSError, ArithmeticError):  # no rates or no rate for it: the range check cannot run
        return None


def category_problem(category: Optional[str], amount_eur: Optional[Decimal]) -> Optional[str]:
    """A price outside the (estimated) sane range of its category, compared in EUR; None when unknown."""
    rng = CATEGORY_RANGE_EUR.get(category or "")
    if rng is None or amount_eur is None:
        return None
    lo, hi = rng
    if amount_eur < lo or amount_eur > hi:
        return f"{amount_eur:.2f} EUR is outside the sane range {lo}-{hi} EUR for a {category}"
    return None
