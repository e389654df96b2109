"""Extraction: every saved real page in ../shared/retail-pages, the project's own FR pages, and the pieces."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.prices.blocked import is_blocked
from planner.prices.condition import decide_condition
from planner.prices.extract import extract
from planner.prices.parse_price import parse_price
from planner.prices.retailers import Registry
from planner.prices.stock import normalise_availability
from planner.prices.jsonld import parse_json_loose

REPO = Path(__file__).resolve().parents[1]
SHARED_PAGES = REPO.parent / "shared" / "retail-pages"
OWN_PAGES = REPO / "tests" / "data" / "pages"


def _rows(manifest: Path) -> list[dict]:
    if not manifest.exists():
        return []
    with manifest.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


SHARED_ROWS = _rows(SHARED_PAGES / "MANIFEST.csv")
OWN_ROWS = _rows(OWN_PAGES / "MANIFEST.csv")


def _check(result, row: dict) -> None:
    blocked_expected = "captcha" in row["file"] or row.get("product", "").startswith("none")
    assert result.blocked is blocked_expected
    if not row["expected_price"]:
        assert result.offers == []
        if row["in_stock"] in ("true", "false") and not blocked_expected:
            assert result.page_in_stock is (row["in_stock"] == "true")
        return
    assert result.offers, "expected an offer"
    first = result.offers[0]
    assert first.price == Decimal(row["expected_price"])
    assert first.currency == row["expected_currency"]
    if row["in_stock"] in ("true", "false"):
        assert first.in_stock is (row["in_stock"] == "true")
    assert first.route in ("json-ld", "microdata", "opengraph", "selector", "api", "text")


@pytest.mark.parametrize("row", SHARED_ROWS, ids=[r["file"] for r in SHARED_ROWS])
def test_shared_page(row: dict, shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / row["file"]).read_bytes()
    _check(extract(data), row)


def test_shared_manifest_is_complete(shared_dir: Path) -> None:
    pages = {p.name for p in (shared_dir / "retail-pages").iterdir() if p.suffix in (".html", ".json")}
    assert pages == {r["file"] for r in SHARED_ROWS}


@pytest.mark.parametrize("row", OWN_ROWS, ids=[r["file"] for r in OWN_ROWS])
def test_own_fr_page(row: dict) -> None:
    result = extract((OWN_PAGES / row["file"]).read_bytes())
    _check(result, row)
    if row["condition"]:
        assert result.offers[0].condition == row["condition"]


def test_own_pages_cover_the_required_formats() -> None:
    names = {r["file"] for r in OWN_ROWS}
    for needed in ("fr-jsonld-comma.html", "fr-jsonld-cdata.html", "fr-jsonld-broken.html", "fr-microdata.html",
                   "fr-opengraph.html", "fr-occasion.html", "fr-ex-vat.html", "fr-no-price.html"):
        assert needed in names


# ---------------------------------------------------------------- listing pages: order, condition, urls

def test_materiel_listing_keeps_page_order_and_flags_used(shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / "materiel-net__search-rtx5070ti.html").read_bytes()
    r = extract(data, "https://www.materiel.net/recherche/rtx%205070%20ti/")
    assert r.kind == "listing" and len(r.offers) == 27
    first, second = r.offers[0], r.offers[1]
    assert first.name == "Gainward GeForce RTX 5070 Ti Phoenix-S" and first.condition == "new"
    assert second.price == Decimal("1079.95") and second.condition == "used"
    assert all(o.route == "selector" and o.currency == "EUR" for o in r.offers)
    assert first.url == "https://www.materiel.net/produit/202505270008.html"
    assert sum(1 for o in r.offers if o.in_stock is False) == 7  # the "Rupture" items


def test_ldlc_listing_urls_are_absolute(shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / "ldlc__search-rtx5070ti.html").read_bytes()
    r = extract(data, "https://www.ldlc.com/recherche/rtx%205070%20ti/")
    assert r.offers[0].url == "https://www.ldlc.com/fiche/PB00686242.html"
    assert r.offers[2].condition == "used"


def test_topachat_api_json_is_in_cents(shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / "topachat__search-api-rtx5070ti.json").read_bytes()
    r = extract(data, "https://www.topachat.com/search/RTX+5070+Ti")
    assert [o.price for o in r.offers[:3]] == [Decimal("1299.99"), Decimal("1299.99"), Decimal("1379.99")]
    assert r.offers[0].route == "api" and r.offers[0].in_stock is None
    assert r.offers[0].url.startswith("https://www.topachat.com/pages/detail2_")


def test_ldlc_product_ignores_ex_vat_and_cross_sell(shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / "ldlc__kfa2-rtx3070ti-sg.html").read_bytes()
    r = extract(data)
    assert len(r.offers) == 1
    assert r.offers[0].price == Decimal("1019.95")  # not 849.96 ex-VAT, not 269.95 cross-sell


def test_renewed_listing_is_refurbished(shared_dir: Path) -> None:
    data = (shared_dir / "retail-pages" / "amazon-com__asus-rtx2060-renewed.html").read_bytes()
    assert extract(data).offers[0].condition == "refurbished"


# ---------------------------------------------------------------- pieces

@pytest.mark.parametrize(
    ("text", "sep", "amount", "currency"),
    [
        ("1 199€95", ",", "1199.95", "EUR"),
        ("1\u00a0199€<sup>95", ",", "1199.95", "EUR"),
        ("1 019€ 95", None, "1019.95", "EUR"),
        ("1.130,00\u00a0€", ",", "1130.00", "EUR"),
        ("$599.66", ",", "599.66", "USD"),
        ("$1,455.00", None, "1455.00", "USD"),
        ("1 249,90 €", None, "1249.90", "EUR"),
        ("£12.50", None, "12.50", "GBP"),
        ("1019.95", ",", "1019.95", None),
        ("CHF 1'299.00", None, "1299.00", "CHF"),
    ],
)
def test_parse_price_formats(text: str, sep, amount: str, currency) -> None:
    p = parse_price(text.replace("<sup>", ""), sep)
    assert p is not None and p.amount == Decimal(amount) and p.currency == currency


@pytest.mark.parametrize("text", ["", "Prix", "0,00 €", "gratuit"])
def test_parse_price_rejects_non_prices(text: str) -> None:
    assert parse_price(text) is None


def test_parse_price_uses_the_shop_currency_for_bare_dollar() -> None:
    assert parse_price("$20.00", None, "CAD").currency == "CAD"


def test_json_ld_loose_parsing() -> None:
    assert parse_json_loose('//<![CDATA[\n{"a": 1}\n//]]>') == [{"a": 1}]
    assert parse_json_loose('<!-- {"a": [1, 2,], } -->') == [{"a": [1, 2]}]
    assert parse_json_loose('{"a": 1}{"b": 2}') == [{"a": 1}, {"b": 2}]
    assert parse_json_loose("not json at all") == []


@pytest.mark.parametrize(
    ("value", "in_stock", "kind"),
    [
        ("https://schema.org/Instock", True, "in"),
        ("http://schema.org/OutOfStock", False, "out"),
        ("SoldOut", False, "out"),
        ("https://schema.org/PreOrder", False, "later"),
        ("in stock", True, "in"),
        ("LimitedAvailability", True, "in"),
        ("https://schema.org/InStoreOnly", False, "out"),
        (None, None, "unknown"),
        ("whatever", None, "unknown"),
    ],
)
def test_availability_values(value, in_stock, kind) -> None:
    av = normalise_availability(value)
    assert (av.in_stock, av.kind) == (in_stock, kind)


def test_condition_words() -> None:
    assert decide_condition(None, "Gainward RTX 5070 Ti · Occasion") == "used"
    assert decide_condition("https://schema.org/NewCondition", "ASUS RTX 2060 (Renewed)") == "refurbished"
    assert decide_condition("UsedCondition", "Carte graphique") == "used"
    assert decide_condition(None, "Carte idéale pour jouer", "used for gaming") == "new"
    assert decide_condition(None, "Carte", "16 Go - Article utilisé") == "used"


def test_blocked_needs_more_than_a_recaptcha_widget() -> None:
    page_text = "Carte graphique " * 500
    assert not is_blocked("Carte graphique", page_text, '<div class="g-recaptcha"></div>', False)
    assert is_blocked("Access Denied", "You don't have permission to access this server.", "", False)
    assert not is_blocked("Robot Check", "x", "", has_product_data=True)


def test_json_ld_item_list_gives_results_in_order() -> None:
    items = [{"@type": "ListItem", "position": i + 1,
              "item": {"@type": "Product", "name": f"Carte {i}",
                       "offers": {"@type": "Offer", "price": f"{100 + i}.00", "priceCurrency": "EUR"}}}
             for i in range(3)]
    html = ('<html><head><script type="application/ld+json">'
            + json.dumps({"@context": "https://schema.org", "@type": "ItemList", "itemListElement": items})
            + "</script></head><body><h1>Résultats</h1></body></html>")
    r = extract(html)
    assert r.kind == "listing"
    assert [o.name for o in r.offers] == ["Carte 0", "Carte 1", "Carte 2"]
    assert [o.price for o in r.offers] == [Decimal("100.00"), Decimal("101.00"), Decimal("102.00")]


def test_bestbuy_picks_the_product_with_the_offer(shared_dir: Path) -> None:
    r = extract((shared_dir / "retail-pages" / "bestbuy-us__intel-i7-10700k.html").read_bytes())
    assert r.offers[0].route == "json-ld" and r.offers[0].price == Decimal("359.99")
    assert "10700K" in r.offers[0].name


def test_empty_and_garbage_input() -> None:
    assert extract(b"").offers == []
    assert extract("<html><body><p>Bonjour</p>").offers == []
    assert extract(b"\x00\xff\xfe garbage <<<>>>").blocked is False
    assert extract('{"not": "a search api"}').offers == []


def test_url_selects_retailer_formats() -> None:
    reg = Registry()
    assert reg.for_url("https://www.ldlc.com/fiche/PB1.html").key == "ldlc"
    assert reg.for_url("https://www.amazon.com/dp/X").key == "amazon"  # same storefront family
    assert reg.for_url("https://shop.example/") is None


# ---------------------------------------------------------------- CLI contract

def _cli(args: list[str]):
    from planner.cli import app

    return CliRunner().invoke(app, args)


def test_cli_extract_json_contract(shared_dir: Path) -> None:
    page = shared_dir / "retail-pages" / "ldlc__kfa2-rtx3070ti-sg.html"
    res = _cli(["prices", "extract", str(page), "--url", "https://www.ldlc.com/fiche/PB00438853.html", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["blocked"] is False
    o = data["offers"][0]
    assert {"name", "price", "currency", "in_stock", "url", "route"} <= set(o)
    assert (o["price"], o["currency"], o["in_stock"], o["route"]) == ("1019.95", "EUR", False, "json-ld")


def test_cli_extract_captcha_and_no_price(shared_dir: Path) -> None:
    res = _cli(["prices", "extract", str(shared_dir / "retail-pages" / "walmart__captcha-verify.html"), "--json"])
    assert json.loads(res.stdout)["blocked"] is True
    res = _cli(["prices", "extract", str(OWN_PAGES / "fr-no-price.html"), "--json"])
    assert json.loads(res.stdout)["offers"] == []


def test_cli_extract_bad_input_exits_2(tmp_path: Path) -> None:
    res = _cli(["prices", "extract", str(tmp_path / "missing.html")])
    assert res.exit_code == 2
    res = _cli(["prices", "extract", "https://not-a-shop.example/page", "--json"])
    assert res.exit_code == 2
    assert "not a configured retailer" in res.output


def test_structured_data_about_another_product_is_not_used() -> None:
    html = """<html><head><title>Carte graphique Exemple RTX 5060 8 Go</title>
    <script type="application/ld+json">{"@type":"Product","name":"Casque audio sans fil Promo",
    "offers":{"price":"59.00","priceCurrency":"EUR"}}</script></head>
    <body><h1>Carte graphique Exemple RTX 5060 8 Go</h1><div class="price">329,90 €</div>
    <button class="add-to-cart">Ajouter au panier</button></body></html>"""
    o = extract(html).offers[0]
    assert (o.price, o.route, o.in_stock) == (Decimal("329.90"), "text", True)


def test_bom_prefixed_api_json() -> None:
    data = '\ufeff{"result": {"document": {"categories": [{"product": [{"label": "X", "url": "/p", ' \
           '"offer": {"price_final": 12345}}]}]}}}'
    assert extract(data).offers[0].price == Decimal("123.45")


HTML_PRICED = [r for r in SHARED_ROWS if r["expected_price"] and r["file"].endswith(".html")]


@pytest.mark.parametrize("row", HTML_PRICED, ids=[r["file"] for r in HTML_PRICED])
def test_visible_route_alone_finds_the_price(row: dict, shared_dir: Path) -> None:
    """The text fallback, blind to JSON-LD/microdata and retailer selectors, still finds the buy-box price:
    the generic route that unseen shops will rely on."""
    from planner.prices.page import Page
    from planner.prices.visible import find_anchor, main_price

    p = Page.load((shared_dir / "retail-pages" / row["file"]).read_bytes())
    spot, route = main_price(p, find_anchor(p, [p.meta("og:title") or "", p.title]))
    assert route == "text" and spot is not None
    assert spot.parsed.amount == Decimal(row["expected_price"])
