"""A parsed HTML page: decoded text, lxml tree, and the visible text in reading order with offsets."""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional

from lxml import etree
from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
)

from planner.textsafe import strip_invisible

# Markers written into the visible text where a buy button stands (private-use code points).
ATC = "\ue000"
ATC_OFF = "\ue001"

SKIP_TAGS = frozenset(
    "head script style noscript template svg iframe object embed canvas select option datalist "
    "textarea map audio video picture source".split()
)
BLOCK_TAGS = frozenset(
    "address article aside blockquote body dd details dialog div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr html li main nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul br button label input img".split()
)
_PARSER = etree.HTMLParser(recover=True, remove_comments=True, remove_pis=True, no_network=True)
_HIDDEN_CLASSES = frozenset({"hidden", "hide", "d-none", "aok-hidden", "is-hidden", "u-hidden", "invisible"})
# whole declarations only: "-webkit-backface-visibility: hidden" does not hide anything
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b", re.I)
_WS = re.compile(r"\s+")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)
_BUY_WORDS = re.compile(
    r"add[\s_-]?to[\s_-]?(?:cart|basket|bag|trolley)|addto(?:cart|basket|bag)|add_to_cart|atc-button|basket-add|"
    r"ajout(?:er)?[\s_-]au[\s_-]panier|mettre au panier|in den (?:einkaufswagen|warenkorb)|zum warenkorb|"
    r"in winkel(?:wagen|mand)|aggiungi al carrello|a[nñ]adir al (?:carrito|cesta)|buy[\s_-]?now|buy-button|"
    r"acheter|jetzt kaufen|comprar|add-to-order|addtoorder",
    re.I,
)
# A bare one-word label on a <button> is enough ("Buy", "Acheter", "Kaufen").
_BUY_LABELS = frozenset({"buy", "add", "acheter", "kaufen", "comprar", "commander", "order now", "purchase"})
_DISABLED_CLASS = re.compile(r"(?:^|[\s_-])(?:disabled|is-disabled|inactive|unavailable|soldout|sold-out)(?:$|[\s_-])", re.I)


_UNSAFE_CODECS = frozenset({"idna", "punycode", "undefined", "utf_7", "unicode_escape", "raw_unicode_escape"})


def _usable(name: Optional[str]) -> Optional[str]:
    """A declared charset we can decode with (WHATWG aliases resolved), else None: 'idna', 'punycode',
    'undefined', 'zlib' and unknown names are declarations to ignore, not codecs to run."""
    if not name:
        return None
    try:
        enc = resolve_encoding(name)
        info = codecs.lookup(enc) if enc else None
    except (LookupError, ValueError, UnicodeError):
        return None
    if info is None or not getattr(info, "_is_text_encoding", True) or info.name.replace("-", "_") in _UNSAFE_CODECS:
        return None
    return info.name


def decode(page: str | bytes, content_type: Optional[str] = None) -> str:
    """Bytes to text: the HTTP header charset, then a BOM, then <meta charset>, then UTF-8, then cp1252."""
    if isinstance(page, str):
        return page
    bom, bom_bytes = read_bom(page)
    header = _usable(http_content_type_encoding(content_type)) if content_type else None
    if header:
        return page.decode(header, errors="replace")
    if bom:
        return page[len(bom_bytes or b""):].decode(bom, errors="replace")
    try:
        meta = _usable(html_body_declared_encoding(page[:4096]))
    except (ValueError, UnicodeError, LookupError):
        meta = None
    if meta and meta != "utf-8":
        return page.decode(meta, errors="replace")
    try:
        return page.decode("utf-8")
    except UnicodeDecodeError:
        return page.decode("utf-8" if meta else "cp1252", errors="replace")


def parse_html(text: str) -> etree._Element:
    """A tolerant lxml tree; an empty or hopeless page gives an empty <html>."""
    text = _XML_DECL.sub("", text, count=1)
    try:
        root = etree.fromstring(text, _PARSER) if text.strip() else None
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        root = None
    if root is None:
        root = etree.fromstring("<html><body></body></html>", _PARSER)
    return root


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def classes_of(el: etree._Element) -> str:
    """'id class' of an element for hint matching: camelCase split with '-', lower-cased
    ('priceBlockOld' -> 'price-block-old'), so keywords can be matched at word-part starts."""
    raw = f"{el.get('id') or ''} {el.get('class') or ''}"
    return _CAMEL.sub("-", raw).lower()


def is_hidden(el: etree._Element) -> bool:
    if el.get("hidden") is not None or el.get("aria-hidden") == "true":
        return True
    style = el.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    cls = el.get("class")
    return bool(cls) and not _HIDDEN_CLASSES.isdisjoint(cls.lower().split())


def buy_button_state(el: etree._Element) -> Optional[bool]:
    """True for an enabled add-to-cart control, False for a disabled one, None if not a buy control."""
    tag = el.tag
    if tag not in ("button", "input", "a"):
        return None
    if tag == "input" and (el.get("type") or "").lower() not in ("submit", "button", "image"):
        return None
    label = " ".join(
        el.get(k) or "" for k in ("id", "class", "name", "value", "title", "aria-label", "data-action", "data-testid")
    )
    label += " " + "".join(el.itertext())[:80] if tag != "a" or len(el) < 4 else ""
    if not _BUY_WORDS.search(label):
        text = " ".join("".join(el.itertext()).split()).lower() if tag != "a" else ""
        if text not in _BUY_LABELS and (el.get("value") or "").strip().lower() not in _BUY_LABELS:
            return None
    if re.search(r"pre-?order|précommand|vorbestell|notify|alert|prévenu", label, re.I):
        return None  # not a way to buy it now
    disabled = (
        el.get("disabled") is not None
        or el.get("aria-disabled") == "true"
        or bool(_DISABLED_CLASS.search(el.get("class") or ""))
    )
    return not disabled


def space_words(parts: list[str], chunk: str) -> str:
    """Keep words of adjacent inline elements apart ('Store' + 'Sold Out'); digits stay glued ('1 199€' + '95')."""
    if chunk and parts and chunk[0].isalpha() and parts[-1][-1:].isalpha():
        return " " + chunk
    return chunk


@dataclass
class Page:
    """One page: source text, tree, and the linear visible text with each element's span in it."""

    source: str
    url: Optional[str]
    root: etree._Element
    text: str = ""
    spans: dict = field(default_factory=dict)  # element -> (start, end) offsets in text
    order: list = field(default_factory=list)  # visible elements in document order
    buttons: list = field(default_factory=list)  # (offset, enabled, element) of add-to-cart controls
    memo: dict = field(default_factory=dict)  # derived data computed once per page (e.g. price spots)

    @classmethod
    def load(cls, page: str | bytes, url: Optional[str] = None, content_type: Optional[str] = None) -> "Page":
        source = decode(page, content_type)
        root = parse_html(source)
        p = cls(source=source, url=url, root=root)
        p._linearise()
        return p

    @cached_property
    def scripts(self) -> list[etree._Element]:
        return list(self.root.iter("script"))

    @cached_property
    def title(self) -> str:
        t = self.root.find(".//title")
        return _WS.sub(" ", "".join(t.itertext())).strip() if t is not None else ""

    def meta(self, *names: str) -> Optional[str]:
        """Content of the first <meta property|name|itemprop=...> among `names`."""
        wanted = {n.lower() for n in names}
        for m in self.root.iter("meta"):
            key = (m.get("property") or m.get("name") or m.get("itemprop") or "").lower()
            if key in wanted and m.get("content") is not None:
                return m.get("content").strip()
        return None

    def text_of(self, el: etree._Element) -> str:
        span = self.spans.get(el)
        if span is None:
            return ""
        return _WS.sub(" ", self.text[span[0]:span[1]]).strip()

    def _linearise(self) -> None:
        """Walk the tree once: inline text joins without a separator, blocks add a newline."""
        root = self.root
        etree.strip_tags(root, etree.Comment, etree.ProcessingInstruction)
        parts: list[str] = []
        pos = 0
        spans = self.spans
        order = self.order
        skipped: set = set()
        walker = etree.iterwalk(root, events=("start", "end"))
        for event, el in walker:
            tag = el.tag
            if event == "start":
                if not isinstance(tag, str) or tag in SKIP_TAGS or is_hidden(el):
                    skipped.add(el)
                    walker.skip_subtree()
                    continue
                chunk = "\n" if tag in BLOCK_TAGS else ""
                state = buy_button_state(el)
                if state is not None:
                    self.buttons.append((pos + len(chunk), state, el))
                    chunk += f" {ATC if state else ATC_OFF} "
                if el.text:
                    chunk += _WS.sub(" ", strip_invisible(el.text))
                chunk = space_words(parts, chunk)
                start = pos + (1 if tag in BLOCK_TAGS else 0)
                spans[el] = (start, start)
                order.append(el)
                if chunk:
                    parts.append(chunk)
                    pos += len(chunk)
            else:
                chunk = ""
                if el in skipped:
                    skipped.discard(el)
                else:
                    spans[el] = (spans[el][0], pos)
                    if tag in BLOCK_TAGS:
                        chunk = "\n"
                if el.tail:
                    chunk += _WS.sub(" ", strip_invisible(el.tail))
                chunk = space_words(parts, chunk)
                if chunk:
                    parts.append(chunk)
                    pos += len(chunk)
        self.text = "".join(parts)
