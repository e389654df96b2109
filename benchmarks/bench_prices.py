"""Benchmark prices: extraction throughput on saved pages; a 4-host refresh runs hosts concurrently yet politely.

Run from the repository root:

    python benchmarks/bench_prices.py [--passes 5] [--interval 0.25] [--pages-per-host 4]

Prints medians and ratios (no pass/fail); figures are copied into docs/benchmarks-prices.md.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from planner.prices.extract import extract  # noqa: E402
from planner.prices.fetch import FetchConfig, PoliteFetcher  # noqa: E402
from planner.prices.retailers import Registry, local_retailer  # noqa: E402

SHARED = REPO.parent / "shared" / "retail-pages"
OWN = REPO / "tests" / "data" / "pages"


def saved_pages() -> list[tuple[str, bytes]]:
    files = sorted(p for d in (SHARED, OWN) if d.is_dir() for p in d.iterdir() if p.suffix in (".html", ".json"))
    return [(p.name, p.read_bytes()) for p in files]


def bench_extract(passes: int) -> None:
    pages = saved_pages()
    size_mb = sum(len(b) for _, b in pages) / 1e6
    extract(pages[0][1])  # warm imports and regex caches
    rates, per_page = [], {name: [] for name, _ in pages}
    for _ in range(passes):
        t0 = time.perf_counter()
        for name, data in pages:
            t = time.perf_counter()
            extract(data)
            per_page[name].append(time.perf_counter() - t)
        rates.append(len(pages) / (time.perf_counter() - t0))
    med = statistics.median(rates)
    print(f"extraction: {len(pages)} saved pages ({size_mb:.1f} MB), {passes} passes")
    print(f"  median throughput: {med:.1f} pages/s ({med * size_mb / len(pages):.1f} MB/s)")
    slow = sorted(per_page.items(), key=lambda kv: -statistics.median(kv[1]))[:3]
    for name, times in slow:
        print(f"  slowest: {name}: median {statistics.median(times) * 1000:.0f} ms")


class _Host:
    """A local shop: robots.txt plus N product pages; records when each request arrived."""

    def __init__(self, body: bytes) -> None:
        self.arrivals: list[float] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                if self.path != "/robots.txt":
                    host.arrivals.append(time.monotonic())
                data = b"User-agent: *\nAllow: /\n" if self.path == "/robots.txt" else body
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def min_gap(self) -> float:
        a = sorted(self.arrivals)
        return min((y - x for x, y in zip(a, a[1:])), default=float("nan"))

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _run(hosts: list[_Host], urls: list[str], interval: float) -> float:
    reg = Registry(tuple(local_retailer(f"h{i}", h.base) for i, h in enumerate(hosts)))
    fetcher = PoliteFetcher(reg, FetchConfig(min_interval_s=interval))

    async def go() -> None:
        try:
            await fetcher.fetch_all(urls)
        finally:
            await fetcher.aclose()

    t0 = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - t0


def bench_refresh(interval: float, per_host: int) -> None:
    body = (SHARED / "ldlc__kfa2-rtx3070ti-sg.html").read_bytes() if SHARED.is_dir() else b"<html></html>"
    hosts = [_Host(body) for _ in range(4)]
    try:
        urls = [f"{h.base}/p{i}" for i in range(per_host) for h in hosts]
        concurrent = _run(hosts, urls, interval)
        gaps = [h.min_gap() for h in hosts]
        for h in hosts:
            h.arrivals.clear()
        sequential = sum(_run([h], [f"{h.base}/p{i}" for i in range(per_host)], interval) for h in hosts)
    finally:
        for h in hosts:
            h.close()
    print(f"refresh: 4 local hosts x {per_host} pages (+ robots.txt each), min interval {interval:g} s per host")
    print(f"  concurrent wall time: {concurrent:.2f} s")
    print(f"  same hosts one after another: {sequential:.2f} s (ratio {sequential / concurrent:.2f}x)")
    print("  min gap between page requests per host: " + ", ".join(f"{g:.3f} s" for g in gaps))
    print(f"  every host kept >= {interval:g} s: {all(g >= interval - 0.005 for g in gaps)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--interval", type=float, default=0.25, help="per-host min interval for the refresh run")
    ap.add_argument("--pages-per-host", type=int, default=4)
    args = ap.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    bench_extract(args.passes)
    with tempfile.TemporaryDirectory():
        bench_refresh(args.interval, args.pages_per_host)
    print("command: python benchmarks/bench_prices.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
