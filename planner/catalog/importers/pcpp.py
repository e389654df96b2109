"""Import the PCPartPicker-derived pc-part-dataset layout into a catalog directory (parts + USD offers)."""

from __future__ import annotations

import csv
import hashlib
import json
import re
import shutil
import tempfile
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, Callable, Optional

from pydantic import BaseModel, ValidationError

from planner import atomicfile
from planner.catalog.load import OFFERS_DIR, SHIPPED_DATA_DIR, load_catalog, load_chips
from planner.errors import CatalogError, InputError
from planner.catalog.importers.pcpp_map import MAPPERS, ChipIndex, Mapped, Skip, brand_of, map_gpu
from planner.catalog.models import CATEGORIES, PART_TYPES, Offer
from planner.money import CENT

# Our category -> the dataset file holding it (docyx/pc-part-dataset `data/json/<category>.json`).
SOURCE_FILES: dict[str, str] = {
    "gpu": "video-card.json", "cpu": "cpu.json", "motherboard": "motherboard.json", "memory": "memory.json",
    "storage": "internal-hard-drive.json", "cooler": "cpu-cooler.json", "psu": "power-supply.json",
    "case": "case.json",
}
DATASET = "docyx/pc-part-dataset"
SNAPSHOT_DATE = date(2025, 7, 23)  # upstream README: "Last updated: July 23, 2025"
RETAILER = "PCPartPicker US lowest (dataset snapshot)"
CURRENCY = "USD"
OFFER_COLUMNS = list(Offer.model_fields)
NO_PRICE = "no price in the snapshot"

Progress = Callable[[str, int, int], None]  # (category, records done, records in file)


@dataclass
class CategoryCounts:
    """What happened to the records of one dataset file."""

    file: str
    read: int = 0
    priced: int = 0
    written: int = 0
    offers: int = 0
    skipped: Counter = field(default_factory=Counter)
    dropped_columns: dict[str, int] = field(default_factory=dict)  # column -> known values not stored
    details: Counter = field(default_factory=Counter)  # e.g. GPU chipsets we have no chip for

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "read": self.read, "priced": self.priced, "written": self.written,
                "offers": self.offers, "skipped": dict(self.skipped.most_common()),
                "dropped_columns": dict(self.dropped_columns),
                "skipped_most_often": dict(self.details.most_common(15))}


@dataclass
class ImportReport:
    """Counts per category (read, priced, written, skipped by reason) and where the catalog went."""

    src: Path
    out: Path
    observed_on: date
    include_unpriced: bool
    categories: dict[str, CategoryCounts]

    def total(self, key: str) -> int:
        return sum(getattr(c, key) for c in self.categories.values())

    def to_json(self) -> dict[str, Any]:
        return {"source": str(self.src), "out": str(self.out), "dataset": DATASET,
                "observed_on": self.observed_on.isoformat(), "currency": CURRENCY,
                "include_unpriced": self.include_unpriced,
                "totals": {k: self.total(k) for k in ("read", "priced", "written", "offers")},
                "categories": {c: n.to_json() for c, n in self.categories.items()}}


def cell(value: Any) -> str:
    """One CSV cell in the catalog's conventions: empty = unknown, lists as 'a;b', booleans as true/false."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ";".join(str(v) for v in value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else str(value)
    return str(value)


def price_of(rec: dict[str, Any]) -> Optional[Decimal]:
    """The snapshot's USD price as Decimal cents, None when absent or not positive."""
    raw = rec.get("price")
    if raw is None or isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
        return None
    try:
        d = Decimal(str(raw)).quantize(CENT)
    except InvalidOperation:
        return None
    return d if d.is_finite() and d > 0 else None


MAX_DATASET_FILE_BYTES = 200_000_000


def read_records(path: Path) -> list[dict[str, Any]]:
    from planner.errors import InputError
    from planner.validation import load_json, read_text_capped

    try:  # a regular file of at most 200 MB (the July 2025 snapshot's largest is 2.3 MB), UTF-8
        text = read_text_capped(path, max_bytes=MAX_DATASET_FILE_BYTES, what="dataset file")
    except InputError as exc:
        raise CatalogError(str(exc)) from None
    data = load_json(text, str(path), CatalogError)
    if not isinstance(data, list):
        raise CatalogError(f"{path}: expected a JSON array of parts, got {type(data).__name__}")
    return [r if isinstance(r, dict) else {} for r in data]


def check_paths(src: Path, out: Path) -> None:
    if not src.is_dir():
        raise InputError(f"dataset directory {src} does not exist")
    missing = [f for f in SOURCE_FILES.values() if not (src / f).is_file()]
    if missing:
        raise InputError(f"{src} is not a pc-part-dataset directory: missing {', '.join(missing)}")
    if out.resolve() == SHIPPED_DATA_DIR.resolve():
        raise InputError(f"refusing to overwrite the shipped catalog {out}; choose another --out directory")
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out} exists and is not a directory")


def _map(category: str, rec: dict[str, Any], chips: ChipIndex) -> Mapped:
    if not isinstance(rec.get("name"), str) or not rec["name"].strip():
        raise Skip("no name")
    if any(ord(ch) < 32 or 0x7F <= ord(ch) < 0xA0 for ch in rec["name"]):
        raise Skip("control characters in the name")  # a NUL would make the written CSV unreadable
    return map_gpu(rec, chips) if category == "gpu" else MAPPERS[category](rec)


def slug(text: str, limit: int = 90) -> str:
    """'Corsair Vengeance RGB 32 GB (DDR5-6000 CL36, 2x16 GB)' -> 'corsair-vengeance-rgb-32-gb-ddr5-6000-cl36-2x16-gb'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-")[:limit].strip("-") or "part"


def stable_ids(category: str, mapped: list[tuple[dict[str, Any], Any]]) -> None:
    """Give each row the id `pcpp-<category>-<slug of maker + model>`, the same whatever the order of the dataset.
    Rows whose slug collides are told apart by a short hash of what the record says other than its price (so a new
    snapshot's prices never swap ids between them), and only rows that differ in nothing but price by -2, -3... in
    price order. A suffix can never meet another product's own slug (`enthoo-pro` twice beside `enthoo-pro-2`):
    every id is checked unique across the category."""
    groups: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    for row, price in mapped:
        groups.setdefault(f"pcpp-{category}-{slug(row['name'])}", []).append((row, price))

    def record(row: dict[str, Any]) -> str:  # what the record says, not where it stood nor what it cost
        return json.dumps({k: v for k, v in row.items() if k not in ("id", "source")}, sort_keys=True, default=str)

    taken = {base for base, items in groups.items() if len(items) == 1}
    for base, items in sorted(groups.items()):
        if len(items) == 1:
            items[0][0]["id"] = base
            continue
        by_record: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        for row, price in items:
            by_record.setdefault(hashlib.sha1(record(row).encode()).hexdigest()[:8], []).append((row, price))
        for digest, same in sorted(by_record.items()):
            same.sort(key=lambda item: str(item[1]))
            for n, (row, _) in enumerate(same, 1):
                pid = f"{base}-v{digest}" + ("" if n == 1 else f"-{n}")
                while pid in taken:  # practically never: a slug that itself ends in -v<8 hex digits>
                    pid += "x"
                taken.add(pid)
                row["id"] = pid


def _row(category: str, index: int, rec: dict[str, Any], mapped: Mapped, observed_on: date) -> dict[str, Any]:
    name = " ".join(str(mapped.row.pop("name", rec["name"])).split())
    return dict(mapped.row, id="", name=name, brand=brand_of(str(rec["name"]).strip()),
                source=f"PCPartPicker listing via {DATASET} snapshot {observed_on.isoformat()}, "
                       f"{SOURCE_FILES[category]} item {index}",
                notes=["brand = first word(s) of the name", *mapped.notes])


def _blank_rejected(model: type[BaseModel], sample: dict[str, str], column: str) -> bool:
    """Does the model refuse an empty cell (= unknown) in this column? Then the column cannot hold gaps."""
    try:
        model.model_validate({**sample, column: ""})
    except ValidationError as exc:
        return any(e["loc"] and e["loc"][0] == column for e in exc.errors())
    return False


def gapless_columns(model: type[BaseModel], rows: list[dict[str, Any]]) -> tuple[list[str], dict[str, int]]:
    """Columns to write, and the optional ones left out because some rows are unknown there while the
    model takes no empty value for them (column -> number of known values not stored)."""
    columns = list(model.model_fields)
    if not rows:
        return columns, {}
    sample = {k: cell(rows[0].get(k)) for k in columns}
    dropped: dict[str, int] = {}
    for col, info in model.model_fields.items():
        if info.is_required() or all(r.get(col) is not None for r in rows):
            continue
        if _blank_rejected(model, sample, col):
            dropped[col] = sum(r.get(col) is not None for r in rows)
    return [c for c in columns if c not in dropped], dropped


def _offer(part_id: str, price: Decimal, observed_on: date) -> dict[str, str]:
    return {"part_id": part_id, "price": str(price), "currency": CURRENCY, "condition": "new", "retailer": RETAILER,
            "url": "", "observed_on": observed_on.isoformat(), "source": "listed",
            "note": f"lowest US listing on PCPartPicker in the {DATASET} snapshot (USD, not converted)",
            "in_stock": ""}


def import_category(category: str, records: list[dict[str, Any]], chips: ChipIndex, *, include_unpriced: bool,
                    observed_on: date, progress: Optional[Progress] = None
                    ) -> tuple[list[str], list[dict[str, str]], list[dict[str, str]], CategoryCounts]:
    """Columns, rows and offers for one category; every row is validated as the loader will read it."""
    counts = CategoryCounts(file=SOURCE_FILES[category], read=len(records))
    model = PART_TYPES[category]
    mapped: list[tuple[dict[str, Any], Optional[Decimal]]] = []
    for i, rec in enumerate(records):
        if progress and (i % 500 == 0):
            progress(category, i, len(records))
        price = price_of(rec)
        counts.priced += price is not None
        if price is None and not include_unpriced:
            counts.skipped[NO_PRICE] += 1
            continue
        try:
            mapped.append((_row(category, i, rec, _map(category, rec, chips), observed_on), price))
        except Skip as s:
            counts.skipped[s.reason] += 1
            if s.detail:
                counts.details[s.detail] += 1
    stable_ids(category, mapped)
    columns, dropped = gapless_columns(model, [r for r, _ in mapped])
    counts.dropped_columns = dropped
    rows: list[dict[str, str]] = []
    offers: list[dict[str, str]] = []
    for row, price in mapped:
        for col in dropped:
            if row.get(col) is not None:
                row["notes"].append(f"{col} {cell(row[col])!r} not stored: the catalog model takes no empty "
                                    f"(unknown) {col}, and other rows of this import lack it")
        cells = {k: ("; ".join(row[k]) if k == "notes" else cell(row.get(k))) for k in columns}
        try:
            model.model_validate(cells)
        except ValidationError as exc:
            loc = ".".join(str(p) for p in exc.errors()[0]["loc"]) or "row"
            counts.skipped[f"fails validation ({loc})"] += 1
            continue
        offer = _offer(cells["id"], price, observed_on) if price is not None else None
        if offer is not None:
            try:
                Offer.model_validate(offer)
            except ValidationError:
                counts.skipped["price the catalog does not take (out of range)"] += 1
                if not include_unpriced:
                    continue
                offer = None
        rows.append(cells)
        if offer is not None:
            offers.append(offer)
    counts.written, counts.offers = len(rows), len(offers)
    if progress:
        progress(category, len(records), len(records))
    return columns, rows, offers, counts


def _write(path: Path, columns: list[str], rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fp:
        w = csv.DictWriter(fp, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def import_pcpp(src: Path | str, out: Path | str, *, include_unpriced: bool = False,
                observed_on: date = SNAPSHOT_DATE, progress: Optional[Progress] = None) -> ImportReport:
    """Read SRC (<category>.json arrays) and write OUT/<category>.csv + OUT/offers/<category>.csv.

    Only priced parts by default; `include_unpriced` keeps the others without an offer (not buyable).
    GPUs point to the shipped chip table (the loader falls back to it); cards of unknown chips are skipped.
    """
    src, out = Path(src), Path(out)
    check_paths(src, out)
    chips = ChipIndex(load_chips(SHIPPED_DATA_DIR))
    results = {}
    for category in CATEGORIES:
        records = read_records(src / SOURCE_FILES[category])
        results[category] = import_category(category, records, chips, include_unpriced=include_unpriced,
                                            observed_on=observed_on, progress=progress)
    fix = f"check --out {out} is a writable directory with free space"
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".import-", dir=out) as tmp:
            staged = Path(tmp)
            (staged / OFFERS_DIR).mkdir()
            for category, (columns, rows, offers, _) in results.items():
                _write(staged / f"{category}.csv", columns, rows)
                _write(staged / OFFERS_DIR / f"{category}.csv", OFFER_COLUMNS, offers)
            try:  # the loader reads it as any catalog: what it would refuse is never written to OUT
                load_catalog(staged)
            except CatalogError as exc:
                raise CatalogError(f"the imported catalog would not load, nothing written to {out}: {exc}") from None
            (out / OFFERS_DIR).mkdir(parents=True, exist_ok=True)
            for category in results:  # each a rename within OUT: a reader sees a whole file, old or new
                for rel in (Path(f"{category}.csv"), Path(OFFERS_DIR) / f"{category}.csv"):
                    shutil.move(str(staged / rel), str(out / rel))
    except OSError as exc:  # a read-only or full OUT: one line, as for the report below
        raise atomicfile.fs_error(out, exc, "the catalog", fix) from None
    report = ImportReport(src=src, out=out, observed_on=observed_on, include_unpriced=include_unpriced,
                          categories={c: r[3] for c, r in results.items()})
    atomicfile.write_json(out / "import-report.json", report.to_json(), "the import report", fix)
    return report
