"""Auction lots, 'from' prices on a line of their own and the price beside them: none is a price a buyer pays
(hand-written pages modelled on an auction house's lot page and a fashion shop's discounted 'From' price)."""

from decimal import Decimal

import pytest

from planner.prices.extract import extract
from planner.prices.sanity import context_problem, label_problem

_LOT = """<html><head><title>{title} | Auctions</title>
<script type="application/ld+json">{{"@context":"http://schema.org","@type":"Product","name":"{title}",
"offers":{{"@type":"Offer","price":{start},"priceCurrency":"USD","availability":"http://schema.org/InStock"}}}}</script>
</head><body><h1>{title}</h1>
<div class="lot"><div>Estimate $300 - $500</div><div>3d 22h</div>
<div><span class="bid">${bid}</span><span>{bids} bids</span></div>
<div>Starting Price ${start}</div><div>Your Maximum Bid: Secure</div><div><span>${next_bid}</span></div>
<button>Place Bid</button></div>
<section class="related-lots"><h2>Similar lots</h2><div class="card"><p>Stool, 6 days left</p><p>${start}</p></div></section>
</body></html>"""

_FROM = """<html><head><title>Lace-up ankle boots</title></head><body><h1>Lace-up ankle boots</h1>
<div class="buy"><span>up to 10% off</span><div><span>From €70.50</span><div><span>€78.50</span></div></div>
<span>VAT included</span><button>Add to bag</button></div></body></html>"""


def test_an_auction_lot_gives_no_price_and_says_why() -> None:
    page = _LOT.format(title="Pair of wool pillows", start=150, bid=200, bids=2, next_bid=225)
    r = extract(page, url="https://auctions.example.com/item/1")
    assert r.offers == []
    assert "auction" in (r.reason or "")


def test_the_starting_bid_in_structured_data_is_not_taken_when_a_related_lot_shows_the_same_amount() -> None:
    # the related card's "$150" is not this lot's price shown as payable: the structured 150 stays rejected
    page = _LOT.format(title="Leather flap bag", start=90, bid=400, bids=5, next_bid=500)
    assert extract(page, url="https://auctions.example.com/item/2").offers == []


@pytest.mark.parametrize("before, after", [
    ("Starting Price ", ""), ("Current bid: ", ""), ("Your Maximum Bid: Secure ", ""), ("Estimate ", " - $500"),
    ("", " 2 bids"), ("Mise à prix : ", ""), ("Startgebot ", ""), ("Estimate $300 - ", ""),
])
def test_bids_estimates_and_a_range_end_are_not_prices(before: str, after: str) -> None:
    assert context_problem(before, after) is not None


@pytest.mark.parametrize("before", ["RTX 4090 - ", "Price: ", "Bidet tap ", "Angebot ", "Sonderangebot: ", "3 Angebote "])
def test_a_model_number_a_bidet_or_a_german_offer_is_not_a_range_or_a_bid(before: str) -> None:
    assert context_problem(before, "") is None


def test_a_price_on_the_line_after_a_from_price_is_not_taken() -> None:
    # "From €70.50" then "€78.50": the 78.50 is the price before the discount (or the top of a range), never the
    # price paid; the 'from' price itself is refused too, so the page gives no price rather than the old one
    r = extract(_FROM, url="https://shop.example.ie/boots")
    assert [o.price for o in r.offers] != [Decimal("78.50")]
    assert r.offers == [] and "'from'" in (r.reason or "")


def test_only_labels_are_read_on_the_line_above_so_a_title_ending_in_a_model_number_keeps_its_price() -> None:
    page = ("<html><head><title>Processeur Ryzen 7 9700X</title></head><body><h1>Processeur Ryzen 7 9700X</h1>"
            "<p class='prix'>329,99 €</p></body></html>")
    assert [o.price for o in extract(page, url="https://shop.example.fr/p").offers] == [Decimal("329.99")]
    assert label_problem("Processeur Ryzen 7 9700X ") is None
    assert label_problem("From ") is not None
