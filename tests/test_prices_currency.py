"""The currency a page states in its structured data is kept, even one planner cannot convert."""

import pytest

from planner.prices.extract import extract

_PAGE = """<html><head><script type="application/ld+json">
{{"@context": "https://schema.org", "@type": "Product", "name": "Cama Orbita Single",
 "offers": {{"@type": "Offer", "price": "249990", "priceCurrency": "{code}"}}}}
</script></head><body><h1>Cama Orbita Single</h1><p>$249.990</p><button>Agregar al carro</button></body></html>"""


@pytest.mark.parametrize("code", ["CLP", "PKR", "BYN", "EUR", "usd"])
def test_stated_iso_currency_is_kept(code: str) -> None:
    r = extract(_PAGE.format(code=code), None)
    assert r.kind == "product" and r.offers[0].currency == code.upper()


def test_a_stated_non_iso_code_is_not_taken_as_a_currency() -> None:
    # "XYZ" is no ISO 4217 code: the visible "$" decides, as before
    r = extract(_PAGE.format(code="XYZ"), None)
    assert r.offers[0].currency == "USD"


def test_store_quarantines_and_never_offers_a_currency_without_exchange_rate(tmp_path) -> None:
    from decimal import Decimal

    from planner.prices.store import NewObservation, PriceStore

    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        [row] = store.record([NewObservation(
            part_id="gpu-x", retailer="Tienda", price=Decimal("249990"), currency="CLP")], "Tienda", "test")
        assert row.status == "suspect" and "CLP" in (row.reason or "")
        store.confirm(row.id)  # even a person's confirmation cannot make a plan convert CLP
        assert "gpu-x" not in store.latest_trusted()
        [eur] = store.record([NewObservation(
            part_id="gpu-y", retailer="Tienda", price=Decimal("250"), currency="EUR")], "Tienda", "test")
        assert eur.status == "trusted" and "gpu-y" in store.latest_trusted()
