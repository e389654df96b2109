"""Probe: does each shop's search page still fetch and parse? One search per retailer, a status line each."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from planner.errors import FetchError
from planner.prices.extract import extract
from planner.prices.fetch import FetchResult, PoliteFetcher
from planner.prices.retailers import Retailer

DEFAULT_QUERY = "carte graphique RTX 5070"


@dataclass(frozen=True)
class ProbeResult:
    """One shop's answer: status 'ok' (offers read), 'empty' (page read, no offer), 'blocked', 'fetch-error'
    or 'parse-error'; with the HTTP status, the number of offers and the first one, or the reason."""

    retailer: str
    url: str
    status: str
    http_status: Optional[int] = None
    offers: int = 0
    first: Optional[str] = None
    reason: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_json(self) -> dict:
        return {"retailer": self.retailer, "url": self.url, "status": self.status, "http_status": self.http_status,
                "offers": self.offers, "first": self.first, "reason": self.reason}


def judge(retailer: Retailer, url: str, fetched: FetchResult | FetchError) -> ProbeResult:
    """Turn one fetch outcome into a probe result (pure: tested without a network)."""
    if isinstance(fetched, FetchError):
        return ProbeResult(retailer.name, url, "fetch-error", reason=str(fetched))
    r = extract(fetched.content, fetched.url, content_type=fetched.headers.get("content-type"))
    base: dict[str, Any] = dict(retailer=retailer.name, url=url, http_status=fetched.status)
    if r.blocked:
        return ProbeResult(**base, status="blocked", reason="bot wall / captcha instead of results")
    if r.kind == "error":
        return ProbeResult(**base, status="parse-error", reason=r.reason)
    if not r.offers:
        return ProbeResult(**base, status="empty", reason="page read but no priced result found: selectors may be out of date")
    o = r.offers[0]
    return ProbeResult(**base, status="ok", offers=len(r.offers), first=f"{o.name or '?'} - {o.price} {o.currency} ({o.route})")


async def probe_async(fetcher: PoliteFetcher, retailers: Sequence[Retailer], query: str = DEFAULT_QUERY
                      ) -> list[ProbeResult]:
    """Fetch each retailer's search page for `query` (no cache: the point is today's page) and judge it."""
    urls = [r.search(query) for r in retailers]
    cache, fetcher.cache = fetcher.cache, None
    try:
        got = await fetcher.fetch_all(urls)
    finally:
        fetcher.cache = cache
        await fetcher.aclose()
    return [judge(r, u, g) for r, u, g in zip(retailers, urls, got)]


def probe(fetcher: PoliteFetcher, retailers: Sequence[Retailer], query: str = DEFAULT_QUERY) -> list[ProbeResult]:
    return asyncio.run(probe_async(fetcher, retailers, query))
