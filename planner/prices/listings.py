"""Search and listing pages: retailer selectors (LDLC, Materiel.net, Amazon) and search-API JSON (TopAchat)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any, Iterator, Optional
from urllib.parse import urljoin

from planner.errors import CurrencyError
from planner.money import check_currency
from planner.prices.condition import decide_condition
from planner.prices.css import select
from planner.prices.page import Page
from planner.prices.parse_price import parse_price
from planner.prices.result import ExtractedOffer
from planner.prices.sanity import context_problem
from planner.prices.retailers import ListingSelectors, Retailer
from planner.prices.stock import normalise_availability, visible_stock
from planner.prices.visible import PRICE_RE


def _first(el: Any, css: str) -> Optional[Any]:
    if not css:
        return None
    found = select(el, css)
    return found[0] if found else None


def _text(page: Page, el: Any) -> str:
    if el is None:
        return ""
    return page.text_of(el) or " ".join("".join(el.itertext()).split())


def listing_offers(page: Page, retailer: Retailer, base_url: Optional[str]) -> list[ExtractedOffer]:
    """One offer per result item that shows a price, in page order (route 'selector')."""
    cfg: Optional[ListingSelectors] = retailer.listing
    if cfg is None:
        return []
    out: list[ExtractedOffer] = []
    for item in select(page.root, cfg.item):
        if item not in page.spans:
            continue  # hidden template or carousel clone
        name_el = _first(item, cfg.name)
        name = _text(page, name_el) or None
        price_text = _text(page, _first(item, cfg.price))
        m = PRICE_RE.search(price_text)
        parsed = parse_price(m.group(0) if m else price_text, retailer.decimal_separator, retailer.currency)
        if parsed is None or (m and context_problem(price_text[:m.start()], price_text[m.end():])):
            continue  # no price, or one a buyer does not pay (ex-VAT, /mois, struck, 'dès')
        link_el = _first(item, cfg.link)
        href = link_el.get("href") if link_el is not None else None
        url = urljoin(base_url or f"{retailer.scheme}://{retailer.hosts[0]}/", href) if href else None
        out.append(ExtractedOffer(
            name=name, price=parsed.amount, currency=parsed.currency or retailer.currency,
            in_stock=_item_stock(page, item, cfg), url=url, route="selector", raw=price_text,
            condition=decide_condition(None, name, _text(page, _first(item, cfg.description))),
        ))
    return out


def _item_stock(page: Page, item: Any, cfg: ListingSelectors) -> Optional[bool]:
    stock_el = _first(item, cfg.stock)
    if stock_el is not None:
        vs = visible_stock(_text(page, stock_el))
        if vs.negative:
            return False
        if vs.positive:
            return True
    if cfg.stock_attr:
        coded = select(item, f"[{cfg.stock_attr}]")
        if coded:
            return coded[0].get(cfg.stock_attr) in cfg.in_stock_codes
    vs = visible_stock(_text(page, item))
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
