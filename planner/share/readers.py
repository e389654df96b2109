"""Read a build list as people post it (Markdown or HTML table, PCPartPicker text/BBCode, bullets, `Part: name` lines) into rows."""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Optional

from planner.errors import ShareError

MAX_CELL_CHARS = 1_000  # a part cell with its link is ~200 characters; PCPartPicker's longest is far below this
MAX_ROWS = 200  # a build list has some 10 to 30 rows


@dataclass(frozen=True)
class Row:
    """One line of a posted list: where it was, its label ("Video Card", "PSU Primary"), the part text, how many."""

    line: int
    label: Optional[str]
    text: str
    quantity: int = 1
    price: str = ""
    quantity_stated: bool = False


# ---------------------------------------------------------------- cells and quantities

_LINK = re.compile(r"\[([^\]\n]{0,400})\]\([^)\s]{0,2000}(?:\s+\"[^\"]{0,300}\")?\)")
_BARE_URL = re.compile(r"https?://\S+")
_QTY_LEAD = re.compile(r"^\s*\(?(\d{1,2})\s*[x×]\)?\s+(?!\d+\s*(?:gb|tb)\b)(?=\S)", re.I)  # "2x Name", "2 x Name"
_QTY_LEAD_X = re.compile(r"^\s*[x×](\d{1,2})\s*[:\-]?\s+", re.I)  # "x4: name"
_QTY_TRAIL = re.compile(r"(?:\s+|\s*\()[x×*]\s*(\d{1,2})\)?\s*$|\s+\((\d{1,2})\s*[x×]\)\s*$", re.I)  # "name x2", "(x4)", "*4"
_WORD_QTY = {"dual": 2, "two": 2, "triple": 3, "three": 3, "quad": 4, "four": 4}
_PRICE = re.compile(r"\s*\((?:[$€£¥]\s?[\d.,]+|[\d.,]+\s?[$€£])[^)]*\)\s*$")  # "($209.00 @ Amazon)"


def plain(cell: str) -> str:
    """A cell's text: a Markdown link's text (else the cell), emphasis, HTML entities and tags dropped, spaces tidied."""
    if len(cell) > MAX_CELL_CHARS:
        raise ShareError(f"a cell of {len(cell)} characters is over the {MAX_CELL_CHARS}-character limit for one part; "
                         "a build list names each part in far fewer")
    text = _LINK.sub(lambda m: m.group(1), cell)
    text = re.sub(r"<br\s*/?>", " ; ", text, flags=re.I)
    text = re.sub(r"<[^>]{0,200}>", " ", text)
    text = html.unescape(text)
    text = re.sub(r"(?<![\w\\])[*_`]+|[*`]+(?![\w])|(?<!\\)_(?!\w)", "", text)  # keep WD_Black
    text = re.sub(r"\\(.)", r"\1", text)
    return " ".join(text.replace("\u00a0", " ").replace("\u2003", " ").replace("\u2009", " ").split())


def split_quantity(text: str) -> tuple[str, int, bool]:
    """The name and how many: '2x Name', '2 x Name', 'x4: Name', 'Name x2', 'Name (x4)', 'Name *4', 'Dual Name'."""
    t = text.strip()
    alone = re.fullmatch(r"[x×](\d{1,2})\s*:?", t, re.I)
    if alone:
        return "", int(alone.group(1)), True
    m = _QTY_LEAD.match(t) or _QTY_LEAD_X.match(t)
    if m:
        return t[m.end():].strip(), int(m.group(1)), True
    m = _QTY_TRAIL.search(t)
    if m:
        return t[:m.start()].strip(), int(m.group(1) or m.group(2)), True
    first = t.split(" ", 1)
    if len(first) == 2 and first[0].lower() in _WORD_QTY and re.search(r"\d{3,}", first[1]):
        return first[1].strip(), _WORD_QTY[first[0].lower()], True
    return t, 1, False


def _quantity_cell(cell: str) -> Optional[int]:
    m = re.fullmatch(r"\s*(\d{1,3})\s*\+?\s*", plain(cell))
    return int(m.group(1)) if m else None


# ---------------------------------------------------------------- tables

_LABEL_HEADERS = ("type", "component", "category", "part", "name", "content", "kind", "item type")
_ITEM_HEADERS = ("item", "selection", "model", "product", "detail", "details", "brand / link", "brand/model/desc",
                 "brand", "description", "part name", "spec", "choice")
_QTY_HEADERS = ("qty", "quantity", "#", "count", "number", "amount", "units")
_PRICE_HEADERS = ("price", "cost", "usd", "usd $", "eur", "price(taxed)", "total")


def _header_role(cell: str) -> Optional[str]:
    c = re.sub(r"\s+", " ", plain(cell).lower()).strip(" :")
    c = re.sub(r"\s*\(.*\)$", "", c) if c not in ("price(taxed)",) else c
    if c in _QTY_HEADERS:
        return "qty"
    if c in _ITEM_HEADERS:
        return "item"
    if c in _LABEL_HEADERS:
        return "label"
    if c in _PRICE_HEADERS or c.startswith("price") or re.fullmatch(r"[$€£¥]|.*[$€£¥₪]\)?", c):
        return "price"
    return None


@dataclass
class _Columns:
    label: Optional[int] = 0
    item: int = 1
    qty: Optional[int] = None
    price: Optional[int] = None


def _columns(header: list[str]) -> Optional[_Columns]:
    """Which column holds what, from a header row; None when the row is not a header."""
    roles = [_header_role(c) for c in header]
    if sum(r is not None for r in roles) < 2:
        return None
    cols = _Columns(label=None, item=-1)
    for i, r in enumerate(roles):
        if r == "label" and cols.label is None:
            cols.label = i
        elif r == "item" and cols.item < 0:
            cols.item = i
        elif r == "qty" and cols.qty is None:
            cols.qty = i
        elif r == "price" and cols.price is None:
            cols.price = i
    if cols.item < 0:  # "Part | Qty": the label column is the part
        if cols.label is None:
            return None
        cols.item, cols.label = cols.label, None
    elif cols.label is None and cols.item > 0:
        cols.label = 0
    return cols


def _row(line: int, cells: list[str], cols: _Columns) -> Optional[Row]:
    def cell(i: Optional[int]) -> str:
        return cells[i] if i is not None and 0 <= i < len(cells) else ""

    label = plain(cell(cols.label)) if cols.label is not None else None
    raw_item = cell(cols.item)
    item = plain(raw_item)
    if not item and not label:
        return None
    name, qty, stated = split_quantity(item)
    q = _quantity_cell(cell(cols.qty)) if cols.qty is not None else None
    if q is not None:
        qty, stated = (q * qty if stated and q > 1 else q), True
    elif cols.qty is not None and plain(cell(cols.qty)) in ("-", ""):
        pass
    return Row(line, label or None, name, max(qty, 0), plain(cell(cols.price)), stated)


def _pipe_cells(line: str) -> list[str]:
    s = line.strip()
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", s)]
    if s.startswith("|"):
        cells = cells[1:]
    if s.endswith("|") and cells:
        cells = cells[:-1]
    return cells


def read_markdown_table(text: str) -> list[Row]:
    """Pipe-table rows; the header names the columns (Type/Component/Part, Item/Selection/Model, Qty, Price)."""
    rows: list[Row] = []
    cols: Optional[_Columns] = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.count("|") < 1 or not line.strip():
            if not line.strip():
                cols = None
            continue
        cells = _pipe_cells(line)
        if len(cells) < 2:
            continue
        longest = max(len(c) for c in cells)
        if longest > MAX_CELL_CHARS:
            raise ShareError(f"line {number}: a cell of {longest} characters is over the {MAX_CELL_CHARS}-character "
                             "limit for one part; a build list names each part in far fewer")
        if all(re.fullmatch(r":?-{2,}:?", c) or not c for c in cells):
            continue
        header = _columns(cells)
        if header is not None:
            cols = header
            continue
        row = _row(number, cells, cols or _Columns())
        if row is not None:
            rows.append(row)
    return rows


def read_html_table(text: str) -> list[Row]:
    """`<table>` rows (bs4): a `<th>` row names the columns as in a Markdown table."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "html.parser")
    rows: list[Row] = []
    for table in soup.find_all("table"):
        cols: Optional[_Columns] = None
        for tr in table.find_all("tr"):
            cells = [c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"])]
            if len(cells) < 2:
                continue
            header = _columns(cells) if tr.find("th") is not None or cols is None else None
            if header is not None:
                cols = header
                continue
            row = _row(getattr(tr, "sourceline", 0) or 0, cells, cols or _Columns())
            if row is not None:
                rows.append(row)
    return rows


# ---------------------------------------------------------------- lines

_BBCODE = re.compile(r"\[/?(?:b|i|u|size|color|url|list|\*|table|tr|td|th|quote|code)(?:=[^\]]*)?\]", re.I)
_LABELLED = re.compile(
    r"^\s*(?:[-*+•]|\d{1,2}[.)])?\s*(?:\*\*|__)?(?P<label>[A-Za-z][A-Za-z0-9 ./()&+'-]{0,40}?)(?:\*\*|__)?\s*"
    r"(?::|：|\s[-–—]\s|\t)\s*(?:\*\*|__)?\s*(?P<rest>.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s*(?P<rest>.+)$")
_NOT_PARTS = re.compile(r"^(?:total|prices? include|generated by|here is|pcpartpicker|custom|note|notes|os|kernel|"
                        r"swap|uptime|locale|timezone|environment|bios|disk|power|pcie|nproc|numa nodes|"
                        r"memory bandwidth.*|memory channels|memory config|thp.*|cpu topology)$", re.I)


_PROSE_GPUS = re.compile(r"\b(\d)\s*(?:x\s*)?((?:nvidia\s+|amd\s+)?(?:geforce\s+|radeon\s+)?(?:gtx|rtx|rx)\s?\d{3,4}"
                         r"(?:\s?ti|\s?super|\s?xtx|\s?xt)?)\b", re.I)


def read_lines(text: str) -> list[Row]:
    """`Label: name` lines (PCPartPicker's text export, bullets, `- GPU: 2x [name](link)`, `Part - name`), BBCode
    tags dropped; unlabelled bullets or lines are kept with no label (their kind is read from the text)."""
    rows: list[Row] = []
    pending: Optional[str] = None  # a heading line "GPUS" whose part is on the next bullet
    for number, raw in enumerate(text.splitlines(), 1):
        line = _BBCODE.sub("", raw).rstrip()
        if not line.strip() or line.strip().startswith(("#", "```", "![", "<!--", "---")):
            pending = None if not line.strip() else pending
            continue
        if len(line) > MAX_CELL_CHARS:
            raise ShareError(f"line {number}: {len(line)} characters is over the {MAX_CELL_CHARS}-character limit for "
                             "one part; a build list names each part in far fewer")
        indented = raw[:1].isspace()
        m = _LABELLED.match(line)
        label: Optional[str] = None
        rest = line
        if m and not re.match(r"^\s*https?$", m.group("label"), re.I) and len(m.group("label").split()) <= 5:
            label, rest = plain(m.group("label")), m.group("rest")
        else:
            b = _BULLET.match(line)
            rest = b.group("rest") if b else line
        if label is not None and indented and pending is not None and re.match(r"^x\d|^\(?suggested|^os\b", label, re.I):
            label = pending  # "GPUS\n    - x4: <link>": the heading is the label
            rest = m.group(0).split(":", 1)[0].strip(" -*") + " " + rest if m else rest
        elif label is None and indented and pending is not None:
            label = pending
        rest, price = _line_part(rest)
        text_ = plain(rest)
        prose = _PROSE_GPUS.search(text_) if label is None and len(text_.split()) > 12 else None
        if prose:  # "There are 3 GTX 1070 GPUs in my computer - ..." states the cards in a sentence
            rows.append(Row(number, None, prose.group(2), int(prose.group(1)), "", True))
            continue
        if not text_:
            if label and not indented:
                pending = label if not _NOT_PARTS.match(label) else None
            continue
        if label is None and not indented and not _BULLET.match(line) and not re.search(r"\d", text_) \
                and len(text_.split()) <= 3:
            pending = text_  # a heading line ("GPUS", "Power source")
            continue
        if label is not None and _NOT_PARTS.match(label.strip()):
            continue
        name, qty, stated = split_quantity(text_)
        rows.append(Row(number, label, name, qty, price, stated))
        if len(rows) > MAX_ROWS:
            raise ShareError(f"the list has more than {MAX_ROWS} part lines; a build list has far fewer")
    return rows


_LEAD_PRICE = re.compile(r"^\s*([$€£]\s*[\d,.]+)\s+")
_INNER_PRICE = re.compile(r"\s*\((?:[$€£¥]\s?[\d.,]+|[\d.,]+\s?[$€£])[^)]{0,60}\)")


def _line_part(rest: str) -> tuple[str, str]:
    """The part of a line that names the part, and the price it states: a Markdown link's text (with a quantity
    written before it), else the line without a `| ...` tail, a leading `$ 250`, trailing `($209.00 @ Amazon)`,
    inner price ranges or a second alternative (`X or Y`)."""
    price = ""
    link = _LINK.search(rest)
    if link:
        return rest[:link.start()] + link.group(1), price
    m = _PRICE.search(rest)
    if m:
        price, rest = m.group(0).strip(), rest[:m.start()]
    m = _LEAD_PRICE.match(html.unescape(rest)) if rest.lstrip().startswith(("$", "€", "£", "&")) else None
    if m:
        un = html.unescape(rest)
        price, rest = m.group(1).strip(), un[m.end():]
    inner = _INNER_PRICE.search(rest)
    if inner:
        price = price or inner.group(0).strip(" ()")
        rest = _INNER_PRICE.sub("", rest)
    head, *tail = re.split(r"\s\|\s", rest, 1)
    mib = re.match(r"\s*(\d{3,6})\s*MiB\b", tail[0]) if tail else None  # nvidia-smi: "RTX 3080 | 20480 MiB | driver"
    rest = head + (f" ({mib.group(1)} MiB)" if mib else "")
    rest = re.split(r"\s+or\s+(?=[A-Z0-9])", rest, 1)[0]
    rest = _BARE_URL.sub("", rest)
    return rest, price


# ---------------------------------------------------------------- sniffing

_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)+\|?\s*$")


def sniff(text: str) -> str:
    """The form a pasted list is in: html | markdown (a pipe table with its separator row, or rows starting with a
    pipe) | lines (PCPartPicker text, BBCode, bullets, `Part: name`, a copied page)."""
    t = text.lower()
    if re.search(r"<t[dh][\s>]", t) or "<table" in t:
        return "html"
    lines = text.splitlines()
    if any(_SEPARATOR.match(ln) for ln in lines) or sum(ln.lstrip().startswith("|") for ln in lines) >= 2:
        return "markdown"
    return "lines"


def _has_header(text: str) -> bool:
    """A pipe row naming the columns (Type | Item | Price): a table, even with one part row."""
    return any(ln.count("|") and _columns(_pipe_cells(ln)) is not None for ln in text.splitlines()[:50])


READERS = {"html": read_html_table, "markdown": read_markdown_table, "lines": read_lines}


def read_list(text: str) -> tuple[str, list[Row]]:
    """The form and rows of a posted list; over MAX_ROWS rows is refused (ShareError)."""
    form = sniff(text)
    rows = READERS[form](text)
    if form == "markdown" and len(rows) < 2 and not (rows and _has_header(text)):  # pipes inside a bullet list
        rows = read_lines(text) or rows
        form = "lines" if rows else form
    if len(rows) > MAX_ROWS:
        raise ShareError(f"the list has more than {MAX_ROWS} part rows; a build list has far fewer")
    return form, rows
