"""Read a catalog directory (chips, parts, offers), validate every row once, join parts with prices."""

from __future__ import annotations

import csv
import difflib
import stat
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, Mapping, Optional, TypeVar, overload

from pydantic import BaseModel, ValidationError

from planner.resources import SHIPPED_DATA_DIR
from planner.errors import CatalogError, UnknownPartError
from planner.fx import convert_money
from planner.catalog.models import (
    CATEGORIES, PART_TYPES, PERSON_SOURCES, AnyPart, Case, Cooler, Cpu, Gpu, GpuChip, Memory, Motherboard, Offer, Psu,
    Storage,
)

if TYPE_CHECKING:
    from planner.catalog.verified import VerifiedRow

CHIPS_FILE = "gpu_chips.csv"
OFFERS_DIR = "offers"
# Offers observed within this many days of a part's freshest one compete on price.
FRESH_WINDOW = timedelta(days=14)

M = TypeVar("M", bound=BaseModel)


def default_data_dir() -> Path:
    """The shipped data/ directory, or $PLANNER_DATA_DIR."""
    from planner.settings import current

    return current().data_dir or SHIPPED_DATA_DIR


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read_csv(path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield (line number, row) for each data row; blank lines and '#' comment lines are skipped."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise CatalogError(f"{_display(path)}: not a regular file (a folder or a device)")
        with path.open("rb") as probe:
            head = probe.read(4096)
    except OSError as exc:
        raise CatalogError(f"{_display(path)}: cannot read ({exc.strerror})") from None
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise CatalogError(f"{_display(path)}: UTF-16 text; save the CSV as UTF-8")
    if b"\x00" in head:
        raise CatalogError(f"{_display(path)}: binary data (NUL bytes), not a UTF-8 CSV")
    with path.open(newline="", encoding="utf-8-sig") as handle:
        kept: list[int] = []  # file line number of each line the reader sees

        def lines() -> Iterator[str]:
            for number, line in enumerate(handle, start=1):
                if line.strip() and not line.startswith("#"):
                    kept.append(number)
                    yield line

        reader = csv.DictReader(lines())
        try:
            if reader.fieldnames is None:
                raise CatalogError(f"{_display(path)}: empty file, expected a header row")
            if any(h is None or h.strip() == "" for h in reader.fieldnames):
                raise CatalogError(f"{_display(path)}: the header has an empty column name")
            for row in reader:
                line = kept[reader.line_num - 1]
                if None in row:
                    raise CatalogError(f"{_display(path)} row {line}: more cells than header columns")
                yield line, {k.strip(): (v if v is not None else "") for k, v in row.items()}
        except csv.Error as exc:
            line = kept[reader.line_num - 1] if 0 < reader.line_num <= len(kept) else reader.line_num
            raise CatalogError(f"{_display(path)} row {line}: malformed CSV ({exc})") from None
        except UnicodeDecodeError as exc:
            raise CatalogError(f"{_display(path)}: not UTF-8 text near line {len(kept) + 1} "
                               f"(byte 0x{exc.object[exc.start]:02x}: Latin-1 or binary?); save the CSV as UTF-8") from None


def _check_header(path: Path, header: Iterable[str], model: type[BaseModel]) -> None:
    fields = model.model_fields
    unknown = [h for h in header if h not in fields]
    if unknown:
        raise CatalogError(
            f"{_display(path)}: unknown column {unknown[0]!r} (known: {', '.join(fields)})"
        )
    missing = [n for n, f in fields.items() if f.is_required() and n not in header]
    if missing:
        raise CatalogError(f"{_display(path)}: missing required column {missing[0]!r}")


def load_records(path: Path, model: type[M]) -> list[M]:
    """Validate every row of a CSV into `model`; the first bad row raises CatalogError naming file, row, field."""
    out: list[M] = []
    checked = False
    for line, row in read_csv(path):
        if not checked:
            _check_header(path, row.keys(), model)
            checked = True
        try:
            out.append(model.model_validate(row))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"]) or "row"
            value = row.get(str(err["loc"][0]), "") if err["loc"] else ""
            raw_id = (row.get("id") or row.get("part_id") or "").strip()
            ident = f" (id {raw_id[:60]!r})" if raw_id else ""  # repr: a stray newline stays on one line
            raise CatalogError(
                f"{_display(path)} row {line}{ident}, field {loc!r}: {err['msg']} (got {value!r})"
            ) from None
    return out


def keyed_records(path: Path, model: type[M], key: str, label: str) -> dict[str, M]:
    """load_records keyed by each row's `key` field; a key given twice is a CatalogError naming the file and the
    `label`led value."""
    out: dict[str, M] = {}
    for row in load_records(path, model):
        k = getattr(row, key)
        if k in out:
            raise CatalogError(f"{_display(path)}: {label} {k!r} given twice")
        out[k] = row
    return out


def load_chips(data_dir: Optional[Path] = None) -> dict[str, GpuChip]:
    """GPU chip table by id; a catalog directory without its own table uses the shipped one."""
    path = Path(data_dir or default_data_dir()) / CHIPS_FILE
    if not path.exists():
        path = SHIPPED_DATA_DIR / CHIPS_FILE
    return keyed_records(path, GpuChip, "id", "chip id")


@dataclass
class Catalog:
    """All parts of a catalog directory with their offers; the one object the core reads."""

    data_dir: Path
    chips: dict[str, GpuChip]
    parts: dict[str, AnyPart]
    offers: dict[str, list[Offer]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)  # e.g. a price history that could not be read
    register: Optional[dict[str, "VerifiedRow"]] = None  # data/verified_rows.csv by part id; None: no register

    def verified(self, part_id: str) -> Optional[bool]:
        """Whether the part's row was re-read against a dated source (planner.catalog.verified); None when the
        catalog has no register."""
        if self.register is None:
            return None
        row = self.register.get(part_id)
        return row is not None and row.passes

    def unverified_what(self, part_id: str) -> Optional[str]:
        """What is still to check on the part's row before ordering (None when verified or no register)."""
        from planner.catalog.verified import unverified_what

        return unverified_what(self.register, part_id)

    # a type checker learns a category's record type from the literal (`by_category("gpu")` is a list of Gpu)
    @overload
    def by_category(self, category: Literal["gpu"]) -> list[Gpu]: ...
    @overload
    def by_category(self, category: Literal["cpu"]) -> list[Cpu]: ...
    @overload
    def by_category(self, category: Literal["motherboard"]) -> list[Motherboard]: ...
    @overload
    def by_category(self, category: Literal["memory"]) -> list[Memory]: ...
    @overload
    def by_category(self, category: Literal["storage"]) -> list[Storage]: ...
    @overload
    def by_category(self, category: Literal["cooler"]) -> list[Cooler]: ...
    @overload
    def by_category(self, category: Literal["psu"]) -> list[Psu]: ...
    @overload
    def by_category(self, category: Literal["case"]) -> list[Case]: ...
    @overload
    def by_category(self, category: str) -> list[AnyPart]: ...

    def by_category(self, category: str) -> list[Any]:
        return [p for p in self.parts.values() if p.category == category]

    def given_prices(self) -> list[dict[str, Any]]:
        """The parts whose price stands on one a person gave (yours, or kept from a shared list), as JSON rows."""
        from planner.price_label import offer_label

        out = []
        for pid, offers in self.offers.items():
            if pid not in self.parts or not any(o.source in PERSON_SOURCES for o in offers):
                continue
            o = self.offer_for(pid)
            if o is None or o.source not in PERSON_SOURCES:
                continue
            label = offer_label(o)
            out.append({"id": pid, "name": self.parts[pid].name,
                        "price": {"amount": str(o.price), "currency": o.currency}, "kind": label.kind,
                        "retailer": o.retailer, "url": o.url, "observed_on": o.observed_on.isoformat(),
                        "record": label.text()})
        return sorted(out, key=lambda r: (r["kind"], r["id"]))

    def given_prices_sentence(self, used: Iterable[str] = ()) -> Optional[str]:
        """One line saying which prices a person gave the answer rests on ('Planned at 1 price you gave ...'), or
        None; `used`: the part ids of the build on show (marked 'in this plan')."""
        from decimal import Decimal

        from planner.money import format_money

        rows, used = self.given_prices(), set(used)
        if not rows:
            return None
        mine = sum(r["kind"] == "yours" for r in rows)
        kept = len(rows) - mine
        head = " and ".join(x for x in (
            f"{mine} price{'s' if mine > 1 else ''} you gave" if mine else "",
            f"{kept} price{'s' if kept > 1 else ''} kept from a shared list" if kept else "") if x)
        items = "; ".join(f"{r['name']} {format_money(Decimal(r['price']['amount']), r['price']['currency'])} "
                          f"({r['record']}, {r['retailer']})" + (" — in this plan" if r["id"] in used else "")
                          for r in rows[:8])
        more = f"; and {len(rows) - 8} more" if len(rows) > 8 else ""
        undo = "`planner prices forget PART`" + (" (`--shared` for a list's)" if kept else "")
        return f"Planned at {head}: {items}{more} ({undo} to drop one)"

    def offer_for(self, part_id: str, *, allow_used: bool = True) -> Optional[Offer]:
        """The price a person gave (PERSON_SOURCES, freshest), else the freshest trusted price: the cheapest offer
        seen within FRESH_WINDOW of the newest one, a price a shop showed before a market estimate (one can buy at
        the first; the second is a guess)."""
        offers = [o for o in self.offers.get(part_id, []) if allow_used or o.condition == "new"]
        if len(offers) <= 1:  # nothing to compare (the common case; a 100k-part solve asks 100k times)
            return offers[0] if offers else None
        for kind in PERSON_SOURCES:  # a price a person gave stands for the part: yours, then a kept shared list's
            given = [o for o in offers if o.source == kind]
            if given:
                return max(given, key=lambda o: o.observed_on)
        if len(offers) <= 1:  # nothing to compare (the common case; a 100k-part solve asks 100k times)
            return offers[0] if offers else None
        newest = max(o.observed_on for o in offers)
        fresh = [o for o in offers if o.observed_on >= newest - FRESH_WINDOW]
        buyable = [o for o in fresh if o.source != "estimate"]  # a shop's price beats a market estimate it contradicts
        return min(buyable or fresh, key=lambda o: (convert_money(o.price, o.currency, "EUR"), -o.observed_on.toordinal()))

    def get(self, part_id: str) -> AnyPart:
        try:
            return self.parts[part_id]
        except KeyError:
            close = difflib.get_close_matches(part_id, list(self.parts), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(close)}" if close else ""
            raise UnknownPartError(f"unknown part id {part_id!r}{hint}") from None

    def find(self, query: str, category: Optional[str] = None) -> AnyPart:
        """A part by id or by the name a person typed (exact name wins; typos get "did you mean")."""
        from planner.catalog.match import resolve

        pool = list(self.parts.values()) if category is None else self.by_category(category)
        return resolve(query, pool, category)  # type: ignore[return-value]


def _load_offers(data_dir: Path, parts: dict[str, AnyPart]) -> dict[str, list[Offer]]:
    offers: dict[str, list[Offer]] = {}
    folder = data_dir / OFFERS_DIR
    for path in sorted(folder.glob("*.csv")) if folder.is_dir() else []:
        for offer in load_records(path, Offer):
            if offer.part_id not in parts:
                raise CatalogError(f"{_display(path)}: offer for unknown part id {offer.part_id!r}")
            offers.setdefault(offer.part_id, []).append(offer)
    return offers


def load_catalog(data_dir: Optional[Path | str] = None, *, extra_offers: Optional[Mapping[str, Offer]] = None,
                 warnings: Iterable[str] = ()) -> Catalog:
    """Load and validate a catalog directory; `extra_offers` (e.g. the price history's latest trusted prices,
    joined by planner.service.catalogs) compete with the shipped offers."""
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    if not root.is_dir():
        raise CatalogError(f"catalog directory {_display(root)} does not exist")
    chips = load_chips(root)
    parts: dict[str, AnyPart] = {}
    found = False
    for category in CATEGORIES:
        path = root / f"{category}.csv"
        if not path.exists():
            continue
        found = True
        for part in load_records(path, PART_TYPES[category]):
            if part.id in parts:
                raise CatalogError(f"{_display(path)}: duplicate part id {part.id!r}")
            if isinstance(part, Gpu) and part.chip not in chips:
                raise CatalogError(f"{_display(path)}: card {part.id!r} points to unknown chip {part.chip!r}")
            parts[part.id] = part
    if not found:
        raise CatalogError(f"{_display(root)} holds no category file (expected e.g. gpu.csv, cpu.csv)")
    offers = _load_offers(root, parts)
    for part_id, offer in (extra_offers or {}).items():
        if part_id in parts:
            offers.setdefault(part_id, []).append(offer)
    from planner.catalog.verified import load_register

    return Catalog(data_dir=root, chips=chips, parts=parts, offers=offers, warnings=list(warnings),
                   register=load_register(root))


_CACHE: dict[tuple, Catalog] = {}


def cached_catalog(data_dir: Optional[Path | str] = None) -> Catalog:
    """load_catalog (shipped offers only) memoised on the directory's file modification times."""
    root = Path(data_dir) if data_dir is not None else default_data_dir()
    stamp = tuple(sorted((str(p), p.stat().st_mtime_ns) for p in root.rglob("*.csv")))
    key = (str(root), stamp)
    if key not in _CACHE:
        _CACHE.clear()
        _CACHE[key] = load_catalog(root)
    return _CACHE[key]


def used_allowed(policy: str, category: str) -> bool:
    """Used offers: never, for GPUs only (the default: an established used market), or for every part."""
    return policy == "all" or (policy == "gpu" and category == "gpu")


def price_age_days(offer: Offer, today: Optional[date] = None) -> int:
    return ((today or date.today()) - offer.observed_on).days
