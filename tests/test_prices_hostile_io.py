"""Issue 13/16 reproducers on the I/O side: a faulty local server, a refresh that must go on, the store and CLI."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import FetchError
from planner.catalog.models import Gpu
from planner.prices.fetch import FetchConfig, PoliteFetcher, parse_retry_after
from planner.prices.refresh import Job, refresh_async
from planner.prices.retailers import Registry, local_retailer
from planner.prices.store import NewObservation, PriceStore

Handler = Callable[[BaseHTTPRequestHandler], None]


def _send(h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes) -> None:
    h.send_response(status)
    for k, v in headers.items():
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


class Faulty:
    """A local HTTP server whose routes are functions writing whatever they like (slow, broken, odd headers)."""

    def __init__(self) -> None:
        self.routes: dict[str, Handler] = {"/robots.txt": lambda h: _send(h, 200, {}, b"User-agent: *\nAllow: /\n")}
        routes = self.routes

        class H(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                route = routes.get(self.path.split("?")[0])
                try:
                    route(self) if route else _send(self, 404, {}, b"no")
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *a: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def faulty():
    s = Faulty()
    yield s
    s.close()


FAST = FetchConfig(min_interval_s=0.0, timeout_s=2.0, deadline_s=2.0, max_attempts=2, backoff_s=0.01,
                   retry_after_cap_s=0.2, crawl_delay_cap_s=0.2)
GPU = Gpu(id="gainward-5070ti-phoenix-s", name="Gainward GeForce RTX 5070 Ti Phoenix-S", brand="Gainward",
          chip="rtx-5070-ti", vram_gb=16, source="test")
PAGE = ("<html><head><title>Gainward GeForce RTX 5070 Ti Phoenix-S</title></head><body>"
        "<h1>Gainward GeForce RTX 5070 Ti Phoenix-S</h1><div class='price'>899,95 €</div>"
        "<button class='add-to-cart'>Ajouter au panier</button></body></html>").encode()


def html(body: bytes, extra: dict[str, str] | None = None) -> Handler:
    return lambda h: _send(h, 200, {"Content-Type": "text/html; charset=utf-8", **(extra or {})}, body)


def fetcher(server: Faulty, config: FetchConfig = FAST) -> PoliteFetcher:
    return PoliteFetcher(Registry((local_retailer("local", server.base),)), config)


async def _get(f: PoliteFetcher, url: str):
    try:
        return await f.fetch(url)
    finally:
        await f.aclose()


def test_one_byte_per_second_server_trips_the_total_deadline(faulty: Faulty) -> None:
    def trickle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "100000")
        h.end_headers()
        for _ in range(30):
            h.wfile.write(b"x")
            h.wfile.flush()
            time.sleep(1.0)

    faulty.routes["/slow"] = trickle
    t0 = time.monotonic()
    with pytest.raises(FetchError, match="timed out"):
        asyncio.run(_get(fetcher(faulty, FetchConfig(min_interval_s=0, timeout_s=3, deadline_s=1.5, max_attempts=1)),
                         faulty.base + "/slow"))
    assert time.monotonic() - t0 < 10  # per-read timeouts alone would wait 30 s here


def test_bad_gzip_body_is_a_fetch_error(faulty: Faulty) -> None:
    faulty.routes["/gz"] = html(b"this is not gzip at all", {"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="unreadable"):
        asyncio.run(_get(fetcher(faulty), faulty.base + "/gz"))


@pytest.mark.parametrize("value,want", [("²", None), ("1e9", None), ("-3", None), ("", None), ("abc", None),
                                        ("99999999999", 120.0), ("5", 5.0), ("Wed, 21 Oct 2015 07:28:00 GMT", 0.0)])
def test_retry_after_is_parsed_defensively_and_capped(value: str, want: float | None) -> None:
    assert parse_retry_after(value, 120.0) == want


def test_retry_after_superscript_does_not_kill_the_fetch(faulty: Faulty) -> None:
    calls = []

    def busy_then_ok(h: BaseHTTPRequestHandler) -> None:
        calls.append(1)
        if len(calls) == 1:
            _send(h, 429, {"Retry-After": "²"}, b"slow down")
        else:
            html(PAGE)(h)

    faulty.routes["/p"] = busy_then_ok
    assert asyncio.run(_get(fetcher(faulty), faulty.base + "/p")).status == 200


def test_crawl_delay_is_capped(faulty: Faulty) -> None:
    faulty.routes["/robots.txt"] = lambda h: _send(h, 200, {}, b"User-agent: *\nCrawl-delay: 99999999\n")
    faulty.routes["/a"] = html(PAGE)
    f = fetcher(faulty)

    async def two() -> None:
        try:
            await f.fetch(faulty.base + "/a", use_cache=False)
            await f.fetch(faulty.base + "/a", use_cache=False)
        finally:
            await f.aclose()

    t0 = time.monotonic()
    asyncio.run(two())
    assert time.monotonic() - t0 < 5 and f._hosts[faulty.base[7:]].crawl_delay == FAST.crawl_delay_cap_s


def test_refresh_isolates_each_bad_page(faulty: Faulty, tmp_path: Path) -> None:
    """A gzip bomb-ish body, a 429 with 'Retry-After: ²', a hostile API payload and deep JSON each fail alone."""
    faulty.routes["/good"] = html(PAGE)
    faulty.routes["/gz"] = html(b"garbage", {"Content-Encoding": "gzip"})
    faulty.routes["/busy"] = lambda h: _send(h, 429, {"Retry-After": "²"}, b"")
    faulty.routes["/api"] = lambda h: _send(h, 200, {"Content-Type": "application/json"},
                                            json.dumps({"result": {"document": {"categories": ["x", 5]}}}).encode())
    faulty.routes["/deep"] = html(("[" * 100_000).encode())
    shop = local_retailer("local", faulty.base, name="Local")
    jobs = [Job(shop, "gpu", faulty.base + p) for p in ("/gz", "/busy", "/api", "/deep", "/good")]
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        report = asyncio.run(refresh_async(store, fetcher(faulty), jobs, [GPU]))
        assert {u for u, _ in report.errors} == {faulty.base + "/gz", faulty.base + "/busy"}
        assert {u for u, _ in report.empty} == {faulty.base + "/api", faulty.base + "/deep"}
        assert all(why.strip() for _, why in report.empty)  # each empty page says why, not just its address
        assert report.stored == 1
        assert store.latest_trusted()[GPU.id].price == Decimal("899.95")


def test_refresh_stores_the_header_charset_price(faulty: Faulty, tmp_path: Path) -> None:
    page = PAGE.replace(b"899,95 \xe2\x82\xac", "1 199,95 €".encode("iso-8859-15"))
    faulty.routes["/p"] = lambda h: _send(h, 200, {"Content-Type": "text/html; charset=ISO-8859-15"}, page)
    shop = local_retailer("local", faulty.base, name="Local")
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        asyncio.run(refresh_async(store, fetcher(faulty), [Job(shop, "gpu", faulty.base + "/p")], [GPU]))
        assert store.latest_trusted()[GPU.id].price == Decimal("1199.95")


def test_refresh_does_not_store_prices_outside_the_category_range(faulty: Faulty, tmp_path: Path) -> None:
    faulty.routes["/p"] = html(PAGE.replace("899,95".encode(), b"2,99"))
    shop = local_retailer("local", faulty.base, name="Local")
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        report = asyncio.run(refresh_async(store, fetcher(faulty), [Job(shop, "gpu", faulty.base + "/p")], [GPU]))
        assert report.stored == 0 and store.history(GPU.id) == []
        assert any("sane range" in u["reason"] for u in report.unmatched)


# ------------------------------------------------------------------ the store's quarantine

def obs(price: str, retailer: str = "A", **kw) -> NewObservation:
    return NewObservation(part_id="gpu-1", retailer=retailer, price=Decimal(price), currency="EUR",
                          category="gpu", **kw)


def test_first_reading_far_from_other_shops_is_quarantined(tmp_path: Path) -> None:
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        s.record([obs("900", "A")], "A")
        s.record([obs("950", "B")], "B")
        far, near = s.record([obs("90", "C")], "C")[0], s.record([obs("920", "D")], "D")[0]
        assert far.status == "suspect" and "median" in (far.reason or "")
        assert near.status == "trusted"
        assert s.latest_trusted()["gpu-1"].retailer == "D"


def test_first_reading_far_from_the_catalog_price_is_quarantined(tmp_path: Path) -> None:
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        assert s.record([obs("89.99", reference=Decimal("899"))], "A")[0].status == "suspect"
        assert s.record([obs("880", "B", reference=Decimal("899"))], "B")[0].status == "trusted"


@pytest.mark.parametrize("price", ["1E+300", "1E+32", "0.000001", "-5", "3.50"])
def test_absurd_amounts_never_become_trusted(tmp_path: Path, price: str) -> None:
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        row = s.record([obs(price)], "A")[0]
        assert row.status == "suspect"
        assert s.latest_trusted() == {}


# ------------------------------------------------------------------ CLI: one line, exit 2, no markup crash

def _cli(*args: str):
    return CliRunner().invoke(app, ["prices", *args])


def _not_sqlite(d: Path) -> Path:
    (d / "notdb").write_text("hello, not sqlite")
    return d / "notdb"


@pytest.mark.parametrize("make", [_not_sqlite, lambda d: d, lambda d: Path("/dev/null")])
@pytest.mark.parametrize("cmd", [["confirm", "1"], ["history", "x"]])
def test_db_that_is_not_a_database(tmp_path: Path, make, cmd: list[str]) -> None:
    path = make(tmp_path)
    res = _cli(*cmd, "--db", str(path))
    assert res.exit_code == 2, res.output
    assert isinstance(res.exception, SystemExit) and len(res.output.strip().splitlines()) == 1
    if path.is_file() and path.name == "notdb":
        assert path.read_text() == "hello, not sqlite"  # never overwritten


def test_confirm_huge_id(tmp_path: Path) -> None:
    res = _cli("confirm", "99999999999999999999999", "--db", str(tmp_path / "p.sqlite"))
    assert res.exit_code == 2 and "99999999999999999999999" in res.output and len(res.output.strip().splitlines()) == 1


def test_markup_in_user_and_page_text(tmp_path: Path) -> None:
    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        s.record([NewObservation(part_id="[/]", retailer="[bold]shop[/]", price=Decimal("100"), currency="EUR")],
                 "[bold]shop[/]")
    res = _cli("history", "[/]", "--db", str(db))
    assert res.exit_code == 0 and "[bold]shop[/]" in res.output
    page = tmp_path / "p.html"
    page.write_text("<html><body><h1>Card [/] [link=http://x]y[/link]</h1><div class='price'>199,95 €</div>"
                    "<button class='add-to-cart'>Ajouter au panier</button></body></html>")
    res = _cli("extract", str(page))
    assert res.exit_code == 0 and "[/]" in res.output and "[link=http://x]" in res.output
    res = _cli("history", "[/]x-unknown", "--db", str(db))
    assert res.exit_code == 2 and isinstance(res.exception, SystemExit)


def test_extract_cli_on_a_crashing_benchmark_shape(tmp_path: Path) -> None:
    page = tmp_path / "b.html"
    page.write_text('<div itemscope itemtype="https://schema.org/BreadcrumbList"><a itemprop="item" href="/">x</a>'
                    '</div><h1>Thing</h1>')
    res = _cli("extract", str(page), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["kind"] in ("empty", "product")


def test_unused_port_is_a_fetch_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    f = PoliteFetcher(Registry((local_retailer("x", base),)), FAST)
    with pytest.raises(FetchError):
        asyncio.run(_get(f, base + "/p"))


def test_absurd_rows_left_by_an_older_version_are_never_offered(tmp_path: Path) -> None:
    """A database where 1e300 was stored as trusted (before this fix) no longer breaks recommend/check."""
    import sqlite3

    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        s.record([obs("900")], "A")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE observations SET price='1E+300'")
    conn.execute("INSERT INTO observations (batch_id, part_id, retailer, price, currency, observed_at, status) "
                 "SELECT batch_id, 'gpu-2', 'A', 'abc', 'EUR', observed_at, 'trusted' FROM observations")
    conn.commit()
    conn.close()
    with PriceStore(db, shop_currency={}) as s:
        assert s.latest_trusted() == {}


def test_history_of_a_damaged_row_is_one_line(tmp_path: Path) -> None:
    import sqlite3

    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        s.record([obs("900")], "A")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE observations SET price='abc'")
    conn.commit()
    conn.close()
    res = _cli("history", "gpu-1", "--db", str(db))
    assert res.exit_code == 2 and "damaged" in res.output and isinstance(res.exception, SystemExit)


def test_refresh_says_why_a_page_gave_no_offer(faulty: Faulty, tmp_path: Path) -> None:
    """A page whose only amount is an auction's bid is reported with the extractor's reason, not just its URL."""
    lot = ("<html><head><title>Gainward GeForce RTX 5070 Ti Phoenix-S | Auctions</title></head><body>"
           "<h1>Gainward GeForce RTX 5070 Ti Phoenix-S</h1><div class='lot'><div>Starting Price 450 €</div>"
           "<div><span>520 €</span><span>4 bids</span></div><button>Place Bid</button></div></body></html>")
    faulty.routes["/lot"] = html(lot.encode())
    faulty.routes["/bare"] = html(b"<html><body><h1>Nothing here</h1></body></html>")
    shop = local_retailer("local", faulty.base, name="Local")
    jobs = [Job(shop, "gpu", faulty.base + p) for p in ("/lot", "/bare")]
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as store:
        report = asyncio.run(refresh_async(store, fetcher(faulty), jobs, [GPU]))
    why = dict(report.empty)
    assert "auction" in why[faulty.base + "/lot"] and report.stored == 0
    assert "markup may have changed" in why[faulty.base + "/bare"]
    assert report.to_json()["empty"][0]["reason"] == why[report.to_json()["empty"][0]["url"]]
