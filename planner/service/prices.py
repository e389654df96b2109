"""Price actions as front ends take them: refresh the catalog's prices from the shops, with the same quarantine anchors."""

from __future__ import annotations

from datetime import date, datetime, time, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from planner.catalog.load import Catalog


def quarantine_references(catalog: Catalog) -> dict[str, tuple[Decimal, str]]:
    """Per part, the catalog's own new-condition price (its reference offer, not a scraped reading): a scraped
    price far from it is held for confirmation instead of trusted."""
    refs = {}
    for pid in catalog.parts:
        offer = catalog.offer_for(pid, allow_used=False)
        if offer is not None:
            refs[pid] = (offer.price, offer.currency)
    return refs


def refresh_prices(
    data_dir: Optional[Path] = None,
    *,
    retailers: Optional[Sequence[str]] = None,
    categories: Optional[Sequence[str]] = None,
    per_part: bool = False,
    db: Optional[Path] = None,
    progress: bool = False,
    on_page: Optional[Callable[[int, int, str], None]] = None,
    fetcher: Optional[Callable[[Any], Any]] = None,
) -> Any:
    """Fetch the retailers' search pages politely, match offers to the catalog's parts and store the prices.

    The CLI (`planner prices refresh`) and the web UI's Prices tab both call this, so both hold a suspicious price
    against the same references: the catalog's shipped offers (read without the price history, so a bad reading can
    never become its own anchor). `on_page(done, total, url)` reports progress; `progress` draws a terminal bar;
    `fetcher(registry)` builds the fetcher (tests give one over a local server). Returns the RefreshReport."""
    import asyncio

    from planner.catalog.load import load_catalog
    from planner.prices.refresh import plan_jobs, refresh, refresh_async
    from planner.prices.retailers import Registry
    from planner.prices.store import PriceStore

    catalog = load_catalog(data_dir) if data_dir is not None else load_catalog()
    parts = list(catalog.parts.values())
    references = quarantine_references(catalog)
    registry = Registry()
    jobs = plan_jobs(registry, parts, retailers, categories, per_part)
    fetcher = fetcher or polite_fetcher
    with PriceStore(db) as store:
        if on_page is None:
            return refresh(store, fetcher(registry), jobs, parts, progress=progress, references=references)
        done = [0]

        def tick(url: str) -> None:
            done[0] += 1
            on_page(done[0], len(jobs), url)

        return asyncio.run(refresh_async(store, fetcher(registry), jobs, parts, on_page=tick, references=references))


def polite_fetcher(registry: Any) -> Any:
    """The fetcher a refresh uses by default: robots.txt, per-host intervals, the HTTP cache under PLANNER_HOME."""
    from planner.prices.fetch import PoliteFetcher
    from planner.prices.http_cache import HttpCache

    return PoliteFetcher(registry, cache=HttpCache())


MAX_PAGE_BYTES = 20_000_000  # a saved page larger than this is read up to here only


def extract_page(source: str, url: Optional[str] = None) -> Any:
    """The offers on one page (a saved file, or an http(s) address fetched politely): the ExtractResult."""
    from planner.errors import InputError
    from planner.prices.extract import extract

    if source.lower().startswith(("http://", "https://")):
        fetched = polite_fetcher(None).fetch_sync(source)
        content, page_url, ctype = fetched.content, url or fetched.url, fetched.headers.get("content-type")
    else:
        path = Path(source)
        if path.is_dir():
            raise InputError(f"{source} is a directory; give a saved page file")
        with path.open("rb") as fh:  # bounded: /dev/zero or a huge file is cut, not read into memory whole
            content, page_url, ctype = fh.read(MAX_PAGE_BYTES), url, None
        if not content.strip():
            raise InputError(f"{source} is empty; give a page saved from the browser (HTML) or a search-API JSON")
        if b"\x00" in content[:4096] and not content.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 pages say so
            raise InputError(f"{source} looks binary (NUL bytes), not a saved page; give the HTML or JSON file")
    return extract(content, page_url, content_type=ctype)


def probe_shops(retailers: Optional[Sequence[str]] = None, query: Optional[str] = None) -> list[Any]:
    """Each shop's search page fetched once: does it still parse (the probe results, one per shop)."""
    from planner.prices.fetch import PoliteFetcher
    from planner.prices.probe import DEFAULT_QUERY, probe
    from planner.prices.retailers import Registry

    registry = Registry()
    shops = [registry.get(r) for r in retailers] if retailers else list(registry.retailers)
    return probe(PoliteFetcher(registry), shops, query or DEFAULT_QUERY)


def part_history(part: str, db: Optional[Path] = None) -> tuple[str, list[Any]]:
    """(part id, its observations oldest first); `part` may be a name fragment of a catalog part."""
    from planner.catalog.load import cached_catalog
    from planner.errors import InputError
    from planner.prices.store import PriceStore, default_path

    path = Path(db) if db is not None else default_path()
    if not path.exists():
        raise InputError(f"no price database at {path}; run `planner prices refresh` first or pass --db")
    with PriceStore(path) as store:
        rows = store.history(part)
        if not rows:  # not an id with history: resolve a catalog id or name fragment (unknown -> exit 2)
            part = cached_catalog().find(part).id
            rows = store.history(part)
    return part, rows


def confirm_price(observation: int, db: Optional[Path] = None, force: bool = False) -> Any:
    """Trust a held price after checking it by hand (outside its part's sane range only with `force`)."""
    from planner.catalog.load import load_catalog
    from planner.prices.store import PriceStore

    def category_of(part_id: str) -> Optional[str]:
        return getattr(load_catalog().parts.get(part_id), "category", None)

    with PriceStore(db) as store:
        return store.confirm(observation, category_of=category_of, force=force)


# ---------------------------------------------------------------- prices a person gives

def _given_day(day: Optional[date]) -> Optional[datetime]:
    """The observation time of a price a person gives for a day: noon UTC of that day (now for today or none)."""
    from planner.errors import InputError

    if day is None or day >= datetime.now(timezone.utc).date():
        if day is not None and day > datetime.now(timezone.utc).date():
            raise InputError(f"date {day.isoformat()} is in the future; give the day you saw the price")
        return None
    return datetime.combine(day, time(12, 0), tzinfo=timezone.utc)


def add_price(part: str, price: str, *, shop: Optional[str] = None, url: Optional[str] = None,
              day: Optional[date] = None, currency: Optional[str] = None, condition: str = "new",
              force: bool = False, db: Optional[Path] = None, kind: str = "yours",
              data_dir: Optional[Path] = None) -> Any:
    """Store a price the user gives for a catalog part (an id or a name) in the price history, kind 'yours'; every
    answer uses it from then on. Checked like a scraped price: currency, VAT, the sane range of its category, and
    against other shops' prices or the catalog's (outside ±50 % only with `force`). Returns the stored row."""
    from planner.catalog.load import load_catalog
    from planner.errors import InputError
    from planner.prices.given import read_given_price
    from planner.prices.store import NewObservation, PriceStore
    from planner.textsafe import safe_url

    catalog = load_catalog(data_dir) if data_dir is not None else load_catalog()
    p = catalog.parts[part] if part in catalog.parts else catalog.find(part)
    amount, cur = read_given_price(price, currency)
    if url is not None and not safe_url(url):
        raise InputError(f"--url {url[:60]!r} is not an http(s) address")
    if condition not in ("new", "used", "refurbished"):
        raise InputError(f"condition {condition!r}: use new, used or refurbished")
    shop_name = " ".join((shop or "").split())[:80] or ("you" if kind == "yours" else "shared list")
    ref = quarantine_references(catalog).get(p.id)
    obs = NewObservation(part_id=p.id, retailer=shop_name, price=amount, currency=cur, url=url,
                         route=kind, raw_text=str(price)[:80], condition=condition,
                         observed_at=_given_day(day), category=p.category, kind=kind,
                         reference=ref[0] if ref and ref[1] == cur else None)
    with PriceStore(db) as store:
        return store.given(obs, force=force)


def forget_prices(part: str, *, shop: Optional[str] = None, kinds: tuple[str, ...] = ("yours",),
                  db: Optional[Path] = None) -> tuple[str, int]:
    """Delete the prices the user gave for a part (or one shop's); (part id, rows deleted)."""
    from planner.catalog.load import load_catalog
    from planner.prices.store import PriceStore, default_path

    catalog = load_catalog()
    pid = part if part in catalog.parts else catalog.find(part).id
    path = Path(db) if db is not None else default_path()
    if not path.exists():
        return pid, 0
    with PriceStore(path) as store:
        return pid, store.forget(pid, kinds, shop)


def keep_list_prices(lines: Sequence[Any], *, force: bool = False, db: Optional[Path] = None) -> tuple[list[Any], list[str]]:
    """Store the prices of an imported build list (each with its part id, amount, currency, shop, url) as kind
    'shared list', dated today: (stored rows, one line per price refused and why)."""
    from planner.errors import InputError

    stored, refused = [], []
    for ln in lines:
        try:
            stored.append(add_price(ln.part_id, f"{ln.amount} {ln.currency}", shop=ln.shop, url=ln.url,
                                    kind="shared list", force=force, db=db))
        except InputError as exc:
            refused.append(str(exc))
    return stored, refused


class PriceBook:
    """Your price rows as front ends use them (one use case): a part's history, confirm, add, forget, keep a shared
    list's prices (each method is the function of the same concern above)."""

    history = staticmethod(part_history)
    confirm = staticmethod(confirm_price)
    add = staticmethod(add_price)
    forget = staticmethod(forget_prices)
    keep_list = staticmethod(keep_list_prices)


def my_prices() -> PriceBook:
    """The use case behind `planner prices history|confirm|add|forget`, the Prices tab and a share's list prices."""
    return PriceBook()
