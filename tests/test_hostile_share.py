"""Exports and tokens that cannot be abused: CSV formulas, Markdown rows, negative prices, hostile tokens."""

from __future__ import annotations

import csv
import io
import json
import zlib

import pytest

from hostile_cli import assert_one_line_error, run
from planner.errors import InputError, ShareError
from planner.share import build_from_json, decode_token, to_csv, to_markdown
from planner.share import token as T


def plan(**line: object) -> dict:
    base = {"category": "gpu", "id": "gpu-x", "name": "Card", "quantity": 1,
            "price": {"amount": "100.00", "currency": "EUR"}, "retailer": "Shop", "url": None,
            "price_observed_on": "2026-11-02", "price_source": "scraped"}
    base.update(line)
    return {"parts": [base, {"category": "cpu", "id": "cpu-y", "name": "Chip",
                             "price": {"amount": "50.00", "currency": "EUR"}}]}


@pytest.mark.parametrize("field", ["name", "retailer", "price_source", "id", "url"])
@pytest.mark.parametrize("payload", ['=HYPERLINK("http://evil.example","x")', "+1+1", "-2+3", "@SUM(A1)",
                                     "\t=1", "\uff1d1"])
def test_csv_cells_never_start_a_formula(field, payload):
    text = to_csv(build_from_json(plan(**{field: payload})))
    for row in csv.reader(io.StringIO(text)):
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\uff1d")), row
            assert not (cell.startswith("-") and not cell.lstrip("-").replace(".", "").isdigit()), row
    assert any(cell == "'" + payload for row in csv.reader(io.StringIO(text)) for cell in row)  # kept, behind a quote


def test_a_newline_in_price_source_cannot_add_a_markdown_row():
    fake = "scraped\n | **Total** | **EUR 1.00**\n"
    md = to_markdown(build_from_json(plan(price_source=fake)))
    rows = md.splitlines()
    assert sum("**Total**" in r for r in rows) == 1  # only ours
    assert len(rows) == 2 + 2 + 3  # header, 2 parts, 3 footer lines: nothing injected


def test_markdown_cells_cannot_open_links_or_images():
    md = to_markdown(build_from_json(plan(name="![x](http://h.example/t.png) [c](http://h.example/p) a|b")))
    row = md.splitlines()[2]
    assert "![" not in row and "](" not in row.replace("\\](", "") and row.count(" | ") == 2, row


@pytest.mark.parametrize("amount", ["-5", "-0.01", "1e30", "NaN", "Infinity", "9" * 5000, True, ["1"], {"a": 1}])
def test_impossible_prices_are_refused(amount):
    with pytest.raises(InputError, match="price of gpu-x"):
        build_from_json(plan(price={"amount": amount, "currency": "EUR"}))


def raw_token(body: object) -> str:
    text = json.dumps(body, separators=(",", ":")).encode("utf-8") if not isinstance(body, bytes) else body
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(text) + packer.flush()
    return f"{T.TOKEN_VERSION}.{T._b64encode(T._HEADER.pack(zlib.crc32(stream), len(stream)) + stream)}"


@pytest.mark.parametrize("body", [
    {"i": {"budget": "1e30"}, "p": []},
    b'{"i": {"budget": 1' + b"0" * 5000 + b'}, "p": []}',
    {"i": {"currency": "XXX"}, "p": []},
    {"i": {"currency": ""}, "p": []},
    {"i": {"hours": "nan"}, "p": []},
    {"i": {"deadline_hours": 1e-300}, "p": []},
    {"i": {"owned": [5]}, "p": []},
    {"i": [], "p": []},
    {"i": {}, "p": [["gpu-x", 10 ** 40]]},
    b"[" * 30_000 + b"]" * 30_000,
    b'{"i": {"runs": 1' + b"0" * 5000 + b'}, "p": []}',
])
def test_hostile_tokens_are_share_errors(body):
    with pytest.raises(ShareError):
        decode_token(raw_token(body))


@pytest.mark.parametrize("body", [{"i": {"budget": "1e30"}, "p": []}, {"i": {"currency": "XXX"}, "p": []},
                                  b"[" * 30_000 + b"]" * 30_000])
def test_hostile_tokens_at_the_cli(body, no_price_history):
    assert_one_line_error(run("share", "import", raw_token(body)))
