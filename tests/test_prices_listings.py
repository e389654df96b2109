"""Retailer listing selectors (BeautifulSoup + soupsieve) on the saved real search pages and on written items."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from planner.prices.extract import extract
from planner.prices.listings import MAX_RESULTS, listing_offers, soup_of
from planner.prices.page import Page
from planner.prices.retailers import LDLC, MATERIEL_NET, Retailer

REAL_SEARCH = [
    (LDLC, "ldlc__search-rtx5070ti.html", "https://www.ldlc.com/recherche/rtx%205070%20ti/"),
    (MATERIEL_NET, "materiel-net__search-rtx5070ti.html", "https://www.materiel.net/recherche/rtx%205070%20ti/"),
]


def _items(shared_dir: Path, retailer: Retailer, file: str) -> list:
    html = (shared_dir / "retail-pages" / file).read_bytes()
    return BeautifulSoup(html, "lxml").select(retailer.listing.item)


@pytest.mark.parametrize("retailer,file,url", REAL_SEARCH, ids=[r.key for r, _, _ in REAL_SEARCH])
def test_every_selector_matches_each_result_of_the_real_page(retailer: Retailer, file: str, url: str,
                                                             shared_dir: Path) -> None:
    """A shop renaming one class (item, name, link, price or stock) makes this fail, naming the selector."""
    cfg = retailer.listing
    items = _items(shared_dir, retailer, file)
    assert len(items) == 27, f"item selector {cfg.item!r} found {len(items)} results"
    for field in ("name", "link", "price", "stock", "description"):
        css = getattr(cfg, field)
        missing = [i for i, item in enumerate(items) if item.select_one(css) is None]
        assert not missing, f"{field} selector {css!r} matches nothing in results {missing}"
    assert all(item.select_one(cfg.link).get("href") for item in items)


@pytest.mark.parametrize("retailer,file,url", REAL_SEARCH, ids=[r.key for r, _, _ in REAL_SEARCH])
def test_listing_reads_every_result_with_its_own_fields(retailer: Retailer, file: str, url: str,
                                                        shared_dir: Path) -> None:
    page = Page.load((shared_dir / "retail-pages" / file).read_bytes(), url)
    offers = listing_offers(page, retailer, url)
    assert len(offers) == 27
    assert isinstance(page.memo["soup"], BeautifulSoup)  # the listing was read on the BeautifulSoup tree
    first = offers[0]
    assert first.name == "Gainward GeForce RTX 5070 Ti Phoenix-S"
    assert (first.price, first.currency, first.in_stock) == (Decimal("1199.95"), "EUR", True)
    assert first.raw == "1 199€95"
    assert len({o.url for o in offers}) == 27  # each link read inside its own item, not the first one on the page
    assert all(o.route == "selector" and o.price > 100 for o in offers)


@pytest.mark.parametrize("field", ["item", "name", "price", "link"])
def test_a_selector_that_no_longer_matches_is_seen(field: str, shared_dir: Path) -> None:
    """A renamed class gives no offer (price, item) or an offer without that field, never another element's value."""
    retailer, file, url = REAL_SEARCH[0]
    broken = replace(retailer, listing=replace(retailer.listing, **{field: ".renamed-by-the-shop"}))
    page = Page.load((shared_dir / "retail-pages" / file).read_bytes(), url)
    offers = listing_offers(page, broken, url)
    if field in ("item", "price"):
        assert offers == []
    else:
        assert len(offers) == 27 and all(getattr(o, "url" if field == "link" else field) is None for o in offers)


SHOP = Retailer(key="t", name="T", hosts=("shop.test",), search_url="https://shop.test/s?q={query}",
                listing=replace(LDLC.listing, stock=".stock", stock_attr="", description=""))
ITEMS = """<html><body><ul>
<li class="pdt-item"><h3><a href="/a">Carte A</a></h3><div class="basket"><span class="price">1 099€<sup>95</sup></span>
  <span class="stock">En stock</span></div></li>
<li class="pdt-item"><h3><a href="/b">Carte B</a></h3><div class="basket"><span class="price">899,00 €</span>
  <button class="add-to-cart">Ajouter au panier</button></div></li>
<li class="pdt-item" style="display:none"><h3><a href="/hidden">Clone</a></h3><div class="basket"><span class="price">1 €</span></div></li>
<template><li class="pdt-item"><h3><a href="/tpl">Template</a></h3><div class="basket"><span class="price">2 €</span></div></li></template>
<li class="pdt-item"><h3><a href="/e">Carte E<!-- ancien nom --></a></h3><div class="basket"><span class="price"><!-- 999,00 € -->
  <script>var old = "1 999 €";</script>649,<sup>90</sup> €</span></div></li>
<li class="pdt-item"><h3><a href="/c">Carte C</a></h3><div class="basket"><span class="price">499 € HT</span></div></li>
<li class="pdt-item"><h3><a href="/d">Carte D <span hidden>promo cachée</span></a></h3>
  <div class="basket"><span class="price">1 299,90 €</span><span class="stock">Rupture de stock</span></div></li>
</ul></body></html>"""


def test_written_items_hidden_clones_ex_vat_and_stock_labels() -> None:
    page = Page.load(ITEMS, "https://shop.test/s?q=carte")
    offers = listing_offers(page, SHOP, "https://shop.test/s?q=carte")
    got = [(o.name, o.price, o.in_stock, o.url) for o in offers]
    assert got == [
        ("Carte A", Decimal("1099.95"), True, "https://shop.test/a"),  # stock label
        ("Carte B", Decimal("899.00"), None, "https://shop.test/b"),  # no stock word: unknown, not guessed
        ("Carte E", Decimal("649.90"), None, "https://shop.test/e"),  # comments and scripts are not text
        ("Carte D", Decimal("1299.90"), False, "https://shop.test/d"),  # stock label; hidden span not in the name
    ]  # the display:none clone and the <template> are not results; "499 € HT" is not what a buyer pays


def test_a_selector_soupsieve_cannot_read_matches_nothing() -> None:
    bad = replace(SHOP, listing=replace(SHOP.listing, price="span[[price", name="::nope"))
    page = Page.load(ITEMS, "https://shop.test/s?q=carte")
    assert listing_offers(page, bad, None) == []
    bad_item = replace(SHOP, listing=replace(SHOP.listing, item="li..pdt-item"))
    assert listing_offers(page, bad_item, None) == []


def test_the_soup_is_built_once_per_page_and_only_for_listings() -> None:
    page = Page.load(ITEMS, "https://shop.test/s?q=carte")
    listing_offers(page, SHOP, None)
    soup = soup_of(page)
    listing_offers(page, SHOP, None)
    assert soup_of(page) is soup
    product = Page.load("<html><body><h1>Carte</h1><span class='price'>10 €</span></body></html>")
    assert listing_offers(product, SHOP, None) == [] and "soup" not in product.memo


def test_extract_routes_a_real_search_page_through_the_listing(shared_dir: Path) -> None:
    retailer, file, url = REAL_SEARCH[1]
    r = extract((shared_dir / "retail-pages" / file).read_bytes(), url)
    assert r.kind == "listing" and len(r.offers) == 27 and r.offers[0].route == "selector"


def test_a_page_with_thousands_of_results_reads_the_first_ones_only() -> None:
    item = '<li class="pdt-item"><h3><a href="/p{i}">Carte {i}</a></h3><div class="basket"><span class="price">{i},50 €</span></div></li>'
    html = "<html><body><ul>" + "".join(item.format(i=i) for i in range(1, 3001)) + "</ul></body></html>"
    offers = listing_offers(Page.load(html), SHOP, "https://shop.test/s?q=carte")
    assert len(offers) == MAX_RESULTS
    assert [o.price for o in offers[:2]] == [Decimal("1.50"), Decimal("2.50")]
    assert offers[-1].name == f"Carte {MAX_RESULTS}"


def test_the_page_time_cap_holds_inside_a_long_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A listing of many results stops at the page's time cap with a reason, not after reading every result."""
    import sys

    extract_module = sys.modules["planner.prices.extract"]  # the package exports the function under the same name

    items = "".join(f'<li class="pdt-item"><h3><a href="/p{i}">Carte {i}</a></h3>'
                    f'<div class="basket"><div class="price">{100 + i}€99</div></div></li>' for i in range(150))
    html = f"<html><body><ul>{items}</ul></body></html>"
    url = "https://www.ldlc.com/recherche/carte/"
    assert extract(html, url).kind == "listing"  # readable in time: all offers
    clock = iter(range(0, 10_000))  # every look at the clock is one more second: the cap is reached mid-listing
    monkeypatch.setattr(extract_module.time, "monotonic", lambda: float(next(clock)))
    result = extract(html, url, time_cap_s=40)
    assert result.kind == "error" and "time cap" in (result.reason or "")
