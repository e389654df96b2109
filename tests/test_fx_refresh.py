"""`planner fx refresh` against a real local HTTP server: success, HTTP 500, garbage; `planner fx show`."""

from __future__ import annotations

import json
import threading
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import FetchError
from planner.fx import load_rates, refresh

# Synthetic test document (made-up rates, not ECB data).
DAILY = b"""<?xml version="1.0" encoding="UTF-8"?>
<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
  <gesmes:subject>Reference rates</gesmes:subject>
  <gesmes:Sender><gesmes:name>European Central Bank</gesmes:name></gesmes:Sender>
  <Cube><Cube time='2026-11-27'><Cube currency='USD' rate='1.2000'/><Cube currency='GBP' rate='0.9000'/></Cube></Cube>
</gesmes:Envelope>"""
SEEN_AGENTS: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        SEEN_AGENTS.append(self.headers.get("User-Agent", ""))
        routes = {
            "/daily.xml": (200, DAILY),
            "/error": (500, b"internal error"),
            "/garbage": (200, b"<html><body>Maintenance</body></html>"),
            "/truncated": (200, DAILY[:200]),
        }
        status, body = routes.get(self.path, (404, b"not found"))
        self.send_response(status)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_refresh_success_writes_the_user_copy(server, tmp_path):
    rates = refresh(f"{server}/daily.xml", user_dir=tmp_path, today=date(2026, 11, 30))
    assert rates.date == date(2026, 11, 27) and rates.age_days == 3
    assert (tmp_path / "eurofxref.xml").read_bytes() == DAILY
    assert load_rates(user_dir=tmp_path).date == date(2026, 11, 27)  # fresher than the shipped snapshot
    assert SEEN_AGENTS and SEEN_AGENTS[-1].startswith("planner/")


@pytest.mark.parametrize("path, reason", [("/error", "HTTP 500"), ("/garbage", "root element"),
                                          ("/truncated", "well-formed"), ("/missing", "HTTP 404")])
def test_refresh_failure_keeps_what_was_there(server, tmp_path, path, reason):
    before = b"previous copy"
    (tmp_path / "eurofxref.xml").write_bytes(before)
    with pytest.raises(FetchError, match=reason):
        refresh(f"{server}{path}", user_dir=tmp_path)
    assert (tmp_path / "eurofxref.xml").read_bytes() == before
    assert not list(tmp_path.glob(".*tmp"))


def test_refresh_unreachable_host(tmp_path):
    with pytest.raises(FetchError, match="could not reach"):
        refresh("http://127.0.0.1:9/daily.xml", user_dir=tmp_path, timeout_s=2)


def test_cli_refresh_and_show(server, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_FX_DIR", str(tmp_path))
    runner = CliRunner()
    bad = runner.invoke(app, ["fx", "refresh", "--url", f"{server}/error"])
    assert bad.exit_code == 1
    assert "HTTP 500" in bad.stderr and "2026-10-02" in bad.stderr and "days old" in bad.stderr
    assert not (tmp_path / "eurofxref.xml").exists()
    shown = runner.invoke(app, ["fx", "show", "--json"])
    assert shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["date"] == "2026-10-02" and data["rates"]["USD"] == "1.1225" and data["base"] == "EUR"
    ok = runner.invoke(app, ["fx", "refresh", "--url", f"{server}/daily.xml", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["in_use"]["date"] == "2026-11-27"
    human = runner.invoke(app, ["fx", "show"])
    assert human.exit_code == 0 and "2026-11-27" in human.stdout and "USD" in human.stdout


def test_refresh_into_an_unwritable_dir_is_a_fetch_error_naming_the_fix(server, tmp_path):
    """The store goes through planner.atomicfile; a folder that is a file is one line that names PLANNER_FX_DIR, and
    the front end still treats it as a failed refresh (the rates in use stay)."""
    folder = tmp_path / "not-a-dir"
    folder.write_bytes(b"a file where the folder should be")
    with pytest.raises(FetchError) as info:
        refresh(f"{server}/daily.xml", user_dir=folder, today=date(2026, 11, 30))
    message = str(info.value)
    assert "cannot write the ECB rates" in message and "PLANNER_FX_DIR" in message and "\n" not in message
    assert folder.read_bytes() == b"a file where the folder should be"
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-dir"]  # no temporary file left behind


def test_refresh_replaces_a_planted_link_not_its_target(server, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"keep me")
    store = tmp_path / "fx"
    store.mkdir()
    (store / "eurofxref.xml").symlink_to(victim)
    refresh(f"{server}/daily.xml", user_dir=store, today=date(2026, 11, 30))
    assert victim.read_bytes() == b"keep me"
    assert not (store / "eurofxref.xml").is_symlink() and (store / "eurofxref.xml").read_bytes() == DAILY
