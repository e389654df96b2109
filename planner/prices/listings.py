"""Search and listing pages: retailer selectors read with BeautifulSoup + soupsieve, and search-API JSON (TopAchat)."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from functools import lru_cache
from typing import Any, Callable, Iterator, Optional
from urllib.parse import urljoin

import soupsieve
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import (
    Comment,
    Declaration,
    Doctype,
    ProcessingInstruction,
    Script,
    Stylesheet,
    TemplateString,
)
from soupsieve import SelectorSyntaxError

from planner.errors import CurrencyError
from planner.money import check_currency
from planner.prices.condition import decide_condition
from planner.prices.css import select as lxml_select
from planner.prices.page import BLOCK_TAGS, SKIP_TAGS, Page, is_hidden, space_words
from planner.prices.parse_price import parse_price
from planner.prices.result import ExtractedOffer
from planner.prices.retailers import ListingSelectors, Retailer
from planner.prices.sanity import context_problem
from planner.prices.stock import normalise_availability, visible_stock
from planner.prices.visible import PRICE_RE
from planner.textsafe import strip_invisible

MAX_RESULTS = 200  # results read per listing page (real ones show 20-60); bounds the time a huge page can take
_NOT_TEXT = (Comment, Declaration, Doctype, ProcessingInstruction, Script, Stylesheet, TemplateString)
_WS = re.compile(r"\s+")
_BLOCK_END = object()


@lru_cache(maxsize=256)
def _compiled(css: str) -> Optional[soupsieve.SoupSieve]:
    """A soupsieve selector compiled once; a selector it cannot read matches nothing."""
    if not css:
        return None
    try:
        return soupsieve.compile(css)
    except (SelectorSyntaxError, NotImplementedError, ValueError, TypeError):  # pseudo-elements raise NotImplementedError
        return None


def _select(tag: Tag, css: str, limit: int = 0) -> list[Tag]:
    sel = _compiled(css)
    return list(sel.select(tag, limit=limit)) if sel is not None else []  # soupsieve's own call on the compiled form


def _first(tag: Tag, css: str) -> Optional[Tag]:
    sel = _compiled(css)
    return sel.select_one(tag) if sel is not None else None


def soup_of(page: Page) -> BeautifulSoup:
    """The page parsed by BeautifulSoup on lxml, once per page (shared by every retailer tried on it).
    Attributes stay plain strings (class="a b"), as on the lxml tree, so the page helpers read both."""
    soup = page.memo.get("soup")
    if soup is None:
        soup = page.memo["soup"] = BeautifulSoup(page.source, "lxml", multi_valued_attributes=None)
    return soup


def _shown(tag: Tag) -> bool:
    """False for an item inside a hidden element or a non-rendered one (template, noscript...)."""
    node: Optional[Tag] = tag
    while node is not None and node.name != "[document]":
        if node.name in SKIP_TAGS or is_hidden(node):  # type: ignore[arg-type]
            return False
        node = node.parent
    return True


def _text(tag: Optional[Tag]) -> str:
    """Visible text of an element as a reader sees it: hidden and non-rendered parts left out, inline runs
    glued ('1 199€' + <sup>95</sup> -> '1 199€95'), blocks kept apart, whitespace collapsed."""
    if tag is None:
        return ""
    parts: list[str] = []
    stack: list[object] = [tag]
    while stack:
        node = stack.pop()
        if node is _BLOCK_END:  # pushed below: the end of a block element
            parts.append("\n")
            continue
        if isinstance(node, NavigableString):
            if not isinstance(node, _NOT_TEXT):
                chunk = space_words(parts, _WS.sub(" ", strip_invisible(str(node))))
                if chunk:
                    parts.append(chunk)
            continue
        if not isinstance(node, Tag) or node.name in SKIP_TAGS or is_hidden(node):  # type: ignore[arg-type]
            continue
        block = node.name in BLOCK_TAGS
        if block:
            parts.append("\n")
            stack.append(_BLOCK_END)
        stack.extend(reversed(node.contents))
    return " ".join("".join(parts).split())


def listing_offers(page: Page, retailer: Retailer, base_url: Optional[str],
                   check_time: Callable[[], None] = lambda: None) -> list[ExtractedOffer]:
    """One offer per result item that shows a price, in page order (route 'selector'), from the first
    MAX_RESULTS items.

    The shop's listing is read with BeautifulSoup and soupsieve selectors; a quick look on the page's lxml
    tree first skips the parse when the item selector matches nothing (most product pages)."""
    cfg: Optional[ListingSelectors] = retailer.listing
    if cfg is None or not lxml_select(page.root, cfg.item):
        return []
    out: list[ExtractedOffer] = []
    check_time()  # the page's time cap (extract): checked before the parse and between results
    for item in _select(soup_of(page), cfg.item, limit=MAX_RESULTS):
        check_time()
        if not _shown(item):
            continue  # hidden template or carousel clone
        name = _text(_first(item, cfg.name)) or None
        price_text = _text(_first(item, cfg.price))
        m = PRICE_RE.search(price_text)
        parsed = parse_price(m.group(0) if m else price_text, retailer.decimal_separator, retailer.currency)
        if parsed is None or (m and context_problem(price_text[:m.start()], price_text[m.end():])):
            continue  # no price, or one a buyer does not pay (ex-VAT, /mois, struck, 'dès')
        link_el = _first(item, cfg.link)
        href = link_el.get("href") if link_el is not None else None
        href = href if isinstance(href, str) and href.strip() else None
        url = urljoin(base_url or f"{retailer.scheme}://{retailer.hosts[0]}/", href) if href else None
        out.append(ExtractedOffer(
            name=name, price=parsed.amount, currency=parsed.currency or retailer.currency,
            in_stock=_item_stock(item, cfg), url=url, route="selector", raw=price_text,
            condition=decide_condition(None, name, _text(_first(item, cfg.description))),
        ))
    return out


def _item_stock(item: Tag, cfg: ListingSelectors) -> Optional[bool]:
    stock_el = _first(item, cfg.stock)
    if stock_el is not None:
        vs = visible_stock(_text(stock_el))
        if vs.negative:
            return False
        if vs.positive:
            return True
    if cfg.stock_attr:
        coded = item if item.has_attr(cfg.stock_attr) else _first(item, f"[{cfg.stock_attr}]")
        if coded is not None:
            return coded.get(cfg.stock_attr) in cfg.in_stock_codes
    vs = visible_stock(_text(item))
    return vs.verdict if (vs.negative or vs.positive) else None


# ---------------------------------------------------------------- search-API JSON

def parse_json_document(text: str) -> Optional[Any]:
    try:
        return json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return None


def api_offers(data: Any, retailer: Optional[Retailer], base_url: Optional[str]) -> list[ExtractedOffer]:
    """Offers from a search API payload: TopAchat's shape (integer cents), else generic name/price objects."""
    base = base_url or (f"{retailer.scheme}://{retailer.hosts[0]}/" if retailer else None)
    currency = retailer.currency if retailer else "EUR"
    if _is_topachat(data) or (retailer is not None and retailer.api == "topachat"):
        found = list(_topachat(data, base, currency))
        if found:
            return found
    return list(_generic_json(data, base, currency, retailer))


def _is_topachat(data: Any) -> bool:
    try:
        return isinstance(data["result"]["document"]["categories"], list)
    except (KeyError, TypeError):
        return False


def _topachat(data: Any, base: Optional[str], currency: str) -> Iterator[ExtractedOffer]:
    """result.document.categories[].product[]: label, url, offer.price_final in integer cents."""
    try:
        categories = data["result"]["document"]["categories"]
    except (KeyError, TypeError):
        return
    for cat in categories if isinstance(categories, list) else []:
        products = cat.get("product") if isinstance(cat, dict) else None
        for p in products if isinstance(products, list) else []:
            offer = p.get("offer") if isinstance(p, dict) else None
            cents = offer.get("price_final") if isinstance(offer, dict) else None
            if not isinstance(cents, int) or isinstance(cents, bool) or cents <= 0:
                continue  # wrong type or not a price: skipped, never coerced
            price = (Decimal(cents) / 100).quantize(Decimal("0.01"))
            name = p.get("label") if isinstance(p.get("label"), str) else None
            sub = p.get("sublabel") if isinstance(p.get("sublabel"), str) else None
            link = p.get("url") if isinstance(p.get("url"), str) else None
            url = urljoin(base, link) if base and link else link
            yield ExtractedOffer(
                name=name, price=price, currency=currency, in_stock=None, url=url, route="api",
                raw=f"price_final={cents} (cents)", condition=decide_condition(None, name, sub),
            )


_NAME_KEYS = ("name", "label", "title", "productName")
_PRICE_KEYS = ("price", "salePrice", "finalPrice", "currentPrice", "price_final", "priceWithTax", "amount")


def _generic_json(data: Any, base: Optional[str], currency: str, retailer: Optional[Retailer]
                  ) -> Iterator[ExtractedOffer]:
    """Objects with a name and a price, depth-first in document order (decimal units, not cents)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        name = next((node[k] for k in _NAME_KEYS if isinstance(node.get(k), str)), None)
        raw_price = next((node[k] for k in _PRICE_KEYS if node.get(k) not in (None, "", {})), None)
        if isinstance(raw_price, dict):
            raw_price = next((raw_price[k] for k in ("value", "amount", "final") if k in raw_price), None)
        parsed = parse_price(raw_price, retailer.decimal_separator if retailer else None, currency) \
            if raw_price is not None and name else None  # parse_price rejects lists, objects and booleans
        stated = next((node[k] for k in ("currency", "priceCurrency") if node.get(k)), None)
        if parsed is not None and stated is not None and not _iso(stated):
            parsed = None  # a currency we cannot read: the amount means nothing
        if parsed is not None:
            cur = _iso(stated) or parsed.currency or currency
            url = node.get("url") or node.get("link")
            avail = node.get("availability") or node.get("in_stock") or node.get("inStock")
            yield ExtractedOffer(
                name=name, price=parsed.amount, currency=cur,
                in_stock=normalise_availability(avail).in_stock,
                url=urljoin(base, url) if base and isinstance(url, str) else (url if isinstance(url, str) else None),
                route="api", raw=json.dumps(raw_price, default=str)[:80],
                condition=decide_condition(node.get("condition"), name),
            )
            continue
        stack.extend(reversed(list(node.values())))


def _iso(value: Any) -> Optional[str]:
    """An ISO 4217 code as an API states it ('eur' -> 'EUR'); anything else (numbers, lists, 'XXXX') -> None."""
    if not isinstance(value, str) or len(value.strip()) != 3 or not value.strip().isalpha():
        return None
    try:
        return check_currency(value.strip().upper())
    except CurrencyError:
        return None
