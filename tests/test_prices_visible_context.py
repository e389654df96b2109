"""Visible prices that are not the product's price (shipping fees, signed surcharges, other products under a
"Similar products" heading) and a lone price under an 'old' class that is."""

from decimal import Decimal

import pytest

from planner.prices.extract import extract
from planner.prices.sanity import context_problem

_PAGE = """<html><head><title>{title}</title></head><body>
<h1>{title}</h1>
<div class="product-info">{buybox}</div>
<div class="benefits">{benefits}</div>
<div class="other-things">{heading}<h4>Another mask M-212</h4>
<div class="prices"><span class="price">150.00€</span></div></div>
</body></html>"""


def _offer_price(buybox: str, title: str = "Diving mask with dioptre", heading: str = "<div>Podobni izdelki</div>",
                 repeat: int = 8) -> Decimal | None:
    benefits = "<p>Frame and lens warranty</p><p>Free shipping</p><p>Risk-free purchase</p>" * repeat
    page = _PAGE.format(title=title, buybox=buybox, benefits=benefits, heading=heading)
    r = extract(page, url="https://shop.example.si/mask")
    return r.offers[0].price if r.offers else None


@pytest.mark.parametrize("label", ["Shipping:", "Frais de port :", "Versandkosten", "Gastos de envío:",
                                   "Spese di spedizione", "דמי משלוח:", "送料", "Delivery fee +"])
def test_a_shipping_label_marks_the_amount_after_it_as_not_the_price(label: str) -> None:
    assert context_problem(f"Product page {label} ", "") == \
        "shipping (a fee, or a total with it), not the product's price"


@pytest.mark.parametrize("before", ["Price: ", "Washing machine - ", "Livraison offerte. Prix ", ""])
def test_words_that_are_not_a_shipping_label_leave_the_price_alone(before: str) -> None:
    assert context_problem(before, "") is None


def test_an_out_of_stock_page_showing_only_its_shipping_fee_has_no_price() -> None:
    box = "<p>Out of stock</p><p>Delivery with BoxIT</p><p>Shipping fee: 10 €</p>"
    assert _offer_price(box) != Decimal("10")


@pytest.mark.parametrize("sign", ["+", "-", "−"])
def test_an_options_signed_surcharge_is_not_a_price(sign: str) -> None:
    assert context_problem(f"With dioptre ({sign}", "€)") is not None
    assert context_problem(f"Option {sign}", "") is not None


def test_a_spaced_dash_is_a_separator_not_a_sign() -> None:
    assert context_problem("Indesit washing machine - ", "") is None


def test_a_lone_price_under_an_old_class_is_the_price() -> None:
    # OpenCart themes name the one live price "price-old-live" when no special price exists
    box = ('<ul id="price-list"><li class="price"><span class="price-old-live">100.00€</span></li>'
           '<li class="price-tax">Brez DDV: <span class="price-tax-live">81.97€</span></li></ul>'
           '<label>Without dioptre (-40.00€)</label><label>With dioptre</label>')
    assert _offer_price(box) == Decimal("100.00")


def test_an_old_price_next_to_the_current_one_still_loses() -> None:
    box = ('<ul id="price-list"><li class="price"><span class="price-old-live">100.00€</span> '
           '<span class="price-new">89.00€</span></li></ul>')
    assert _offer_price(box) == Decimal("89.00")


@pytest.mark.parametrize("heading", ["<h3>Podobni izdelki</h3>", "<h2>Similar products</h2>", "<h2>Ähnliche Artikel</h2>",
                                     "<h4>Customers who bought this item also bought</h4>"])
def test_prices_after_an_other_products_heading_are_other_products(heading: str) -> None:
    # the product's only price is weakly marked (a lone 'was' class far from the title); the card right after
    # the heading would win on distance alone, but it belongs to another product
    box = '<div class="price-was">100.00€</div>'
    assert _offer_price(box, heading=heading, repeat=0) == Decimal("100.00")
    assert _offer_price(box, heading="<div>Our shop</div>", repeat=0) is not None  # no heading: still a price


def test_a_total_with_shipping_is_not_the_products_price_either() -> None:
    assert context_problem("Price incl. shipping: ", "") is not None
    assert context_problem("מחיר כולל משלוח: ", "") is not None


_FOOTER_PAGE = """<html><head><title>Comics shop</title></head><body>
<div class="nav"><a href="/">Comics shop</a></div>
<div class="product-info"><h2 class="product-title">Gestalt, volume 1</h2>
<div class="{box}"><div class="product-price">9,95 €</div>
<a class="btn add-to-cart" href="#">Reserve it now</a></div></div>
<div class="{site}"><p>Comics shop, 12 rue des Bulles</p><p>Gift card 25,00 €</p></div>
</body></html>"""


@pytest.mark.parametrize("box", ["productos-footer", "product-footer", "product_footer", "card-footer"])
def test_a_buy_box_whose_class_ends_in_footer_is_not_the_site_footer(box: str) -> None:
    r = extract(_FOOTER_PAGE.format(box=box, site="site-footer"), url="https://comics.example.es/p/232")
    assert r.offers and r.offers[0].price == Decimal("9.95"), (r.kind, r.reason)


@pytest.mark.parametrize("site", ["footer", "site-footer", "page_footer"])
def test_the_site_footer_still_holds_no_price(site: str) -> None:
    page = _FOOTER_PAGE.format(box="buy-box", site=site).replace('<div class="product-price">9,95 €</div>', "")
    r = extract(page, url="https://comics.example.es/p/232")
    assert not r.offers, [o.price for o in r.offers]


@pytest.mark.parametrize("before, after", [("8x de ", " s/ juros"), ("Ou R$ 199,99 em até 10x de ", ""),
                                           ("", " sem juros"), ("12 x ", ""), ("6 cuotas de ", " sin intereses")])
def test_brazilian_and_spanish_instalments_are_not_the_price(before: str, after: str) -> None:
    assert context_problem(before, after) == "instalment, not the price"


@pytest.mark.parametrize("before", ["Ryzen 7 9700X ", "Processeur 7800X3D ", "RTX 5090 "])
def test_a_model_number_ending_in_x_is_not_an_instalment_count(before: str) -> None:
    assert context_problem(before, "") is None
