"""What the visible buy box says about stock: phrases near the title and price, stock labels, buy buttons."""

from __future__ import annotations

import bisect
import re
from typing import Iterator, Optional

from lxml import etree

from planner.prices.page import Page, classes_of
from planner.prices.stock import (
    VisibleStock,
    negative_phrases,
    positive_phrases,
    visible_stock,
    weak_negative_phrase,
)
from planner.prices.visible import PriceSpot, in_section

_STOCK_LABEL = re.compile(r"avail|stock|inventory|dispo|lieferbar|verfueg|verfüg|deliver|shipping-?info", re.I)


def buy_box_range(page: Page, anchor: Optional[etree._Element], price: Optional[PriceSpot]) -> tuple[int, int]:
    """Offsets of the buy box in the visible text: around the title and the main price."""
    n = len(page.text)
    a = page.spans[anchor][0] if anchor is not None and anchor in page.spans else None
    if price is None:
        return (a, min(n, a + 2000)) if a is not None else (0, 0)
    if a is None or price.offset - a > 4000 or a - price.offset > 2500:
        return max(0, price.offset - 600), min(n, price.offset + 700)
    start = min(a, max(0, price.offset - 400))
    return start, min(n, max(price.offset + 700, a + 1200))


class _Locator:
    """Innermost visible element at a text offset."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.starts = [page.spans[el][0] for el in page.order]

    def at(self, offset: int) -> Optional[etree._Element]:
        i = bisect.bisect_right(self.starts, offset) - 1
        order, spans = self.page.order, self.page.spans
        steps = 0
        while i >= 0 and steps < 400:
            s, e = spans[order[i]]
            if s <= offset < e:
                return order[i]
            i -= 1
            steps += 1
        return None


def _phrases(page: Page, anchor: Optional[etree._Element], start: int, end: int, loc: _Locator) -> VisibleStock:
    """First sold-out and in-stock phrases in [start, end), skipping those inside cross-sell regions."""
    text = page.text[start:end]

    def first(found: Iterator[tuple[int, str]]) -> Optional[str]:
        for idx, phrase in found:
            el = loc.at(start + idx)
            if el is None or not in_section(page, el, anchor):
                return phrase
        return None

    return VisibleStock(first(negative_phrases(text)), first(positive_phrases(text)), None)


def _stock_labels(page: Page, anchor: Optional[etree._Element], centre: int) -> VisibleStock:
    """Elements named like availability/stock near the product, nearest first."""
    found = []
    for el in page.order:
        s, e = page.spans[el]
        if e - s > 300 or e <= s or abs(s - centre) > 12000:
            continue
        if not _STOCK_LABEL.search(classes_of(el)) or in_section(page, el, anchor):
            continue
        found.append((abs(s - centre), el))
    for _, el in sorted(found, key=lambda x: x[0]):
        vs = visible_stock(page.text_of(el))
        if vs.negative or vs.positive:
            return VisibleStock(vs.negative, vs.positive, None)
    return VisibleStock(None, None, None)


def buy_buttons(page: Page, anchor: Optional[etree._Element], start: int, end: int) -> Optional[bool]:
    """True if an enabled add-to-cart control of the main product sits in [start, end), False if only
    disabled ones do, None if none (controls inside cross-sell regions are ignored)."""
    seen: Optional[bool] = None
    for offset, enabled, el in page.buttons:
        if offset < start or offset >= end or in_section(page, el, anchor):
            continue
        if enabled:
            return True
        seen = False
    return seen


def read_buy_box(page: Page, anchor: Optional[etree._Element], price: Optional[PriceSpot]) -> VisibleStock:
    """Stock signals of the main product: window phrases first, then stock-labelled elements near it,
    and the add-to-cart controls of the product area."""
    start, end = buy_box_range(page, anchor, price)
    if end <= start:
        return VisibleStock(None, None, None)
    loc = _Locator(page)
    vs = _phrases(page, anchor, start, end, loc)
    if not vs.negative and not vs.positive:
        centre = price.offset if price is not None else start
        vs = _stock_labels(page, anchor, centre)
    a = page.spans[anchor][0] if anchor is not None and anchor in page.spans else start
    lo = min(start, a) - 6000
    hi = max(end, a) + 3000
    button = buy_buttons(page, anchor, lo, hi)
    near = buy_buttons(page, anchor, start - 1500, end + 1500) if button is not None else None
    weak = weak_negative_phrase(page.text[start:end])
    return VisibleStock(vs.negative, vs.positive, button, near, weak)
