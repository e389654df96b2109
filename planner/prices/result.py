"""Extraction results: offers read from one page, in the JSON shape of `planner prices extract --json`."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, Optional

Route = Literal["json-ld", "microdata", "rdfa", "opengraph", "selector", "api", "text"]
ROUTES: tuple[str, ...] = ("json-ld", "microdata", "rdfa", "opengraph", "selector", "api", "text")


@dataclass(frozen=True)
class ExtractedOffer:
    """One product price as the page states it, with the route that found it and the raw text."""

    name: Optional[str]
    price: Decimal
    currency: str  # ISO 4217
    in_stock: Optional[bool]
    url: Optional[str]
    route: Route
    raw: str = ""
    condition: Literal["new", "used", "refurbished"] = "new"
    # when the price's sign is shared ('$', '元', 'kr'...) and the page does not say which: the currencies it
    # could be, and `currency` is "XXX" (ISO 4217 "no currency"), which the price store quarantines
    currency_options: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "price": str(self.price),
            "currency": self.currency,
            "in_stock": self.in_stock,
            "url": self.url,
            "route": self.route,
            "condition": self.condition,
            "raw": self.raw,
            **({"currency_options": list(self.currency_options)} if self.currency_options else {}),
        }


@dataclass(frozen=True)
class ExtractResult:
    """What a page says: blocked (bot wall), and offers - the main product first, or results in page order.

    `page_in_stock` is the main product's stock status even when the page shows no price
    (e.g. an Amazon 'Currently unavailable' page gives no offer but page_in_stock False).
    """

    blocked: bool
    offers: list[ExtractedOffer] = field(default_factory=list)
    page_in_stock: Optional[bool] = None
    kind: Literal["product", "listing", "blocked", "empty", "error"] = "empty"
    reason: Optional[str] = None  # why no offer (or why offers were dropped), in one line

    def to_json(self) -> dict[str, Any]:
        return {
            "blocked": self.blocked,
            "offers": [o.to_json() for o in self.offers],
            "page_in_stock": self.page_in_stock,
            "kind": self.kind,
            "reason": self.reason,
        }
