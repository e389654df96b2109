"""Money: Decimal amounts with an ISO 4217 currency, amounts as people type them, integer cents for the solver."""

from __future__ import annotations

import re
from dataclasses import dataclass

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Annotated, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict

from planner.errors import CurrencyError, InputError

# Currencies the product knows (ECB reference set plus EUR itself).
KNOWN_CURRENCIES = frozenset(
    "EUR USD JPY BGN CZK DKK GBP HUF PLN RON SEK CHF ISK NOK TRY AUD BRL CAD CNY HKD IDR ILS INR "
    "KRW MXN MYR NZD PHP SGD THB ZAR".split()
)
CENT = Decimal("0.01")
MAX_AMOUNT = Decimal("1000000000")  # no price, budget or total the planner handles reaches a billion
MAX_NUMBER_CHARS = 64  # longer text is not a number a person typed


def parse_decimal(value: object, what: str = "amount") -> Decimal:
    """Parse a user- or file-supplied number into a finite Decimal of sane size, or raise InputError."""
    if isinstance(value, Decimal):
        d = value
    else:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(f"{what} must be a number, not {type(value).__name__}")
        if isinstance(value, int):
            text = str(value) if value.bit_length() <= 200 else "9" * (MAX_NUMBER_CHARS + 1)
        else:
            text = str(value).strip().replace("\u00a0", "").replace(" ", "")
        if len(text) > MAX_NUMBER_CHARS:
            raise InputError(f"{what} {text[:20]}... is not a number ({len(text)} characters)")
        try:
            d = Decimal(text)
        except (InvalidOperation, ValueError):
            raise InputError(f"{what} {text!r} is not a number") from None
    if not d.is_finite():
        raise InputError(f"{what} {value!r} is not a finite number")
    if d and not -30 <= d.adjusted() <= 30:
        raise InputError(f"{what} {value} is out of range")
    return d


# Symbols and words people put beside an amount; ISO codes are recognised too.
_SYMBOLS = {"€": "EUR", "$": "USD", "us$": "USD", "£": "GBP", "¥": "JPY", "euro": "EUR", "euros": "EUR",
            "dollar": "USD", "dollars": "USD", "yen": "JPY", "zł": "PLN", "c$": "CAD", "ca$": "CAD"}
_SPACES = re.compile(r"[\s\u00a0\u202f\u2009\u2007']")  # grouping spaces, incl. narrow no-break and Swiss '
_SHAPE = re.compile(r"(?P<sign>-?)(?P<pre>[^\d.,-]*?)(?P<num>[\d.,]+)(?P<mult>[km]?)(?P<post>[^\d.,]*)")
_MULTIPLIERS = {"k": Decimal(1000), "m": Decimal(1_000_000), "": Decimal(1)}
_COMMA_GROUPS = frozenset({"USD", "GBP", "JPY", "CAD"})  # written 7,500 = seven thousand five hundred


@dataclass(frozen=True)
class Amount:
    """An amount read from a person's text, and the currency the text named (None if it named none)."""

    value: Decimal
    currency: Optional[str] = None


def _ambiguous(text: str, what: str, whole: str, frac: str) -> InputError:
    thousands = Decimal(whole + frac)
    small = Decimal(f"{whole}.{frac}").normalize()
    return InputError(f"{what} {text.strip()!r} is ambiguous: {thousands:f} or {small:f}? "
                      f"write {thousands:f} (or {thousands / 1000:f}k)")


def _digits(number: str, text: str, what: str) -> Decimal:
    """'7,000.50' / '7.000,50' / '7 000' / '7,5' -> Decimal; one separator before exactly 3 digits is ambiguous."""
    bad = InputError(f"{what} {text.strip()!r} is not a number (try 7000, 7 000, 7k or 7000.50)")
    if not re.fullmatch(r"\d[\d.,]*|\.\d+|,\d+", number):
        raise bad
    seps = [c for c in number if c in ".,"]
    if not seps:
        return Decimal(number)
    if len(set(seps)) == 2:  # both: the last one is the decimal mark, the other groups thousands
        dec = number[max(number.rfind("."), number.rfind(","))]
        group = "," if dec == "." else "."
        whole, _, frac = number.rpartition(dec)
        if group in frac or not re.fullmatch(r"\d{1,3}(\%s\d{3})*" % group, whole):
            raise bad
        return Decimal(whole.replace(group, "") + "." + frac)
    sep = seps[0]
    if len(seps) > 1:  # '7.000.000' or '7,000,000': grouping only
        if not re.fullmatch(r"\d{1,3}(\%s\d{3})+" % sep, number):
            raise bad
        return Decimal(number.replace(sep, ""))
    whole, _, frac = number.partition(sep)
    if len(frac) == 3 and whole and whole != "0":  # '7.000': French thousands or English 7? ask back
        raise _ambiguous(text, what, whole, frac)
    return Decimal(f"{whole or '0'}.{frac or '0'}")


def _currency_word(word: str, text: str, what: str) -> Optional[str]:
    if not word:
        return None
    code = _SYMBOLS.get(word) or (word.upper() if word.upper() in KNOWN_CURRENCIES else None)
    if code is None:
        raise InputError(f"{what} {text.strip()!r}: {word!r} is not a currency I know (use EUR, USD, €, $...)")
    return code


def read_amount(value: object, what: str = "amount") -> Amount:
    """Read an amount as people write it: '7k', '€7000', '7 000 €', '7000 EUR', '7,5k', '7,000.50', '7.000,50'.
    One separator followed by exactly three digits ('7.000', '7,000') is ambiguous and refused with a question,
    except '$7,500' and the like, where the currency says the comma groups thousands."""
    if isinstance(value, (Decimal, int, float)) and not isinstance(value, bool):
        return Amount(parse_decimal(value, what))
    text = str(value)
    m = _SHAPE.fullmatch(_SPACES.sub("", text).lower())
    if m is None:
        if not re.search(r"\d", text):
            raise InputError(f"{what} {text.strip()!r} has no number in it (try 7000, 7 000 €, 7k)")
        raise InputError(f"{what} {text.strip()!r} is not a number (try 7000, 7 000, 7k or 7000.50)")
    pre = _currency_word(m["pre"], text, what)
    post = _currency_word(m["post"], text, what)
    if pre and post and pre != post:
        raise InputError(f"{what} {text.strip()!r} names two currencies ({pre} and {post})")
    currency = pre or post
    number = m["num"]
    if currency in _COMMA_GROUPS and re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d*)?", number):
        number = number.replace(",", "")
    amount = _digits(number, text, what) * _MULTIPLIERS[m["mult"]]
    return Amount(-amount if m["sign"] else amount, currency)


def parse_amount(value: object, what: str = "amount", currency: Optional[str] = None) -> Decimal:
    """A money amount from outside: a number, or text as people write it (read_amount; a currency named in the
    text must agree with `currency` when given); finite, not negative, at most MAX_AMOUNT; else InputError."""
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        d = parse_decimal(value, what)
    else:
        got = read_amount(value, what)
        if currency is not None and got.currency is not None and got.currency != check_currency(currency):
            raise InputError(f"{what} {str(value).strip()!r} is in {got.currency} but the currency is "
                             f"{check_currency(currency)}; change one of them")
        d = got.value
    if d < 0:
        raise InputError(f"{what} must not be negative (got {value})")
    if d > MAX_AMOUNT:
        raise InputError(f"{what} {value} is not a plausible amount (over {MAX_AMOUNT:,})")
    return d


def read_budget_fields(data: object, default_currency: str = "EUR") -> object:
    """For a model's mode='before' validator: read a typed budget ('7k', '7 000 €') and let a currency named in
    it fill an unset currency field; a named currency that contradicts the currency field is an InputError."""
    if not isinstance(data, dict) or data.get("budget") in (None, ""):
        if isinstance(data, dict) and data.get("currency") is None:
            data = {**data, "currency": default_currency}
        return data
    got = read_amount(data["budget"], "budget")
    given = data.get("currency")
    if got.currency is not None and given not in (None, "") and check_currency(given) != got.currency:
        raise InputError(f"budget {str(data['budget']).strip()!r} is in {got.currency} but the currency is "
                         f"{check_currency(given)}; change one of them")
    return {**data, "budget": got.value, "currency": got.currency or given or default_currency}


def check_currency(code: str) -> str:
    """Return the upper-cased ISO code, or raise CurrencyError."""
    c = str(code).strip().upper()
    if c not in KNOWN_CURRENCIES:
        raise CurrencyError(f"unknown currency {code!r}; use an ISO code such as EUR or USD")
    return c


CurrencyCode = Annotated[str, AfterValidator(check_currency)]  # an ISO code, upper-cased; unknown -> CurrencyError


def quantize(amount: Decimal) -> Decimal:
    return amount.quantize(CENT, rounding=ROUND_HALF_UP)


def to_cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value(rounding=ROUND_HALF_UP))


def from_cents(cents: int) -> Decimal:
    return (Decimal(cents) / 100).quantize(CENT)


class Money(BaseModel):
    """An amount of money; JSON form {"amount": "1234.50", "currency": "EUR"}."""

    model_config = ConfigDict(frozen=True)

    amount: Decimal
    currency: CurrencyCode = "EUR"

    def to_json(self) -> dict[str, str]:
        return {"amount": str(quantize(self.amount)), "currency": self.currency}

    def __str__(self) -> str:
        return format_money(self.amount, self.currency)

    def __add__(self, other: "Money") -> "Money":
        if other.currency != self.currency:
            raise CurrencyError(f"cannot add {other.currency} to {self.currency} without conversion")
        return Money(amount=self.amount + other.amount, currency=self.currency)


# ISO 4217 currencies without a minor unit: shown as whole amounts ('JPY 218 583', not 'JPY 218 582.65').
NO_MINOR_UNIT = frozenset({"JPY", "KRW", "ISK", "CLP", "VND"})


def format_money(amount: Decimal, currency: str = "EUR") -> str:
    """Human form with thin grouping: 'EUR 7 012.50'; whole units for currencies without a minor unit."""
    if currency in NO_MINOR_UNIT:
        whole = f"{Decimal(amount).quantize(Decimal(1), rounding=ROUND_HALF_UP):,.0f}"
        return f"{currency} {whole.replace(',', ' ')}"
    q = quantize(amount)
    whole, _, frac = f"{q:,.2f}".partition(".")
    return f"{currency} {whole.replace(',', ' ')}.{frac}"
