"""Price strings to Decimal + ISO currency: price-parser plus the shapes French shops use (`1 199€95`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Optional

from price_parser import Price
from price_parser._currencies import CURRENCY_CODES  # price-parser's ISO 4217 table (no public name for it)

from planner.prices.sanity import amount_problem
from planner.textsafe import strip_invisible

# Symbols and local spellings -> ISO 4217. "$" alone is ambiguous: the caller's hint decides, else USD.
_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("US$", "USD"), ("CA$", "CAD"), ("C$", "CAD"), ("AU$", "AUD"), ("A$", "AUD"), ("NZ$", "NZD"),
    ("HK$", "HKD"), ("S$", "SGD"), ("R$", "BRL"), ("MX$", "MXN"),
    ("€", "EUR"), ("£", "GBP"), ("¥", "JPY"), ("₹", "INR"), ("₩", "KRW"), ("zł", "PLN"), ("Kč", "CZK"),
    ("Ft", "HUF"), ("lei", "RON"), ("kn", "HRK"), ("Kn", "HRK"), ("₺", "TRY"), ("Fr.", "CHF"), ("kr", "SEK"),
    ("₽", "RUB"), ("руб", "RUB"), ("₴", "UAH"), ("грн", "UAH"), ("₸", "KZT"), ("тг", "KZT"), ("лв", "BGN"),
    ("NT$", "TWD"), ("Rs", "INR"), ("元", "CNY"), ("円", "JPY"), ("원", "KRW"), ("₫", "VND"), ("฿", "THB"), ("₱", "PHP"),
    ("ر.س", "SAR"), ("د.إ", "AED"), ("₪", "ILS"), ("RM", "MYR"), ("Rp", "IDR"), ("S/", "PEN"),
)
ISO_4217: frozenset[str] = frozenset(c for c in CURRENCY_CODES if len(c) == 3 and c.isalpha() and c.isupper())
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "HKD", "SGD", "MXN"})
_KR = frozenset({"SEK", "NOK", "DKK", "ISK"})
ISO_RE = re.compile(
    r"(?<![A-Z])(EUR|USD|GBP|CHF|CAD|AUD|JPY|PLN|SEK|NOK|DKK|CZK|HUF|RON|BGN|TRY|CNY|INR|NZD|HKD|SGD|BRL|MXN|"
    r"RUB|UAH|KZT|TWD|KRW|VND|THB|PHP|SAR|AED|ILS|MYR|IDR|PEN|ARS|CLP|COP|ZAR|HRK|PKR)(?![A-Z])"
)
# "1 199€95", "1 019€ 95": the euro sign used as the decimal separator (LDLC, Materiel.net, Cdiscount).
_EURO_AS_DECIMAL = re.compile(r"(\d)\s*€\s*(\d{2})(?!\d)")
_NEGATIVE = re.compile(r"(?:^|[^\w.,])[-\u2212\u2012\u2013]\s*(?:[^\d\s]{1,4}\s*)?\d")
_EXPONENT = re.compile(r"\d[eE][+-]?\d")
_APOSTROPHES = re.compile(r"(?<=\d)['\u2019\u02bc\u2032](?=\d{3})")
# The only separator in the number is followed by exactly three digits (and no more digits after).
_THOUSANDS_ONLY = re.compile(r"^[^\d]*\d{1,3}([.,])\d{3}(?![\d.,])\D*$")
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009\u2007]+")


@dataclass(frozen=True)
class ParsedPrice:
    amount: Decimal
    currency: Optional[str]  # ISO code, None when the text names no currency
    raw: str


_DOLLAR_COUNTRY = re.compile(r"\$\s*(CA|AU|NZ|HK|SG|MX|US)\b|\b(CA|AU|NZ|HK|SG|MX|US)\s*\$")


def currency_from_text(text: str, hint: Optional[str] = None) -> Optional[str]:
    """The ISO code a price text names: an ISO code first, then a symbol; '$'/'kr' defer to the hint."""
    m = ISO_RE.search(text.upper())
    if m:
        return m.group(1)
    d = _DOLLAR_COUNTRY.search(text)
    if d:  # "1 299,00 $ CA", "CA $1,299"
        return {"CA": "CAD", "AU": "AUD", "NZ": "NZD", "HK": "HKD", "SG": "SGD", "MX": "MXN", "US": "USD"}[
            d.group(1) or d.group(2)]
    for sym, code in _SYMBOLS:
        if sym in text:
            if code == "SEK" and hint in _KR:
                return hint
            return code
    if "$" in text:
        return hint if hint in _DOLLARS else "USD"
    return None


# Signs that several currencies share: the page's country or locale decides (planner.prices.locale), never a default.
SHARED_SIGNS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("元", ("CNY", "TWD", "HKD")),
    ("¥", ("JPY", "CNY")),
    ("Rs", ("INR", "PKR", "LKR", "NPR")),
    ("kr", ("SEK", "NOK", "DKK", "ISK")),
    ("$", ("USD", "CAD", "AUD", "NZD", "MXN", "CLP", "ARS", "COP", "UYU", "SGD", "HKD", "TWD")),
)
_SHARED = {sign for sign, _ in SHARED_SIGNS}


def shared_sign_currencies(text: str) -> tuple[str, ...]:
    """The currencies a price text may mean when its only currency mark is a shared sign ('$5.000', '99元', '1 299 kr');
    () when it names one currency (an ISO code, 'US$', 'R$', 'NT$', '€', '円'...) or none."""
    if ISO_RE.search(text.upper()) or _DOLLAR_COUNTRY.search(text):
        return ()
    rest = text
    for sym, _code in _SYMBOLS:
        if sym not in _SHARED and sym in rest:
            if "$" not in sym:
                return ()
            rest = rest.replace(sym, " ")  # 'NT$', 'US$', 'R$': a named dollar, not a bare '$'
    if rest != text and "$" not in rest:
        return ()
    for sign, options in SHARED_SIGNS:
        if re.search(rf"(?<![A-Za-z]){re.escape(sign)}(?![A-Za-z])" if sign.isalpha() else re.escape(sign), rest):
            return options
    return ()


def normalise_text(text: str) -> str:
    """Drop invisible format characters (a zero-width space inside '4 299,95 €'), collapse every kind of space to
    one ASCII space and move a decimal euro sign to the end."""
    t = _SPACES.sub(" ", strip_invisible(text)).strip()
    return _EURO_AS_DECIMAL.sub(r"\1,\2 €", t)


def parse_price(
    text: object,
    decimal_separator: Optional[str] = None,
    currency_hint: Optional[str] = None,
) -> Optional[ParsedPrice]:
    """Parse one price text ('1 199€95', '1.130,00 €', '$599.66', 1019.95); None when no amount.

    `decimal_separator` is the shop's ("," for French shops) and is only used when the text is
    ambiguous for price-parser; `currency_hint` names the shop's currency for bare '$' or numbers.
    """
    if text is None or isinstance(text, bool):
        return None
    if isinstance(text, (int, float, Decimal)):
        try:
            amount = Decimal(str(text))
        except (InvalidOperation, ValueError):
            return None
        return ParsedPrice(amount, currency_hint, str(text)) if amount_problem(amount) is None else None
    if not isinstance(text, str):
        return None  # lists, objects: a wrong type is rejected, not coerced
    raw = text[:200]
    t = normalise_text(raw)
    if not t or not any(c.isdigit() for c in t):
        return None
    if _NEGATIVE.search(t) or _EXPONENT.search(t):
        return None  # "-5", "−1 199€95", "1e300": never read as 5, 1199.95 or 1
    t = _APOSTROPHES.sub("", t)  # Swiss thousands: 1'234.56, 1’234.56
    if re.fullmatch(r"\d+(\.\d+)?", t):  # machine form ("1019.95", content="541.98")
        read: Optional[Decimal] = Decimal(t)
    else:
        read = _amount(t, decimal_separator)
    if read is None or amount_problem(read) is not None:
        return None
    return ParsedPrice(read, currency_from_text(t, currency_hint) or currency_hint, raw)


def _amount(t: str, decimal_separator: Optional[str]) -> Optional[Decimal]:
    sep = decimal_separator
    if sep is not None and not _sep_plausible(t, sep):
        sep = None  # e.g. "$599.66" on a shop configured with ",": trust the text
    thousands = _THOUSANDS_ONLY.search(t)
    if thousands:  # "$1,234" / "1.299 €": one separator then exactly 3 digits is a thousands separator
        sep = "." if thousands.group(1) == "," else ","
    amount = Price.fromstring(t, decimal_separator=sep).amount
    if amount is None and sep is not None:
        amount = Price.fromstring(t).amount
    return amount


def _sep_plausible(t: str, sep: str) -> bool:
    """Does `sep` look like the decimal separator of t (followed by 1-2 digits at the end)?"""
    other = "." if sep == "," else ","
    m = re.search(r"\d([.,])(\d+)\D*$", t)
    if not m:
        return True
    if m.group(1) == other and len(m.group(2)) in (1, 2):
        return False
    return True
