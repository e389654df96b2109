"""Item condition: new, used or refurbished, from schema.org itemCondition or the listing's own words."""

from __future__ import annotations

import re
from typing import Any, Literal, Optional

Condition = Literal["new", "used", "refurbished"]

_REFURB = re.compile(
    r"\b(?:renewed|refurbished|reconditionn[ée]e?s?|remanufactured|generalüberholt|reacondicionado|"
    r"ricondizionato|gereviseerd|refurb)\b",
    re.I,
)
# In a product title these words mean the item itself is second-hand.
_USED_TITLE = re.compile(
    r"\b(?:occasion|d'occasion|seconde main|used|pre-?owned|second-?hand|open[- ]box|gebraucht|b-ware|"
    r"usato|usado|tweedehands|ex-?demo)\b",
    re.I,
)
# In a description only explicit statements count ("used for gaming" says nothing about the item).
_USED_DESC = re.compile(
    r"article utilisé|produit utilisé|produit d'occasion|[-·(]\s*occasion\b|\(used\)|\bused item\b|"
    r"\bpre-?owned\b|\bgebrauchtware\b",
    re.I,
)


def condition_from_schema(value: Any) -> Optional[Condition]:
    """'https://schema.org/UsedCondition' -> used; NewCondition -> new; unknown -> None."""
    if isinstance(value, list) and value:
        value = value[0]
    if isinstance(value, dict):
        value = value.get("@id") or value.get("name")
    if not isinstance(value, str):
        return None  # a wrong type says nothing about the condition
    s = value.lower()
    if "refurb" in s:
        return "refurbished"
    if "used" in s or "damaged" in s:
        return "used"
    if "new" in s:
        return "new"
    return None


def condition_from_text(title: Optional[str], description: Optional[str] = None) -> Optional[Condition]:
    """Used/refurbished markers in a title ('· Occasion', '(Renewed)') or a description; None if none."""
    for text, used in ((title, _USED_TITLE), (description, _USED_DESC)):
        if not text:
            continue
        if _REFURB.search(text):
            return "refurbished"
        if used.search(text):
            return "used"
    return None


def decide_condition(schema_value: Any, title: Optional[str], description: Optional[str] = None) -> Condition:
    """The listing's words win over a generic NewCondition (shops often leave the default in place)."""
    return condition_from_text(title, description) or condition_from_schema(schema_value) or "new"
