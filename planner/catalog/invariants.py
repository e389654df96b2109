"""Catalog invariants beyond single rows: prices, references, estimates labelled, enums."""

from __future__ import annotations

from planner.catalog.load import Catalog
from planner.catalog.models import CATEGORIES, Gpu


def catalog_invariants(cat: Catalog) -> list[str]:
    """Human-readable violations; an empty list means the catalog is sound."""
    issues: list[str] = []
    for part in cat.parts.values():
        if part.category not in CATEGORIES:
            issues.append(f"{part.id}: unknown category {part.category}")
        if not cat.offers.get(part.id):
            issues.append(f"{part.id}: no offer (every part needs a reference price)")
        if isinstance(part, Gpu) and part.chip not in cat.chips:
            issues.append(f"{part.id}: unknown chip {part.chip}")
    for part_id, offers in cat.offers.items():
        for o in offers:
            if o.price <= 0:
                issues.append(f"{part_id}: non-positive price {o.price}")
            if o.source == "estimate" and not o.note:
                issues.append(f"{part_id}: estimate without a note saying its basis")
    return issues
