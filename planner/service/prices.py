"""Price actions as front ends take them: refresh the catalog's prices from the shops, with the same quarantine anchors."""

from __future__ import annotations

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


def price_history(part_id: str, db: Optional[Path] = None) -> Optional[list[dict[str, Any]]]:
    """A part's observations as JSON rows, oldest first (None when there is no price database yet)."""
    from planner.prices.store import PriceStore, default_path

    path = Path(db) if db is not None else default_path()
    if not path.exists():
        return None
    with PriceStore(path) as store:
        return [o.to_json() for o in store.history(part_id)]


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
