"""Is this a price a consumer pays? Hard bounds, words around a price (ex-VAT, instalment, struck, 'from', shipping), category ranges."""

from __future__ import annotations

import functools
import re
from datetime import date
from decimal import Decimal
from typing import TYPE_CHECKING, Optional

from planner.errors import PlannerError

if TYPE_CHECKING:
    from planner.fx import Rates

# Any amount outside this range is a misreading (1e300, 1e32, 0.000001), in any currency we price in.
MIN_AMOUNT = Decimal("0.01")
MAX_AMOUNT = Decimal("10000000")

# Sane EUR ranges per catalog category, new or used. ESTIMATES (2026-12, from the catalog's own price spread
# and French retail listings): a price outside is a misreading (a cable listed as a GPU, a bundle, cents).
CATEGORY_RANGE_EUR: dict[str, tuple[Decimal, Decimal]] = {
    "gpu": (Decimal(40), Decimal(40000)),
    "cpu": (Decimal(20), Decimal(20000)),
    "motherboard": (Decimal(30), Decimal(3000)),
    "memory": (Decimal(8), Decimal(15000)),
    "storage": (Decimal(10), Decimal(10000)),
    "psu": (Decimal(15), Decimal(2000)),
    "case": (Decimal(15), Decimal(2000)),
    "cooler": (Decimal(5), Decimal(1000)),
}

# How shops say that an amount is without VAT ("ex") or with it ("incl"), per language (ISO 639-1), with the
# label before or after the amount. Public facts: each country's name for VAT and the usual shop phrasing
# (DDV sl, PDV hr/sr/bs, DPH cs/sk, PVN lv, PVM lt, km et, ALV fi, ÁFA hu, TVA fr/ro, ДДС bg, ДДВ mk, ΦΠΑ el,
# moms sv/da, mva no, vsk is, btw nl, MwSt/USt de, IVA es/it/pt/ca, KDV tr, НДС ru, ПДВ uk, GST en-AU/NZ/IN/CA).
# CH and UK shops use the de/fr/it and en rows (LI: de); most lb and ga shops write French/German and English.
VAT_PHRASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "en": (("excl. VAT", "excluding VAT", "exclusive of VAT", "ex VAT", "ex. VAT", "+ VAT", "plus VAT", "before VAT",
            "VAT excluded", "excl. tax", "excluding tax", "before tax", "pre-tax", "ex GST", "excl. GST", "+ GST",
            "plus tax", "net"),
           ("incl. VAT", "including VAT", "inc. VAT", "inclusive of VAT", "VAT included", "incl. tax", "tax included",
            "incl. GST", "inc. GST", "including GST")),
    "fr": (("HT", "H.T.", "hors taxes", "hors TVA", "prix HT", "sans TVA", "TVA non comprise", "TVA en sus", "+ TVA"),
           ("TTC", "T.T.C.", "toutes taxes comprises", "TVA incluse", "TVA comprise", "TVAC")),
    "de": (("zzgl. MwSt", "zzgl. USt", "exkl. MwSt", "exkl. USt", "ohne MwSt", "ohne USt", "+ MwSt", "netto",
            "Nettopreis"),
           ("inkl. MwSt", "inkl. USt", "MwSt. inbegriffen", "brutto", "Bruttopreis")),
    "nl": (("excl. btw", "exclusief btw", "ex. btw", "zonder btw"), ("incl. btw", "inclusief btw", "btw inbegrepen")),
    "it": (("IVA esclusa", "escl. IVA", "esclusa IVA", "senza IVA", "+ IVA", "più IVA"),
           ("IVA inclusa", "incl. IVA", "IVA compresa", "inclusa IVA", "IVA incl.")),
    "es": (("sin IVA", "IVA no incluido", "IVA excluido", "más IVA", "+ IVA", "excl. IVA"),
           ("IVA incluido", "IVA incl.", "con IVA", "incl. IVA", "impuestos incluidos")),
    "ca": (("sense IVA", "IVA no inclòs"), ("IVA inclòs", "amb IVA")),
    "pt": (("sem IVA", "IVA não incluído", "s/ IVA", "+ IVA"), ("com IVA", "IVA incluído", "c/ IVA", "IVA incl.")),
    "sv": (("exkl. moms", "exklusive moms", "ex. moms", "utan moms"), ("inkl. moms", "inklusive moms", "med moms")),
    "da": (("ekskl. moms", "eksklusive moms", "ex. moms", "uden moms"), ("inkl. moms", "inklusive moms", "med moms")),
    "no": (("eks. mva", "ekskl. mva", "eksklusiv mva", "uten mva"), ("inkl. mva", "inklusiv mva", "med mva")),
    "is": (("án vsk",), ("með vsk",)),
    "fi": (("ALV 0 %", "veroton", "ilman ALV"), ("sis. ALV", "sisältää ALV", "verollinen")),
    "et": (("km-ta", "käibemaksuta"), ("km-ga", "käibemaksuga", "sisaldab käibemaksu")),
    "lv": (("bez PVN",), ("ar PVN", "ieskaitot PVN")),
    "lt": (("be PVM",), ("su PVM",)),
    "pl": (("netto", "bez VAT", "cena netto"), ("brutto", "z VAT", "cena brutto")),
    "cs": (("bez DPH",), ("s DPH", "vč. DPH", "včetně DPH")),
    "sk": (("bez DPH",), ("s DPH", "vrátane DPH", "vr. DPH")),
    "sl": (("brez DDV",), ("z DDV", "DDV vključen", "z vključenim DDV")),
    "hr": (("bez PDV-a", "bez PDV"), ("s PDV-om", "sa PDV-om", "PDV uključen", "uključujući PDV")),
    "sr": (("без ПДВ-а", "без ПДВ"), ("са ПДВ-ом", "са ПДВ")),
    "mk": (("без ДДВ",), ("со ДДВ", "со вклучен ДДВ")),
    "hu": (("ÁFA nélkül", "+ ÁFA", "nettó"), ("ÁFA-val", "áfával", "bruttó")),
    "ro": (("fără TVA", "fara TVA", "+ TVA", "exclusiv TVA"), ("cu TVA", "TVA inclus", "inclusiv TVA")),
    "bg": (("без ДДС",), ("с ДДС", "с включен ДДС")),
    "el": (("χωρίς ΦΠΑ", "προ ΦΠΑ", "πλέον ΦΠΑ"), ("με ΦΠΑ", "συμπ. ΦΠΑ", "συμπεριλαμβανομένου ΦΠΑ")),
    "mt": (("eskluż il-VAT",), ("inkluż il-VAT",)),
    "ga": (("gan CBL",), ("CBL san áireamh", "le CBL")),
    "lb": (("ouni TVA",), ("mat TVA",)),
    "tr": (("KDV hariç", "+ KDV"), ("KDV dahil",)),
    "ru": (("без НДС",), ("с НДС", "включая НДС", "в т.ч. НДС")),
    "uk": (("без ПДВ",), ("з ПДВ", "включно з ПДВ")),
    "ja": (("税抜", "税別"), ("税込",)),
    "zh": (("未税", "不含税", "未稅", "不含稅"), ("含税", "含稅")),
    "ko": (("VAT 별도", "부가세 별도"), ("VAT 포함", "부가세 포함")),
    "he": (('לא כולל מע"מ', 'ללא מע"מ'), ('כולל מע"מ',)),
    "ar": (("غير شامل الضريبة", "بدون ضريبة"), ("شامل الضريبة", "شامل ضريبة القيمة المضافة")),
}
_TAX = r"(?:vat|tva|mwst\.?|ust\.?|iva|btw|tax(?:es)?|taxe?s?|gst)"
# Combinations the table does not spell out ("excl. MwSt", "hors taxe", "VAT excl", "sans taxes").
_EX_GENERIC = (rf"(?:excl?\.?|excluding|exclusive of|ex\.?|hors|ohne|sin|sans|senza|zzgl\.?|plus|before)\s*{_TAX}"
               rf"|{_TAX}\s*(?:excl?\.?|excluded|exclusive)|excl?\b\.?|netto-?preis")
_INCL_GENERIC = rf"(?:incl?\.?|inkl\.?|including|inclusive of)\s*{_TAX}|{_TAX}\s*(?:incl?\.?|included)|incl\b|inkl\b"


def _phrase(p: str) -> str:
    """One table phrase as a regex: spaces flexible, abbreviation dots optional, whole words (except CJK)."""
    body = re.escape(p).replace(r"\ ", r"\s*").replace(r"\.", r"\.?")
    head = "" if ord(p[0]) >= 0x3000 or not p[0].isalnum() else r"(?<!\w)"
    tail = "" if ord(p[-1]) >= 0x3000 or not p[-1].isalnum() else r"(?!\w)"
    return head + body + tail


def _alternation(phrases: list[str], generic: str) -> str:
    return "(?:" + "|".join([_phrase(x) for x in sorted(set(phrases), key=len, reverse=True)] + [generic]) + ")"


EX_VAT = _alternation([x for ex, _ in VAT_PHRASES.values() for x in ex], rf"(?<!\w)(?:{_EX_GENERIC})")
INCL_VAT = _alternation([x for _, inc in VAT_PHRASES.values() for x in inc], rf"(?<!\w)(?:{_INCL_GENERIC})")
_EX_VAT_BEFORE = re.compile(rf"{EX_VAT}(\W{{0,4}})$", re.I)
_EX_VAT_AFTER = re.compile(rf"^\W{{0,3}}{EX_VAT}(\s*:)?", re.I)
_VAT_LABEL_BEFORE = re.compile(rf"(?:{EX_VAT}|{INCL_VAT})\W{{0,4}}$", re.I)
_VAT_LABEL_AFTER = re.compile(rf"^\W{{0,3}}(?:{EX_VAT}|{INCL_VAT})", re.I)
INCL_VAT_AFTER = re.compile(rf"^\W{{0,3}}{INCL_VAT}", re.I)
INCL_VAT_BEFORE = re.compile(rf"{INCL_VAT}\W{{0,4}}$", re.I)
_AMOUNT_END = re.compile(r"\d\s*[^\d\s]{0,4}\s*$")  # the text ends with an amount ("100 €", "100 Kč")
_AMOUNT_START = re.compile(r"^\s*[^\w\s]{0,2}\s*(?:[^\d\s]{1,4}\s*)?\d")  # the text starts with one


def ex_vat_label(before: str, after: str) -> bool:
    """Does an ex-VAT label on this line belong to the amount between `before` and `after`?

    A label between two amounts ("100 € HT 120 € TTC", "z DDV 50 € brez DDV 41 €") goes with the side
    that follows the line's convention: a label followed by ':' labels what follows; otherwise, if the
    other amount has its own label on its far side, the labels are written after (resp. before) amounts."""
    a = _EX_VAT_AFTER.search(after)
    if a and not a.group(1):  # "Brez DDV:" labels the amount after it, not this one
        between = _AMOUNT_START.search(after[a.end():]) is not None
        if not between or not _VAT_LABEL_BEFORE.search(before):
            return True
    b = _EX_VAT_BEFORE.search(before)
    if b:
        between = _AMOUNT_END.search(before[:b.start()]) is not None
        if ":" in b.group(1) or not between or not _VAT_LABEL_AFTER.search(after):
            return True
    return False


_INSTALMENT_AFTER = re.compile(
    r"^\W{0,3}(?:/\s*(?:mois|month|mo|monat|mes|mese)\b|par mois|per month|a month|monthly|mensuel|"
    r"pro monat|im monat|al mes|al mese|x\s*\d+\s*(?:mois|months?|mensualit)|s/\s?juros|sem juros|sin intereses)",
    re.I,
)
_INSTALMENT_BEFORE = re.compile(
    r"(?:(?<!\w)\d{1,2}\s*[x×]\s*(?:de|of|von|da)?\s*|\d+\s*(?:mensualités|monthly payments|monatsraten|rate|cuotas)\s*(?:de|of|von|da)?\s*|"
    r"financement|finanzierung|financing|dès\s+\S+\s*/\s*mois\s*|mensualité)\W{0,3}$",
    re.I,
)
_STRUCK_BEFORE = re.compile(
    r"(?:prix barré|prix de référence|prix conseillé|ancien prix|au lieu de|\bwas|\bstatt|\buvp|"
    r"\bunverbindliche preisempfehlung|list price|\brrp|\bmsrp|\bregular price|\bprecio anterior|"
    r"\bprezzo consigliato|\bavant)\W{0,4}$",
    re.I,
)
_FROM_WORDS = (r"(?:à partir de|\bdès|\bfrom|\bstarting at|\bstarting from|\bab|\bdesde|\ba partire da|\bvanaf|"
               r"\boffres?\s+dès|\bangebote?\s+ab|\boffers?\s+from)")
_FROM_BEFORE = re.compile(_FROM_WORDS + r"\W{0,4}$", re.I)
# An amount right after a 'from' price ("From €70.50 €78.50", "from $10 - $20"): the price before the discount or the
# other end of the range, not one price for this product either.
_AFTER_FROM_BEFORE = re.compile(_FROM_WORDS + r"\W{0,4}[^\d\s]{0,4}\s?\d[\d\s.,'’]{0,12}[^\d\s]{0,4}\s*[-–—~]?\s*$", re.I)
# The upper end of a price range ("$300 - $500", "3 499 € – 4 059 €"): the lower end carries a currency, so a model
# number before a dash ("RTX 4090 - 1 999 €") is not read as one.
_RANGE_END_BEFORE = re.compile(
    r"(?:[$€£¥₹]\s?\d[\d.,'’\s]*|\d[\d.,'’\s]*\s?(?:€|\$|£|eur|usd|gbp|chf|kr|zł|kč))\s*[-–—~]\s*$", re.I)
# Auctions: a starting bid, a current bid ("$200 2 bids"), an estimate or a maximum bid is not a price one pays.
_AUCTION_BEFORE = re.compile(
    r"\b(?:starting (?:price|bid)|opening bid|current bid|high(?:est)? bid|bids?|estimate|mise à prix|prix de départ|"
    r"enchères?|startpreis|startgebot|mindestgebot|aktuelles gebot|höchstgebot|gebot|precio de salida|pujas?|"
    r"prezzo (?:di )?partenza|offerta attuale)\b[^\d\n]{0,12}$",
    re.I,
)
_AUCTION_AFTER = re.compile(r"^\W{0,3}\d+\s*(?:bids?|enchères?|gebote?|pujas?|offerte)\b", re.I)

# A shipping label right before an amount: a fee ("Frais de port : 4,99 €", "Versandkosten 3,95 €", "דמי משלוח: 10 ₪")
# or a total with shipping ("מחיר כולל משלוח: 1,718 ₪", price incl. shipping); neither is the product's price.
# By language: en, fr, de, es, it, nl, pt, pl, cs/sk, sl/hr/sr, sv/no/da, fi, hu, ro, ru/uk, tr, ja, zh, ko, he, ar.
_SHIPPING_WORDS = (
    "shipping", "delivery", "postage", "p&p", "frais de port", "frais de livraison", "livraison", "versandkosten",
    "versand", "lieferkosten", "porto", "gastos de envío", "costo de envío", "envío", "envio", "spese di spedizione",
    "spedizione", "verzendkosten", "verzending", "bezorgkosten", "frete", "portes", "koszt dostawy", "dostawa",
    "wysyłka", "doprava", "poštovné", "poštnina", "dostava", "frakt", "fragt", "leverans", "levering",
    "toimituskulut", "toimitus", "szállítási díj", "szállítás", "livrare", "доставка", "kargo", "送料", "运费", "運費",
    "배송비", "דמי משלוח", "משלוח", "الشحن", "شحن",
)
_SHIPPING_BEFORE = re.compile(
    r"(?<!\w)(?:" + "|".join(re.escape(w) for w in sorted(_SHIPPING_WORDS, key=len, reverse=True)) + r")"
    r"(?:\s*(?:costs?|fees?|charges?|price|prix|kosten|cost))?\s*[:：]?\s*[+]?\s*$",
    re.I,
)
# A sign glued to the amount: an option's surcharge or reduction ("Z dioptrijo (+40.00€)", "(-40.00€)"), never the
# product's price. A spaced dash is a separator ("Washing machine - £50"), not a sign.
_SIGNED_BEFORE = re.compile(r"(?:^|[\s(\[])[+\-−–]$")


_STRUCK = "struck-through (former) price"
_FROM = "a 'from' price (several offers or variants)"
_AFTER_FROM = "a price beside a 'from' price (a range's other end or the price before a discount)"
_AUCTION = "an auction's bid or estimate, not a price to pay"
# Labels that sit in an element of their own ("From", "Starting Price", "Your maximum bid"): they are also read on
# the line above an amount that opens its own line.
_LABELS = ((_FROM_BEFORE, _FROM), (_AFTER_FROM_BEFORE, _AFTER_FROM), (_AUCTION_BEFORE, _AUCTION))


def context_problem(before: str, after: str) -> Optional[str]:
    """Why a price with this text before/after it on the same line is not what a buyer pays, or None."""
    b = before[-60:]
    a = after[:40]
    if ex_vat_label(b, a):
        return "ex-VAT price"
    if _INSTALMENT_AFTER.search(a) or _INSTALMENT_BEFORE.search(b):
        return "instalment, not the price"
    if _STRUCK_BEFORE.search(b):
        return _STRUCK
    if _RANGE_END_BEFORE.search(b):
        return "the upper end of a price range"
    if _AUCTION_AFTER.search(a):
        return _AUCTION
    if label := label_problem(b):
        return label
    if _SIGNED_BEFORE.search(b):
        return "a signed amount (an option's surcharge or reduction)"
    if _SHIPPING_BEFORE.search(b):
        return "shipping (a fee, or a total with it), not the product's price"
    return None


def label_problem(line: str) -> Optional[str]:
    """Why an amount is not paid, from one of the labels above in the text before it. Also used on the line above an
    amount that opens its own line: only these labels, since that line is often the product's title ("... 9700X" is a
    model, not "9700 x" instalments)."""
    b = line[-60:]
    return next((why for rx, why in _LABELS if rx.search(b)), None)


def amount_problem(amount: Decimal) -> Optional[str]:
    """A misread amount: not finite, negative, zero, below a cent or absurdly large."""
    if not amount.is_finite():
        return "not a finite amount"
    if amount < MIN_AMOUNT:
        return f"amount {amount} below {MIN_AMOUNT}"
    if amount >= MAX_AMOUNT:
        return f"amount {amount:.3g} above {MAX_AMOUNT}"
    return None


@functools.lru_cache(maxsize=2)
def _rates(day: date) -> "Rates":
    """The ECB rates, read once a day per process (a refresh checks many offers)."""
    from planner.fx import load_rates

    return load_rates(today=day)


def in_eur(amount: Decimal, currency: str) -> Optional[Decimal]:
    """amount in EUR with the ECB rates, None when the currency has no rate (the range check is skipped)."""
    if currency == "EUR":
        return amount
    try:
        from planner.fx import convert_exact

        return convert_exact(amount, currency, "EUR", _rates(date.today()))
    except (PlannerError, OSError, ArithmeticError):  # no rates or no rate for it: the range check cannot run
        return None


def category_problem(category: Optional[str], amount_eur: Optional[Decimal]) -> Optional[str]:
    """A price outside the (estimated) sane range of its category, compared in EUR; None when unknown."""
    rng = CATEGORY_RANGE_EUR.get(category or "")
    if rng is None or amount_eur is None:
        return None
    lo, hi = rng
    if amount_eur < lo or amount_eur > hi:
        return f"{amount_eur:.2f} EUR is outside the sane range {lo}-{hi} EUR for a {category}"
    return None
