"""The prices a shared build list names, per matched line, beside the catalog's: what keeping them would change."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Optional, Sequence

from planner.catalog.load import Catalog, used_allowed
from planner.errors import InputError
from planner.fx import convert_money
from planner.money import quantize
from planner.prices.given import read_price_cell


@dataclass(frozen=True)
class ListPrice:
    """One line's price as the list gives it (per unit), and the catalog's for the same part in that currency."""

    part_id: str
    name: str
    quantity: int
    amount: Decimal
    currency: str
    shop: Optional[str]
    url: Optional[str] = None
    catalog_amount: Optional[Decimal] = None  # the price every answer used before, converted to `currency`
    catalog_kind: Optional[str] = None

    @property
    def difference(self) -> Optional[Decimal]:
        return None if self.catalog_amount is None else quantize(self.amount - self.catalog_amount)

    def to_json(self) -> dict[str, Any]:
        money = lambda a: None if a is None else {"amount": str(quantize(a)), "currency": self.currency}  # noqa: E731
        return {"id": self.part_id, "name": self.name, "quantity": self.quantity, "price": money(self.amount),
                "shop": self.shop, "url": self.url, "catalog_price": money(self.catalog_amount),
                "catalog_kind": self.catalog_kind, "difference": money(self.difference)}


def list_prices(matches: Sequence[Any], catalog: Catalog, used: str = "gpu") -> tuple[list[ListPrice], list[str]]:
    """The list's price of each matched line that names one (Match.price), with the catalog's beside it; and a
    note per price cell that could not be read (the line is then priced from the catalog)."""
    from planner.price_label import offer_label

    out: list[ListPrice] = []
    notes: list[str] = []
    for m in matches:
        if m.part is None or not getattr(m, "price", ""):
            continue
        try:
            got = read_price_cell(m.price)
        except InputError as exc:
            notes.append(f"{m.part.name}: the list's price {m.price[:40]!r} was not read ({exc})")
            continue
        if got is None:
            continue
        amount, currency, shop = got
        offer = catalog.offer_for(m.part.id, allow_used=used_allowed(used, m.part.category))
        ref = None if offer is None else convert_money(offer.price, offer.currency, currency)
        out.append(ListPrice(m.part.id, m.part.name, m.quantity, amount, currency, shop, None,
                             None if ref is None else quantize(ref), None if offer is None else offer_label(offer).kind))
    return out, notes


def list_total(prices: Sequence[ListPrice]) -> Optional[tuple[Decimal, str]]:
    """The sum of the list's prices (unit x quantity) when they are in one currency, else None."""
    currencies = {p.currency for p in prices}
    if len(currencies) != 1:
        return None
    return quantize(sum((p.amount * p.quantity for p in prices), Decimal(0))), currencies.pop()
