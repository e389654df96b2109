"""Real browser: `streamlit run serve.py` (the warmed server in front of app.py) driven by Debian's chromium through Playwright; screenshots kept."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
SHOTS = REPO / "artifacts" / "screenshots"
CHROMIUM = Path(os.environ.get("PLANNER_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
WAIT_MS = 90_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_server(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"streamlit did not answer on {url} within {timeout_s:.0f} s")


def start_server(tmp: Path, port: int) -> subprocess.Popen:
    """`streamlit run serve.py`, as the README says: the page (app.py) behind a warm-up before the first visitor."""
    env = {**os.environ, "PLANNER_PRICE_DB": str(tmp / "no-history.sqlite"), "PYTHONUNBUFFERED": "1"}
    env.pop("PLANNER_DATA_DIR", None)
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "serve.py", "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
        cwd=REPO, env=env, stdout=(tmp / "server.log").open("w"), stderr=subprocess.STDOUT, text=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    tmp = tmp_path_factory.mktemp("ui")
    proc = start_server(tmp, port)
    url = f"http://127.0.0.1:{port}/"
    try:
        wait_for_server(url, proc, tmp / "server.log")
        # the server answers only once the warm-up is over (catalog, speed model, default plan in the caches)
        assert "planner: warmed up in" in (tmp / "server.log").read_text()
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        why = f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install -y chromium`)"
        if os.environ.get("CI"):  # CI installs it (.ci/run): there a missing browser is a failure, not a skip
            pytest.fail(why + "; this test drives a real browser and must not be skipped under CI", pytrace=False)
        pytest.skip(why + " to run the real-browser test; CI runs it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the playwright Python package is missing: pip install -e '.[test]' (no browser download "
                    "needed, the test drives Debian's chromium)", pytrace=False)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def settle(page, chart: bool = True) -> None:
    """Wait until the sidebar, the build table and the Plan chart are drawn (the answer comes first), for a
    screenshot that shows the whole page rather than placeholders."""
    page.get_by_role("textbox", name="Budget", exact=True).wait_for(timeout=WAIT_MS)
    page.get_by_role("table").first.wait_for(timeout=WAIT_MS)  # the build table
    if chart:  # a solver plan has the speed chart; a restored or imported build does not
        page.locator("[data-testid='stVegaLiteChart']:visible canvas, [data-testid='stVegaLiteChart']:visible svg"
                     ).first.wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(1500)  # fonts and the chart's canvas paint


def wait_for_plan(page, title: str = "Recommended:") -> str:
    heading = page.get_by_role("heading", name=re.compile(re.escape(title)))
    heading.first.wait_for(timeout=WAIT_MS)
    page.get_by_text("Speed vs a GTX 1080 Ti").first.wait_for(timeout=WAIT_MS)
    return heading.first.inner_text()


def test_recommendation_renders_and_a_permalink_restores_the_build(server: str, browser) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    first = wait_for_plan(page)
    assert re.search(r"Recommended: .+, EUR \d", first)
    page.wait_for_function("() => location.search.includes('b=v2.')", timeout=WAIT_MS)
    first_url = page.evaluate("location.href")
    settle(page)
    page.screenshot(path=str(SHOTS / "plan.png"), full_page=True)

    budget = page.get_by_role("textbox", name="Budget", exact=True)
    budget.fill("2500")
    budget.press("Enter")
    page.wait_for_function("(before) => { const h = [...document.querySelectorAll('h3')]"
                           ".map(e => e.innerText).find(t => t.startsWith('Recommended:')); return h && h !== before; }",
                           arg=first, timeout=WAIT_MS)
    changed = wait_for_plan(page)
    page.wait_for_function("(old) => location.search.includes('b=v2.') && location.href !== old",
                           arg=first_url, timeout=WAIT_MS)
    link = page.evaluate("location.href")
    page.close()

    fresh = browser.new_page(viewport={"width": 1400, "height": 1000})
    fresh.goto(link)
    restored = wait_for_plan(fresh, "Build restored from a shared link")
    assert changed.split(":", 1)[1].split(",")[0].strip() in restored
    box = fresh.get_by_role("textbox", name="Budget", exact=True)
    box.wait_for(timeout=WAIT_MS)  # the sidebar is drawn after the plan
    fresh.wait_for_function("() => [...document.querySelectorAll('input')].some(e => e.value === '2500')",
                            timeout=WAIT_MS)
    assert box.input_value() == "2500"
    settle(fresh, chart=False)
    fresh.screenshot(path=str(SHOTS / "permalink-restored.png"), full_page=True)
    fresh.get_by_role("tab", name="Share").click()  # the restored build encodes to the very same token
    # no public address is set and the page is on 127.0.0.1: no localhost link, the token itself
    shown = fresh.locator("code").filter(has_text=re.compile(r"^v2\.")).first
    shown.wait_for(timeout=WAIT_MS)
    assert shown.inner_text().strip() == link.split("b=")[1]
    assert fresh.get_by_text("No public address of the planner is set").count() >= 1
    fresh.get_by_role("tab", name="Cloud vs buy").click()
    fresh.get_by_text("Time and cost to finish the sweep").first.wait_for(timeout=WAIT_MS)
    fresh.screenshot(path=str(SHOTS / "cloud-vs-buy.png"), full_page=True)
    fresh.close()
    for shot in ("plan.png", "permalink-restored.png", "cloud-vs-buy.png"):
        assert (SHOTS / shot).stat().st_size > 10_000


def test_plan_chart_rent_or_buy_sentence_and_an_invalid_budget(server: str, browser) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(server)
    wait_for_plan(page)
    page.get_by_text("Speed and sweep time by option").first.wait_for(timeout=WAIT_MS)
    chart = page.locator("[data-testid='stVegaLiteChart'], .vega-embed").first
    chart.wait_for(timeout=WAIT_MS)
    chart.locator("canvas, svg").first.wait_for(timeout=WAIT_MS)  # drawn, not just a placeholder
    settle(page)
    chart.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "plan-chart.png"), full_page=True)

    page.get_by_role("tab", name="Cloud vs buy").click()
    sentence = page.get_by_text(re.compile(r"^(Rent|Buy): ")).first
    sentence.wait_for(timeout=WAIT_MS)
    assert re.search(r"(sweeps like this a month|never)", sentence.inner_text())
    page.get_by_text("Sweeps on the chart").first.wait_for(timeout=WAIT_MS)
    page.locator("[data-testid='stVegaLiteChart']:visible").first.wait_for(timeout=WAIT_MS)
    page.screenshot(path=str(SHOTS / "rent-or-buy.png"), full_page=True)

    page.get_by_role("tab", name="Plan").click()
    budget = page.get_by_role("textbox", name="Budget", exact=True)
    budget.fill("7.000")
    budget.press("Enter")
    page.get_by_text(re.compile("ambiguous")).first.wait_for(timeout=WAIT_MS)
    page.wait_for_timeout(1000)
    page.wait_for_function("() => ![...document.querySelectorAll('h3')].some(e => e.innerText.startsWith('Recommended:'))",
                           timeout=WAIT_MS)  # the old plan is gone, not left beside the message
    page.screenshot(path=str(SHOTS / "invalid-budget.png"), full_page=True)
    budget.fill("7k")
    budget.press("Enter")
    wait_for_plan(page)
    page.close()
    for shot in ("plan-chart.png", "rent-or-buy.png", "invalid-budget.png"):
        assert (SHOTS / shot).stat().st_size > 10_000
