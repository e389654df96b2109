"""`planner prices probe` against a local server standing in for the shops (saved real search pages)."""

from __future__ import annotations

import json
import os
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
import threading

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.prices.fetch import FetchConfig, PoliteFetcher
from planner.prices.probe import probe
from planner.prices.retailers import AMAZON_FR, DEFAULT_RETAILERS, LDLC, MATERIEL_NET, TOPACHAT, Registry, local_retailer

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "retail-pages"
SHOPS = Path(__file__).resolve().parent / "data" / "shops"
# One saved real search page (or real-structure excerpt) per configured shop, with its first result's price.
# A shop added to DEFAULT_RETAILERS without a page here fails test_probe_covers_every_configured_shop.
PROBE_PAGES = {
    "ldlc": ("/ldlc", "1199.95 EUR"),
    "materiel": ("/materiel", "1199.95 EUR"),
    "topachat": ("/topachat", "1299.99 EUR"),
    "amazon": ("/amazon-search", "16.95 USD"),
}
FAST = FetchConfig(min_interval_s=0.0, timeout_s=2.0, deadline_s=5.0, max_attempts=1)


@pytest.fixture(scope="module")
def pages() -> Path:
    if not (SHARED / "MANIFEST.csv").exists():
        if os.environ.get("CI"):
            pytest.fail(f"{SHARED} is missing (CI must have ../shared)")
        pytest.skip(f"../shared not present ({SHARED})")
    return SHARED


@pytest.fixture()
def shop_server(pages: Path):
    routes = {
        "/robots.txt": (200, "text/plain", b"User-agent: *\nDisallow: /private/\n"),
        "/ldlc": (200, "text/html; charset=utf-8", (pages / "ldlc__search-rtx5070ti.html").read_bytes()),
        "/materiel": (200, "text/html; charset=utf-8", (pages / "materiel-net__search-rtx5070ti.html").read_bytes()),
        "/topachat": (200, "application/json", (pages / "topachat__search-api-rtx5070ti.json").read_bytes()),
        "/amazon": (200, "text/html", (pages / "walmart__captcha-verify.html").read_bytes()),
        "/amazon-search": (200, "text/html; charset=utf-8",
                           (SHOPS / "amazon-com__search-portable-charger.excerpt.html").read_bytes()),
        "/changed": (200, "text/html", b"<html><body><h1>Recherche</h1><p>Nouvelle maquette</p></body></html>"),
        "/down": (503, "text/html", b"maintenance"),
    }
    seen: list[str] = []

    class H(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            seen.append(self.path)
            status, ctype, body = routes.get(self.path.split("?")[0], (404, "text/plain", b"no"))
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield base, seen
    httpd.shutdown()
    httpd.server_close()


def _shop(base: str, path: str, like):
    return local_retailer(like.key, base, name=like.name, search_url=f"{base}{path}?q={{query}}",
                          listing=like.listing, api=like.api, decimal_separator=like.decimal_separator)


def test_probe_reports_each_shop(shop_server) -> None:
    base, seen = shop_server
    shops = [_shop(base, "/ldlc", LDLC), _shop(base, "/materiel", MATERIEL_NET), _shop(base, "/topachat", TOPACHAT),
             _shop(base, "/amazon", AMAZON_FR), _shop(base, "/changed", LDLC), _shop(base, "/down", LDLC)]
    results = probe(PoliteFetcher(Registry(tuple(shops[:1])), FAST), shops, "RTX 5070 Ti")
    got = {(r.url.split("?")[0].rsplit("/", 1)[-1]): r for r in results}
    assert got["ldlc"].status == "ok" and "1199.95 EUR" in (got["ldlc"].first or "")
    assert got["materiel"].status == "ok" and got["materiel"].offers > 1
    assert got["topachat"].status == "ok" and "1299.99" in (got["topachat"].first or "")
    assert got["amazon"].status == "blocked"
    assert got["changed"].status == "empty" and "selectors" in (got["changed"].reason or "")
    assert got["down"].status == "fetch-error" and "503" in (got["down"].reason or "")
    assert all(p.endswith("?q=RTX+5070+Ti") for p in seen if not p.startswith("/robots"))


def test_probe_cli_exit_codes(shop_server, monkeypatch) -> None:
    base, _ = shop_server
    import planner.prices.retailers as retailers

    good = (_shop(base, "/ldlc", LDLC),)
    monkeypatch.setattr(retailers, "Registry", lambda: Registry(good))
    res = CliRunner().invoke(app, ["prices", "probe", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)[0]["status"] == "ok"
    bad = (_shop(base, "/changed", LDLC),)
    monkeypatch.setattr(retailers, "Registry", lambda: Registry(bad))
    res = CliRunner().invoke(app, ["prices", "probe"])
    assert res.exit_code == 1 and "empty" in res.output
    res = CliRunner().invoke(app, ["prices", "probe", "--retailer", "fnac"])
    assert res.exit_code == 2


def test_probe_covers_every_configured_shop(shop_server, monkeypatch) -> None:
    """`planner prices probe` with no option probes each configured shop once, each against its own real page."""
    assert set(PROBE_PAGES) == {r.key for r in DEFAULT_RETAILERS}, "a configured shop has no probe page"
    base, seen = shop_server
    import planner.prices.retailers as retailers

    shops = tuple(_shop(base, PROBE_PAGES[r.key][0], r) for r in DEFAULT_RETAILERS)
    monkeypatch.setattr(retailers, "Registry", lambda: Registry(shops))
    res = CliRunner().invoke(app, ["prices", "probe", "--json", "--query", "RTX 5070 Ti"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    assert [g["retailer"] for g in got] == [r.name for r in DEFAULT_RETAILERS]
    for g, shop in zip(got, DEFAULT_RETAILERS):
        assert g["status"] == "ok" and g["offers"] >= 2, g
        assert PROBE_PAGES[shop.key][1] in g["first"], g
    asked = sorted(p.split("?")[0] for p in seen if not p.startswith("/robots"))
    assert asked == sorted(path for path, _ in PROBE_PAGES.values())  # one request per shop, no more
