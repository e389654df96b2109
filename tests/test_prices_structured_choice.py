"""Which structured price wins: an OpenGraph amount never shown vs a shown itemprop price, and one itemprop holding two."""

from decimal import Decimal

from planner.prices.extract import extract

_HEAD = """<html><head><meta property="og:title" content="Labour code annotated">
<meta property="product:price:amount" content="{og}"><meta property="product:price:currency" content="EUR"></head>"""
_BODY = """<body><div itemscope itemtype="http://schema.org/Product"><h1 itemprop="name">Labour code annotated</h1>
<div itemprop="offers" itemscope itemtype="http://schema.org/Offer"><meta itemprop="priceCurrency" content="EUR">
<span itemprop="price" content="{content}"></span>
<div class="price-box"><span class="special-price"><span class="price">71,91 €</span></span>
<span class="old-price"><span class="price">79,90 €</span></span></div></div>
<button>Add to cart</button></div></body></html>"""


def _price(og: str | None, content: str) -> tuple[Decimal, str]:
    head = _HEAD.format(og=og) if og is not None else "<html><head></head>"
    r = extract(head + _BODY.format(content=content), None)
    assert r.kind == "product", r.reason
    return r.offers[0].price, r.offers[0].route


def test_an_itemprop_price_holding_sale_and_old_price_gives_the_sale_price() -> None:
    # read from the structured value itself (route microdata), not left to the visible-text route
    assert _price(None, "71,91 € 79,90 €") == (Decimal("71.91"), "microdata")


def test_the_old_price_marked_by_its_class_loses_whichever_comes_first() -> None:
    assert _price(None, "79,90 € 71,91 €") == (Decimal("71.91"), "microdata")


def test_an_opengraph_amount_never_shown_does_not_beat_a_shown_itemprop_price() -> None:
    # 67.84 (ex-VAT, say) appears nowhere on the page; the itemprop amount is the one the buy box shows
    assert _price("67.84", "71,91 € 79,90 €") == (Decimal("71.91"), "microdata")
    assert _price("67.84", "71.91") == (Decimal("71.91"), "microdata")


def test_an_opengraph_amount_that_is_shown_is_still_a_candidate() -> None:
    page = ("<html><head><meta property='product:price:amount' content='71.91'>"
            "<meta property='og:title' content='Labour code annotated'></head><body><h1>Labour code annotated</h1>"
            "<span class='price'>71,91 €</span><button>Add to cart</button></body></html>")
    r = extract(page, None)
    assert r.offers[0].price == Decimal("71.91") and r.offers[0].route == "opengraph"


def test_two_amounts_that_nothing_tells_apart_are_not_guessed() -> None:
    page = _HEAD.format(og="10.00").replace("product:price", "x:y") + _BODY.format(content="71,91 € 79,90 €").replace(
        'class="old-price"', 'class="other"')
    r = extract(page, None)
    # neither amount is marked old: the structured value is not read; the visible route decides instead
    assert not r.offers or r.offers[0].route != "microdata"


_SALE_PAGE = """<html><head><meta property="og:title" content="Keystick Wall Sconce">{og}
<script type="application/ld+json">{{"@context": "https://schema.org", "@type": "Product", "name": "Keystick Wall Sconce",
"offers": {{"@type": "Offer", "priceCurrency": "USD", "price": "150.00"}}}}</script></head>
<body><h1>Keystick Wall Sconce</h1><div id="app"></div><button>Add to cart</button></body></html>"""


def test_a_structured_price_opengraph_names_as_the_list_price_gives_way_to_the_sale_price() -> None:
    # the JSON-LD still carries the list price; OpenGraph says 150 is the standard amount and 120 the price now
    og = ('<meta property="og:price:standard_amount" content="150.00">'
          '<meta property="product:price:amount" content="120.00"><meta property="product:price:currency" content="USD">')
    r = extract(_SALE_PAGE.format(og=og), None)
    assert r.offers[0].price == Decimal("120.00") and r.offers[0].route == "opengraph"
    # product:sale_price:amount is the price now even where product:price:amount repeats the list price
    og = ('<meta property="product:original_price:amount" content="150.00">'
          '<meta property="product:price:amount" content="150.00"><meta property="product:sale_price:amount" '
          'content="120.00">')
    assert extract(_SALE_PAGE.format(og=og), None).offers[0].price == Decimal("120.00")


def test_without_a_lower_current_price_the_structured_price_stands() -> None:
    og = ('<meta property="og:price:standard_amount" content="150.00">'
          '<meta property="product:price:amount" content="150.00">')
    assert extract(_SALE_PAGE.format(og=og), None).offers[0].price == Decimal("150.00")
    assert extract(_SALE_PAGE.format(og=""), None).offers[0].price == Decimal("150.00")
