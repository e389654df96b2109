"""On-disk HTTP cache (SQLite, keyed by URL, with a max-age) so a re-run does not hit the shop again."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional


def default_cache_path() -> Path:
    """$PLANNER_HTTP_CACHE, else <user cache dir>/planner/http-cache.sqlite."""
    env = os.environ.get("PLANNER_HTTP_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("planner")) / "http-cache.sqlite"


@dataclass(frozen=True)
class CachedResponse:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    fetched_at: float  # epoch seconds


class HttpCache:
    """Successful responses by URL. `get` returns None when absent or older than max_age_s."""

    def __init__(self, path: Optional[str | Path] = None, max_age_s: float = 6 * 3600) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.max_age_s = max_age_s
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS responses (url TEXT PRIMARY KEY, status INTEGER NOT NULL, "
            "headers TEXT NOT NULL, body BLOB NOT NULL, fetched_at REAL NOT NULL)"
        )

    def get(self, url: str, max_age_s: Optional[float] = None, now: Optional[float] = None
            ) -> Optional[CachedResponse]:
        limit = self.max_age_s if max_age_s is None else max_age_s
        with self._lock:
            r = self._conn.execute(
                "SELECT url, status, headers, body, fetched_at FROM responses WHERE url=?", (url,)
            ).fetchone()
        if r is None:
            return None
        if (now if now is not None else time.time()) - r[4] > limit:
            return None
        return CachedResponse(r[0], r[1], json.loads(r[2]), bytes(r[3]), r[4])

    def put(self, url: str, status: int, headers: dict[str, str], body: bytes, now: Optional[float] = None) -> None:
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (url, status, headers, body, fetched_at) VALUES (?,?,?,?,?)",
                (url, status, json.dumps(headers), body, now if now is not None else time.time()),
            )

    def delete(self, url: str) -> None:
        with self._lock:
            self._conn.execute("DELETE FROM responses WHERE url=?", (url,))

    def close(self) -> None:
        self._conn.close()
