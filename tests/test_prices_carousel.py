"""A price inside a region named like a carousel/slider: skipped only when the region shows several product cards."""

from decimal import Decimal

from planner.prices.extract import extract
from planner.prices.page import Page
from planner.prices.visible import holds_cards

_PAGE = """<html><body><h1>Orthopaedic insoles made to measure</h1>
<div class="ek-slider-price"><span class="pricenew">270,00 kn</span><br><span class="priceold">540,00 kn</span></div>
<a class="buy" href="#">Buy</a><button>Add to cart</button>
<p>Insoles made to measure after a gait analysis, with a six-month guarantee.</p>
<div class="product-carousel">
  <div class="card"><a href="/insoles-kids">Insoles for children</a><span>169,00 kn</span></div>
  <div class="card"><a href="/gait-analysis">Gait analysis</a><span>199,00 kn</span></div>
  <div class="card"><a href="/massage">Sports massage</a><span>249,00 kn</span></div>
</div></body></html>"""


def test_the_buy_box_price_in_a_slider_named_region_is_read() -> None:
    r = extract(_PAGE, None)
    assert r.kind == "product", r.reason
    assert r.offers[0].price == Decimal("270.00")
    assert r.offers[0].currency == "HRK"


def test_a_carousel_of_product_cards_is_still_skipped() -> None:
    # without the buy box, the only prices are the other products' cards: no price for this product
    page = _PAGE.replace('<span class="pricenew">270,00 kn</span><br><span class="priceold">540,00 kn</span>', "")
    r = extract(page, None)
    assert r.offers == []


def test_cards_need_a_price_and_links_to_two_other_pages() -> None:
    p = Page.load(_PAGE)
    regions = {el.get("class"): el for el in p.root.iter("div")}
    assert holds_cards(p, regions["product-carousel"])
    assert not holds_cards(p, regions["ek-slider-price"])  # two prices, no links: the product's own price box
    gallery = Page.load("<html><body><div class='gallery-slider'><a href='/img/1.jpg'>1</a><a href='/img/2.jpg'>2</a>"
                        "<span>12,00 €</span></div></body></html>")
    assert not holds_cards(gallery, next(gallery.root.iter("div")))  # a price, but its links are images
    one = Page.load("<html><body><ol class='a-carousel'><li><a href='/dp/B01'>Case fan</a> <span>$29.99</span> "
                    "<a href='/reviews/B01'>41 ratings</a></li></ol></body></html>")
    assert holds_cards(one, next(one.root.iter("ol")))  # a one-card carousel of another product


def test_a_one_card_carousel_of_another_product_is_not_this_product_price() -> None:
    page = ("<html><body><h1>Graphics card RTX 3070</h1><p>Currently unavailable.</p>"
            "<div class='a-carousel-container'><ol class='a-carousel'><li class='a-carousel-card'>"
            "<a href='/dp/B01'>Case fan</a> <span class='a-price'>$29.99</span> <a href='/reviews/B01'>41 ratings</a>"
            "</li></ol></div></body></html>")
    assert extract(page, None).offers == []
