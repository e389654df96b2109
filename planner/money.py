"""Money: Decimal amounts with an ISO 4217 currency; integer cents for the solver."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Annotated

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


def parse_amount(value: object, what: str = "amount") -> Decimal:
    """A money amount from outside: finite, not negative, at most MAX_AMOUNT; else InputError."""
    d = parse_decimal(value, what)
    if d < 0:
        raise InputError(f"{what} must not be negative (got {value})")
    if d > MAX_AMOUNT:
        raise InputError(f"{what} {value} is not a plausible amount (over {MAX_AMOUNT:,})")
    return d


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


def format_money(amount: Decimal, currency: str = "EUR") -> str:
    """Human form with thin grouping: 'EUR 7 012.50'."""
    q = quantize(amount)
    whole, _, frac = f"{q:,.2f}".partition(".")
    return f"{currency} {whole.replace(',', ' ')}.{frac}"
