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


def parse_decimal(value: object, what: str = "amount") -> Decimal:
    """Parse a user- or file-supplied number into a finite Decimal, or raise InputError."""
    if isinstance(value, Decimal):
        d = value
    else:
        text = str(value).strip().replace("\u00a0", "").replace(" ", "")
        try:
            d = Decimal(text)
        except (InvalidOperation, ValueError):
            raise InputError(f"{what} {value!r} is not a number") from None
    if not d.is_finite():
        raise InputError(f"{what} {value!r} is not a finite number")
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
