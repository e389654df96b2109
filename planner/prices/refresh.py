"""Refresh: fetch retailer search pages -> extract offers -> match to catalog parts -> store, with a progress bar."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Callable, Iterable, Mapping, Optional, Sequence

from planner.errors import FetchError, InputError, PlannerError
from planner.prices.extract import extract
from planner.prices.fetch import FetchResult, PoliteFetcher
from planner.prices.match import DEFAULT_THRESHOLD, PartLike, match_listing
from planner.prices.retailers import Registry, Retailer
from planner.prices.sanity import amount_problem, category_problem, in_eur
from planner.prices.store import NewObservation, PriceStore

_log = logging.getLogger(__name__)


NO_OFFER = "page read but no offer found: the shop's markup may have changed"


@dataclass(frozen=True)
class Job:
    retailer: Retailer
    category: str
    url: str


@dataclass
class RefreshReport:
    pages: int = 0
    stored: int = 0
    suspects: int = 0
    blocked: list[str] = field(default_factory=list)
    empty: list[tuple[str, str]] = field(default_factory=list)  # pages read without any offer: (url, why)
    errors: list[tuple[str, str]] = field(default_factory=list)
    unmatched: list[dict] = field(default_factory=list)  # listings seen but not used, with the reason
    matched: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "pages": self.pages, "stored": self.stored, "suspects": self.suspects, "blocked": self.blocked,
            "empty": [{"url": u, "reason": r} for u, r in self.empty],
            "errors": [{"url": u, "error": e} for u, e in self.errors],
            "matched": self.matched, "unmatched": self.unmatched,
        }


def plan_jobs(
    registry: Registry,
    parts: Sequence[PartLike],
    retailers: Optional[Sequence[str]] = None,
    categories: Optional[Sequence[str]] = None,
    per_part: bool = False,
) -> list[Job]:
    """One search per retailer and category (or per part with per_part), for categories the catalog has."""
    chosen = [registry.get(r) for r in retailers] if retailers else list(registry.retailers)
    have = sorted({getattr(p, "category", "") for p in parts} - {""})
    cats = list(categories) if categories else have
    unknown = [c for c in cats if c not in have]
    if unknown:
        raise InputError(f"no catalog part in category {', '.join(unknown)}; known: {', '.join(have) or 'none'}")
    jobs: list[Job] = []
    for r in chosen:
        for c in cats:
            if per_part:
                jobs += [Job(r, c, r.search(p.name)) for p in parts if getattr(p, "category", "") == c]
            elif c in r.categories:
                jobs.append(Job(r, c, r.search(r.categories[c])))
    return jobs


def process_page(
    store: PriceStore, job: Job, result: FetchResult, parts: Sequence[PartLike], registry: Registry,
    report: RefreshReport, threshold: float = DEFAULT_THRESHOLD,
    references: Optional[Mapping[str, tuple[Decimal, str]]] = None,
) -> None:
    """Extract, match and store one fetched page as one batch (all its rows or none).

    `references` maps a part id to the catalog's own (price, currency): a first reading far from it
    waits in quarantine (see PriceStore). Prices outside the category's sane range are not stored."""
    report.pages += 1
    ex = extract(result.content, result.url, registry, content_type=result.headers.get("content-type"))
    if ex.blocked:
        report.blocked.append(job.url)
        return
    if ex.kind == "error":
        report.errors.append((job.url, ex.reason or "could not read the page"))
        return
    if not ex.offers:
        report.empty.append((job.url, ex.reason or NO_OFFER))
        return
    in_cat = [p for p in parts if getattr(p, "category", job.category) == job.category]
    observations: list[NewObservation] = []
    seen: set[str] = set()
    for offer in ex.offers:
        m = match_listing(offer.name or "", in_cat, job.category, offer.condition, threshold)
        row = {"retailer": job.retailer.name, "listing": offer.name, "price": str(offer.price),
               "currency": offer.currency, "part_id": m.part_id, "confidence": m.confidence, "reason": m.reason}
        if not m.accepted or m.part_id is None or m.part_id in seen:
            report.unmatched.append(row)
            continue
        problem = amount_problem(offer.price) or category_problem(job.category, in_eur(offer.price, offer.currency))
        if problem:
            report.unmatched.append({**row, "reason": f"not stored: {problem}"})
            continue
        seen.add(m.part_id)
        report.matched.append(row)
        ref = (references or {}).get(m.part_id)
        observations.append(NewObservation(
            part_id=m.part_id, retailer=job.retailer.name, price=offer.price, currency=offer.currency,
            in_stock=offer.in_stock, url=offer.url, route=offer.route, raw_text=offer.raw,
            condition=offer.condition, confidence=m.confidence, category=job.category,
            reference=ref[0] if ref and ref[1] == offer.currency else None,
        ))
    stored = store.record(observations, job.retailer.name, source=job.url)
    report.stored += len(stored)
    report.suspects += sum(1 for o in stored if o.status == "suspect")


async def refresh_async(
    store: PriceStore, fetcher: PoliteFetcher, jobs: Sequence[Job], parts: Sequence[PartLike],
    on_page: Optional[Callable[[str], None]] = None, threshold: float = DEFAULT_THRESHOLD,
    references: Optional[Mapping[str, tuple[Decimal, str]]] = None,
) -> RefreshReport:
    """Fetch all jobs (hosts concurrently) and store each page as soon as it arrives.
    A page that fails (fetch, extract or a store error) is reported in `errors` and the others go on."""
    report = RefreshReport()
    by_url = {j.url: j for j in jobs}

    def done(url: str, res: FetchResult | FetchError) -> None:
        job = by_url[url]
        if isinstance(res, FetchError):
            report.errors.append((url, str(res)))
        else:
            try:
                # extract never raises; this guards the matching and the store write of one page
                process_page(store, job, res, parts, fetcher.registry, report, threshold, references)
            except (PlannerError, sqlite3.Error, ArithmeticError, ValueError, TypeError) as exc:
                _log.exception("refresh: page %s failed", url)
                report.errors.append((url, f"page skipped ({type(exc).__name__}: {exc})"[:300]))
            if report.blocked and report.blocked[-1] == url and fetcher.cache is not None:
                fetcher.cache.delete(url)  # never keep a bot wall as the cached page
        if on_page is not None:
            on_page(url)

    try:
        await fetcher.fetch_all([j.url for j in jobs], on_done=done)
    finally:
        await fetcher.aclose()
    return report


def refresh(
    store: PriceStore, fetcher: PoliteFetcher, jobs: Sequence[Job], parts: Iterable[PartLike],
    progress: bool = True, threshold: float = DEFAULT_THRESHOLD,
    references: Optional[Mapping[str, tuple[Decimal, str]]] = None,
) -> RefreshReport:
    """Synchronous entry point with a rich progress bar (one tick per page)."""
    parts = list(parts)
    if not progress:
        return asyncio.run(refresh_async(store, fetcher, jobs, parts, threshold=threshold, references=references))
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("prices"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("refresh", total=len(jobs))
        return asyncio.run(refresh_async(store, fetcher, jobs, parts,
                                         on_page=lambda _u: bar.advance(task), threshold=threshold,
                                         references=references))
