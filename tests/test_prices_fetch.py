"""The polite fetcher against a real local HTTP server: robots, 429/5xx retries, timeouts, allow-list, cache."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable, Optional

import pytest

from planner.errors import FetchError
from planner.catalog.models import Gpu
from planner.prices.extract import extract
from planner.prices.fetch import USER_AGENT, FetchConfig, PoliteFetcher
from planner.prices.http_cache import HttpCache
from planner.prices.refresh import Job, refresh_async
from planner.prices.retailers import LDLC, Registry, local_retailer
from planner.prices.store import PriceStore

Reply = tuple[int, dict[str, str], bytes]


@dataclass
class Server:
    base: str
    routes: dict[str, Callable[[], Reply]] = field(default_factory=dict)
    log: list[tuple[str, str]] = field(default_factory=list)  # (path, user-agent)

    def paths(self) -> list[str]:
        return [p for p, _ in self.log]


def _serve() -> tuple[ThreadingHTTPServer, Server]:
    state = Server(base="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            state.log.append((self.path, self.headers.get("User-Agent", "")))
            route = state.routes.get(self.path) or state.routes.get(self.path.split("?")[0])
            status, headers, body = route() if route else (404, {}, b"not found")
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return httpd, state


@pytest.fixture()
def server():
    httpd, state = _serve()
    state.routes["/robots.txt"] = lambda: (200, {}, b"User-agent: *\nDisallow: /private/\n")
    yield state
    httpd.shutdown()
    httpd.server_close()


class FakeClock:
    """Monotonic time that only moves when the fetcher sleeps: spacing is checked without real waiting."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, secs: float) -> None:
        self.sleeps.append(round(secs, 6))
        self.now += secs
        await asyncio.sleep(0)


FAST = FetchConfig(min_interval_s=1.0, timeout_s=2.0, max_attempts=3, backoff_s=0.5, retry_after_cap_s=30.0)


def fetcher_for(server: Server, clock: Optional[FakeClock] = None, config: FetchConfig = FAST,
                cache: Optional[HttpCache] = None, registry: Optional[Registry] = None) -> PoliteFetcher:
    reg = registry or Registry((local_retailer("local", server.base),))
    if clock is None:
        return PoliteFetcher(reg, config, cache)
    return PoliteFetcher(reg, config, cache, clock=clock, sleep=clock.sleep)


def run(coro):
    return asyncio.run(coro)


async def _fetch(f: PoliteFetcher, url: str):
    try:
        return await f.fetch(url)
    finally:
        await f.aclose()


def ok(body: bytes | str, ctype: str = "text/html; charset=utf-8") -> Callable[[], Reply]:
    data = body.encode() if isinstance(body, str) else body
    return lambda: (200, {"Content-Type": ctype}, data)


def sequence(*replies: Reply) -> Callable[[], Reply]:
    it = iter(replies)
    last: list[Reply] = []

    def nxt() -> Reply:
        try:
            last[:] = [next(it)]
        except StopIteration:
            pass
        return last[0]

    return nxt


PRODUCT = ('<html><head><script type="application/ld+json">{"@type":"Product","name":"Carte",'
           '"offers":{"price":"499.90","priceCurrency":"EUR","availability":"InStock"}}</script></head>'
           "<body><h1>Carte</h1></body></html>")


# ---------------------------------------------------------------- tests


def test_fetch_sends_identifying_user_agent(server: Server) -> None:
    server.routes["/p"] = ok(PRODUCT)
    r = run(_fetch(fetcher_for(server, FakeClock()), server.base + "/p"))
    assert r.status == 200 and not r.from_cache
    assert extract(r.content, r.url).offers[0].price == Decimal("499.90")
    assert server.paths() == ["/robots.txt", "/p"]
    assert all(ua == USER_AGENT for _, ua in server.log)
    assert re.fullmatch(r"planner/\S+ \(\+https://github\.com/planner; price research\)", USER_AGENT)


def test_robots_disallow_is_honoured(server: Server) -> None:
    server.routes["/private/p"] = ok(PRODUCT)
    with pytest.raises(FetchError, match="robots.txt .* disallows /private/p"):
        run(_fetch(fetcher_for(server, FakeClock()), server.base + "/private/p"))
    assert "/private/p" not in server.paths()


def test_robots_server_error_means_do_not_crawl(server: Server) -> None:
    server.routes["/robots.txt"] = lambda: (503, {}, b"down")
    server.routes["/p"] = ok(PRODUCT)
    with pytest.raises(FetchError, match="robots.txt answered HTTP 503"):
        run(_fetch(fetcher_for(server, FakeClock()), server.base + "/p"))
    assert "/p" not in server.paths()


def test_missing_robots_allows_everything(server: Server) -> None:
    server.routes.pop("/robots.txt")
    server.routes["/p"] = ok(PRODUCT)
    assert run(_fetch(fetcher_for(server, FakeClock()), server.base + "/p")).status == 200


def test_429_retry_after_is_honoured(server: Server) -> None:
    server.routes["/p"] = sequence((429, {"Retry-After": "7"}, b"slow down"), (200, {}, PRODUCT.encode()))
    clock = FakeClock()
    f = fetcher_for(server, clock)
    r = run(_fetch(f, server.base + "/p"))
    assert r.status == 200 and r.attempts == 2
    assert f.retry_waits == [7.0] and 7.0 in clock.sleeps
    assert server.paths().count("/p") == 2


def test_retry_after_is_capped(server: Server) -> None:
    server.routes["/p"] = sequence((429, {"Retry-After": "86400"}, b""), (200, {}, PRODUCT.encode()))
    clock = FakeClock()
    f = fetcher_for(server, clock)
    run(_fetch(f, server.base + "/p"))
    assert f.retry_waits == [FAST.retry_after_cap_s]


def test_500_then_success_backs_off(server: Server) -> None:
    server.routes["/p"] = sequence((500, {}, b"oops"), (502, {}, b"oops"), (200, {}, PRODUCT.encode()))
    clock = FakeClock()
    f = fetcher_for(server, clock)
    r = run(_fetch(f, server.base + "/p"))
    assert r.status == 200 and r.attempts == 3
    assert f.retry_waits == [0.5, 1.0]  # exponential backoff
    assert min(f.gaps()[server.base.split("//")[1]]) >= FAST.min_interval_s  # and still spaced


def test_persistent_500_gives_a_clear_error(server: Server) -> None:
    server.routes["/p"] = lambda: (500, {}, b"oops")
    with pytest.raises(FetchError, match=r"gave up on .*/p after 3 attempt\(s\): HTTP 500"):
        run(_fetch(fetcher_for(server, FakeClock()), server.base + "/p"))
    assert server.paths().count("/p") == 3


def test_timeout(server: Server) -> None:
    def slow() -> Reply:
        time.sleep(1.0)
        return 200, {}, PRODUCT.encode()

    server.routes["/slow"] = slow
    cfg = FetchConfig(min_interval_s=1.0, timeout_s=0.2, max_attempts=2, backoff_s=0.01)
    with pytest.raises(FetchError, match="timed out"):
        run(_fetch(fetcher_for(server, FakeClock(), cfg), server.base + "/slow"))
    assert server.paths().count("/slow") == 2


def test_captcha_page_is_reported_blocked(server: Server, shared_dir: Path) -> None:
    page = (shared_dir / "retail-pages" / "adorama__captcha-denied.html").read_bytes()
    server.routes["/captcha"] = ok(page)
    server.routes["/denied"] = lambda: (403, {}, page)
    r = run(_fetch(fetcher_for(server, FakeClock()), server.base + "/captcha"))
    res = extract(r.content, r.url)
    assert res.blocked and res.offers == []
    with pytest.raises(FetchError, match="bot wall"):
        run(_fetch(fetcher_for(server, FakeClock()), server.base + "/denied"))


def test_malformed_html_does_not_break(server: Server) -> None:
    junk = (b"<html><body><h1>Carte <b>RTX 5070<div class=price>649,90 \xe2\x82\xac<span>"
            b"<p>En stock<button class=add-to-cart>Ajouter au panier</button></td></tr></body")
    server.routes["/bad"] = ok(junk)
    r = run(_fetch(fetcher_for(server, FakeClock()), server.base + "/bad"))
    res = extract(r.content, r.url)
    assert not res.blocked
    assert res.offers[0].price == Decimal("649.90") and res.offers[0].in_stock is True


def test_host_not_in_allow_list_is_never_contacted(server: Server) -> None:
    other_httpd, other = _serve()
    try:
        other.routes["/p"] = ok(PRODUCT)
        f = fetcher_for(server, FakeClock())
        for url in (other.base + "/p", "https://www.example.com/", "ftp://127.0.0.1/x", "file:///etc/passwd"):
            with pytest.raises(FetchError, match="refusing to fetch"):
                run(_fetch(f, url))
        assert other.log == [] and server.log == []
    finally:
        other_httpd.shutdown()
        other_httpd.server_close()


def test_redirect_off_the_allow_list_is_refused(server: Server) -> None:
    server.routes["/go"] = lambda: (302, {"Location": "https://www.example.com/elsewhere"}, b"")
    with pytest.raises(FetchError, match="not a configured retailer"):
        run(_fetch(fetcher_for(server, FakeClock()), server.base + "/go"))


def test_cache_means_second_run_makes_no_request(server: Server, tmp_path: Path) -> None:
    server.routes["/p"] = ok(PRODUCT)
    cache_path = tmp_path / "cache.sqlite"
    first = run(_fetch(fetcher_for(server, FakeClock(), cache=HttpCache(cache_path)), server.base + "/p"))
    n = len(server.log)
    second = run(_fetch(fetcher_for(server, FakeClock(), cache=HttpCache(cache_path)), server.base + "/p"))
    assert second.from_cache and second.content == first.content
    assert len(server.log) == n  # neither the page nor robots.txt was asked again
    stale = HttpCache(cache_path, max_age_s=0)
    third = run(_fetch(fetcher_for(server, FakeClock(), cache=stale), server.base + "/p"))
    assert not third.from_cache and server.paths().count("/p") == 2


def test_min_interval_and_crawl_delay(server: Server) -> None:
    for i in range(3):
        server.routes[f"/p{i}"] = ok(PRODUCT)
    clock = FakeClock()
    f = fetcher_for(server, clock)

    async def go():
        try:
            return await f.fetch_all([server.base + f"/p{i}" for i in range(3)])
        finally:
            await f.aclose()

    run(go())
    gaps = f.gaps()[server.base.split("//")[1]]
    assert len(gaps) == 3 and min(gaps) >= FAST.min_interval_s  # robots + 3 pages, spaced

    server.log.clear()
    server.routes["/robots.txt"] = lambda: (200, {}, b"User-agent: *\nCrawl-delay: 5\n")
    clock2 = FakeClock()
    f2 = fetcher_for(server, clock2)

    async def go2():
        try:
            return await f2.fetch_all([server.base + f"/p{i}" for i in range(3)])
        finally:
            await f2.aclose()

    run(go2())
    assert min(f2.gaps()[server.base.split("//")[1]]) >= 5.0


def test_default_politeness_is_at_least_one_second() -> None:
    assert FetchConfig().min_interval_s >= 1.0


def test_refresh_end_to_end(server: Server, shared_dir: Path, tmp_path: Path) -> None:
    """A local 'LDLC' serves the saved search page and a captcha: matched prices stored, used one left out."""
    server.routes["/search"] = ok((shared_dir / "retail-pages" / "ldlc__search-rtx5070ti.html").read_bytes())
    server.routes["/captcha"] = ok((shared_dir / "retail-pages" / "walmart__captcha-verify.html").read_bytes())
    shop = local_retailer("ldlc-local", server.base, name="LDLC", listing=LDLC.listing)
    registry = Registry((shop,))
    parts = [
        Gpu(id="gainward-5070ti-phoenix-s", name="Gainward GeForce RTX 5070 Ti Phoenix-S", brand="Gainward",
            chip="rtx-5070-ti", vram_gb=16, source="test"),
        Gpu(id="msi-5070ti-ventus", name="MSI GeForce RTX 5070 Ti 16G Ventus 3X OC", brand="MSI",
            chip="rtx-5070-ti", vram_gb=16, source="test"),
    ]
    jobs = [Job(shop, "gpu", server.base + "/search"), Job(shop, "gpu", server.base + "/captcha")]
    clock = FakeClock()
    with PriceStore(tmp_path / "p.sqlite") as store:
        report = run(refresh_async(store, PoliteFetcher(registry, FAST, clock=clock, sleep=clock.sleep), jobs, parts))
        assert report.blocked == [server.base + "/captcha"]
        assert report.stored == 2 and report.errors == []
        latest = store.latest_trusted()
        assert latest["gainward-5070ti-phoenix-s"].price == Decimal("1199.95")  # not the 1079.95 "Occasion"
        assert latest["msi-5070ti-ventus"].price == Decimal("1329.95")
        assert latest["msi-5070ti-ventus"].retailer == "LDLC"
        assert any("used" in u["reason"] for u in report.unmatched)


def test_refresh_cli_rejects_unknown_retailer_and_category(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from planner.cli import app

    for args in (["--retailer", "fnac"], ["--category", "toaster"]):
        res = CliRunner().invoke(app, ["prices", "refresh", *args, "--db", str(tmp_path / "p.sqlite")])
        assert res.exit_code == 2
