"""A structured price the buy box shows as the price before a stated discount gives way to the discounted one."""

from decimal import Decimal

from planner.prices.extract import extract

_PAGE = """<html lang="it"><body>
<div itemscope itemtype="http://schema.org/Product"><h1 itemprop="name">Lampada da tavolo Orbita</h1>
<div itemprop="offers" itemscope itemtype="http://schema.org/Offer">
<meta itemprop="price" content="{structured}"><meta itemprop="priceCurrency" content="EUR"></div>
<div class="pricing"><span class="now">{now}</span> <span class="barred">{before}</span> <span>{pct}</span>
<button>Aggiungi al carrello</button></div></div>
<div class="related"><h3>Lampada Orbita mini</h3><span>€ 40,00</span> <span>€ 50,00</span> <span>-20%</span></div>
</body></html>"""


def _price(**kw: str) -> Decimal:
    r = extract(_PAGE.format(**kw), None)
    assert r.kind == "product", r.reason
    return r.offers[0].price


def test_structured_list_price_shown_with_discount_gives_the_discounted_price() -> None:
    assert _price(structured="18.00", now="€ 17,10", before="€ 18,00", pct="-5%") == Decimal("17.10")


def test_percentage_that_does_not_match_the_lower_price_changes_nothing() -> None:
    # 18.00 less 20% is 14.40, not 17.10: the percentage is about something else
    assert _price(structured="18.00", now="€ 17,10", before="€ 18,00", pct="-20%") == Decimal("18.00")


def test_structured_price_already_discounted_is_kept() -> None:
    assert _price(structured="17.10", now="€ 17,10", before="€ 18,00", pct="-5%") == Decimal("17.10")


def test_a_related_card_discount_on_the_same_amount_is_not_read() -> None:
    # the related card shows 50,00 -20% 40,00; the product's structured price 50.00 is shown undiscounted
    assert _price(structured="50.00", now="€ 50,00", before="", pct="") == Decimal("50.00")
