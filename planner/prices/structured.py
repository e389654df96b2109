"""Structured product data shared types: the Candidate record and schema.org helpers (see jsonld.py, microdata.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

PRODUCT_TYPES = frozenset(
    {"product", "productgroup", "individualproduct", "productmodel", "somethings", "vehicle", "car", "book"}
)
RELATED_KEYS = frozenset(
    {"isrelatedto", "issimilarto", "isaccessoryorsparepartfor", "isconsumablefor", "isvariantof", "review",
     "reviews", "itemreviewed", "subjectof", "mentions", "about"}
)
LIST_PRICE_TYPES = ("listprice", "strikethroughprice", "srp", "msrp", "invoiceprice", "minimumadvertisedprice")


@dataclass
class Candidate:
    """A product with an offer as structured data states it (values still raw strings)."""

    name: Optional[str]
    price: Any  # raw value: "1019.95", 154.99, "1 199,95 €"...
    currency: Optional[str]
    availability: Any
    condition: Any
    url: Optional[str]
    route: str  # "json-ld" | "microdata" | "opengraph"
    role: str  # "main" (top level), "item" (in an ItemList), "related" (nested in another thing)
    raw: str


def types_of(node: dict) -> set[str]:
    t = node.get("@type") or node.get("type") or []
    if isinstance(t, str):
        t = [t]
    out = set()
    for x in t if isinstance(t, list) else []:
        if isinstance(x, str):
            out.add(x.rsplit("/", 1)[-1].rsplit(":", 1)[-1].strip().lower())
    return out


def text_of(v: Any) -> Optional[str]:
    """A schema.org text value: a string or number, or the first of a list / the name of an object (4 levels)."""
    for _ in range(4):
        if isinstance(v, list):
            v = v[0] if v else None
        elif isinstance(v, dict):
            v = v.get("name") or v.get("@id") or v.get("value")
    if not isinstance(v, (str, int, float)) or isinstance(v, bool):
        return None
    s = " ".join(str(v).split())
    return s or None

