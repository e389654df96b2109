"""How a price is shown to people: one record per price (kind, the date the number was observed, source, age)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Optional

# Sources whose date is when the price was seen (at a shop, in a list, or by the user); the others carry only the
# date they were entered, which is never shown as if the price were seen then.
DATED_SOURCES = frozenset({"scraped", "listed", "yours", "shared list"})
KIND_NAMES = {"yours": "yours", "shared list": "from the shared list", "user research": "your research (undated)"}
# The date of the data an estimate rests on, as the catalog's notes name it ("PCPartPicker snapshot of 2025-07-23",
# "PCPartPicker US 2025-07-23 lists ...", "saved 2026-08-13").
_BASIS = re.compile(r"(?:snapshot of|saved|as of|observed|on|PCPartPicker(?: US| FR)?)\s+(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class PriceLabel:
    """kind: 'scraped' / 'listed' / 'yours' / 'from the shared list' / 'estimate' / 'your research (undated)' /
    'owned' / 'no price'; when: text for the date column; seen_on: the date the number was observed (a shop
    reading, the user's or a list's date, or the data an estimate rests on), from which its age is counted."""

    kind: str
    when: str
    seen_on: Optional[str] = None

    def age_days(self, today: Optional[date] = None) -> Optional[int]:
        if not self.seen_on:
            return None
        try:
            return ((today or date.today()) - date.fromisoformat(self.seen_on[:10])).days
        except ValueError:
            return None

    def age_text(self, today: Optional[date] = None) -> str:
        days = self.age_days(today)
        return "" if days is None else f"{days} d"

    def text(self, today: Optional[date] = None) -> str:
        """The one way every surface writes the record: 'scraped 2026-08-13, 115 d old',
        'estimate, based on 2025-07-23 data, 501 d old', 'your research (undated), entered 2026-11-30'."""
        if self.kind in ("owned", "no price"):
            return self.kind
        age = self.age_text(today)
        when = f"{self.kind} {self.when}" if self.when and self.when == self.seen_on else \
            ", ".join(x for x in (self.kind, self.when) if x)
        return f"{when}, {age} old" if age else when


def basis_date(note: Optional[str]) -> Optional[str]:
    """The date an estimate is based on, when its note names one ('PCPartPicker snapshot of 2025-07-23')."""
    m = _BASIS.search(note or "")
    return m.group(1) if m else None


def price_label(source: Optional[str], observed_on: Optional[str], note: Optional[str] = None,
                owned: bool = False, basis_on: Optional[str] = None) -> PriceLabel:
    """Never a fresh-looking date on an estimate or on the user's undated research: say what the date is.
    `basis_on` (or a date named in `note`) is the date of the data an estimate rests on."""
    if owned or source == "owned":
        return PriceLabel("owned", "")
    if not source:
        return PriceLabel("no price", "")
    if source in DATED_SOURCES:
        return PriceLabel(KIND_NAMES.get(source, source), observed_on or "date not given", observed_on or None)
    entered = f"entered {observed_on}" if observed_on else "undated"
    if source == "estimate":
        basis = basis_on or basis_date(note)
        return PriceLabel("estimate", f"based on {basis} data", basis) if basis else PriceLabel("estimate", entered)
    return PriceLabel(KIND_NAMES.get(source, source), entered)


def offer_label(offer: object, owned: bool = False) -> PriceLabel:
    """The record of a catalog offer (planner.catalog.models.Offer)."""
    observed = getattr(offer, "observed_on", None)
    return price_label(getattr(offer, "source", None), observed.isoformat() if observed else None,
                       getattr(offer, "note", None), owned=owned)


def offer_note(offers: dict, part_id: str, source: Optional[str], observed_on: Optional[str],
               retailer: Optional[str]) -> Optional[str]:
    """The note of the catalog offer (Catalog.offers) a shown price came from; it names an estimate's basis."""
    for o in offers.get(part_id, []):
        if o.source == source and o.observed_on.isoformat() == (observed_on or "")[:10] and o.retailer == retailer:
            return o.note
    return None
