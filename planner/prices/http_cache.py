"""On-disk HTTP cache on hishel's SQLite storage, keyed by URL, so a re-run does not hit the shop again.

hishel stores and expires the responses; we keep one decision: how old an answer may be for its use
(a page 6 h, robots.txt 24 h). The lookup happens before the politeness gate, so a cache hit never
waits for the host's turn; that is why the fetcher reads the storage here rather than through
hishel's httpx transport.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from hishel import Headers, Request, Response, SqliteStorage

_FETCHED_AT = "x-planner-fetched-at"  # stored beside the response headers: when we fetched it
_KEEP_S = 7 * 24 * 3600  # hishel drops an entry after this, whatever max-age a caller asks for


def default_cache_path() -> Path:
    """$PLANNER_HTTP_CACHE, else the user cache dir's http-cache.sqlite ($PLANNER_HOME/cache when that is set)."""
    from planner.resources import user_cache_dir
    from planner.settings import current

    path = current().http_cache
    if path is not None:
        return path

    return user_cache_dir() / "http-cache.sqlite"


@dataclass(frozen=True)
class CachedResponse:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    fetched_at: float  # epoch seconds


def _key(url: str) -> str:
    return hashlib.sha256(f"GET {url}".encode()).hexdigest()


class HttpCache:
    """Successful responses by URL. `get` returns None when absent or older than max_age_s."""

    def __init__(self, path: Optional[str | Path] = None, max_age_s: float = 6 * 3600) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # an unwritable PLANNER_HOME (or $PLANNER_HTTP_CACHE): one line naming it
            from planner.atomicfile import fs_error

            raise fs_error(self.path, exc, "the HTTP cache",
                           f"check PLANNER_HOME or PLANNER_HTTP_CACHE ({self.path.parent}) is a writable directory")
        self.max_age_s = max_age_s
        self._storage = SqliteStorage(database_path=self.path, default_ttl=_KEEP_S)

    def get(self, url: str, max_age_s: Optional[float] = None, now: Optional[float] = None
            ) -> Optional[CachedResponse]:
        limit = self.max_age_s if max_age_s is None else max_age_s
        now = time.time() if now is None else now
        best: Optional[CachedResponse] = None
        for entry in self._storage.get_entries(_key(url)):
            headers = {k.lower(): v for k, v in entry.response.headers.items()}
            try:
                fetched = float(headers.pop(_FETCHED_AT, "nan"))
            except ValueError:
                continue
            if not now - fetched <= limit:  # also skips NaN (an entry we did not write)
                continue
            if best is None or fetched > best.fetched_at:
                body = b"".join(entry.response.stream or [])  # type: ignore[arg-type]
                best = CachedResponse(url, entry.response.status_code, headers, body, fetched)
        return best

    def put(self, url: str, status: int, headers: dict[str, str], body: bytes, now: Optional[float] = None) -> None:
        self.delete(url)  # one answer per URL: the newest
        stamp = time.time() if now is None else now
        stored = {k.lower(): v for k, v in headers.items() if k.lower() not in ("content-encoding", "transfer-encoding")}
        stored[_FETCHED_AT] = repr(stamp)
        entry = self._storage.create_entry(
            Request("GET", url), Response(status, Headers(stored), stream=iter([body])), _key(url),
        )
        for _ in entry.response.stream or []:  # type: ignore[union-attr]
            pass  # hishel saves the body as it is read

    def delete(self, url: str) -> None:
        for entry in self._storage.get_entries(_key(url)):
            self._storage.remove_entry(entry.id)

    def close(self) -> None:
        self._storage.close()
