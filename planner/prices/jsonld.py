"""JSON-LD Product/Offer candidates: extruct reads the blocks, linear repairs for broken ones, bounded depth."""

from __future__ import annotations

import json
import re
from typing import Any, Iterator, Optional

import jstyleson
from extruct.jsonld import JsonLdExtractor

from planner.prices.page import Page
from planner.prices.structured import (
    LIST_PRICE_TYPES,
    PRODUCT_TYPES,
    RELATED_KEYS,
    Candidate,
    text_of as _text,
    types_of as _types,
)

MAX_SCRIPT_CHARS = 2_000_000  # a JSON-LD block larger than this is skipped, not parsed
MAX_DEPTH = 40  # schema.org data deeper than this is not a product we can use
_JSONLD = JsonLdExtractor()
_WRAPPERS = (("//<![CDATA[", "//]]>"), ("/*<![CDATA[*/", "/*]]>*/"), ("<![CDATA[", "]]>"), ("<!--", "-->"))


def _unwrap(text: str) -> str:
    """Drop CDATA / HTML-comment wrappers and a trailing ';' with plain string operations (linear time)."""
    body = text.strip()
    changed = True
    while changed and body:
        changed = False
        for head, tail in _WRAPPERS:
            if body.startswith(head):
                body, changed = body[len(head):].strip(), True
            if body.endswith(tail):
                body, changed = body[: -len(tail)].strip(), True
    return body.rstrip(";").strip()


def parse_json_loose(text: str) -> list[Any]:
    """JSON values in a script body: strict JSON, then comments and trailing commas removed (jstyleson),
    then consecutive top-level objects. Every step is linear in the text; hostile input gives []."""
    if len(text) > MAX_SCRIPT_CHARS:
        return []
    body = _unwrap(text)
    if not body:
        return []
    for load in (lambda b: json.loads(b, strict=False), lambda b: jstyleson.loads(b, strict=False)):
        try:
            return [load(body)]
        except (ValueError, RecursionError):
            continue
    # Concatenated blocks ({..}{..}): decode one after the other; stop at the first that fails.
    decoder = json.JSONDecoder(strict=False)
    found: list[Any] = []
    i = body.find("{")
    while 0 <= i < len(body):
        try:
            obj, i = decoder.raw_decode(body, i)
        except (ValueError, RecursionError):
            break
        found.append(obj)
        while i < len(body) and body[i] in " \t\r\n,;":
            i += 1
    return found


def _script_values(script: Any) -> list[Any]:
    """extruct reads the block; when it gives up, our linear repair has a go."""
    text = script.text or ""
    if len(text) > MAX_SCRIPT_CHARS:
        return []
    try:
        values = list(_JSONLD.extract_items(script))
    except (ValueError, RecursionError, TypeError):
        values = []
    return values or parse_json_loose(text)


_LOOSE_FIELD = {
    "price": re.compile(r'"(?:price|lowPrice)"\s*:\s*"?([0-9][0-9.,\s]*)"?'),
    "currency": re.compile(r'"priceCurrency"\s*:\s*"([A-Za-z]{3})"'),
    "availability": re.compile(r'"availability"\s*:\s*"([^"]+)"'),
    "name": re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)*)"'),
    "condition": re.compile(r'"itemCondition"\s*:\s*"([^"]+)"'),
}


def _salvage(text: str) -> Optional[Candidate]:
    """Last resort for a broken Product block: read the offer fields with regexes."""
    if not re.search(r'"@type"\s*:\s*"(?:[^"]*/)?Product"', text):
        return None
    got = {k: (m.group(1) if (m := rx.search(text)) else None) for k, rx in _LOOSE_FIELD.items()}
    if got["price"] is None:
        return None
    name = got["name"]
    if name:
        try:
            name = json.loads(f'"{name}"')
        except ValueError:
            pass
    return Candidate(name, got["price"].strip(), got["currency"], got["availability"], got["condition"],
                     None, "json-ld", "main", f'price {got["price"].strip()} (salvaged from broken JSON-LD)')


def jsonld_candidates(page: Page) -> list[Candidate]:
    out: list[Candidate] = []
    for script in page.scripts:
        if "ld+json" not in (script.get("type") or "").lower():
            continue
        text = script.text or ""
        values = _script_values(script)
        before = len(out)
        for v in values:
            out.extend(_walk(v, "main"))
        if len(out) == before and not any(_has_product(v) for v in values):
            salvaged = _salvage(text)
            if salvaged:
                out.append(salvaged)
    return out


def _has_product(v: Any, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if isinstance(v, dict):
        return bool(_types(v) & PRODUCT_TYPES) or any(_has_product(x, depth + 1) for x in v.values())
    if isinstance(v, list):
        return any(_has_product(x, depth + 1) for x in v)
    return False


def _walk(node: Any, role: str, depth: int = 0) -> Iterator[Candidate]:
    if depth > MAX_DEPTH:
        return
    if isinstance(node, list):
        for x in node:
            yield from _walk(x, role, depth + 1)
        return
    if not isinstance(node, dict):
        return
    types = _types(node)
    if types & PRODUCT_TYPES:
        yield from _product(node, role)
        for key, value in node.items():
            k = key.lower()
            if k == "hasvariant":
                continue  # variants repeat the group's own product
            if k in RELATED_KEYS:
                yield from _walk(value, "related", depth + 1)
        return
    if "offer" in types or "aggregateoffer" in types:
        item = node.get("itemOffered")
        if isinstance(item, dict):
            merged = dict(item)
            merged["offers"] = {k: v for k, v in node.items() if k != "itemOffered"}
            yield from _product(merged, role)
            return
    if "itemlist" in types or "offercatalog" in types:
        for el in _as_list(node.get("itemListElement")):
            if isinstance(el, dict) and "item" in el and isinstance(el["item"], dict):
                yield from _walk(el["item"], "item" if role == "main" else role, depth + 1)
            else:
                yield from _walk(el, "item" if role == "main" else role, depth + 1)
        return
    for key, value in node.items():
        if isinstance(value, (dict, list)):
            k = key.lower()
            yield from _walk(value, "related" if k in RELATED_KEYS else role, depth + 1)


def _as_list(v: Any) -> list:
    if v is None:
        return []
    return v if isinstance(v, list) else [v]


def _flatten_offers(offers: Any, depth: int = 0) -> list[dict]:
    flat: list[dict] = []
    if depth > 3:
        return flat
    for o in _as_list(offers):
        if not isinstance(o, dict):
            continue
        nested = o.get("offers")
        if nested and "aggregateoffer" in _types(o):
            inner = _flatten_offers(nested, depth + 1)
            if any(_offer_price(x) is not None for x in inner):
                flat.extend(inner)
                continue
        flat.append(o)
    return flat


def _ex_vat(node: dict) -> bool:
    return str(node.get("valueAddedTaxIncluded", "")).strip().lower() in ("false", "0", "no")


def _offer_price(o: dict) -> tuple[Any, Optional[str]]:
    """(price, currency) of one offer, reading priceSpecification when price is absent. A price stated
    without VAT (valueAddedTaxIncluded false) or only as a list/strike-through price is not taken."""
    price = o.get("price")
    currency = _text(o.get("priceCurrency"))
    if price in (None, "", []):
        price = o.get("lowPrice")
    specs = [s for s in _as_list(o.get("priceSpecification")) if isinstance(s, dict)]
    if _ex_vat(o) or any(_ex_vat(s) and str(s.get("price")) == str(price) for s in specs):
        price = None
    if price in (None, "", []):
        for s in specs:
            kind = str(s.get("priceType", "")).lower().rsplit("/", 1)[-1]
            if kind in LIST_PRICE_TYPES or _ex_vat(s) or s.get("price") in (None, ""):
                continue
            price = s.get("price")
            currency = currency or _text(s.get("priceCurrency"))
            break
    if isinstance(price, dict):  # a JSON-LD value object {"@value": ...}
        price = price.get("@value") if "@value" in price else price.get("value")
    if not isinstance(price, (str, int, float)) or isinstance(price, bool):
        price = None  # lists, objects, booleans: a wrong type is rejected, not coerced
    return (price if price != "" else None), currency


def _condition_rank(o: dict) -> int:
    c = str(o.get("itemCondition") or "").lower()
    return 0 if (not c or "new" in c) else 1


def _product(node: dict, role: str) -> Iterator[Candidate]:
    name = _text(node.get("name"))
    offers = _flatten_offers(node.get("offers"))
    priced = [o for o in offers if _offer_price(o)[0] is not None]
    if not priced:
        yield Candidate(name, None, None, _first_availability(offers), None, _text(node.get("url")),
                        "json-ld", role, "")
        return
    priced.sort(key=_condition_rank)  # stable: new offers first, page order otherwise
    o = priced[0]
    price, currency = _offer_price(o)
    raw = json.dumps({k: o.get(k) for k in ("price", "lowPrice", "priceCurrency", "availability") if k in o},
                     ensure_ascii=False, default=str)
    yield Candidate(
        name=name, price=price, currency=currency, availability=o.get("availability"),
        condition=o.get("itemCondition") or node.get("itemCondition"),
        url=_text(o.get("url")) or _text(node.get("url")), route="json-ld", role=role, raw=raw,
    )


def _first_availability(offers: list[dict]) -> Any:
    for o in offers:
        if o.get("availability"):
            return o["availability"]
    return None
