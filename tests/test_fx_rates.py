"""ECB reference rates: parsing, conversion to the cent via EUR, snapshot vs fetched copy."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from planner.errors import CurrencyError
from planner.fx import SNAPSHOT_PATH, FxFormatError, convert, convert_exact, load_rates, parse_ecb_xml

# Synthetic test document (made-up rates, not ECB data): only the format matters here.
LATER = """<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
  <gesmes:subject>Reference rates</gesmes:subject>
  <Cube><Cube time='2026-11-27'><Cube currency='USD' rate='1.2000'/><Cube currency='GBP' rate='0.9000'/></Cube></Cube>
</gesmes:Envelope>"""
EARLIER = LATER.replace("2026-11-27", "2026-01-05")


def test_shipped_snapshot_is_a_valid_dated_ecb_file():
    when, rates = parse_ecb_xml(SNAPSHOT_PATH.read_bytes())
    assert when == date(2026, 10, 2)
    assert rates["USD"] == Decimal("1.1225") and rates["GBP"] == Decimal("0.85033")
    assert rates["CHF"] == Decimal("0.9279") and rates["JPY"] == Decimal("176.99")
    assert rates["EUR"] == 1 and len(rates) == 30  # 29 published currencies + EUR
    readme = (SNAPSHOT_PATH.parent / "README.md").read_text(encoding="utf-8")
    assert "2026-10-02" in readme or "2 October 2026" in readme


def test_conversion_to_the_cent():
    rates = {"EUR": Decimal(1), "USD": Decimal("1.1225"), "GBP": Decimal("0.85033"), "JPY": Decimal("176.99")}
    # 100 USD -> EUR: 100 / 1.1225 = 89.0868... -> 89.09
    assert convert(Decimal("100"), "USD", "EUR", rates) == Decimal("89.09")
    # 100 EUR -> USD: 100 x 1.1225 = 112.25
    assert convert(Decimal("100"), "EUR", "usd", rates) == Decimal("112.25")
    # 100 GBP -> USD via EUR: 100 / 0.85033 x 1.1225 = 132.00757... -> 132.01
    assert convert(Decimal("100"), "GBP", "USD", rates) == Decimal("132.01")
    # rounding happens once, half-up: 0.125 EUR -> 0.13 (banker's rounding would give 0.12)
    assert convert(Decimal("0.125"), "EUR", "EUR", rates) == Decimal("0.13")
    # unrounded path keeps the digits for sums rounded later
    assert convert_exact(Decimal("100"), "USD", "EUR", rates).quantize(Decimal("0.0001")) == Decimal("89.0869")
    # EUR -> USD -> EUR round trip stays within a cent
    back = convert(convert(Decimal("6480"), "EUR", "USD", rates), "USD", "EUR", rates)
    assert abs(back - Decimal("6480")) <= Decimal("0.01")


def test_unknown_currency_raises_currency_error():
    rates = {"EUR": Decimal(1), "USD": Decimal("1.1225")}
    for bad in ("XYZ", "BGN", ""):
        with pytest.raises(CurrencyError):
            convert(Decimal(1), bad, "EUR", rates)
        with pytest.raises(CurrencyError):
            convert(Decimal(1), "EUR", bad, rates)
    snapshot = load_rates(user_dir=Path("/nonexistent-planner-fx"))
    with pytest.raises(CurrencyError, match="BGN"):
        snapshot.rate("BGN")  # Bulgaria joined the euro; the ECB publishes no BGN rate any more


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty"),
        ("<html><body>503 Service Unavailable</body></html>", "root element"),
        ("<gesmes:Envelope xmlns:gesmes='http://www.gesmes.org/xml/2002-08-01'><Cube>", "well-formed"),
        (LATER.replace("2026-11-27", "2026-13-40"), "bad date"),
        (LATER.replace("1.2000", "-1"), "positive"),
        (LATER.replace("1.2000", "abc"), "not a number"),
        (LATER.replace("'GBP'", "'USD'"), "twice"),
        (LATER.replace("'GBP'", "'gbp'"), "currency code"),
        (LATER.replace("<Cube currency='USD' rate='1.2000'/><Cube currency='GBP' rate='0.9000'/>", ""), "no rates"),
    ],
)
def test_garbage_is_rejected(text, reason):
    with pytest.raises(FxFormatError, match=reason):
        parse_ecb_xml(text)


def test_load_rates_prefers_the_fresher_copy(tmp_path):
    today = date(2026, 11, 30)
    snap = load_rates(today=today, user_dir=tmp_path)
    assert snap.date == date(2026, 10, 2) and snap.age_days == 59 and snap.source.endswith("eurofxref.xml")
    (tmp_path / "eurofxref.xml").write_text(LATER, encoding="utf-8")
    fresh = load_rates(today=today, user_dir=tmp_path)
    assert fresh.date == date(2026, 11, 27) and fresh.age_days == 3
    assert fresh.source == str(tmp_path / "eurofxref.xml")
    (tmp_path / "eurofxref.xml").write_text(EARLIER, encoding="utf-8")
    assert load_rates(today=today, user_dir=tmp_path).date == date(2026, 10, 2)  # older fetch loses
    (tmp_path / "eurofxref.xml").write_text("garbage", encoding="utf-8")
    broken = load_rates(today=today, user_dir=tmp_path)
    assert broken.date == date(2026, 10, 2) and broken.warnings and "ignored" in broken.warnings[0]


def test_env_override_of_the_user_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_FX_DIR", str(tmp_path))
    (tmp_path / "eurofxref.xml").write_text(LATER, encoding="utf-8")
    assert load_rates().date == date(2026, 11, 27)
