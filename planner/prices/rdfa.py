"""schema.org Product/Offer in RDFa (read by extruct + pyRdfa) -> candidates; run only on pages that use RDFa prices."""

from __future__ import annotations

import logging
import re
from typing import Any, Optional

from planner.prices.page import Page
from planner.prices.structured import PRODUCT_TYPES, Candidate

_log = logging.getLogger(__name__)
# RDFa parsing costs a second parse and an RDF graph: only pages with an RDFa price property pay it.
# (og:price / product:price:amount meta are read by the OpenGraph route, not here)
_RDFA_PRICE = re.compile(r"""property\s*=\s*["']\s*(?:schema:|https?://schema\.org/)?(?:price|lowPrice)\s*["']""", re.I)


def rdfa_candidates(page: Page) -> list[Candidate]:
    """Products with offers stated in RDFa (vocab schema.org), in page order."""
    src = page.source
    if "typeof" not in src or not _RDFA_PRICE.search(src):
        return []
    try:
        from extruct.rdfa import RDFaExtractor
        from extruct.utils import parse_xmldom_html

        nodes = RDFaExtractor().extract_items(parse_xmldom_html(src.encode("utf-8"), "utf-8"), base_url=page.url)
    except Exception as exc:  # noqa: BLE001 - pyRdfa/rdflib raise many types on odd markup; this route is optional
        _log.debug("RDFa not read: %s: %s", type(exc).__name__, exc)
        return []
    by_id = {n.get("@id"): n for n in nodes if isinstance(n, dict)}
    out: list[Candidate] = []
    for node in nodes:
        if not isinstance(node, dict) or not (_types(node) & PRODUCT_TYPES):
            continue
        offers = [by_id.get(ref.get("@id"), ref) for ref in _values(node, "offers") if isinstance(ref, dict)]
        priced = [o for o in offers if _first(o, "price") is not None]
        o = priced[0] if priced else (node if _first(node, "price") is not None else None)
        price = _first(o, "price") if o else None
        out.append(Candidate(
            name=_first(node, "name"), price=price, currency=_first(o, "priceCurrency") if o else None,
            availability=_first(o, "availability") if o else None,
            condition=_first(o, "itemCondition") if o else None, url=None, route="rdfa", role="main",
            raw=f"rdfa price {price}" if price is not None else "",
        ))
    return out


def _types(node: dict) -> set[str]:
    t = node.get("@type") or []
    return {x.rsplit("/", 1)[-1].lower() for x in (t if isinstance(t, list) else [t]) if isinstance(x, str)}


def _values(node: dict, name: str) -> list[Any]:
    for key, value in node.items():
        if key.rsplit("/", 1)[-1] == name and isinstance(value, list):
            return value
    return []


def _first(node: Optional[dict], name: str) -> Optional[str]:
    """The first literal (or IRI) of property `name`; None when absent or not a string."""
    for v in _values(node or {}, name):
        if isinstance(v, dict):
            v = v.get("@value", v.get("@id"))
        if isinstance(v, str):
            return v
    return None
