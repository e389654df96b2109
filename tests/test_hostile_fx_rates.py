"""Issue 29 item 6: fx refresh stores no absurd rate. Non-finite, tiny or huge rates are refused; a rate that
moves more than x1.5 against the last stored one is refused with the factor said; a stored bad rate never
makes a USD plan an internal error. Plus a hypothesis fuzz of the rate file."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hostile_cli import run
from planner import fx
from planner.errors import FetchError
from planner.fx import MAX_JUMP, FxFormatError, load_rates, parse_ecb_xml, refresh

TODAY = date(2026, 11, 30)


def doc(rate: str, code: str = "USD", day: str = "2026-11-27") -> bytes:
    return ("<?xml version='1.0' encoding='UTF-8'?><gesmes:Envelope "
            "xmlns:gesmes='http://www.gesmes.org/xml/2002-08-01' "
            "xmlns='http://www.ecb.int/vocabulary/2002-08-01/eurofxref'><gesmes:subject>Reference rates"
            f"</gesmes:subject><Cube><Cube time='{day}'><Cube currency='{code}' rate='{rate}'/>"
            "<Cube currency='JPY' rate='163.10'/></Cube></Cube></gesmes:Envelope>").encode()


def serve(body: bytes) -> httpx.Client:
    return httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=httpx.ByteStream(body))))


@pytest.mark.parametrize("rate", ["1E-30", "1E+999999", "0.00000001", "99999999", "NaN", "Infinity", "0", "-1.1"])
def test_absurd_rates_are_refused_and_nothing_is_stored(tmp_path, rate):
    with pytest.raises(FetchError, match="sane range|not a positive number"):
        refresh("https://ecb.example/daily.xml", user_dir=tmp_path, today=TODAY, client=serve(doc(rate)))
    assert not (tmp_path / "eurofxref.xml").exists()


def test_a_jump_beyond_the_stated_factor_is_refused(tmp_path):
    shipped = load_rates(today=TODAY, user_dir=tmp_path).rate("USD")
    tenfold = str((shipped * 10).quantize(Decimal("0.0001")))
    with pytest.raises(FetchError, match=rf"10\.00x the last stored {shipped}.*x{MAX_JUMP}"):
        refresh("https://ecb.example/daily.xml", user_dir=tmp_path, today=TODAY, client=serve(doc(tenfold)))
    assert not (tmp_path / "eurofxref.xml").exists()
    tenth = str((shipped / 10).quantize(Decimal("0.0001")))
    with pytest.raises(FetchError, match="0.10x|10.00x"):
        refresh("https://ecb.example/daily.xml", user_dir=tmp_path, today=TODAY, client=serve(doc(tenth)))
    near = str((shipped * Decimal("1.03")).quantize(Decimal("0.0001")))
    got = refresh("https://ecb.example/daily.xml", user_dir=tmp_path, today=TODAY, client=serve(doc(near)))
    assert got.rate("USD") == Decimal(near)  # a normal move is stored


@pytest.mark.parametrize("rate", ["1E-30", "1E+999999"])
def test_a_stored_bad_rate_never_breaks_a_usd_plan(tmp_path, monkeypatch, no_price_history, rate):
    (tmp_path / "fx").mkdir()
    (tmp_path / "fx" / "eurofxref.xml").write_bytes(doc(rate, day="2026-11-27"))
    monkeypatch.setenv("PLANNER_FX_DIR", str(tmp_path / "fx"))
    fx.reference_rates.cache_clear()
    try:
        rates = fx.reference_rates()
        assert rates.rate("USD") != Decimal(rate) and any("ignored the fetched copy" in w for w in rates.warnings)
        r = run("recommend", "--budget", "USD 4000")
        assert r.code in (0, 1) and "internal error" not in r.text and "Traceback" not in r.text, r.text[-1200:]
    finally:
        fx.reference_rates.cache_clear()


@settings(max_examples=300, deadline=None)
@given(rate=st.one_of(st.decimals(allow_nan=True, allow_infinity=True).map(str),
                      st.floats().map(repr), st.text(max_size=12)))
def test_fuzz_a_parsed_rate_is_always_in_the_sane_range(rate):
    try:
        _, rates = parse_ecb_xml(doc(rate.replace("'", "")))
    except FxFormatError:
        return
    assert fx.MIN_RATE <= rates["USD"] <= fx.MAX_RATE and rates["USD"].is_finite()
