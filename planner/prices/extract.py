"""Page -> offers: structured data first, then retailer selectors, then visible text; stock and traps resolved."""

from __future__ import annotations

import logging
import re
import time
from dataclasses import replace
from decimal import Decimal
from typing import Callable, Optional
from urllib.parse import urljoin

from planner.prices.blocked import is_blocked
from planner.prices.buybox import read_buy_box
from planner.prices.condition import decide_condition
from planner.prices.jsonld import jsonld_candidates
from planner.prices.listings import api_offers, listing_offers, parse_json_document
from planner.prices.microdata import OG_LIST_PRICE, microdata_candidates, opengraph_candidate
from planner.prices.page import Page, decode
from planner.prices.locale import offer_currency
from planner.prices.parse_price import ParsedPrice, parse_price
from planner.prices.rdfa import rdfa_candidates
from planner.prices.result import ExtractedOffer, ExtractResult
from planner.prices.retailers import Registry, Retailer
from planner.prices.stock import Availability, decide_stock, normalise_availability
from planner.prices.structured import Candidate
from planner.prices.visible import (
    PriceSpot,
    discounted_spot,
    find_anchor,
    main_price,
    nearest_unpaid,
    paid_of_several,
    price_spots,
    unpaid_reason,
)

_log = logging.getLogger(__name__)
_DEFAULT_REGISTRY = Registry()
_ROUTE_RANK = {"json-ld": 0, "microdata": 1, "rdfa": 2, "opengraph": 3}
_SEARCH_PATH = re.compile(r"/(?:recherche|search|s)(?:[/?]|$)|[?&](?:q|k|query|search)=", re.I)


MAX_PAGE_CHARS = 5_000_000  # the rest of a larger page is not read
TIME_CAP_S = 10.0  # a page still being read after this gives up with a reason


class _TimeCap(Exception):
    """The page took longer than its time budget (raised between stages, caught in extract)."""


def extract(page: str | bytes, url: Optional[str] = None, registry: Optional[Registry] = None,
            content_type: Optional[str] = None, time_cap_s: float = TIME_CAP_S) -> ExtractResult:
    """Read the offers on one saved or fetched page. Pure: no I/O, same input gives the same result.

    Never raises on any input: a page it cannot read gives kind 'error' and a one-line reason (a bug in
    this code is also reported that way, with its exception type, and logged with its traceback).
    `content_type` is the HTTP header: its charset wins over the page's own declaration.
    """
    deadline = time.monotonic() + time_cap_s

    def check_time() -> None:
        if time.monotonic() > deadline:
            raise _TimeCap()

    try:
        return _extract(page, url, registry or _DEFAULT_REGISTRY, content_type, check_time)
    except _TimeCap:
        return ExtractResult(False, [], None, "error", f"gave up after the {time_cap_s:g} s time cap per page")
    except RecursionError:
        return ExtractResult(False, [], None, "error", "page nested too deeply to read")
    except Exception as exc:  # noqa: BLE001 - one bad page must not stop a refresh; logged loudly below
        _log.exception("extract failed on %s", url or "a page")
        return ExtractResult(False, [], None, "error", f"could not read the page ({type(exc).__name__}: {exc})"[:200])


def _extract(page: str | bytes, url: Optional[str], reg: Registry, content_type: Optional[str],
             check_time: Callable[[], None]) -> ExtractResult:
    text = decode(page[:MAX_PAGE_CHARS], content_type)[:MAX_PAGE_CHARS]
    retailer = reg.for_url(url) if url else None
    head = text.lstrip().lstrip("\ufeff")[:1]
    if head in ("{", "["):
        data = parse_json_document(text)
        if data is not None:
            offers = api_offers(data, retailer, url)
            return ExtractResult(False, offers, None, "listing" if offers else "empty")
    p = Page.load(text, url)
    check_time()
    if retailer is None:
        retailer = _retailer_from_page(p, reg)
    dec = retailer.decimal_separator if retailer else None
    cands = jsonld_candidates(p)
    check_time()
    cands += microdata_candidates(p)
    if not any(c.price is not None for c in cands):
        cands += rdfa_candidates(p)
    og = opengraph_candidate(p)
    if og is not None:
        cands.append(og)
    cands = [_one_amount(p, c, dec) for c in cands]
    check_time()
    priced = [c for c in cands if c.price is not None and parse_price(c.price, dec) is not None]
    if is_blocked(p.title, p.text, p.source, has_product_data=bool(priced)):
        return ExtractResult(True, [], None, "blocked")

    mains = _list_price_beside_sale(p, _shown_only_elsewhere(p, [c for c in priced if c.role == "main"], dec), dec)
    items = [c for c in priced if c.role == "item"]
    if not mains:
        listed = _listing(p, reg, retailer, url, check_time)
        if listed:
            return ExtractResult(False, listed, None, "listing")
        if len(items) >= 2:
            return ExtractResult(False, [_structured_offer(p, c, retailer, url) for c in items], None, "listing")
    return _product(p, cands, mains, retailer, url)


def _one_amount(p: Page, c: Candidate, dec: Optional[str]) -> Candidate:
    """A structured price value that holds several amounts (sale and old price in one itemprop) -> the paid one."""
    if not isinstance(c.price, str) or parse_price(c.price, dec) is not None:
        return c
    paid = paid_of_several(p, c.price, dec, None)
    return replace(c, price=paid.raw) if paid is not None else c


def _amount(c: Candidate, dec: Optional[str]) -> Optional[Decimal]:
    """The amount a candidate's price states (None when it does not read as one)."""
    pp = parse_price(c.price, dec)
    return pp.amount if pp is not None else None


def _shown_only_elsewhere(p: Page, mains: list[Candidate], dec: Optional[str]) -> list[Candidate]:
    """Drop an OpenGraph/meta amount the page never shows when another structured price of the page is shown."""
    if not any(c.route == "opengraph" for c in mains) or all(c.route == "opengraph" for c in mains):
        return mains
    shown = {s.parsed.amount for s in price_spots(p, dec, None)}
    if not any(c.route != "opengraph" and _amount(c, dec) in shown for c in mains):
        return mains
    return [c for c in mains if c.route != "opengraph" or _amount(c, dec) in shown]


def _list_price_beside_sale(p: Page, mains: list[Candidate], dec: Optional[str]) -> list[Candidate]:
    """Drop a structured price that OpenGraph names as the list price (og:price:standard_amount,
    product:original_price:amount) when OpenGraph states a lower current price: that one is paid now."""
    listed = parse_price(p.meta(*OG_LIST_PRICE) or "", dec)
    og = next((c for c in mains if c.route == "opengraph"), None)
    now = _amount(og, dec) if og is not None else None  # mains are priced: every one reads as an amount
    if listed is None or now is None or not now < listed.amount:
        return mains
    return [c for c in mains if c is og or _amount(c, dec) != listed.amount]


def _retailer_from_page(p: Page, reg: Registry) -> Optional[Retailer]:
    """Which storefront a page without URL comes from: its canonical/og:url, else none."""
    for link in p.root.iter("link"):
        if (link.get("rel") or "").lower() == "canonical" and link.get("href", "").startswith("http"):
            r = reg.for_url(link.get("href"))
            if r:
                return r
    og_url = p.meta("og:url")
    if og_url and og_url.startswith("http"):
        return reg.for_url(og_url)
    return None


def _listing(p: Page, reg: Registry, retailer: Optional[Retailer], url: Optional[str],
             check_time: Callable[[], None]) -> list[ExtractedOffer]:
    """Search/listing results via the retailer's selectors (or any configured retailer whose markup matches)."""
    tried = [retailer] if retailer is not None and retailer.listing else []
    tried += [r for r in reg.retailers if r.listing and r is not retailer]
    need = 1 if url and _SEARCH_PATH.search(url) else 2
    for r in tried:
        offers = listing_offers(p, r, url, check_time)
        if len(offers) >= need:
            return offers
    return []


def _similarity(a: Optional[str], b: Optional[str]) -> float:
    ta = set(re.findall(r"[a-z0-9]+", (a or "").lower()))
    tb = set(re.findall(r"[a-z0-9]+", (b or "").lower()))
    if not ta or not tb:
        return 0.0
    return len(ta & tb) / min(len(ta), len(tb))


def _choose_main(mains: list[Candidate], title: str) -> Optional[Candidate]:
    if not mains:
        return None
    return max(
        enumerate(mains),
        key=lambda ic: (round(_similarity(ic[1].name, title), 1) if ic[1].name else 0.5,
                        -_ROUTE_RANK.get(ic[1].route, 3), -ic[0]),
    )[1]


def _is_this_page(main: Candidate, cands: list[Candidate], title: str, p: Page) -> bool:
    """Does the chosen structured product describe this page's product (and not a featured item)?"""
    if not main.name:
        return True
    names = [title, p.meta("og:title") or "", p.title]
    sim = max(_similarity(main.name, n) for n in names)
    if sim < 0.25 and any(n for n in names):
        return False
    unpriced = [c for c in cands if c.role == "main" and c.price is None and c.name]
    best_unpriced = max((max(_similarity(c.name, n) for n in names) for c in unpriced), default=0.0)
    return not (best_unpriced >= 0.8 and sim < 0.5)


def _product(p: Page, cands: list[Candidate], mains: list[Candidate], retailer: Optional[Retailer],
             url: Optional[str]) -> ExtractResult:
    dec = retailer.decimal_separator if retailer else None
    hint = retailer.currency if retailer else None
    h1_names = [c.name for c in mains if c.name] + [p.meta("og:title") or "", p.title]
    anchor = find_anchor(p, h1_names)
    title = p.text_of(anchor) if anchor is not None else (p.meta("og:title") or p.title)
    main = _choose_main(mains, title)
    if main is not None and not _is_this_page(main, cands, title, p):
        main = None  # structured data about another product (a featured or related item)
    stated = parse_price(main.price, dec, hint) if main is not None else None  # mains are priced (see extract)
    if main is not None and (stated is None or unpaid_reason(p, stated.amount, dec, hint, anchor)):
        main = None  # e.g. og:price:amount ex-VAT: the page shows that amount only as "HT"
    selectors = retailer.price_selectors if retailer else ()
    spot, vroute = main_price(p, anchor, dec, hint, selectors)

    parsed: Optional[ParsedPrice] = None
    route, raw = "text", ""
    if main is not None and stated is not None:
        parsed = stated
        route, raw = main.route, main.raw
        cut = discounted_spot(p, stated.amount, anchor, dec, hint)
        if cut is not None:  # the structured amount is the price before the discount the buy box states
            parsed, route, raw, spot = cut.parsed, "text", cut.text, cut
        elif spot is None or spot.parsed.amount != stated.amount:
            spot = _spot_for_amount(p, anchor, stated, dec, hint) or spot
    elif spot is not None:
        parsed, route, raw = spot.parsed, vroute, spot.text

    availability = _availability(main, cands)
    signals = read_buy_box(p, anchor, spot)
    in_stock = decide_stock(availability, signals, price_shown=parsed is not None)
    if parsed is None:
        unpaid = nearest_unpaid(p, anchor, dec, hint)
        return ExtractResult(False, [], in_stock, "empty", f"no price a buyer pays: the one by the title is {unpaid}"
                             if unpaid else None)

    name = (main.name if main and main.name else None) or title or None
    shown = ""
    if spot is not None and spot.parsed.amount == parsed.amount and spot.text:  # with what follows: "$24.99 USD"
        shown = p.text[spot.offset:spot.offset + len(spot.text) + 5].split("\n")[0]
    currency, options = offer_currency(p, url, main.currency if main else None, (str(parsed.raw), shown),
                                       retailer.currency if retailer else None,
                                       spot.offset if spot is not None else None)
    offer_url = (main.url if main else None) or _canonical(p) or url
    if offer_url and url:
        offer_url = urljoin(url, offer_url)
    offer = ExtractedOffer(
        name=name, price=parsed.amount, currency=currency, in_stock=in_stock, url=offer_url, route=route,  # type: ignore[arg-type]
        raw=raw, condition=decide_condition(main.condition if main else None, name), currency_options=options,
    )
    return ExtractResult(False, [offer], in_stock, "product")


def _spot_for_amount(p: Page, anchor, parsed: ParsedPrice, dec, hint) -> Optional[PriceSpot]:
    """Where the structured price shows on the page (nearest the title), to read the buy box around it."""

    a = p.spans[anchor][0] if anchor is not None else 0
    same = [s for s in price_spots(p, dec, hint) if s.parsed.amount == parsed.amount]
    return min(same, key=lambda s: abs(s.offset - a)) if same else None


def _availability(main: Optional[Candidate], cands: list[Candidate]) -> Availability:
    if main is not None:
        av = normalise_availability(main.availability)
        if av.kind != "unknown":
            return av
    for c in cands:
        if c.role == "main" and (main is None or c.route != main.route or c is main or not main.name
                                 or _similarity(c.name, main.name) > 0.6):
            av = normalise_availability(c.availability)
            if av.kind != "unknown":
                return av
    return Availability(None, "unknown")


def _canonical(p: Page) -> Optional[str]:
    for link in p.root.iter("link"):
        if (link.get("rel") or "").lower() == "canonical" and link.get("href"):
            return link.get("href")
    return p.meta("og:url")


def _structured_offer(p: Page, c: Candidate, retailer: Optional[Retailer], url: Optional[str]) -> ExtractedOffer:
    dec = retailer.decimal_separator if retailer else None
    parsed = parse_price(c.price, dec, retailer.currency if retailer else None)
    assert parsed is not None
    currency, options = offer_currency(p, url, c.currency, (str(parsed.raw),), retailer.currency if retailer else None)
    return ExtractedOffer(
        name=c.name, price=parsed.amount, currency=currency,
        in_stock=normalise_availability(c.availability).in_stock,
        url=urljoin(url, c.url) if url and c.url else c.url, route=c.route,  # type: ignore[arg-type]
        raw=c.raw, condition=decide_condition(c.condition, c.name), currency_options=options,
    )
