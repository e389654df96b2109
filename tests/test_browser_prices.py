"""Real browser (Debian's chromium through Playwright): a friend's Markdown list imported on the Share tab, his
prices kept by the user's choice, and the Plan tab then prices the build at them."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest

from tests.test_browser import SHOTS, WAIT_MS, browser, free_port, start_server, wait_for_plan, wait_for_server  # noqa: F401

pytestmark = pytest.mark.browser
FRIEND = (Path(__file__).parent / "data" / "real" / "lists" / "friend_rtx5090_fr.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    tmp = tmp_path_factory.mktemp("ui-prices")
    proc = start_server(tmp, port)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_server(url, proc, tmp / "server.log")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_the_friends_list_kept_on_the_share_tab_prices_the_plan(server: str, browser) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1100})
    page.goto(server)
    wait_for_plan(page)
    page.get_by_role("tab", name="Share").click()
    box = page.get_by_role("textbox", name="Build to import")
    box.wait_for(timeout=WAIT_MS)
    box.fill(FRIEND)
    page.get_by_role("button", name="Import", exact=True).click()
    page.get_by_text("The list's prices against the catalog's").first.wait_for(timeout=WAIT_MS)
    table = page.get_by_role("table").filter(has_text="Difference").first
    assert "EUR 2349.00" in table.inner_text() and "EUR -1851.00" in table.inner_text()
    page.get_by_role("button", name="Plan with the list's prices").click()
    page.get_by_text("Planning with the list's prices: 8 kept").first.wait_for(timeout=WAIT_MS)
    page.screenshot(path=str(SHOTS / "share-list-prices-kept.png"), full_page=True)
    page.get_by_role("tab", name="Plan").click()
    cell = page.get_by_role("cell", name="EUR 2 349.00 @ LDLC")
    cell.first.wait_for(timeout=WAIT_MS)
    assert page.get_by_role("cell", name="from the shared list").count() >= 8
    page.screenshot(path=str(SHOTS / "plan-at-the-lists-prices.png"), full_page=True)
    page.close()


def test_the_html_export_opens_offline_and_shows_every_part_and_price(browser, tmp_path, monkeypatch) -> None:
    import json

    from typer.testing import CliRunner

    from planner.cli import app

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    runner = CliRunner()
    runner.invoke(app, ["prices", "add", "gpu-nvidia-rtx5090-fe", "2349", "--shop", "LDLC",
                        "--url", "https://www.ldlc.com/fiche/PB00000000.html"])
    res = runner.invoke(app, ["recommend", "--budget", "7000", "--gpus", "1", "--json"])
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(res.stdout, encoding="utf-8")
    page_path = tmp_path / "build.html"
    assert runner.invoke(app, ["share", "export", str(plan_path), "--format", "html", "-o", str(page_path)]).exit_code == 0
    context = browser.new_context(offline=True)
    asked: list[str] = []

    def block(route) -> None:  # nothing but the file itself may load
        asked.append(route.request.url)
        route.continue_() if route.request.url.startswith("file:") else route.abort()

    context.route("**/*", block)
    page = context.new_page()
    page.goto(page_path.as_uri())
    text = page.inner_text("body")
    plan = json.loads(res.stdout)["plans"][0]
    for ln in plan["parts"]:
        assert ln["name"] in text
        amount = f"{float(ln['price']['amount']):,.2f}".replace(",", " ")
        assert f"EUR {amount}" in text, (ln["name"], amount)
    assert f"EUR {float(plan['total']['amount']):,.2f}".replace(",", " ") in text
    assert page.get_by_role("link", name="LDLC").get_attribute("href") == "https://www.ldlc.com/fiche/PB00000000.html"
    assert [u for u in asked if not u.startswith("file:")] == []
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "share-html-offline.png"), full_page=True)
    page.emulate_media(media="print")  # printable: the print layout keeps every part and prints the links' addresses
    after = page.evaluate("getComputedStyle(document.querySelector('a[href]'), '::after').content")
    assert "attr(href)" in after or "ldlc.com/fiche" in after
    assert page.pdf(format="A4").startswith(b"%PDF")
    context.close()
