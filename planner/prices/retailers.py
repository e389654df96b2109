"""Retailer configuration: hosts (the fetch allow-list), search URL, currency, decimal separator, selectors."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional
from urllib.parse import quote_plus, urlsplit

from planner.errors import FetchError, InputError


@dataclass(frozen=True)
class ListingSelectors:
    """CSS selectors for one result of a search/listing page (each relative to the item)."""

    item: str
    name: str
    link: str
    price: str
    stock: str = ""
    stock_attr: str = ""  # attribute holding a stock code, e.g. data-stock-web
    in_stock_codes: tuple[str, ...] = ()
    description: str = ""


@dataclass(frozen=True)
class Retailer:
    key: str
    name: str
    hosts: tuple[str, ...]  # exact host names (or host:port) we may fetch from
    search_url: str  # with {query}; the query is URL-encoded
    currency: str = "EUR"
    decimal_separator: str = ","
    scheme: str = "https"
    price_selectors: tuple[str, ...] = ()  # product page buy-box price, most specific first
    listing: Optional[ListingSelectors] = None
    api: Optional[str] = None  # name of a JSON search-API parser in planner.prices.listings
    categories: dict[str, str] = field(default_factory=dict)  # our category -> search words
    family: str = ""  # regex on the host: other storefronts of the same chain share the selectors

    def search(self, query: str) -> str:
        return self.search_url.format(query=quote_plus(query))

    def serves(self, host: str) -> bool:
        """host is a host name or host:port; a bare host entry allows any port of it."""
        h = host.lower()
        return h in self.hosts or h.rsplit(":", 1)[0] in self.hosts

    def same_family(self, host: str) -> bool:
        h = host.lower()
        return self.serves(h) or bool(self.family and re.search(self.family, h))


_CATEGORY_WORDS = {
    "gpu": "carte graphique",
    "cpu": "processeur",
    "memory": "mémoire pc",
    "storage": "ssd",
    "motherboard": "carte mère",
    "psu": "alimentation pc",
    "cooler": "ventirad",
    "case": "boîtier pc",
}

LDLC = Retailer(
    key="ldlc", name="LDLC", hosts=("www.ldlc.com", "ldlc.com"),
    search_url="https://www.ldlc.com/recherche/{query}/",
    price_selectors=("#product-page-price .price .price", "#product-page-price .price"),
    listing=ListingSelectors(
        item="li.pdt-item", name="h3 a", link="h3 a", price=".basket .price", stock=".stock-web .stock",
        stock_attr="data-stock-web", in_stock_codes=("1", "2"), description="p.desc",
    ),
    categories=_CATEGORY_WORDS, family=r"(^|\.)ldlc\.(com|be|ch)$",
)
MATERIEL_NET = Retailer(
    key="materiel", name="Materiel.net", hosts=("www.materiel.net", "materiel.net"),
    search_url="https://www.materiel.net/recherche/{query}/",
    price_selectors=(".c-product__price .o-product__price", ".o-product__price"),
    listing=ListingSelectors(
        item="li.c-products-list__item", name=".c-product__title", link="a.c-product__link",
        price=".o-product__price", stock=".o-availability__value", stock_attr="data-stock-web",
        in_stock_codes=("1", "2"), description=".c-product__description",
    ),
    categories=_CATEGORY_WORDS, family=r"(^|\.)materiel\.net$",
)
TOPACHAT = Retailer(
    key="topachat", name="TopAchat", hosts=("www.topachat.com", "topachat.com"),
    search_url="https://www.topachat.com/search/{query}",
    api="topachat", categories=_CATEGORY_WORDS, family=r"(^|\.)topachat\.com$",
)
AMAZON_FR = Retailer(
    key="amazon", name="Amazon.fr", hosts=("www.amazon.fr", "amazon.fr"),
    search_url="https://www.amazon.fr/s?k={query}",
    price_selectors=(
        "#corePriceDisplay_desktop_feature_div .a-price .a-offscreen",
        "#corePrice_feature_div .a-price .a-offscreen",
        "#apex_desktop .a-price .a-offscreen",
        "#priceblock_dealprice", "#priceblock_ourprice", "#price_inside_buybox", "#newBuyBoxPrice",
    ),
    listing=ListingSelectors(
        # 2026 result cards wrap the title <h2> in its link (a > h2); older ones put the link inside it.
        item="div[data-component-type=s-search-result]", name="h2", link="a:has(> h2), h2 a",
        price=".a-price:not([data-a-strike]) .a-offscreen",  # a struck "List Price" is not the price
    ),
    categories=_CATEGORY_WORDS, family=r"(^|\.)amazon\.[a-z.]+$",
)

DEFAULT_RETAILERS: tuple[Retailer, ...] = (LDLC, MATERIEL_NET, TOPACHAT, AMAZON_FR)


class Registry:
    """The configured retailers; the only hosts the fetcher will ever contact."""

    def __init__(self, retailers: tuple[Retailer, ...] = DEFAULT_RETAILERS) -> None:
        self.retailers = retailers

    def get(self, key: str) -> Retailer:
        for r in self.retailers:
            if r.key == key.lower() or r.name.lower() == key.lower():
                return r
        known = ", ".join(r.key for r in self.retailers)
        raise InputError(f"unknown retailer {key!r}; configured: {known}")

    def for_url(self, url: str) -> Optional[Retailer]:
        """The retailer whose storefront family serves this URL (used to pick selectors and formats)."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        exact = [r for r in self.retailers if r.serves(parts.netloc) or r.serves(host)]
        if exact:
            return exact[0]
        return next((r for r in self.retailers if r.same_family(host)), None)

    def check_allowed(self, url: str) -> Retailer:
        """The retailer to fetch `url` from, or FetchError when the URL is not http(s) on a configured host."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https"):
            raise FetchError(f"refusing to fetch {url!r}: only http(s) URLs are fetched")
        host = (parts.hostname or "").lower()
        netloc = parts.netloc.lower().rsplit("@", 1)[-1]
        for r in self.retailers:
            if r.serves(netloc):
                return r
        raise FetchError(f"refusing to fetch {url!r}: host {host or '?'} is not a configured retailer")


def local_retailer(key: str, base_url: str, **overrides: object) -> Retailer:
    """A retailer served from a local test server (e.g. http://127.0.0.1:PORT)."""
    parts = urlsplit(base_url)
    r = Retailer(key=key, name=key, hosts=(parts.netloc.lower(),), search_url=base_url.rstrip("/") + "/search?q={query}",
                 scheme=parts.scheme or "http", categories=_CATEGORY_WORDS)
    return replace(r, **overrides)  # type: ignore[arg-type]
