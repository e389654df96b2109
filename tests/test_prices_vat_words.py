"""Ex-VAT labels in many languages, before or after the amount, and currency codes glued to amounts (hand-written pages)."""

from decimal import Decimal

import pytest

from planner.prices.extract import extract
from planner.prices.sanity import VAT_PHRASES, context_problem

_PAGE = """<html><body><h1>Reading lenses Stick-On</h1>
<p>Made of silicone.</p>
<ul class="prices"><li class="price"><span>{first}</span></li><li class="small">{second}</li></ul>
<button>Add to cart</button></body></html>"""


def _price(first: str, second: str) -> Decimal:
    r = extract(_PAGE.format(first=first, second=second), None)
    assert r.kind == "product", r.reason
    return r.offers[0].price


@pytest.mark.parametrize("label", ["Brez DDV:", "bez DPH", "bez PDV-a", "Netto:", "ÁFA nélkül", "fără TVA", "без ДДС",
                                   "χωρίς ΦΠΑ", "exkl. moms", "eks. mva", "excl. btw", "bez PVN", "be PVM", "sem IVA",
                                   "sin IVA", "zzgl. MwSt.", "HT", "IVA esclusa", "KDV hariç", "без НДС"])
def test_ex_vat_label_before_the_amount_is_not_the_price(label: str) -> None:
    # the incl.-VAT price first, then the ex-VAT one with its label in front: the buyer pays the first
    assert _price("40.00€", f"{label} 32.79€") == Decimal("40.00")


@pytest.mark.parametrize("label", ["brez DDV", "bez DPH", "ALV 0 %", "km-ta", "IVA esclusa", "exkl. moms", "HT",
                                   "+ VAT", "(税抜)"])
def test_ex_vat_label_after_the_amount_is_not_the_price(label: str) -> None:
    # ex-VAT shown first (label after it), the incl.-VAT price second
    assert _price(f"32.79€ {label}", "40.00€") == Decimal("40.00")


def test_label_between_two_amounts_follows_the_line_convention() -> None:
    assert context_problem("", " HT 120 € TTC") == "ex-VAT price"  # 100 € HT 120 € TTC: HT is 100's
    assert context_problem("100 € HT ", " TTC") is None  # ... and not 120's
    assert context_problem("z DDV ", " brez DDV 41 €") is None  # z DDV 50 € brez DDV 41 €: prefix labels
    assert context_problem("z DDV 50 € brez DDV ", "") == "ex-VAT price"
    assert context_problem("", " Brez DDV: 36.53€") is None  # "label:" names the amount after it
    assert context_problem("Brez DDV: ", "") == "ex-VAT price"


@pytest.mark.parametrize("before, after", [("Cena s DPH: ", ""), ("", " z DDV"), ("", " inkl. MwSt."), ("", " TTC"),
                                           ("", " sis. ALV"), ("", " km-ga"), ("Cena brutto: ", ""), ("", " s PDV-om")])
def test_incl_vat_labels_are_not_ex_vat(before: str, after: str) -> None:
    assert context_problem(before, after) is None


def test_every_language_row_has_both_columns_and_each_ex_phrase_is_recognised() -> None:
    for lang, (ex, incl) in VAT_PHRASES.items():
        assert ex and incl, lang
        for phrase in ex:
            assert context_problem(f"{phrase} ", "") == "ex-VAT price", (lang, phrase)
            assert context_problem("", f" {phrase}") == "ex-VAT price", (lang, phrase)
        for phrase in incl:
            assert context_problem(f"{phrase} ", "") is None, (lang, phrase)


@pytest.mark.parametrize("shown, amount", [("EUR219.99", "219.99"), ("219.99EUR", "219.99"), ("PLN1 299,00", "1299.00"),
                                           ("1 299,00PLN", "1299.00")])
def test_currency_code_glued_to_the_amount_is_a_price(shown: str, amount: str) -> None:
    r = extract(f"<html><body><h1>Leather bag Rosso</h1><div class='cost'>{shown}</div>"
                "<button>Add to cart</button></body></html>", None)
    assert r.kind == "product", r.reason
    assert r.offers[0].price == Decimal(amount)
    assert r.offers[0].currency == shown.strip("0123456789 ,.")


def test_lower_case_letters_glued_to_a_number_are_not_a_currency() -> None:
    r = extract("<html><body><h1>Mask kn95 pack</h1><p>Model eur2000 and usd12 in stock</p></body></html>", None)
    assert r.offers == []


def test_ex_vat_label_on_the_line_after_the_amount_counts_against_it() -> None:
    assert _price("32.79€<br>HT", "40.00€") == Decimal("40.00")
