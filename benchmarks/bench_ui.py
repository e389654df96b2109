"""Benchmark: page-load-to-first-recommendation in a real browser (Debian chromium), cold vs warm cache.

Cold = a fresh `streamlit run serve.py` process per load, as the README starts the UI: the server warms up
(imports, catalog, speed model, default plan) before it answers, and the timer starts once it answers.
Cold, no warm-up = a fresh `streamlit run app.py` per load (the first script run imports planner, loads the
catalog and solves while the visitor waits). Warm = a new browser session on a server that has already
answered once (catalog, perf model and this request's solve cached). A one-metric Streamlit page is timed
the same way as the floor set by Streamlit's own frontend. Also times a changed input (the budget) until
the run answering it has finished. Prints medians and the command to reproduce; not a test.

    python benchmarks/bench_ui.py --loads 5
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from tempfile import TemporaryDirectory

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("PLANNER_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
TIMEOUT_MS = 120_000
READY = "Speed vs a GTX 1080 Ti"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


BARE_APP = ('import streamlit as st\nst.title("planner")\nst.text_input("Budget", "7000")\n'
            'st.metric("Speed vs a GTX 1080 Ti", "1.0x")\n')  # one input and the marker the timer waits for


class Server:
    def __init__(self, tmp: Path, script: str = "app.py") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        env = {**os.environ, "PLANNER_PRICE_DB": str(tmp / "none.sqlite")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", script, "--server.headless", "true", "--server.port",
             str(self.port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
             "--server.fileWatcherType", "none"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "_stcore/health", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SystemExit("streamlit did not start within 90 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def load_time(browser, url: str) -> float:
    """Seconds from navigation start to the first recommendation (speed metric) on screen."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    start = time.perf_counter()
    page.goto(url)
    page.get_by_text(READY).first.wait_for(timeout=TIMEOUT_MS)
    elapsed = time.perf_counter() - start
    page.close()
    return elapsed


def change_time(browser, url: str, budgets: list[int]) -> list[float]:
    """Seconds from pressing Enter on a new budget until the run that answers it has finished."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(url)
    page.get_by_text(READY).first.wait_for(timeout=TIMEOUT_MS)
    box = page.get_by_role("textbox", name="Budget", exact=True)
    out = []
    for b in budgets:
        before = page.evaluate("location.href")
        box.fill(str(b))
        start = time.perf_counter()
        box.press("Enter")
        # the script writes the new permalink into the address bar as its last step
        page.wait_for_function("(old) => location.href !== old", arg=before, timeout=TIMEOUT_MS)
        out.append(time.perf_counter() - start)
    page.close()
    return out


def summary(name: str, xs: list[float]) -> str:
    return f"{name:<34} median {statistics.median(xs):6.2f} s   min {min(xs):6.2f}   max {max(xs):6.2f}   (n={len(xs)})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loads", type=int, default=5, help="loads per series (median reported)")
    ap.add_argument("--screenshot", type=Path, default=None, help="also save a screenshot of the warm page here")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    load_before = os.getloadavg()[0]
    with TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        cold, cold_plain = [], []
        for _ in range(args.loads):
            for script, series in (("serve.py", cold), ("app.py", cold_plain)):
                server = Server(Path(tmp), script)
                try:
                    series.append(load_time(browser, server.url))
                finally:
                    server.stop()
        bare_script = Path(tmp) / "bare_app.py"
        bare_script.write_text(BARE_APP)
        bare_cold = []
        for _ in range(args.loads):
            server = Server(Path(tmp), str(bare_script))
            try:
                bare_cold.append(load_time(browser, server.url))
            finally:
                server.stop()
        server = Server(Path(tmp), str(bare_script))
        try:
            load_time(browser, server.url)
            bare = [load_time(browser, server.url) for _ in range(args.loads)]
        finally:
            server.stop()
        server = Server(Path(tmp), "serve.py")
        try:
            load_time(browser, server.url)  # one visit before the timed ones
            warm = [load_time(browser, server.url) for _ in range(args.loads)]
            budgets = [3000 + 137 * i for i in range(args.loads)]
            new_solve = change_time(browser, server.url, budgets)
            cached = change_time(browser, server.url, budgets)
            if args.screenshot:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(server.url)
                page.get_by_text(READY).first.wait_for(timeout=TIMEOUT_MS)
                time.sleep(2)
                page.screenshot(path=str(args.screenshot))
                page.close()
        finally:
            server.stop()
        browser.close()
    print(f"UI benchmark: page load to first recommendation, Debian chromium {CHROMIUM}, {os.cpu_count()} cores, "
          f"load average {load_before:.1f} before / {os.getloadavg()[0]:.1f} after")
    print(summary("cold (fresh serve.py per load)", cold))
    print(summary("cold, no warm-up (app.py)", cold_plain))
    print(summary("warm (new session, cached)", warm))
    print(summary("bare page, cold (one input)", bare_cold))
    print(summary("bare page, warm (one input)", bare))
    print(summary("budget change, new solve", new_solve))
    print(summary("budget change, cached solve", cached))
    print(f"ratio cold/warm median: {statistics.median(cold) / statistics.median(warm):.2f}x")
    med = statistics.median
    print(f"RATIO first recommendation / bare page, cold: {med(cold) / med(bare_cold):.2f}x (target <= 1.5x)")
    print(f"RATIO first recommendation / bare page, warm: {med(warm) / med(bare):.2f}x (target <= 1.5x)")
    print(f"ratio without the warm-up (streamlit run app.py), cold: {med(cold_plain) / med(bare_cold):.2f}x")
    print(f"reproduce: python benchmarks/bench_ui.py --loads {args.loads}")


if __name__ == "__main__":
    main()
