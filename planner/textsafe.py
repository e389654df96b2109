"""Text that came from a user or a page, made inert before it is shown: terminal, Markdown, CSV cells, Rich markup."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.markup import escape as _rich_escape

# What opens a link, an image, emphasis, code, HTML (and entities), a heading, a table cell or Streamlit's LaTeX.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|~#&$!])")
# What would start a list, heading or quote at the start of a line.
_MD_LEADING = re.compile(r"^([-+=>]|\d+[.)])")
# A bare address becomes a link in GitHub-flavoured Markdown; an escaped character in it stops that.
_AUTOLINK = re.compile(r"(?i)(://|\bwww\.)")
# Inside an exported table cell: what opens a link, image, emphasis, code, HTML or a new cell.
_MD_CELL_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")
# A spreadsheet runs a cell as a formula when it starts with one of these (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def one_line(text: object) -> str:
    """The text on one line: control characters and line breaks become single spaces."""
    return " ".join(_CONTROL.sub(" ", str(text)).split())


def md_escape(text: object) -> str:
    """Literal text inside Markdown (st.error, st.warning, st.caption): no link, image, emphasis, HTML or
    autolinked address can form; hyphens, dots and parentheses stay as typed so messages stay readable."""
    escaped = _MD_SPECIAL.sub(r"\\\1", one_line(text))
    escaped = _MD_LEADING.sub(lambda m: m.group(1)[:-1] + "\\" + m.group(1)[-1], escaped)
    return _AUTOLINK.sub(lambda m: "\\:\\/\\/" if m.group(1) == "://" else m.group(1)[:3] + "\\.", escaped)


def md_cell(text: object) -> str:
    """Literal text in an exported Markdown table cell, lighter than md_escape so names stay readable:
    no link or image can open (brackets escaped), no cell can end (| escaped), no row can start (one line)."""
    return _MD_CELL_SPECIAL.sub(r"\\\1", one_line(text))


_SAFE_URL = re.compile(r"https?://[^\s()<>\[\]]+")


def safe_url(url: object) -> str | None:
    """The address when a Markdown link can carry it unchanged (http(s), no space or bracket), else None."""
    return url if isinstance(url, str) and _SAFE_URL.fullmatch(url) else None


def md_link(text: object, url: object) -> str:
    """A Markdown link whose text is a literal cell; plain text when the address is not safe."""
    cell = md_cell(text)
    return f"[{cell}]({url})" if safe_url(url) else cell


def md_table(header: list[str], rows: Iterable[list[str]]) -> str:
    """A Markdown table of cells the caller made literal (md_cell, md_link, or its own escaping)."""
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(cells) + " |" for cells in rows]
    return "\n".join(out)


def csv_cell(text: object) -> str:
    """A text cell a spreadsheet shows as text: a leading formula character gets a ' in front."""
    s = "" if text is None else str(text)
    return "'" + s if s.startswith(_FORMULA_START) else s


def rich_escape(text: object) -> str:
    """User text inside a Rich markup template: `[/]` and `[link=...]` print as themselves."""
    return _rich_escape(str(text))


# What a terminal obeys rather than shows: C0 controls but tab and newline (ESC starts every CSI/OSC sequence,
# \r rewrites the line), DEL, C1 controls (0x9b is a one-byte CSI) and the bidi controls that reorder what
# follows (embeddings, overrides, isolates, marks; Trojan Source, CVE-2021-42574).
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Characters that print as nothing and split a number or a word ("4\u200b299,95 €"): zero-width space,
# joiners, word joiner, byte-order mark, soft hyphen.
_INVISIBLE = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text: object) -> str:
    """Text a terminal shows as typed: every control and bidi character is written out escaped (ESC as
    `\\x1b`, U+202E as `\\u202e`), so no sequence can retitle, clear or recolour the terminal, hide what
    follows, add a link or reorder a line. Newlines and tabs stay."""
    s = str(text)
    return _TERMINAL_UNSAFE.sub(lambda m: _escaped(m.group()), s) if _TERMINAL_UNSAFE.search(s) else s


def json_text(dumped: str) -> str:
    """JSON text (json.dumps already escapes C0) with DEL, C1 and bidi controls written as \\u escapes:
    the same JSON value, inert on a terminal."""
    return _TERMINAL_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def strip_invisible(text: str) -> str:
    """The text without zero-width and other invisible format characters (ZWSP, ZWJ, word joiner, BOM, soft
    hyphen), so a number split by one reads whole."""
    return _INVISIBLE.sub("", text)
