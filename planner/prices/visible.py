"""Visible-text route: find the main product's title, its price in the buy box, and the buy-box text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Optional, Sequence

from lxml import etree

from planner.prices.css import select
from planner.prices.page import Page, classes_of
from planner.prices.parse_price import ParsedPrice, parse_price
from planner.prices.sanity import INCL_VAT_AFTER, INCL_VAT_BEFORE, context_problem, ex_vat_label, label_problem

# Currency signs and codes a price is written with (world-wide, not per shop).
_ISO_CODES = ("EUR USD GBP CHF CAD AUD JPY PLN SEK NOK DKK CZK HUF RON RUB UAH KZT TWD KRW SAR AED INR BRL MXN ARS CLP "
              "COP TRY ZAR SGD HKD NZD ILS THB MYR IDR PHP VND HRK BGN CNY PKR PEN").split()


def _by_first_letter(codes: list[str]) -> str:
    """'(?:A(?:ED|RS|UD)|B(?:GN|RL)|...)': the same alternation, but a regex that fails on the first letter fast."""
    groups: dict[str, list[str]] = {}
    for c in sorted(codes):
        groups.setdefault(c[0], []).append(c[1:])
    return "(?:" + "|".join(f"{k}(?:{'|'.join(v)})" for k, v in groups.items()) + ")"


_CODES = _by_first_letter(_ISO_CODES)
# Local currency words: whole words only ("270,00 Kn", "49,99 lei", "1 299 kr", "Rs. 4,999", "12 990 Ft").
_WORDS = r"(?<!\w)(?:kn|lei|kr\.?|Rs\.?|Ft)(?!\w)"
_CUR = (r"(?:US\$|CA\$|C\$|AU\$|A\$|NT\$|R\$|\$|€|£|¥|₹|₩|₽|₴|₸|₺|₪|₫|฿|₱|元|円|원|zł|Kč|руб\.?|грн\.?|тг\.?|"
        rf"лв\.?|ر\.س|د\.إ|{_WORDS}|{_CODES}\b)")
_INT = r"(?:\d{1,3}(?:[ \u00a0\u202f.,']\d{3})+|\d+)"
# Not the mantissa or the exponent of exponent notation: "1e300 €" is no price, and never 300 or 1.
_NOT_EXPONENT_BEFORE = r"(?<!\d[eE])(?<!\d[eE][+-])"
_NUM = rf"{_NOT_EXPONENT_BEFORE}{_INT}(?:[.,]\d{{1,2}}(?!\d))?(?!\d|[.,]\d|[eE][+-]?\d)"
# An upper-case ISO code glued to the amount is a price too: "EUR219.99", "219.99EUR", "PLN1 299,00".
_GLUED_BEFORE = rf"(?<![A-Za-z])(?-i:{_CODES})(?=\d)"
_GLUED_AFTER = rf"(?-i:{_CODES})(?![A-Za-z])"
PRICE_RE = re.compile(
    rf"(?:{_CUR}|{_GLUED_BEFORE})\s?{_NUM}|(?<![\d.,]){_INT}\s?€\s?\d{{2}}(?!\d)|"  # "1 199€95": € as the decimal mark
    rf"(?<![\d.,]){_NUM}\s?(?:{_CUR}|{_GLUED_AFTER}|\$)", re.I
)
MAX_SPOTS = 2000  # prices read from one page's visible text, in page order; the rest is ignored
_PRICE_WORD = re.compile(r"pric|prix|preis|precio|prezzo|tarif|amount|cost", re.I)
_DIGIT = re.compile(r"\d")
_BARE_NUM = re.compile(rf"^\s*{_NUM}\s*$")

# Whole regions that never hold the main product's price (matched at the start of a class/id token part).
_SECTION = re.compile(
    r"(?:^|[-_\s])(?:(?P<scroll>carousel|slider|swiper|owl|slick|glide|splide)|related|similar|recommend|cross-?sell|upsell|also|accessor|sponsor|comparison|"
    r"recent|history|suggest|(?<!product[-_])(?<!ductos[-_])(?<!card[-_])(?<!item[-_])footer|newsletter|review|comment|question|faq|mini-?cart|header-?cart|"
    r"cart-?preview|navbar|mega-?menu|breadcrumb|compare|p13n|sims|rhf|frequently|fbt|complementary|"
    r"alternative|other-?sellers?|sellers|aod|upgrade|addon|add-ons|bought|viewed)",
    re.I,
)
# (group "scroll": a region that scrolls holds other products' cards, or the product's own gallery / buy box:
# it counts only when it shows several product cards, see holds_cards)
_NOT_A_PAGE = ("#", "javascript:", "mailto:", "tel:")
_IMAGE = re.compile(r"\.(?:jpe?g|png|gif|webp|avif|svg)(?:\?|$)", re.I)
_SECTION_TAGS = frozenset({"footer", "nav"})
# A price element that is not the price you pay now.
# (keywords must start a word part of the class/id: "old-price", "priceOld", not "bold" or "holder")
_NOT_NOW = re.compile(
    r"(?:^|[-_\s])(?:old|was|strike|through|list-?price|before|msrp|rrp|crossed|compare|former|original|"
    r"previous|saving|save|discount|reduc|economy|vat-?off|tax-?excl|excl|ht(?=$|[-_\s])|ex-?vat|"
    r"without-?tax|shipping|delivery|livraison|month|mois|financ|install|credit|reward|points|unit-?price|"
    r"per-?unit|eco-?tax|eco-?part|deposit|basis|typical|range|from)",
    re.I,
)
# The _NOT_NOW words that mean "superseded by another price shown beside it" rather than "another kind of amount":
# a lone price under such a class (OpenCart's "price-old-live" with no "price-new") is the price.
_SUPERSEDED = re.compile(r"(?:^|[-_\s])(?:old|was|before|original|former|previous|list-?price|msrp|rrp|compare)\w*",
                         re.I)
_NEIGHBOUR_CHARS = 300  # how near another price must be to count as the one that supersedes it
_NOW = re.compile(
    r"(?:^|[-_\s])(?:current|now|sale|final|our|selling|actual|main|primary|special|deal|buy-?box|pdp|"
    r"product-?price|offer|big|large|promo|ttc|with-?tax|vat-?on|to-?pay)",
    re.I,
)
_BEFORE_BAD = re.compile(
    r"(?:\bwas|list price|regular price|reg\.?|msrp|rrp|\bbefore|\bavant|au lieu de|prix conseillé|"
    r"prix de référence|instead of|\bstatt|\buvp|you save|\bsave|économisez|économie|de remise|compare at|"
    r"\bfrom|à partir de|\bdès|starting at|typical price|\bor|\bou|\d+\s?x|cashback|reward|\+|up to|jusqu'à|bis zu|over|above|au-delà de|"
    r"\bmin(?:imum)?|\bfrais de port|\bshipping)\W{0,3}$",
    re.I,
)
_AFTER_BAD = re.compile(
    r"^\W{0,2}(?:/ ?mo\b|/ ?month|per month|a month|/ ?mois|"
    r"par mois|/mo|x \d|shipping|livraison|de remise|d'économie|off\b|rebate|cashback|reward|points|"
    r"/ ?unit|per unit|en moins|économisés|saved|savings)",
    re.I,
)
_BEFORE_GOOD = re.compile(
    r"(?:\bnow|our price|\bprice|\bprix|\bsale|your price|\btoday|\bpreis|\bprecio|\bprezzo|"
    r"\bpay|\bpaiement)\W{0,3}$",
    re.I,
)
# ex-VAT words are one table in sanity.py (a spot they label is not payable); incl.-VAT words add to a score


@dataclass(frozen=True)
class PriceSpot:
    """One price seen on the page, with where it is and how likely it is the main price."""

    parsed: ParsedPrice
    offset: int
    element: etree._Element
    score: float
    text: str


def find_anchor(page: Page, names: Sequence[str] = ()) -> Optional[etree._Element]:
    """The main product title: the first h1 outside nav/header chrome, else an element holding a known name."""
    for h in page.root.iter("h1"):
        if h in page.spans and len(page.text_of(h)) >= 3 and not _chrome(h):
            return h
    for name in names:
        key = _norm(name)[:40]
        if len(key) < 8:
            continue
        for el in page.order:
            if el.tag in ("title", "meta", "html", "body"):
                continue
            t = page.text_of(el)
            if len(t) < 200 and key in _norm(t):
                return el
    return None


def _chrome(h: etree._Element) -> bool:
    """A heading that belongs to the site chrome (logo, navigation, footer, dialogs)."""
    if "logo" in classes_of(h):
        return True
    for a in _ancestors(h, 40):
        if a.tag in ("nav", "footer") or (a.get("role") or "") in ("banner", "navigation", "dialog"):
            return True
    return False


def _norm(s: str) -> str:
    return " ".join(re.sub(r"[^\w]+", " ", s.lower()).split())


def _ancestors(el: etree._Element, limit: int) -> list[etree._Element]:
    out: list[etree._Element] = []
    p = el.getparent()
    while p is not None and len(out) < limit:
        out.append(p)
        p = p.getparent()
    return out


def _section_hit(page: Page, a: etree._Element) -> bool:
    if a.tag in _SECTION_TAGS:
        return True
    scrolls = False
    for m in _SECTION.finditer(classes_of(a)):
        if not m.group("scroll"):
            return True
        scrolls = True
    return scrolls and holds_cards(page, a)


def holds_cards(page: Page, region: etree._Element) -> bool:
    """Does a region show other products' cards: a price and links to at least two other pages (images, '#' and
    scripts do not count)? A one-card carousel counts (a product link and its reviews link); a box holding only the
    product's own prices, or a gallery of image links, does not."""
    key = ("cards", region)
    if key not in page.memo:
        span = page.spans.get(region)
        priced = span is not None and PRICE_RE.search(page.text, span[0], min(span[1], span[0] + 20000)) is not None
        links = set()
        if priced:
            for a in region.iter("a"):
                href = (a.get("href") or "").strip().split("#")[0]
                if href and not href.lower().startswith(_NOT_A_PAGE) and not _IMAGE.search(href):
                    links.add(href)
                if len(links) >= 2:
                    break
        page.memo[key] = len(links) >= 2
    return page.memo[key]


def in_section(page: Page, el: etree._Element, anchor: Optional[etree._Element], limit: int = 60) -> bool:
    """Is el inside a cross-sell/navigation region? Containers that also hold the title do not count."""
    span = page.spans.get(anchor) if anchor is not None else None
    for a in [el, *_ancestors(el, limit if span else 8)]:
        if span is not None and a is not el:
            s = page.spans.get(a)
            if s is not None and s[0] <= span[0] and span[1] <= s[1]:
                return False  # reached a container of the whole product
        if _section_hit(page, a):
            return True
    return False


# How far from the title (in characters of page text) a price still reads as the buy box's: a little before it (a
# price above the title), more after it (the buy box below it).
_BEFORE_TITLE, _AFTER_TITLE = 1500, 6000


def by_this_title(page: Page, spot: "PriceSpot", anchor: etree._Element, title_offset: int) -> bool:
    """A showing the buy box could hold: near the title and outside a cross-sell or navigation region."""
    return (-_BEFORE_TITLE <= spot.offset - title_offset <= _AFTER_TITLE
            and not in_section(page, spot.element, anchor))


def on_other_card(page: Page, spot: "PriceSpot", anchor: Optional[etree._Element]) -> bool:
    """Does this showing belong to other products: a cross-sell/navigation region, or after a "Similar products"
    heading?"""
    if in_section(page, spot.element, anchor):
        return True
    others = others_from(page, anchor)
    return others is not None and spot.offset > others


def price_spots(page: Page, decimal_separator: Optional[str], currency_hint: Optional[str]) -> list[PriceSpot]:
    """Every short visible price a buyer could pay, innermost element kept, unscored (score 0)."""
    return [s for s, problem in _all_spots(page, decimal_separator, currency_hint) if problem is None]


def unpaid_reason(page: Page, amount: Decimal, decimal_separator: Optional[str], currency_hint: Optional[str],
                  anchor: Optional[etree._Element] = None) -> Optional[str]:
    """When the page shows `amount` only in unpaid contexts (ex-VAT, instalment, struck, 'from', a bid), why; else
    None (also None when the page does not show it at all). Other products' cards do not count: a related lot
    that happens to cost the same says nothing of this product's price."""
    problems = [problem for s, problem in _all_spots(page, decimal_separator, currency_hint)
                if s.parsed.amount == amount and not (anchor is not None and on_other_card(page, s, anchor))]
    return problems[0] if problems and all(problems) else None


def nearest_unpaid(page: Page, anchor: Optional[etree._Element], decimal_separator: Optional[str],
                   currency_hint: Optional[str]) -> Optional[str]:
    """Why the price shown nearest the title is not paid (a bid, a 'from' price...), for a page that gives none."""
    if anchor is None:
        return None
    a0 = page.spans[anchor][0]
    near = [(abs(s.offset - a0), problem) for s, problem in _all_spots(page, decimal_separator, currency_hint)
            if problem and by_this_title(page, s, anchor, a0)]
    return min(near)[1] if near else None


_PERCENT_OFF = re.compile(r"(?<![\w.,])[-−–]?\s?(\d{1,2}(?:[.,]\d)?)\s?%")


def discounted_spot(page: Page, amount: Decimal, anchor: Optional[etree._Element],
                    decimal_separator: Optional[str], currency_hint: Optional[str]) -> Optional[PriceSpot]:
    """The price paid now when the page shows `amount` (a structured price) in the buy box as the price before
    a stated discount: "219.99 -50% 110.00" -> 110.00. The lower price must equal amount less that percentage
    (to the displayed percentage's rounding), so a percentage that is not this discount cannot match. Only the
    showing of `amount` nearest the title is read: a related product's card may show the same amount discounted."""
    if anchor is None or amount <= 0:
        return None
    a0 = page.spans[anchor][0]
    payable = [s for s in price_spots(page, decimal_separator, currency_hint)
               if s.parsed.amount < amount and not in_section(page, s.element, anchor)]
    shown = [s for s, _problem in _all_spots(page, decimal_separator, currency_hint)
             if s.parsed.amount == amount and by_this_title(page, s, anchor, a0)]
    for s in sorted(shown, key=lambda x: abs(x.offset - a0))[:1]:  # the buy box's showing, not a card's
        lo, hi = max(0, s.offset - 150), s.offset + len(s.text) + 150
        for m in _PERCENT_OFF.finditer(page.text[lo:hi]):
            pct = Decimal(m.group(1).replace(",", "."))
            want, tol = amount * (100 - pct) / 100, amount * Decimal("0.005") + Decimal("0.01")
            near = [q for q in payable if abs(q.offset - s.offset) <= 200 and abs(q.parsed.amount - want) <= tol]
            if pct > 0 and near:
                return min(near, key=lambda q: abs(q.offset - s.offset))
    return None


def marked_not_now(page: Page, spot: PriceSpot) -> bool:
    """Is this showing marked up as a price not paid now (struck, line-through, an 'old'/'was' class)?"""
    near = [spot.element, *_ancestors(spot.element, 3)]
    if any(a.tag in ("del", "s", "strike") or "line-through" in (a.get("style") or "") for a in near):
        return True
    return any(_NOT_NOW.search(classes_of(a)) for a in near)


def paid_of_several(page: Page, text: str, decimal_separator: Optional[str], currency_hint: Optional[str]
                    ) -> Optional[ParsedPrice]:
    """The amount paid when one price value holds several ("71,91 € 79,90 €": sale and old price): drop those
    its own words mark unpaid (ex-VAT, struck, 'from'...), then those the page shows only as struck or 'old';
    None unless exactly one amount is left (or when the text holds fewer than two amounts)."""
    read = [(m, parse_price(m.group(0), decimal_separator, currency_hint)) for m in PRICE_RE.finditer(text[:400])]
    found = [(m, pp) for m, pp in read if pp is not None]
    if len({pp.amount for _, pp in found}) < 2:
        return None
    left = {pp.amount: pp for m, pp in found if context_problem(text[:m.start()], text[m.end():]) is None}
    if len(left) > 1:
        spots = _all_spots(page, decimal_separator, currency_hint)
        shown_paid = {s.parsed.amount for s, problem in spots if problem is None and not marked_not_now(page, s)}
        left = {a: pp for a, pp in left.items() if a in shown_paid}
    return next(iter(left.values())) if len(left) == 1 else None


def _all_spots(page: Page, decimal_separator: Optional[str], currency_hint: Optional[str]
               ) -> list[tuple[PriceSpot, Optional[str]]]:
    """Every visible price with why it is not payable (or None); computed once per page and shop format."""
    key = (decimal_separator, currency_hint)
    cached = page.memo.get(("spots", key))
    if cached is None:
        cached = page.memo[("spots", key)] = _scan_spots(page, decimal_separator, currency_hint)
    return cached


def _scan_spots(page: Page, decimal_separator: Optional[str], currency_hint: Optional[str]
                ) -> list[tuple[PriceSpot, Optional[str]]]:
    text = page.text
    found: dict[int, tuple[etree._Element, str]] = {}
    for el in page.order:
        start, end = page.spans[el]
        if end - start > 160 or end <= start:
            continue
        chunk = text[start:end]
        digit = _DIGIT.search(chunk)
        if digit is None:
            continue
        matched = False
        for m in PRICE_RE.finditer(chunk):
            found[start + m.start()] = (el, m.group(0))
            matched = True
        if len(found) >= MAX_SPOTS:
            break  # a real product page shows a few hundred prices at most (225 on the benchmark's busiest)
        if not matched and "price" in classes_of(el) + (el.get("itemprop") or "") and _BARE_NUM.match(chunk):
            found[start + digit.start()] = (el, chunk.strip())
    spots = []
    for offset, (el, raw) in sorted(found.items()):
        parsed = parse_price(raw, decimal_separator, currency_hint)
        if parsed is None or parsed.amount < 1:
            continue
        spots.append((PriceSpot(parsed, offset, el, 0.0, raw), spot_problem(page, offset, raw)))
    return spots


def spot_problem(page: Page, offset: int, raw: str) -> Optional[str]:
    """Why the price shown at `offset` is not what a buyer pays (ex-VAT, instalment, struck, 'from'), or None."""
    lines = page.text[max(0, offset - 120):offset].split("\n")
    end = offset + len(raw)
    after = page.text[end:end + 40].split("\n")[0]
    problem = context_problem(lines[-1], after)
    if problem is None and not lines[-1].strip():  # the amount opens its line: a label element may precede it
        problem = label_problem(next((line for line in reversed(lines[:-1]) if line.strip()), "") + " ")
    return problem


def _superseded_by_nothing(spot: PriceSpot, cls: str, payable: Sequence[PriceSpot]) -> bool:
    """Does only a 'superseded' class word ('old', 'was'...) mark this price while no other payable price stands
    beside it? Then nothing supersedes it: the class is the theme's name for its one price."""
    if _NOT_NOW.search(_SUPERSEDED.sub(" ", cls)):
        return False
    return not any(abs(o.offset - spot.offset) <= _NEIGHBOUR_CHARS and o.parsed.amount != spot.parsed.amount
                   for o in payable)


# Headings that open a block of other products, by language (the block's classes may say nothing: "Podobni izdelki").
_OTHERS_HEADING = re.compile(
    r"^\W*(?:similar|related|recommended|other|more)\s+(?:products|items|articles)|you (?:may|might) (?:also )?like|"
    r"customers (?:who|also)|frequently bought|people also|produits? (?:similaires|associés|recommandés)|"
    r"vous aimerez aussi|vous aimerez peut-être|les clients ont aussi|ähnliche (?:produkte|artikel)|"
    r"das könnte (?:dir|ihnen) auch gefallen|kunden kauften auch|passende artikel|productos (?:similares|relacionados)|"
    r"también te puede interesar|prodotti (?:simili|correlati)|potrebbe interessarti|vergelijkbare (?:producten|artikelen)|"
    r"gerelateerde producten|produtos (?:semelhantes|relacionados)|podobn[ie] (?:izdelki|produkty|výrobky)|"
    r"podobné produkty|powiązane produkty|liknande produkter|lignende produkter|samankaltaiset tuotteet|"
    r"hasonló termékek|produse similare|похожие товары|benzer ürünler|関連商品|相關商品|相关商品|猜你喜欢|"
    r"מוצרים דומים|לקוחות שרכשו",
    re.I,
)
_HEADING_TAGS = frozenset({"h2", "h3", "h4", "h5", "h6"})


def others_from(page: Page, anchor: Optional[etree._Element]) -> Optional[int]:
    """Offset of the first heading after the title that opens a block of other products ("Similar products"),
    or None: prices after it belong to other products' cards."""
    if anchor is None or anchor not in page.spans:
        return None
    key = ("others_from", id(anchor))
    if key not in page.memo:
        a_end = page.spans[anchor][1]
        page.memo[key] = next(
            (page.spans[el][0] for el in page.order
             if el.tag in _HEADING_TAGS and page.spans[el][0] >= a_end
             and len(page.text_of(el)) <= 80 and _OTHERS_HEADING.search(page.text_of(el))), None)
    return page.memo[key]


def score_spot(page: Page, spot: PriceSpot, anchor: Optional[etree._Element],
               payable: Sequence[PriceSpot] = ()) -> float:
    el = spot.element
    anchor_offset = page.spans[anchor][0] if anchor is not None else None
    score = 0.0
    near = [el, *_ancestors(el, 3)]
    cls = " ".join(classes_of(a) + " " + (a.get("itemprop") or "") + " " + (a.get("data-testid") or "")
                   for a in near)
    if on_other_card(page, spot, anchor):
        score -= 6
    if any(a.tag in ("del", "s", "strike") for a in near):
        score -= 6
    if any("line-through" in (a.get("style") or "") or a.get("data-a-strike") == "true" for a in near):
        score -= 6
    if _NOT_NOW.search(cls) and not _superseded_by_nothing(spot, cls, payable):
        score -= 4
    if _PRICE_WORD.search(cls):
        score += 2
    if _NOW.search(cls):
        score += 1
    before = page.text[max(0, spot.offset - 40):spot.offset].split("\n")[-1]
    after_start = spot.offset + len(spot.text)
    after = page.text[after_start:after_start + 30].split("\n")[0] or page.text[after_start:after_start + 30].strip()
    if _BEFORE_BAD.search(before):
        score -= 3
    elif _BEFORE_GOOD.search(before) or INCL_VAT_BEFORE.search(before):
        score += 1
    if _AFTER_BAD.search(after) or ex_vat_label("", after):  # also a label on the next line ("32,79 €\nHT")
        score -= 3
    elif INCL_VAT_AFTER.search(after):
        score += 1
    if anchor_offset is not None:
        d = spot.offset - anchor_offset
        if d < -_BEFORE_TITLE:
            score -= 3
        elif d < 0:
            score += 2.0 * (1 + d / _BEFORE_TITLE) - 1
        elif d <= _AFTER_TITLE:
            score += 3.0 * (1 - d / _AFTER_TITLE)
    return score


def main_price(
    page: Page,
    anchor: Optional[etree._Element],
    decimal_separator: Optional[str] = None,
    currency_hint: Optional[str] = None,
    selectors: Sequence[str] = (),
) -> tuple[Optional[PriceSpot], str]:
    """The buy-box price and the route that found it: retailer selectors first ("selector"), else text."""
    for css in selectors:
        for el in _select(page, css):
            t = page.text_of(el) or " ".join("".join(el.itertext()).split())
            m = PRICE_RE.search(t)
            parsed = parse_price(m.group(0) if m else t, decimal_separator, currency_hint)
            if m and context_problem(t[:m.start()], t[m.end():]):
                continue
            if parsed is not None:
                return PriceSpot(parsed, page.spans.get(el, (0, 0))[0], el, 99.0, t), "selector"
    anchor_offset = page.spans[anchor][0] if anchor is not None else None
    payable = price_spots(page, decimal_separator, currency_hint)
    spots = [PriceSpot(s.parsed, s.offset, s.element, score_spot(page, s, anchor, payable), s.text) for s in payable]
    if not spots:
        return None, "text"
    best = max(spots, key=lambda s: (s.score, -abs(s.offset - (anchor_offset or 0))))
    if best.score < 0.5:
        return None, "text"
    return best, "text"


def _select(page: Page, css: str) -> list[etree._Element]:
    return [el for el in select(page.root, css) if el in page.spans]
