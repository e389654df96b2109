"""Which currency a page means by a shared sign ('$', '元', '¥', 'kr', 'Rs'): its stated currency, domain and locale."""

from __future__ import annotations

import re
from typing import Optional, Sequence
from urllib.parse import urlsplit

from planner.errors import CurrencyError
from planner.money import check_currency
from planner.prices.page import Page
from planner.prices.parse_price import ISO_4217, currency_from_text, shared_sign_currencies

AMBIGUOUS = "XXX"  # ISO 4217 "no currency": the price's sign is shared and nothing on the page says which it is

# Country (ISO 3166-1 alpha-2, as in a ccTLD or a locale's region) -> currency (ISO 4217), as of 2026-12.
# Public facts (ISO 4217 list of currencies by country); 'uk' is the UK's ccTLD, 'gb' its ISO code.
COUNTRY_CURRENCY: dict[str, str] = {
    **dict.fromkeys("at be cy de ee es fi fr gr hr ie it lt lu lv mt nl pt si sk eu".split(), "EUR"),
    "uk": "GBP", "gb": "GBP", "ch": "CHF", "li": "CHF", "us": "USD", "ca": "CAD", "au": "AUD", "nz": "NZD",
    "mx": "MXN", "cl": "CLP", "ar": "ARS", "co": "COP", "uy": "UYU", "pe": "PEN", "br": "BRL", "tw": "TWD",
    "cn": "CNY", "hk": "HKD", "sg": "SGD", "jp": "JPY", "kr": "KRW", "in": "INR", "pk": "PKR", "lk": "LKR",
    "np": "NPR", "se": "SEK", "no": "NOK", "dk": "DKK", "is": "ISK", "pl": "PLN", "cz": "CZK", "hu": "HUF",
    "ro": "RON", "bg": "BGN", "tr": "TRY", "il": "ILS", "za": "ZAR", "ru": "RUB", "ua": "UAH", "by": "BYN",
    "kz": "KZT", "th": "THB", "vn": "VND", "ph": "PHP", "my": "MYR", "id": "IDR", "sa": "SAR", "ae": "AED",
}
# A language without a region that is written in one currency area only (others, e.g. es, en, zh, decide nothing).
_LANGUAGE_CURRENCY: dict[str, str] = {
    "ja": "JPY", "sv": "SEK", "da": "DKK", "nb": "NOK", "nn": "NOK", "no": "NOK", "is": "ISK", "pl": "PLN",
    "cs": "CZK", "hu": "HUF", "ro": "RON", "bg": "BGN", "ko": "KRW", "th": "THB", "vi": "VND", "he": "ILS",
    "tr": "TRY", "uk": "UAH", "fr": "EUR", "de": "EUR", "it": "EUR", "nl": "EUR", "fi": "EUR", "el": "EUR",
    "sk": "EUR", "sl": "EUR", "et": "EUR", "lv": "EUR", "lt": "EUR", "mt": "EUR", "es": "EUR", "pt": "EUR",
}
_STATED = re.compile(r"""pricecurrency["']?\s*(?::\s*["']|content\s*=\s*["'])\s*([a-z]{3})\b""")  # on lower-cased source
_MAX_SCAN = 2_000_000


def _region(tag: Optional[str]) -> tuple[str, Optional[str]]:
    """'es-CL' / 'es_CL' -> ('es', 'cl'); 'zh-Hant-TW' -> ('zh', 'tw'); 'sv' -> ('sv', None)."""
    parts = [x.lower() for x in re.split(r"[-_]", (tag or "").strip()) if x]
    if not parts:
        return "", None
    region = next((x for x in parts[1:] if len(x) == 2 and x.isalpha()), None)
    return parts[0], region


def _tld(url: Optional[str]) -> Optional[str]:
    host = urlsplit(url).hostname if url else None
    return host.rsplit(".", 1)[-1].lower() if host and "." in host else None


def page_urls(p: Page, url: Optional[str]) -> list[str]:
    """The page's own address: the URL it was fetched from, then its canonical link and og:url."""
    out = [url] if url else []
    for link in p.root.iter("link"):
        if (link.get("rel") or "").lower() == "canonical" and link.get("href"):
            out.append(link.get("href"))
    og = p.meta("og:url")
    return out + ([og] if og else [])


def currency_signals(p: Page, url: Optional[str]) -> list[tuple[str, str]]:
    """What the page says about its currency, strongest first, as (where, ISO code): a priceCurrency stated in its
    structured data, the country of its domain, the region of og:locale, of <html lang>, then the language alone."""
    memo = p.memo.get("currency-signals")
    if memo is not None:
        return memo
    out: list[tuple[str, str]] = []
    for m in _STATED.finditer(p.source[:_MAX_SCAN].lower()):
        out.append(("priceCurrency", m.group(1).upper()))
    for u in page_urls(p, url):
        cc = COUNTRY_CURRENCY.get(_tld(u) or "")
        if cc:
            out.append((f"domain .{_tld(u)}", cc))
    langs = [("og:locale", p.meta("og:locale")), ("html lang", p.root.get("lang"))]
    for where, tag in langs:
        _, region = _region(tag)
        if region and region in COUNTRY_CURRENCY:
            out.append((f"{where} {tag}", COUNTRY_CURRENCY[region]))
    for where, tag in langs:
        lang, _ = _region(tag)
        if lang in _LANGUAGE_CURRENCY:
            out.append((f"{where} {tag}", _LANGUAGE_CURRENCY[lang]))
    p.memo["currency-signals"] = out
    return out


def decide_currency(p: Page, url: Optional[str], options: tuple[str, ...]) -> Optional[str]:
    """Which of `options` (the currencies a shared sign can mean) the page means, or None when nothing says."""
    for _where, code in currency_signals(p, url):
        if code in options:
            return code
    return None


def guess_currency(p: Page, url: Optional[str]) -> str:
    """A price with no currency sign at all: a currency the page states elsewhere, its domain's country, its
    locale or language; else .com -> USD, else EUR (a guess, as before; a shared sign goes through decide_currency)."""
    signals = currency_signals(p, url)
    if signals:
        return signals[0][1]
    return "USD" if any(_tld(u) == "com" for u in page_urls(p, url)) else "EUR"


def offer_currency(p: Page, url: Optional[str], stated: Optional[str], texts: Sequence[str], shop: Optional[str],
                   around: Optional[int] = None) -> tuple[str, tuple[str, ...]]:
    """The currency of one offer as (ISO code, ()), or (AMBIGUOUS, the currencies it could be) when its sign is shared
    ('$', '元'...) and nothing on the page decides. In order: the structured data's stated currency, the price texts
    (`texts`: the raw price, then its showing on the page with the words after it), the shop's currency, the
    first sign in the buy box (text around offset `around`), then the page's context (guess_currency)."""
    c = _stated_iso(stated) or _valid_currency(stated)
    if c:
        return c, ()
    texts = [t for t in texts if t]
    for i, text in enumerate(texts):
        longer = next((t for t in texts[i + 1:] if t.startswith(text)), None)
        if longer and shared_sign_currencies(text) and not shared_sign_currencies(longer):
            text = longer  # "$24.99" then "USD" right after it on the page
        found = _shown(p, url, shop, text)
        if found:
            return found
    if _valid_currency(shop):
        return str(shop), ()
    if around is not None:
        found = _shown(p, url, None, p.text[max(0, around - 300):around + 1500])
        if found:
            return found
    return guess_currency(p, url), ()


def _shown(p: Page, url: Optional[str], shop: Optional[str], text: str) -> Optional[tuple[str, tuple[str, ...]]]:
    """The currency a text shows: a shared sign decided by context, or a named code; None when it shows neither."""
    options = shared_sign_currencies(text)
    if options:
        return _decide(p, url, shop, options)
    c = _named_iso(text)
    return (c, ()) if c else None


def _decide(p: Page, url: Optional[str], shop: Optional[str], options: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    if shop in options:
        return str(shop), ()
    c = decide_currency(p, url, options)
    return (c, ()) if c else (AMBIGUOUS, options)


def _valid_currency(code: Optional[str]) -> Optional[str]:
    """A currency planner can convert, from a code or a sign ('EUR', '€'), else None."""
    if not code:
        return None
    code = code.strip()
    iso = currency_from_text(code) if len(code) != 3 else code
    try:
        return check_currency(iso) if iso else None
    except CurrencyError:
        return None


def _named_iso(text: str) -> Optional[str]:
    """The ISO 4217 currency a price text names by code or sign, kept even when planner cannot convert it."""
    c = currency_from_text(text)
    return c if c in ISO_4217 else None


def _stated_iso(code: Optional[str]) -> Optional[str]:
    """A currency the structured data states as an ISO 4217 code, kept even when planner cannot convert it
    (a CLP or PKR price must not become USD or EUR; the store's currency check and range check handle it)."""
    c = (code or "").strip().upper()
    return c if c in ISO_4217 else None
