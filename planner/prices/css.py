"""CSS selectors on lxml trees through cssselect (compiled once per selector); a bad selector matches nothing."""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

from cssselect import SelectorError
from lxml import etree
from lxml.cssselect import CSSSelector


@lru_cache(maxsize=256)
def _compiled(css: str) -> Optional[CSSSelector]:
    try:
        return CSSSelector(css, translator="html")
    except (SelectorError, etree.XPathError, ValueError):
        return None


def select(root: etree._Element, css: str) -> list[etree._Element]:
    """Elements under (or at) `root` matching `css`, in document order."""
    sel = _compiled(css)
    if sel is None:
        return []
    try:
        return sel(root)  # cssselect's XPath starts with descendant-or-self::, so root itself can match
    except etree.XPathError:
        return []
