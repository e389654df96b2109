"""How a price is shown to people: its kind (scraped, estimate, your research, owned) and the date it stands for."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Optional

# Sources whose date is when the price was seen at a shop; the others carry only the date they were entered.
DATED_SOURCES = frozenset({"scraped", "listed"})
_BASIS = re.compile(r"(?:snapshot of|saved|as of|observed|on)\s+(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True)
class PriceLabel:
    """kind: 'scraped' / 'estimate' / 'your research (undated)' / 'owned' / 'no price'; when: text for the date
    column; seen_on: a shop observation date (only for scraped/listed prices), from which an age may be shown."""

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


def basis_date(note: Optional[str]) -> Optional[str]:
    """The date an estimate is based on, when its note names one ('PCPartPicker snapshot of 2025-07-23')."""
    m = _BASIS.search(note or "")
    return m.group(1) if m else None


def price_label(source: Optional[str], observed_on: Optional[str], note: Optional[str] = None,
                owned: bool = False) -> PriceLabel:
    """Never a fresh-looking date on an estimate or on the user's undated research: say what the date is."""
    if owned or source == "owned":
        return PriceLabel("owned", "")
    if not source:
        return PriceLabel("no price", "")
    if source in DATED_SOURCES:
        return PriceLabel(source, observed_on or "date not given", observed_on or None)
    entered = f"entered {observed_on}" if observed_on else "undated"
    if source == "estimate":
        basis = basis_date(note)
        return PriceLabel("estimate", f"based on {basis} data" if basis else entered)
    if source == "user research":
        return PriceLabel("your research (undated)", entered)
    return PriceLabel(source, entered)


def offer_note(offers: dict, part_id: str, source: Optional[str], observed_on: Optional[str],
               retailer: Optional[str]) -> Optional[str]:
    """The note of the catalog offer (Catalog.offers) a shown price came from; it names an estimate's basis."""
    for o in offers.get(part_id, []):
        if o.source == source and o.observed_on.isoformat() == (observed_on or "")[:10] and o.retailer == retailer:
            return o.note
    return None
