"""Words and numbers on screen: yen without a minor unit, singular 'event', link base from env or the Share tab."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from planner.money import format_money

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parents[1] / "app.py")


def test_yen_has_no_minor_unit_and_euro_keeps_cents() -> None:
    assert format_money(Decimal("218582.65"), "JPY") == "JPY 218 583"
    assert format_money(Decimal("218582.65"), "EUR") == "EUR 218 582.65"


def test_one_event_is_singular(tmp_path) -> None:
    from typer.testing import CliRunner

    from planner.cli import app

    log = tmp_path / "one.csv"
    log.write_text("Level,Date and Time,Source,Event ID,Task Category\r\n"
                   "Critical,13/10/2025 02:05:13,Microsoft-Windows-Kernel-Power,41,(63)\r\n", encoding="utf-8")
    res = CliRunner().invoke(app, ["doctor", "events", str(log)])
    assert "Read 1 event " in res.stdout or "Read 1 event\n" in res.stdout, res.stdout[:300]


def test_link_base_comes_from_env_and_can_be_set_on_the_share_tab(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "none.sqlite"))
    monkeypatch.setenv("PLANNER_BASE_URL", "https://plans.example.org/")
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["tab"] = "Share"  # only the open tab is drawn
    at.run()
    link = next(c.value for c in at.tabs[4].code if "?b=v2." in c.value)
    assert link.startswith("https://plans.example.org/?b=v2.")
    at.text_input(key="share_base").input("https://lab.example.net/planner/")
    at.run()
    link = next(c.value for c in at.tabs[4].code if "?b=v2." in c.value)
    assert link.startswith("https://lab.example.net/planner/?b=v2.")
    at.text_input(key="share_base").input("lab.example.net")
    at.run()
    assert any("must start with http" in e.value for e in at.tabs[4].error)


def test_prices_refresh_from_the_ui_shows_progress_and_stores(monkeypatch, tmp_path) -> None:
    """The Prices tab's button runs the real refresh over httpx.MockTransport (no network), with a progress bar."""
    import sys

    import httpx

    sys.path.insert(0, str(Path(APP).parent))
    import ui.pages_prices as pages_prices
    from planner.prices.fetch import FetchConfig, PoliteFetcher

    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/robots.txt":
            return httpx.Response(404)
        return httpx.Response(200, html="<html><body><p>Aucun produit</p></body></html>")

    async def no_wait(_s: float) -> None:
        return None

    def fake_fetcher(registry):
        return PoliteFetcher(registry, config=FetchConfig(min_interval_s=0, backoff_s=0), sleep=no_wait,
                             transport=httpx.MockTransport(handler))

    monkeypatch.setattr(pages_prices, "make_fetcher", fake_fetcher)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "prices.sqlite"))
    monkeypatch.delenv("PLANNER_BASE_URL", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.session_state["tab"] = "Prices"  # only the open tab is drawn
    at.run()
    at.button(key="price_refresh").click()
    at.run()
    prices = at.tabs[3]
    bars = prices.get("progress")
    assert bars and bars[0].proto.text.startswith("Done:") and bars[0].proto.value == 100
    said = [m.value for m in [*prices.success, *prices.warning] if "price(s) stored" in m.value]
    assert said and "0 without any offer" not in said[0] and "without any offer" in said[0]
    # each page without an offer says why, as `planner prices refresh` does
    assert [c.value for c in prices.caption if c.value.startswith("no offer read on ") and "markup may have changed" in c.value]
    assert seen and all("127.0.0.1" not in u for u in seen)  # it went through the mock, to the real hosts' names
    assert (tmp_path / "prices.sqlite").exists()
