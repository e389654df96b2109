"""Stock status: schema.org availability values, and what the visible buy box says (sold out / add to cart)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Optional

from planner.prices.page import ATC, ATC_OFF

# schema.org ItemAvailability (case-insensitive, any URL prefix) and common free-text values.
_IN = {"instock", "limitedavailability", "onlineonly", "available", "availablefororder", "enstock", "disponible",
       "auflager", "lieferbar", "in"}
_LATER = {"preorder", "presale", "backorder", "madetoorder"}
_OUT = {"outofstock", "soldout", "discontinued", "instoreonly", "oos", "unavailable", "notavailable", "rupture",
        "indisponible", "epuise", "épuisé", "ausverkauft", "out", "reserved"}


@dataclass(frozen=True)
class Availability:
    in_stock: Optional[bool]
    kind: str  # "in", "out", "later" (pre-order/back-order) or "unknown"


def normalise_availability(value: object) -> Availability:
    """'https://schema.org/Instock' -> in; 'SoldOut' -> out; 'PreOrder' -> later; anything else unknown."""
    for _ in range(4):  # unwrap [x] and {"@id": x} a few levels, never recursively
        if isinstance(value, list):
            value = value[0] if value else None
        elif isinstance(value, dict):
            value = value.get("@id") or value.get("name")
    if isinstance(value, bool):
        return Availability(value, "in" if value else "out")
    if not isinstance(value, (str, int)):
        return Availability(None, "unknown")
    s = str(value).strip().lower().rsplit("/", 1)[-1].rsplit("#", 1)[-1].rsplit(":", 1)[-1]
    s = re.sub(r"[\s_-]+", "", s)
    if s in _IN:
        return Availability(True, "in")
    if s in _LATER:
        return Availability(False, "later")
    if s in _OUT:
        return Availability(False, "out")
    return Availability(None, "unknown")


# Sentences a buy box uses when the product cannot be bought now (EN, FR, DE, IT, ES, NL).
_NEGATIVE = re.compile(
    r"\b(?:currently |temporarily |temporairement )?(?:sold[ -]?out|out[ -]of[ -]stock)\b|"
    r"\bcurrently unavailable\b|\bunavailable online\b|\bnot available (?:online|for (?:purchase|shipping|delivery))\b|"
    r"\bno longer (?:available|sold)\b|\bdiscontinued\b|\bnot in stock\b|"
    r"\brupture(?: de stock)?\b|\bépuisée?s?\b|\bindisponible\b|\bplus (?:disponible|commercialisée?)\b|"
    r"\bderzeit nicht (?:verfügbar|auf lager|lieferbar)\b|\bnicht (?:auf lager|lieferbar|verfügbar)\b|\bausverkauft\b|"
    r"\besaurito\b|\bnon disponibile\b|\bagotado\b|\bsin stock\b|\bno disponible\b|"
    r"\bniet (?:op voorraad|leverbaar)\b|\buitverkocht\b|\bpre-?order\b|\bprécommande\b|\bvorbestell",
    re.I,
)
# Sentences that say the product ships now.
_POSITIVE = re.compile(
    r"(?<!when )(?<!back )(?<!when it's )(?<!when it is )(?<!if )\bin stock\b|\ben stock\b|\bauf lager\b|"
    r"\bonly \d+ left\b|\bplus que \d+\b|\bships? (?:today|tomorrow|in \d|within|from)|\bready (?:for pickup|to ship)\b|"
    r"\bexpédié (?:sous|aujourd|demain|dès)|\bdisponible(?: immédiatement| en ligne| sous)\b|"
    r"\bversandfertig\b|\bsofort lieferbar\b|\bdisponibile\b|\ben existencia\b|\bop voorraad\b",
    re.I,
)
# A negative phrase inside a conditional ("if any item is out of stock", "notify me when sold out") says nothing.
_WEAK_NEGATIVE = re.compile(
    r"notify me|e-?mail me when|alert me when|get notified|auto notify|m'alerter|me prévenir|prévenez-moi|"
    r"être (?:prévenu|informé|alerté) (?:de la|du retour|dès)|benachrichtig|avísame|avvisami",
    re.I,
)
_NOTIFY = re.compile(r"notify|alert|prévenu|informé|benachrichtig|avvisami|avísame", re.I)
_CONDITIONAL = re.compile(r"\b(?:if|when|whether|lorsque|quand|si|wenn|falls|once)\b[^.\n]{0,40}$", re.I)


@dataclass(frozen=True)
class VisibleStock:
    negative: Optional[str]  # the sold-out phrase seen, if any
    positive: Optional[str]  # the in-stock phrase seen, if any
    buy_button: Optional[bool]  # True: an enabled add-to-cart, False: only disabled ones, None: none
    button_near_price: Optional[bool] = None  # the same, only right around the title and price
    weak_negative: Optional[str] = None  # "notify me when available": says not buyable only if nothing else speaks

    @property
    def verdict(self) -> Optional[bool]:
        if self.negative:
            return False
        if self.buy_button or self.positive:
            return True
        if self.weak_negative or self.buy_button is False:
            return False
        return None


def negative_phrases(text: str) -> Iterator[tuple[int, str]]:
    """(offset, phrase) of each unconditional sold-out phrase in text."""
    for m in _NEGATIVE.finditer(text):
        if not _CONDITIONAL.search(text[max(0, m.start() - 60):m.start()]):
            yield m.start(), m.group(0)


def positive_phrases(text: str) -> Iterator[tuple[int, str]]:
    """(offset, phrase) of each in-stock phrase in text that is not a 'notify me when in stock'."""
    for m in _POSITIVE.finditer(text):
        before = text[max(0, m.start() - 60):m.start()]
        if _NOTIFY.search(before) or _CONDITIONAL.search(before):
            continue
        yield m.start(), m.group(0)


def visible_stock(window: str, buy_button: Optional[bool] = None) -> VisibleStock:
    """Read a buy-box text: the first sold-out phrase, the first in-stock phrase; `buy_button` is what the
    page's add-to-cart controls say (see buybox.buy_buttons), else the markers in the text."""
    negative = next((p for _, p in negative_phrases(window)), None)
    positive = next((p for _, p in positive_phrases(window)), None)
    button = buy_button
    if button is None:
        button = True if ATC in window else (False if ATC_OFF in window else None)
    return VisibleStock(negative, positive, button, None, weak_negative_phrase(window))


def weak_negative_phrase(text: str) -> Optional[str]:
    m = _WEAK_NEGATIVE.search(text)
    return m.group(0) if m else None


def decide_stock(structured: Availability, visible: VisibleStock, price_shown: bool = False) -> Optional[bool]:
    """Combine: a clear sold-out on the page wins (unless structured data says in stock and an enabled
    add-to-cart sits right by the price: then the sold-out text is a hidden or variant label); an
    add-to-cart overrides a structured 'out of stock'; pre-/back-order stays not-in-stock; otherwise the
    structured value, else the page's own signals."""
    if visible.negative:
        return structured.kind == "in" and visible.button_near_price is True
    if structured.kind == "in":
        return True
    if structured.kind == "later":
        return False
    if structured.kind == "out":
        return True if visible.buy_button else False
    verdict = visible.verdict
    if verdict is None and price_shown:
        return True  # a product page showing a price and no sign of unavailability
    return verdict
