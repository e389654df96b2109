"""Issue 29 item 2: escape sequences and bidi controls from logs, lists, catalogs and pages never reach the
terminal raw; every cell and message the CLI prints shows them escaped, and JSON stays valid JSON."""

from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import pytest

from hostile_cli import run
from planner.textsafe import json_text, terminal_text

# Retitle the terminal (OSC 0), clear the screen (CSI 2J), a hidden hyperlink (OSC 8), a one-byte C1 CSI,
# a carriage return that hides what precedes it, and a right-to-left override (Trojan Source).
NASTY = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\\x9b31m\rA\u202eB\u2066C\u200f"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(autouse=True)
def _isolated(no_price_history):
    """Shipped data only, no user price history."""


def assert_inert(text: str, shown: bool = True) -> None:
    """No control or bidi character but newline and tab, and (`shown`) the escaped form of ESC instead."""
    assert not RAW.search(text), repr(RAW.search(text).group())
    assert not shown or "\\x1b" in text


def test_terminal_text_escapes_every_control_and_bidi_character():
    shown = terminal_text(NASTY + "\tok\n")
    assert not RAW.search(shown)
    for escaped in ("\\x1b]0;pwned\\x07", "\\x1b[2J", "\\x9b", "\\x0d", "\\u202e", "\\u2066", "\\u200f"):
        assert escaped in shown
    assert shown.endswith("\tok\n")
    assert terminal_text("RTX 5090 · 2 199,99 €") == "RTX 5090 · 2 199,99 €"  # ordinary text untouched


def test_json_text_is_the_same_json_value_and_inert():
    dumped = json.dumps({"name": NASTY}, ensure_ascii=False)
    safe = json_text(dumped)
    assert not RAW.search(safe) and json.loads(safe) == {"name": NASTY}


def test_kernel_log_line_prints_escaped(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text(f"Oct 14 02:13:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name={NASTY}py, "
                   "GPU has fallen off the bus.\n", encoding="utf-8")
    for fmt in ("text", "md"):
        r = run("doctor", "events", str(log), "--year", "2025", "--format", fmt)
        assert r.code == 0 and "Traceback" not in r.text, r.text
        assert_inert(r.out, shown=fmt == "text")
    r = run("doctor", "events", str(log), "--year", "2025", "--format", "json")
    assert r.code == 0 and not RAW.search(r.out)
    json.loads(r.out)


def test_imported_list_cell_prints_escaped(tmp_path):
    table = f"| Type | Item | Price |\n|---|---|---|\n| GPU | Zotac {NASTY} 9999 | 1 |\n"
    path = tmp_path / "list.md"
    path.write_text(table, encoding="utf-8")
    r = run("share", "import", str(path))
    assert "Traceback" not in r.text
    assert_inert(r.text)
    r = run("share", "import", str(path), "--json")
    assert not RAW.search(r.out)
    assert any(NASTY.replace("\r", "")[:5] in u["text"] for u in json.loads(r.out)["unmatched"])


def test_catalog_name_prints_escaped(tmp_path, monkeypatch):
    from planner.catalog.load import SHIPPED_DATA_DIR
    from planner.cli.common import console

    cat = tmp_path / "cat"
    shutil.copytree(SHIPPED_DATA_DIR, cat, ignore=shutil.ignore_patterns("__pycache__", "*.py", "fx", "calibration"))
    rows = list(csv.DictReader(ln for ln in (cat / "gpu.csv").read_text(encoding="utf-8").splitlines(keepends=True)
                               if ln.strip() and not ln.startswith("#")))
    rows[0]["name"] = "Evil " + NASTY.replace("\r", "")
    with (cat / "gpu.csv").open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    monkeypatch.setattr(console, "size", (400, 50))
    r = run("catalog", "list", "--category", "gpu", "--catalog", str(cat))
    assert r.code == 0, r.text
    assert "Evil" in r.out
    assert_inert(r.out)


def test_shop_page_title_prints_escaped(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><title>x</title>"
        '<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product",'
        f'"name":{json.dumps("RTX 5090 " + NASTY)},'
        '"offers":{"@type":"Offer","price":"2199.99","priceCurrency":"EUR",'
        '"availability":"https://schema.org/InStock"}}</script></head>'
        "<body><h1>RTX 5090</h1></body></html>", encoding="utf-8")
    r = run("prices", "extract", str(page))
    assert r.code == 0 and "2199.99" in r.out, r.text
    assert_inert(r.out)
    r = run("prices", "extract", str(page), "--json")
    assert r.code == 0 and not RAW.search(r.out)
