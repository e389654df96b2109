"""Issue 29 item 5: exponent notation is never a price (nor 300, nor 1), and invisible format characters
(zero-width space, joiners, word joiner, BOM, soft hyphen) inside a price never change the amount read.
Reproducers on the parser, the visible-text route and a search-listing route, then a hypothesis fuzz."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.prices.extract import extract
from planner.prices.parse_price import parse_price
from planner.prices.visible import PRICE_RE

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
PAGE = ("<html><head><title>Carte RTX 5090</title></head><body><h1>Carte graphique RTX 5090</h1>"
        '<div class="price">{}</div><button>Ajouter au panier</button></body></html>')


@pytest.mark.parametrize("text", ["1e300 €", "1E300 €", "1e+300 €", "€1e300", "€12e300", "1.5e3 €", "2,5E4 €"])
def test_exponent_notation_is_no_price(text):
    assert parse_price(text, ",") is None
    assert [m.group(0) for m in PRICE_RE.finditer(f"Prix : {text} TTC")] == []


def test_exponent_notation_on_a_page_is_no_price():
    result = extract(PAGE.format("1e300 €"), "https://www.ldlc.com/fiche/PB0001.html")
    assert all(o.price != Decimal(300) and o.price != Decimal(1) for o in result.offers)
    assert not result.offers


@pytest.mark.parametrize("mark", INVISIBLE)
def test_zero_width_space_inside_a_price_reads_whole(mark):
    for text in (f"4{mark}299,95 €", f"4 {mark}299,95 €", f"{mark}4 299,95 €", f"4 299{mark},95 €"):
        parsed = parse_price(text, ",")
        assert parsed is not None and parsed.amount == Decimal("4299.95"), (text, parsed)


def test_zero_width_space_on_a_page_reads_whole():
    result = extract(PAGE.format("4\u200b299,95 €"), "https://www.ldlc.com/fiche/PB0001.html")
    assert [o.price for o in result.offers] == [Decimal("4299.95")]


def test_zero_width_space_in_a_search_listing_reads_whole():
    from planner.prices.listings import _text
    from bs4 import BeautifulSoup

    tag = BeautifulSoup("<div class=\"price\">4\u200b299,95 €</div>", "lxml", multi_valued_attributes=None).div
    text = _text(tag)
    m = PRICE_RE.search(text)
    assert m is not None and parse_price(m.group(0), ",").amount == Decimal("4299.95")


# ---------------------------------------------------------------- fuzz

amounts = st.decimals(min_value=Decimal("1.00"), max_value=Decimal("99999.99"), places=2)


def french(amount: Decimal) -> str:
    whole, cents = f"{amount:.2f}".split(".")
    groups = []
    while whole:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    return " ".join(groups) + "," + cents + " €"


@settings(max_examples=300, deadline=None)
@given(amount=amounts, marks=st.lists(st.tuples(st.integers(0, 20), st.sampled_from(INVISIBLE)), max_size=4))
def test_fuzz_invisible_characters_never_change_the_amount(amount, marks):
    text = french(amount)
    for pos, mark in marks:
        pos = min(pos, len(text))
        text = text[:pos] + mark + text[pos:]
    parsed = parse_price(text, ",")
    assert parsed is not None and parsed.amount == amount, (text, parsed)


@settings(max_examples=300, deadline=None)
@given(mantissa=st.from_regex(r"[1-9][0-9]{0,3}([.,][0-9]{1,2})?", fullmatch=True),
       e=st.sampled_from(["e", "E"]), sign=st.sampled_from(["", "+", "-"]), exp=st.integers(0, 999),
       cur=st.sampled_from(["€", " €", " EUR", "$", ""]), before=st.booleans())
def test_fuzz_exponent_notation_is_never_read(mantissa, e, sign, exp, cur, before):
    number = f"{mantissa}{e}{sign}{exp}"
    text = f"{cur.strip()}{number}" if before and cur else f"{number}{cur}"
    assert parse_price(text, ",") is None, text
    assert PRICE_RE.search(f"Prix {text} TTC") is None, text
