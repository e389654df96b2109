"""The catalog as front ends use it: shipped data joined with the freshest trusted prices of the user's price history."""

from __future__ import annotations

import json
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


def catalog_key() -> str:
    """What every answer reads, as a key for front ends' caches: JSON [catalog data dir, price history file (None
    when there is none), stamps]. It changes whenever a catalog file, the price history (or its write-ahead log,
    where a price just given may still sit) or your measurements (planner calibrate) change; `priced_catalog(key)`
    loads the catalog it names."""
    from planner.catalog.load import default_data_dir
    from planner.perf.calibration import fingerprint
    from planner.prices.store import default_path

    root = default_data_dir()
    stamps: list = [(str(p), p.stat().st_mtime_ns) for p in sorted(root.rglob("*.csv"))]
    history = default_path()
    db: Optional[Path] = history if history.exists() else None
    if db is not None:
        for f in (db, db.with_name(db.name + "-wal")):
            if f.exists():
                stamps.append((str(f), f.stat().st_mtime_ns, f.stat().st_size))
    stamps.append(fingerprint())  # your measurements change every speed
    return json.dumps([str(root), None if db is None else str(db), stamps])


def priced_catalog(key: str) -> Catalog:
    """The catalog `catalog_key()` names: its data dir joined with its price history (shipped prices when none)."""
    root, db = json.loads(key)[:2]
    return load_priced_catalog(root, db, use_history=db is not None)
