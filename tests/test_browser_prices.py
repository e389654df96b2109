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
