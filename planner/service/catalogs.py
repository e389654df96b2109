"""The catalog as front ends use it: shipped data joined with the freshest trusted prices of the user's price history."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Optional

from planner.catalog.load import Catalog, load_catalog
from planner.errors import PlannerError


def load_priced_catalog(data_dir: Optional[Path | str] = None, price_db: Optional[Path | str] = None,
                        *, use_history: bool = True) -> Catalog:
    """The catalog with the price history's latest trusted offers (`price_db`: a SQLite file, default the user's).
    An unreadable history does not block planning: the catalog says so in `warnings`."""
    if not use_history:
        return load_catalog(data_dir)
    from planner.prices.store import offers_with_warnings

    try:
        latest, skipped = offers_with_warnings(price_db)
    except (sqlite3.Error, OSError, PlannerError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return load_catalog(data_dir, warnings=[f"price history not used ({reason}); shipped prices only"])
    return load_catalog(data_dir, extra_offers=latest, warnings=skipped)
