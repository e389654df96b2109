"""SQLite price history: every observation, suspect jumps and currency mismatches, atomic batches, latest prices."""

from __future__ import annotations

import errno
import sqlite3
import statistics
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Callable, Iterator, Optional

from pydantic import ValidationError

from planner.errors import InputError
from planner.money import KNOWN_CURRENCIES
from planner.catalog.models import Offer
from planner.prices.sanity import amount_problem, category_problem, in_eur

DEFAULT_JUMP = Decimal("0.35")  # a move of more than 35 % from the last trusted price is suspect
PEER_GAP = Decimal("0.5")  # a first reading more than 50 % away from other shops / the catalog is suspect
CONFIRM_TOLERANCE = Decimal("0.05")  # a second reading within 5 % of a suspect one confirms it

# Where a stored price comes from: read from a shop page, given by the user (`planner prices add`), or kept from a
# build list someone shared (`planner share import --keep-prices`). A price a person gave wins over a scraped one
# for its part (yours first, then the shared list's) until it is forgotten (`planner prices forget`).
KINDS = ("scraped", "yours", "shared list")
PERSON_KINDS = ("yours", "shared list")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id INTEGER PRIMARY KEY,
    retailer TEXT NOT NULL,
    source TEXT,
    started_at TEXT NOT NULL,
    committed_at TEXT NOT NULL,
    n_observations INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS observations (
    id INTEGER PRIMARY KEY,
    batch_id INTEGER NOT NULL REFERENCES batches(id),
    part_id TEXT NOT NULL,
    retailer TEXT NOT NULL,
    price TEXT NOT NULL,
    currency TEXT NOT NULL,
    in_stock INTEGER,
    url TEXT,
    observed_at TEXT NOT NULL,
    route TEXT,
    raw_text TEXT,
    condition TEXT NOT NULL DEFAULT 'new',
    confidence REAL,
    status TEXT NOT NULL CHECK (status IN ('trusted', 'suspect')),
    reason TEXT,
    kind TEXT NOT NULL DEFAULT 'scraped'
);
CREATE INDEX IF NOT EXISTS obs_part ON observations (part_id, retailer, condition, observed_at);
"""


def default_path() -> Path:
    """$PLANNER_PRICE_DB, else the user data dir's prices.sqlite ($PLANNER_HOME when that is set)."""
    from planner.resources import user_data_dir
    from planner.settings import current

    path = current().price_db
    if path is not None:
        return path

    return user_data_dir() / "prices.sqlite"


def utc_now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


@dataclass(frozen=True)
class NewObservation:
    """What the refresh saw for one matched part on one page."""

    part_id: str
    retailer: str
    price: Decimal
    currency: str
    in_stock: Optional[bool] = None
    url: Optional[str] = None
    route: Optional[str] = None
    raw_text: Optional[str] = None
    condition: str = "new"
    confidence: Optional[float] = None
    observed_at: Optional[datetime] = None
    category: Optional[str] = None  # catalog category, for the sane range check
    reference: Optional[Decimal] = None  # the catalog's own price for the part (same currency), if any
    kind: str = "scraped"  # one of KINDS


@dataclass(frozen=True)
class Observation:
    """One stored row."""

    id: int
    batch_id: int
    part_id: str
    retailer: str
    price: Decimal
    currency: str
    in_stock: Optional[bool]
    url: Optional[str]
    observed_at: datetime
    route: Optional[str]
    raw_text: Optional[str]
    condition: str
    confidence: Optional[float]
    status: str
    reason: Optional[str]
    kind: str = "scraped"

    def to_json(self) -> dict:
        return {
            "id": self.id, "part_id": self.part_id, "retailer": self.retailer, "price": str(self.price),
            "currency": self.currency, "in_stock": self.in_stock, "url": self.url,
            "observed_at": self.observed_at.isoformat(), "route": self.route, "raw_text": self.raw_text,
            "condition": self.condition, "confidence": self.confidence, "status": self.status,
            "reason": self.reason, "kind": self.kind,
        }


def _row(r: sqlite3.Row) -> Observation:
    """One stored row as a record; a row edited into nonsense gives InputError naming it."""
    try:
        return _record(r)
    except (InvalidOperation, ValueError, TypeError) as exc:
        raise InputError(f"price observation #{r['id']} in the database is damaged ({exc}); delete that row") from None


def _record(r: sqlite3.Row) -> Observation:
    return Observation(
        id=r["id"], batch_id=r["batch_id"], part_id=r["part_id"], retailer=r["retailer"],
        price=Decimal(r["price"]), currency=r["currency"],
        in_stock=None if r["in_stock"] is None else bool(r["in_stock"]), url=r["url"],
        observed_at=datetime.fromisoformat(r["observed_at"]), route=r["route"], raw_text=r["raw_text"],
        condition=r["condition"], confidence=r["confidence"], status=r["status"], reason=r["reason"],
        kind=_kind(r),
    )


def _kind(r: sqlite3.Row) -> str:
    kind = r["kind"] if "kind" in r.keys() else "scraped"
    return kind if kind in KINDS else "scraped"


def _checked_time(when: Optional[datetime]) -> datetime:
    """The observation time in UTC (now when not given); one without a time zone or in the future is refused."""
    if when is None:
        return utc_now()
    if not isinstance(when, datetime) or when.tzinfo is None or when.utcoffset() is None:
        raise InputError(f"observation time {when!r} has no time zone; not stored")
    now = utc_now()
    if when > now + CLOCK_SKEW:
        raise InputError(f"observation time {when.isoformat()} is in the future (now {now.isoformat()}); not stored")
    return when.astimezone(timezone.utc).replace(microsecond=0)


def age_text(then: datetime, now: datetime) -> str:
    secs = max(0, int((now - then).total_seconds()))
    if secs < 3600:
        return f"{secs // 60} min"
    if secs < 86400:
        return f"{secs // 3600} h"
    return f"{secs // 86400} d"


def _open(path: Path) -> sqlite3.Connection:
    """Open (or create) the price database; a path that is not one gives InputError, one line."""
    if path.is_dir() or (path.exists() and not path.is_file()):
        raise InputError(f"{path} is not a price database file (it is a folder or a device); pass --db FILE")
    conn: Optional[sqlite3.Connection] = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a read-only folder, a file in the way: a place that cannot hold it, not a bad database
        why = {errno.EEXIST: f"{exc.filename} is a file, not a folder",
               errno.ENOTDIR: f"a file stands in the path {exc.filename}"}.get(exc.errno or 0,
                                                                               f"{exc.strerror or exc} ({exc.filename})")
        raise InputError(f"cannot create the price database {path}: {why}; pass --db a file in a writable "
                         "directory") from None
    try:
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.executescript(_SCHEMA)
        columns = {r[1] for r in conn.execute("PRAGMA table_info(observations)")}
        if columns and "kind" not in columns:  # a database from before prices a person gives
            conn.execute("ALTER TABLE observations ADD COLUMN kind TEXT NOT NULL DEFAULT 'scraped'")
        missing = {"batches", "observations"} - {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table'")}
        if missing:
            raise sqlite3.DatabaseError(f"no table {', '.join(sorted(missing))}")
    except (sqlite3.DatabaseError, OSError) as exc:
        if conn is not None:
            conn.close()
        text = str(exc)
        if "unable to open" in text or "readonly" in text or isinstance(exc, OSError):  # where, not what, is wrong
            verb = "open" if path.exists() else "create"
            raise InputError(f"cannot {verb} the price database {path} ({text}): check that you may write to it "
                             f"and to its folder {path.parent}, or pass --db with another file") from None
        raise InputError(f"{path} is not a usable price database ({exc}); pass --db with another file") from None
    return conn


CLOCK_SKEW = timedelta(minutes=10)  # a reading this far in the future is a clock off by a little; beyond, refused


def row_problem(r: sqlite3.Row, now: datetime) -> Optional[str]:
    """Why a stored row cannot be used (None when it can): a price that is not a sane amount (e.g. '1E+300'
    trusted by an older version), a date that is not one, has no time zone or is in the future, or a currency
    planner cannot convert (a plan would stop on it)."""
    try:
        price = Decimal(r["price"])
        when = datetime.fromisoformat(r["observed_at"])
    except (InvalidOperation, ValueError, TypeError):
        return f"price {str(r['price'])[:20]!r} or time {str(r['observed_at'])[:40]!r} is not readable"
    if amount_problem(price) is not None:
        return f"price {str(r['price'])[:20]!r}: {amount_problem(price)}"
    if r["currency"] not in KNOWN_CURRENCIES:
        return f"currency {str(r['currency'])[:10]!r} has no exchange rate"
    if when.tzinfo is None:
        return f"time {r['observed_at']!r} has no time zone"
    if when > now + CLOCK_SKEW:
        return f"dated {r['observed_at']}, in the future"
    return None


def _unusable(r: sqlite3.Row) -> bool:
    return row_problem(r, utc_now()) is not None


def store_error(exc: BaseException, path: Path) -> Optional[InputError]:
    """A full disk (SQLITE_FULL, ENOSPC) or a read-only place as one line the user can act on, else None."""
    text = str(exc).lower()
    if "database or disk is full" in text or getattr(exc, "errno", None) == errno.ENOSPC or "no space" in text:
        return InputError(f"the disk holding the price database {path} is full; nothing was stored (free some "
                          "space and run it again)")
    if "readonly" in text or "read-only" in text:
        return InputError(f"the price database {path} is read-only; nothing was stored")
    return None


class PriceStore:
    """Price history in one SQLite file (WAL). Writes happen in batches: all rows of a page or none."""

    def __init__(self, path: Optional[str | Path] = None, jump: Decimal = DEFAULT_JUMP,
                 shop_currency: Optional[dict[str, str]] = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.jump = Decimal(jump)
        if shop_currency is None:
            from planner.prices.retailers import DEFAULT_RETAILERS

            shop_currency = {r.name: r.currency for r in DEFAULT_RETAILERS}
            shop_currency.update({r.key: r.currency for r in DEFAULT_RETAILERS})
        self.shop_currency = {k.lower(): v for k, v in shop_currency.items()}
        self.warnings: list[str] = []  # rows latest_trusted left out, and why
        self._conn = _open(self.path)

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "PriceStore":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ writing

    @contextmanager
    def batch(self, retailer: str, source: Optional[str] = None) -> Iterator["Batch"]:
        """One transaction: rows added inside become visible together at exit, or not at all."""
        conn = self._conn
        with self._tx():
            started = utc_now().isoformat()
            cur = conn.execute(
                "INSERT INTO batches (retailer, source, started_at, committed_at, n_observations) "
                "VALUES (?, ?, ?, ?, 0)", (retailer, source, started, started),
            )
            b = Batch(self, int(cur.lastrowid), retailer)  # type: ignore[arg-type]  # set by the INSERT just run
            yield b
            conn.execute("UPDATE batches SET committed_at = ?, n_observations = ? WHERE id = ?",
                         (utc_now().isoformat(), b.count, b.id))

    def record(self, observations: list[NewObservation], retailer: str, source: Optional[str] = None
               ) -> list[Observation]:
        """Store a list of observations as one batch and return the stored rows."""
        with self.batch(retailer, source) as b:
            return [b.add(o) for o in observations]

    def _classify(self, o: NewObservation) -> tuple[str, Optional[str], Optional[int]]:
        """(status, reason, id of a suspect row this one confirms).

        Plausibility is anchored on what the shop's own readings cannot move: other shops' latest trusted
        prices (their median), else the catalog's own price. A reading farther than PEER_GAP from that anchor
        stays suspect however often it repeats (only `prices confirm` can trust it), so repeats or 34 % steps
        cannot walk a price away. Inside the band, a move of more than `jump` from the shop's last trusted
        price waits for a second reading that agrees (or a person). With no anchor at all, the shop's last
        trusted price is the only reference (said in the reason)."""
        if o.currency not in KNOWN_CURRENCIES:
            return "suspect", f"currency {o.currency}: planner has no exchange rate for it", None
        problem = amount_problem(o.price) or category_problem(o.category, in_eur(o.price, o.currency))
        if problem:
            return "suspect", problem, None
        expected = self.shop_currency.get(o.retailer.lower())
        if expected and o.currency != expected:
            return "suspect", f"currency {o.currency}, the shop prices in {expected}", None
        anchor = self._anchor(o)
        if anchor is not None:
            ref, what = anchor
            gap = (o.price - ref) / ref
            if abs(gap) > PEER_GAP:
                return "suspect", f"{gap:+.0%} from {what} {o.currency} (outside ±{PEER_GAP:.0%})", None
        if o.kind in PERSON_KINDS:  # a person's price replaces their last one; only the anchor can hold it
            given = "given by you" if o.kind == "yours" else "from a shared list"
            return "trusted", given + (f", within {PEER_GAP:.0%} of {anchor[1]}" if anchor else ""), None
        last = self._conn.execute(
            "SELECT * FROM observations WHERE part_id=? AND retailer=? AND condition=? "
            "ORDER BY observed_at DESC, id DESC LIMIT 1", (o.part_id, o.retailer, o.condition),
        ).fetchone()
        trusted = self._conn.execute(
            "SELECT * FROM observations WHERE part_id=? AND retailer=? AND condition=? AND status='trusted' "
            "AND currency=? ORDER BY observed_at DESC, id DESC LIMIT 1",
            (o.part_id, o.retailer, o.condition, o.currency),
        ).fetchone()
        if trusted is None or _unusable(trusted):
            if anchor is None:
                return "trusted", "first reading", None
            return "trusted", f"first reading, within {PEER_GAP:.0%} of {anchor[1]}", None
        ref = Decimal(trusted["price"])
        change = (o.price - ref) / ref if ref else Decimal(0)
        if abs(change) <= self.jump:
            return "trusted", None, None
        if last is not None and last["status"] == "suspect" and last["currency"] == o.currency:
            prev = Decimal(last["price"])
            if prev and prev.is_finite() and abs(o.price - prev) / prev <= CONFIRM_TOLERANCE:
                return "trusted", f"confirms suspect reading #{last['id']} ({change:+.0%} vs {ref})", last["id"]
        return "suspect", f"jump {change:+.0%} from last trusted {ref} {trusted['currency']}", None

    def _anchor(self, o: NewObservation) -> Optional[tuple[Decimal, str]]:
        """Other shops' median latest trusted price (same part, condition, currency), else the catalog price."""
        rows = self._conn.execute(
            "SELECT * FROM observations WHERE part_id=? AND condition=? AND currency=? "
            "AND status='trusted' AND retailer!=? ORDER BY observed_at, id",
            (o.part_id, o.condition, o.currency, o.retailer),
        ).fetchall()
        latest = {r["retailer"]: Decimal(r["price"]) for r in rows if not _unusable(r)}  # later rows win per shop
        if latest:
            median = statistics.median(latest.values())
            return median, f"other shops' median {median}"
        if o.reference is not None and o.reference > 0:
            return o.reference, f"the catalog price {o.reference}"
        return None

    def _insert(self, batch_id: int, o: NewObservation, force: bool = False) -> Observation:
        observed = _checked_time(o.observed_at)
        if not isinstance(o.price, Decimal) or not o.price.is_finite():
            raise InputError(f"price {o.price!r} for {o.part_id} is not a finite Decimal amount; not stored")
        if o.kind not in KINDS:
            raise InputError(f"price kind {o.kind!r} is not one of {', '.join(KINDS)}")
        status, reason, confirms = self._classify(o)
        if force and status == "suspect":
            status, reason = "trusted", f"{reason}; stored anyway (--force)"
        cur = self._conn.execute(
            "INSERT INTO observations (batch_id, part_id, retailer, price, currency, in_stock, url, observed_at, "
            "route, raw_text, condition, confidence, status, reason, kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (batch_id, o.part_id, o.retailer, str(o.price), o.currency,
             None if o.in_stock is None else int(o.in_stock), o.url, observed.isoformat(), o.route,
             o.raw_text, o.condition, o.confidence, status, reason, o.kind),
        )
        if confirms is not None:
            self._conn.execute("UPDATE observations SET status='trusted', reason=? WHERE id=?",
                               (f"confirmed by reading #{cur.lastrowid}", confirms))
        r = self._conn.execute("SELECT * FROM observations WHERE id=?", (cur.lastrowid,)).fetchone()
        return _row(r)

    def confirm(self, observation_id: int, *, category_of: Optional[Callable[[str], Optional[str]]] = None,
                force: bool = False) -> Observation:
        """Mark a suspect observation trusted (a person checked the price). A price outside the sane range
        (any amount, or the part's category in EUR when `category_of` knows the part) needs `force`."""
        if not 0 < observation_id < 2**63:  # SQLite integers are 64-bit
            raise InputError(f"no price observation #{observation_id}")
        r = self._conn.execute("SELECT * FROM observations WHERE id=?", (observation_id,)).fetchone()
        if r is None:
            raise InputError(f"no price observation #{observation_id}")
        o = _row(r)
        category = category_of(o.part_id) if category_of is not None else None
        problem = amount_problem(o.price) or category_problem(category, in_eur(o.price, o.currency))
        if problem and not force:
            raise InputError(f"#{o.id} {o.part_id} at {o.price} {o.currency} is outside the sane range ({problem}); "
                             f"if you checked that this is the real price, run `planner prices confirm {o.id} --force`")
        with self._tx():
            self._conn.execute("UPDATE observations SET status='trusted', reason=? WHERE id=?",
                               ("confirmed by hand" + (" (forced past the sane range)" if problem else ""),
                                observation_id))
            r = self._conn.execute("SELECT * FROM observations WHERE id=?", (observation_id,)).fetchone()
        return _row(r)

    @contextmanager
    def _tx(self) -> Iterator[None]:
        """BEGIN IMMEDIATE .. COMMIT; on any error a rollback if SQLite still has the transaction open (on a full
        disk it may already have rolled back: "cannot rollback - no transaction is active" must not hide
        why), and a full disk or read-only file becomes one line (InputError)."""
        conn = self._conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass  # SQLite ended it itself; the first error is the one to report
                raise
        except (sqlite3.Error, OSError) as exc:
            mapped = store_error(exc, self.path)
            if mapped is None:
                raise
            raise mapped from None

    # ------------------------------------------------------------ reading

    def history(self, part_id: str) -> list[Observation]:
        """Every observation of a part, oldest first."""
        rows = self._conn.execute(
            "SELECT * FROM observations WHERE part_id=? ORDER BY observed_at, id", (part_id,)
        ).fetchall()
        return [_row(r) for r in rows]

    def suspects(self) -> list[Observation]:
        rows = self._conn.execute("SELECT * FROM observations WHERE status='suspect' ORDER BY id").fetchall()
        return [_row(r) for r in rows]

    def latest_trusted(self, condition: str = "new", now: Optional[datetime] = None) -> dict[str, Offer]:
        """Per part, the freshest trusted observation (of `condition`) as a catalog Offer."""
        now = now or utc_now()
        rows = self._conn.execute(
            "SELECT * FROM observations WHERE status='trusted' AND condition=? ORDER BY observed_at, id",
            (condition,),
        ).fetchall()
        latest: dict[str, Observation] = {}
        skipped: list[str] = []
        for r in rows:
            problem = row_problem(r, now)
            if problem is not None:  # written by an older version or by hand: no plan should ever use it
                skipped.append(f"#{r['id']} ({problem})")
                continue
            o = _row(r)
            held = latest.get(r["part_id"])
            if held is None or _rank(o) >= _rank(held):  # later rows overwrite within a kind: freshest wins
                latest[r["part_id"]] = o
        self.warnings = [] if not skipped else [
            f"skipped {len(skipped)} unusable price-history row(s) in {self.path}: {'; '.join(skipped[:3])}"
            + (f" and {len(skipped) - 3} more" if len(skipped) > 3 else "")]
        out: dict[str, Offer] = {}
        for pid, o in latest.items():
            try:
                out[pid] = Offer(
                    part_id=pid, price=o.price, currency=o.currency, condition=o.condition,  # type: ignore[arg-type]
                    retailer=o.retailer, url=o.url, observed_on=o.observed_at.date(), source=o.kind,
                    in_stock=o.in_stock, note=f"{o.route or o.kind}, {age_text(o.observed_at, now)} old",
                )
            except ValidationError as exc:
                self.warnings.append(f"skipped price-history row #{o.id} of {pid}: "
                                     f"{' '.join(str(exc.errors()[0].get('msg', exc)).split())[:120]}")
        return out

    def given(self, o: NewObservation, force: bool = False) -> Observation:
        """Store a price a person gave (kind 'yours' or 'shared list') as its own batch. Checked like a scraped
        one (currency, sane range, the other shops' median or the catalog price); one that fails is refused with
        the reason (InputError), unless `force`, which stores it trusted and says so in its reason."""
        if o.kind not in PERSON_KINDS:
            raise InputError(f"price kind {o.kind!r}: only {' or '.join(PERSON_KINDS)} prices are given by hand")
        status, reason, _ = self._classify(o)
        if status == "suspect" and not force:
            raise InputError(f"{o.part_id} at {o.price} {o.currency}: {reason}; not stored (if you checked this "
                             "price, give it again with --force)")
        with self.batch(o.retailer, source=o.kind) as b:
            return b.add(o, force=force)

    def forget(self, part_id: str, kinds: tuple[str, ...] = ("yours",), retailer: Optional[str] = None) -> int:
        """Delete the prices of `kinds` a person gave for a part (one shop's only with `retailer`); the count."""
        bad = [k for k in kinds if k not in PERSON_KINDS]
        if bad:
            raise InputError(f"only prices a person gave can be forgotten, not {bad[0]!r} ones")
        marks = ",".join("?" * len(kinds))
        where = f"part_id=? AND kind IN ({marks})" + (" AND lower(retailer)=lower(?)" if retailer else "")
        args: tuple = (part_id, *kinds, *((retailer,) if retailer else ()))
        with self._tx():
            rows = self._conn.execute(f"SELECT id, batch_id FROM observations WHERE {where}", args).fetchall()
            self._conn.execute(f"DELETE FROM observations WHERE {where}", args)
            for r in rows:
                self._conn.execute("UPDATE batches SET n_observations = n_observations - 1 WHERE id=?",
                                   (r["batch_id"],))
            self._conn.execute("DELETE FROM batches WHERE n_observations <= 0 AND id NOT IN "
                               "(SELECT DISTINCT batch_id FROM observations)")
        return len(rows)

    def check(self) -> dict[str, object]:
        """Integrity report: SQLite's own check and batches whose row count disagrees with their rows."""
        integrity = self._conn.execute("PRAGMA integrity_check").fetchone()[0]
        bad = self._conn.execute(
            "SELECT b.id FROM batches b LEFT JOIN observations o ON o.batch_id = b.id "
            "GROUP BY b.id HAVING COUNT(o.id) != b.n_observations"
        ).fetchall()
        return {"integrity": integrity, "inconsistent_batches": [r[0] for r in bad]}


def _rank(o: Observation) -> int:
    """Which kind of price stands for a part: yours over a shared list's over a scraped one."""
    return {"yours": 2, "shared list": 1}.get(o.kind, 0)


@dataclass
class Batch:
    """Rows being written in one transaction (see PriceStore.batch)."""

    store: PriceStore
    id: int
    retailer: str
    count: int = 0

    def add(self, o: NewObservation, force: bool = False) -> Observation:
        stored = self.store._insert(self.id, o, force)
        self.count += 1
        return stored


def offers_for_catalog(path: Optional[str | Path] = None) -> dict[str, Offer]:
    """Convenience for planner/catalog.py: latest trusted offers, {} when no price DB exists yet."""
    return offers_with_warnings(path)[0]


def offers_with_warnings(path: Optional[str | Path] = None) -> tuple[dict[str, Offer], list[str]]:
    """Latest trusted offers and what was skipped on the way (unusable rows), ({}, []) when no price DB exists."""
    p = Path(path) if path is not None else default_path()
    if not p.exists():
        return {}, []
    with PriceStore(p) as s:
        return s.latest_trusted(), s.warnings

