"""schema.org microdata items (read by extruct) and OpenGraph/meta product prices -> candidates."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from extruct.w3cmicrodata import MicrodataExtractor
from lxml import etree

from planner.prices.page import Page
from planner.prices.structured import PRODUCT_TYPES, Candidate


_MICRODATA = MicrodataExtractor(nested=True)
_MAX_DEPTH = 12


def _md_value(el: etree._Element) -> str:
    """The value of one itemprop element (content, href, src, value, datetime, else its text)."""
    tag = el.tag
    if el.get("content") is not None:
        return el.get("content")
    if tag in ("link", "a", "area") and el.get("href"):
        return el.get("href")
    if tag in ("data", "meter") and el.get("value") is not None:
        return el.get("value")
    return " ".join("".join(el.itertext()).split())


def _from_extruct(node: Any, depth: int = 0) -> Any:
    """extruct's {'type', 'properties'} item -> {'@type': [...], prop: [values]}; strings stay strings."""
    if isinstance(node, str):
        return node
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return None
    types = node.get("type") or []
    types = [types] if isinstance(types, str) else types
    item: dict[str, Any] = {"@type": [t.rsplit("/", 1)[-1] for t in types if isinstance(t, str)]}
    for key, value in (node.get("properties") or {}).items():
        values = value if isinstance(value, list) else [value]
        item[key] = [v for v in (_from_extruct(x, depth + 1) for x in values) if v is not None]
    return item


def _md_first(item: dict, key: str) -> Any:
    v = item.get(key)
    return v[0] if v else None


def microdata_candidates(page: Page) -> list[Candidate]:
    out: list[Candidate] = []
    try:
        items = _MICRODATA.extract_items(page.root, page.url)
    except (ValueError, RecursionError, TypeError, AttributeError):
        items = []  # extruct could not read this markup: the other routes still run
    for raw in items:
        item = _from_extruct(raw)
        if isinstance(item, dict):
            out.extend(_md_products(item, "main"))
    if not any(c.price is not None for c in out):
        loose = _loose_microdata(page)
        if loose:
            out.append(loose)
    return out


def _md_products(item: dict, role: str, depth: int = 0) -> Iterator[Candidate]:
    if depth > _MAX_DEPTH:
        return
    types = {t.lower() for t in item.get("@type", [])}
    if types & PRODUCT_TYPES:
        offers = [o for o in item.get("offers", []) if isinstance(o, dict)]
        flat: list[dict] = []
        for o in offers:
            inner = [x for x in o.get("offers", []) if isinstance(x, dict)]
            flat.extend(inner or [o])
        priced = [o for o in flat if _md_first(o, "price") or _md_first(o, "lowPrice")]
        if not priced and _md_first(item, "price"):
            priced = [item]  # itemprop=price directly on the product
        name = _md_first(item, "name")
        name = name if isinstance(name, str) else None
        if priced:
            o = priced[0]
            price = _md_first(o, "price") or _md_first(o, "lowPrice")
            yield Candidate(
                name=name, price=price, currency=_md_first(o, "priceCurrency"),
                availability=_md_first(o, "availability"),
                condition=_md_first(o, "itemCondition") or _md_first(item, "itemCondition"),
                url=_md_first(o, "url") or _md_first(item, "url"), route="microdata", role=role,
                raw=f"itemprop=price {price}",
            )
        else:
            avail = next((_md_first(o, "availability") for o in flat if _md_first(o, "availability")), None)
            yield Candidate(name, None, None, avail, None, None, "microdata", role, "")
        return
    list_role = "item" if ("itemlist" in types or "offercatalog" in types) else "related"
    for key, values in item.items():
        if key == "@type":
            continue
        for v in values:
            if not isinstance(v, dict):
                continue  # a plain text value (e.g. itemprop="item" without itemscope in a breadcrumb)
            nested = v.get("item")
            target = nested[0] if isinstance(nested, list) and nested and isinstance(nested[0], dict) else v
            yield from _md_products(target, list_role if role == "main" else role, depth + 1)


def _loose_microdata(page: Page) -> Optional[Candidate]:
    """itemprop=price outside any itemscope (seen on older shop templates)."""
    price_el = next((el for el in page.root.iter() if isinstance(el.tag, str) and el.get("itemprop") == "price"), None)
    if price_el is None:
        return None
    cur = next((el for el in page.root.iter() if isinstance(el.tag, str) and el.get("itemprop") == "priceCurrency"),
               None)
    av = next((el for el in page.root.iter() if isinstance(el.tag, str) and el.get("itemprop") == "availability"),
              None)
    price = _md_value(price_el)
    return Candidate(None, price, _md_value(cur) if cur is not None else None,
                     _md_value(av) if av is not None else None, None, None, "microdata", "main",
                     f"itemprop=price {price}")



# OpenGraph's names for the list (standard / original) price beside the current one
OG_LIST_PRICE = ("og:price:standard_amount", "product:original_price:amount", "og:original_price:amount")


def opengraph_candidate(page: Page) -> Optional[Candidate]:
    # a sale price, when stated, is what is paid now (product:price:amount then often repeats the list price)
    amount = page.meta("product:sale_price:amount") or page.meta("product:price:amount", "og:price:amount", "og:price")
    currency = page.meta("product:price:currency", "og:price:currency", "product:sale_price:currency")
    if amount is None:
        label = (page.meta("twitter:label1") or "").lower()
        if "price" in label or "prix" in label or "preis" in label:
            amount = page.meta("twitter:data1")
    if not amount:
        return None
    return Candidate(
        name=page.meta("og:title"), price=amount, currency=currency,
        availability=page.meta("product:availability", "og:availability"),
        condition=page.meta("product:condition", "og:condition"), url=page.meta("og:url"),
        route="opengraph", role="main", raw=f"og price {amount} {currency or ''}".strip(),
    )
