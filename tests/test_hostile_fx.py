"""`fx refresh --url` against a hostile local server: endless body, gzip bomb, slow trickle, future date."""

from __future__ import annotations

import gzip
import threading
import time
import tracemalloc
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest

from planner.fx import MAX_BYTES, FxFormatError, read_rates_file, refresh
from planner.errors import FetchError

# Synthetic document (made-up rates, not ECB data); its day is filled in per route.
DOC = ("<?xml version='1.0' encoding='UTF-8'?><gesmes:Envelope xmlns:gesmes='http://www.gesmes.org/xml/2002-08-01' "
       "xmlns='http://www.ecb.int/vocabulary/2002-08-01/eurofxref'><gesmes:subject>Reference rates</gesmes:subject>"
       "<Cube><Cube time='{day}'><Cube currency='USD' rate='1.2000'/></Cube></Cube></gesmes:Envelope>")


BOMB = gzip.compress(b"\0" * 50_000_000, compresslevel=9)  # 50 MB of zeros in about 50 kB


class Hostile(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802
        try:
            if self.path == "/endless":
                self._start({"Content-Type": "application/xml", "Transfer-Encoding": "chunked"})
                chunk = b"<a>" * 20_000
                while True:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            elif self.path == "/bomb":
                self._start({"Content-Encoding": "gzip", "Content-Length": str(len(BOMB))})
                self.wfile.write(BOMB)
            elif self.path == "/slow":
                body = DOC.format(day="2026-11-27").encode()
                self._start({"Content-Length": str(len(body))})
                for i in range(len(body)):
                    self.wfile.write(body[i:i + 1])
                    self.wfile.flush()
                    time.sleep(0.2)
            elif self.path == "/future":
                body = DOC.format(day="9999-12-31").encode()
                self._start({"Content-Length": str(len(body))})
                self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def _start(self, headers: dict[str, str]) -> None:
        self.send_response(200)
        for k, v in headers.items():
            self.send_header(k, v)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.parametrize("path", ["/endless", "/bomb"])
def test_a_huge_body_is_stopped_at_the_cap(server, tmp_path, path):
    tracemalloc.start()
    try:
        with pytest.raises(FetchError, match="more than"):
            refresh(f"{server}{path}", user_dir=tmp_path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * MAX_BYTES  # bounded by the cap, not by what the server sends
    assert not list(tmp_path.iterdir())  # nothing stored


def test_a_slow_server_meets_the_total_deadline(server, tmp_path):
    started = time.monotonic()
    with pytest.raises(FetchError, match="longer than"):
        refresh(f"{server}/slow", user_dir=tmp_path, deadline_s=1.0, timeout_s=5.0)
    assert time.monotonic() - started < 5.0  # the per-read timeout alone would never fire


def test_a_future_rates_file_is_refused(server, tmp_path):
    with pytest.raises(FetchError, match="future"):
        refresh(f"{server}/future", user_dir=tmp_path)
    stored = tmp_path / "future.xml"
    stored.write_text(DOC.format(day="9999-12-31"), encoding="utf-8")
    with pytest.raises(FxFormatError, match="future"):
        read_rates_file(stored, today=date(2026, 12, 1))
