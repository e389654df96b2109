"""Benchmark listing parsing: search/listing pages per second with the retailer selectors, and full extract.

Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/bench_listings.py [--passes 7] [--baseline c011e72]

Reads the saved real search pages (../shared/retail-pages, LDLC and Materiel.net) and the written
shop excerpts (tests/data/shops). For each page it times, median over the passes:
  - listing: `listing_offers` on an already loaded Page (the selector step alone, including whatever
    parse that step does itself, e.g. the BeautifulSoup tree), per page;
  - extract: the whole `extract(bytes, url)` (decode, lxml tree, structured data, listing), per page.
With --baseline REV, `listing_offers` of planner/prices/listings.py as it was at git revision REV is
loaded beside the current one and timed in the same process, passes interleaved (A/B on one machine
load), on the same Page objects; both must return the same offers.
Prints figures only (no pass/fail); they are copied by hand into docs/benchmarks-prices.md.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import subprocess
import tempfile
import os
import platform
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from planner.prices.extract import extract  # noqa: E402
from planner.prices.listings import listing_offers  # noqa: E402
from planner.prices.page import Page  # noqa: E402
from planner.prices.retailers import Registry  # noqa: E402

SHARED = REPO.parent / "shared" / "retail-pages"
SHOPS = REPO / "tests" / "data" / "shops"
SEARCH_PAGES = {
    "ldlc__search-rtx5070ti.html": "https://www.ldlc.com/recherche/rtx%205070%20ti/",
    "materiel-net__search-rtx5070ti.html": "https://www.materiel.net/recherche/rtx%205070%20ti/",
}


def pages() -> list[tuple[str, bytes, str]]:
    found = [(n, (SHARED / n).read_bytes(), u) for n, u in SEARCH_PAGES.items() if (SHARED / n).exists()]
    manifest = SHOPS / "MANIFEST.csv"
    if manifest.exists():
        with manifest.open(newline="", encoding="utf-8") as f:
            for row in csv.DictReader(f):
                if row["kind"] == "search" and row["file"].endswith(".html"):
                    found.append((row["file"], (SHOPS / row["file"]).read_bytes(), row["url"]))
    return found


def baseline(rev: str):
    """listing_offers from planner/prices/listings.py at git revision `rev`, as a separate module."""
    src = subprocess.run(["git", "show", f"{rev}:planner/prices/listings.py"], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "listings_baseline.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("listings_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.listing_offers


def ab(rev: str, passes: int, todo: list[tuple[str, bytes, str]], reg: Registry) -> None:
    old = baseline(rev)
    print(f"A/B in one process: {rev} (A) vs working tree (B), {passes} interleaved passes, median per page")
    tot_a = tot_b = 0.0
    for name, data, url in todo:
        retailer = reg.for_url(url)
        runs_a, runs_b = [], []
        for _ in range(passes):
            page_a, page_b = Page.load(data, url), Page.load(data, url)
            t = time.perf_counter()
            got_a = old(page_a, retailer, url)
            runs_a.append(time.perf_counter() - t)
            t = time.perf_counter()
            got_b = listing_offers(page_b, retailer, url)
            runs_b.append(time.perf_counter() - t)
        assert got_a == got_b, f"{name}: the two versions disagree"
        a, b = statistics.median(runs_a), statistics.median(runs_b)
        tot_a, tot_b = tot_a + a, tot_b + b
        print(f"  {name}: {len(got_b)} offers (same in A and B); A {a * 1000:.1f} ms ({1 / a:.1f} pages/s), "
              f"B {b * 1000:.1f} ms ({1 / b:.1f} pages/s), B/A time {b / a:.2f}x")
    print(f"all {len(todo)} pages: A {len(todo) / tot_a:.1f} pages/s, B {len(todo) / tot_b:.1f} pages/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--baseline", help="git revision whose listings.py is timed beside the current one")
    args = ap.parse_args()
    reg = Registry()
    todo = pages()
    if not todo:
        sys.exit("no saved search page found (../shared/retail-pages or tests/data/shops)")
    print(f"python {platform.python_version()} on {platform.machine()}, load average "
          f"{os.getloadavg()[0]:.1f}, {args.passes} passes, median per page")
    if args.baseline:
        ab(args.baseline, args.passes, todo, reg)
        return
    total_listing = total_extract = 0.0
    for name, data, url in todo:
        retailer = reg.for_url(url)
        assert retailer is not None and retailer.listing is not None, name
        listing_runs, extract_runs, n = [], [], 0
        for _ in range(args.passes):
            page = Page.load(data, url)
            t = time.perf_counter()
            n = len(listing_offers(page, retailer, url))
            listing_runs.append(time.perf_counter() - t)
            t = time.perf_counter()
            extract(data, url)
            extract_runs.append(time.perf_counter() - t)
        lm, em = statistics.median(listing_runs), statistics.median(extract_runs)
        total_listing += lm
        total_extract += em
        print(f"  {name}: {len(data) / 1000:.0f} kB, {n} offers; listing {lm * 1000:.1f} ms "
              f"({1 / lm:.1f} pages/s); extract {em * 1000:.1f} ms ({1 / em:.1f} pages/s)")
    print(f"all {len(todo)} pages: listing {len(todo) / total_listing:.1f} pages/s, "
          f"extract {len(todo) / total_extract:.1f} pages/s")


if __name__ == "__main__":
    main()
