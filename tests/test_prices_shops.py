"""The French shops' adapters against real (or real-structure excerpt) search pages in tests/data/shops."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from planner.prices.extract import extract
from planner.prices.retailers import DEFAULT_RETAILERS, Registry

SHOPS = Path(__file__).resolve().parent / "data" / "shops"
with (SHOPS / "MANIFEST.csv").open(newline="", encoding="utf-8") as f:
    ROWS = list(csv.DictReader(f))


def test_manifest_lists_every_file_with_its_source_and_date() -> None:
    files = {p.name for p in SHOPS.iterdir() if p.name != "MANIFEST.csv"}
    assert files == {r["file"] for r in ROWS}
    for r in ROWS:
        assert r["source_repo"] and r["source_path"] and len(r["source_commit"]) == 40 and r["page_date"]
        text = (SHOPS / r["file"]).read_text(encoding="utf-8")
        if r["excerpt"] == "yes":  # an excerpt says so, and where the real page is, inside the file itself
            assert "EXCERPT" in text and r["source_repo"] in text and r["source_commit"] in text


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_shop_page_gives_the_expected_results(row: dict) -> None:
    retailer = Registry().for_url(row["url"])
    assert retailer is not None and retailer.key == row["shop"]
    r = extract((SHOPS / row["file"]).read_bytes(), row["url"])
    assert r.kind == "listing" and len(r.offers) == int(row["offers"])
    first = r.offers[0]
    assert first.name == row["first_name"]
    assert (first.price, first.currency) == (Decimal(row["first_price"]), row["first_currency"])
    assert first.url == row["first_url"]
    assert all(o.route == "selector" and o.url for o in r.offers)


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_each_listing_selector_matches_the_shop_page(row: dict) -> None:
    """Fails, naming the field, when a configured selector no longer matches the shop's markup."""
    cfg = Registry().get(row["shop"]).listing
    soup = BeautifulSoup((SHOPS / row["file"]).read_bytes(), "lxml")
    items = [i for i in soup.select(cfg.item) if i.select_one(cfg.price) is not None]
    assert len(items) == int(row["offers"]), f"item {cfg.item!r} + price {cfg.price!r}"
    for field in ("name", "link"):
        css = getattr(cfg, field)
        assert all(i.select_one(css) is not None for i in items), f"{field} selector {css!r} misses a result"


def test_amazon_struck_list_price_is_not_read_as_the_price() -> None:
    r = extract((SHOPS / ROWS[0]["file"]).read_bytes(), ROWS[0]["url"])
    assert Decimal("17.95") not in {o.price for o in r.offers}


def test_every_configured_shop_has_a_search_url_on_its_own_host() -> None:
    reg = Registry()
    for shop in DEFAULT_RETAILERS:
        url = shop.search("carte graphique RTX 5070")
        assert reg.check_allowed(url) is shop
        assert "carte+graphique+RTX+5070" in url
