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
    # "XYZ" is no ISO 4217 code and the page says nothing else: the visible "$" is ambiguous, not USD
    r = extract(_PAGE.format(code="XYZ"), None)
    assert r.offers[0].currency == "XXX" and "USD" in r.offers[0].currency_options


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


# A bare "$" or "元" in the visible text: the page's own context decides, or the offer says it is ambiguous.
_SIGN_PAGE = """<html{lang}><head>{head}</head><body><h1>Consola retro Joypad</h1>
<div class="price">{shown}</div><button>Agregar al carro</button></body></html>"""


def _currency(shown: str, lang: str = "", head: str = "", url=None) -> tuple[str, tuple]:
    r = extract(_SIGN_PAGE.format(lang=lang, head=head, shown=shown), url)
    assert r.kind == "product", r.reason
    return r.offers[0].currency, r.offers[0].currency_options


@pytest.mark.parametrize("lang, code", [("es-CL", "CLP"), ("es-AR", "ARS"), ("es_MX", "MXN"), ("en-CA", "CAD"),
                                        ("en-AU", "AUD"), ("zh-Hant-TW", "TWD"), ("en-US", "USD")])
def test_html_lang_region_decides_a_bare_dollar(lang: str, code: str) -> None:
    assert _currency("$24.990", lang=f' lang="{lang}"') == (code, ())


def test_og_locale_decides_a_bare_dollar() -> None:
    assert _currency("$ 24.990", head='<meta property="og:locale" content="es_CL">') == ("CLP", ())


def test_price_currency_stated_elsewhere_on_the_page_decides() -> None:
    # structured data about another thing on the page (an event's ticket offer) names the page's currency
    head = '<script type="application/ld+json">{"@type": "Event", "offers": {"priceCurrency": "ARS"}}</script>'
    assert _currency("$2.449", lang=' lang="en-US"', head=head) == ("ARS", ())


@pytest.mark.parametrize("url, code", [("https://www.tienda.cl/p/1", "CLP"), ("https://shop.com.ar/x", "ARS"),
                                       ("https://fresh.tw/item", "TWD"), ("https://www.shop.com.mx/p", "MXN")])
def test_country_domain_decides_a_bare_dollar(url: str, code: str) -> None:
    assert _currency("$3.499", url=url) == (code, ())


def test_a_canonical_link_gives_the_domain_when_the_page_has_no_url() -> None:
    head = '<link rel="canonical" href="https://www.paris.example.cl/cama-1">'
    assert _currency("$249.990", head=head) == ("CLP", ())


def test_nothing_decides_a_bare_dollar_so_the_offer_says_it_is_ambiguous() -> None:
    code, options = _currency("$24.990", lang=' lang="es"', url="https://shop.example.com/p/1")
    assert code == "XXX" and {"USD", "CLP", "ARS", "MXN", "CAD"} <= set(options)
    r = extract(_SIGN_PAGE.format(lang="", head="", shown="$24.990"), None)
    assert r.offers[0].to_json()["currency_options"] == list(options)


@pytest.mark.parametrize("lang, url, code", [("zh-TW", None, "TWD"), ("zh-CN", None, "CNY"), ("", "https://a.example.hk/1", "HKD")])
def test_yuan_sign_is_decided_by_the_page(lang: str, url, code: str) -> None:
    assert _currency("990元", lang=f' lang="{lang}"' if lang else "", url=url) == (code, ())


def test_yuan_sign_without_context_is_ambiguous() -> None:
    code, options = _currency("990元")
    assert code == "XXX" and set(options) >= {"CNY", "TWD"}


@pytest.mark.parametrize("shown, code", [("US$ 24.99", "USD"), ("NT$ 990", "TWD"), ("R$ 1.299,00", "BRL"),
                                         ("CA$ 12.00", "CAD"), ("$24.99 USD", "USD")])
def test_a_named_dollar_needs_no_context(shown: str, code: str) -> None:
    assert _currency(shown, lang=' lang="es-CL"') == (code, ())


def test_an_ambiguous_currency_is_quarantined_by_the_store(tmp_path) -> None:
    from decimal import Decimal

    from planner.prices.store import NewObservation, PriceStore

    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        [row] = store.record([NewObservation(part_id="gpu-x", retailer="Tienda", price=Decimal("249"),
                                             currency="XXX")], "Tienda", "test")
        assert row.status == "suspect" and "gpu-x" not in store.latest_trusted()
