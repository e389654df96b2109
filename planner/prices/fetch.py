"""Polite HTTP client: allow-list, robots.txt, per-host spacing, retries with backoff, cache, concurrency across hosts."""

from __future__ import annotations

import asyncio
import email.utils
import math
import re
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Optional, Sequence
from urllib.parse import urljoin, urlsplit

import httpx
from protego import Protego

from planner.errors import FetchError
from planner.prices.http_cache import HttpCache
from planner.prices.page import decode
from planner.prices.retailers import Registry


from planner.settings import USER_AGENT
ROBOTS_AGENT = "planner"


@dataclass(frozen=True)
class FetchConfig:
    """Politeness knobs. Defaults are the production values; tests shrink the waits."""

    min_interval_s: float = 1.0  # between two requests to one host (robots Crawl-delay can raise it)
    timeout_s: float = 20.0  # per connect / read
    deadline_s: float = 60.0  # whole request, however slowly the bytes trickle in
    max_attempts: int = 4  # first try + 3 retries on 429/5xx/timeouts
    backoff_s: float = 1.0  # 1, 2, 4... seconds
    backoff_cap_s: float = 30.0
    retry_after_cap_s: float = 120.0  # a longer Retry-After is cut to this
    crawl_delay_cap_s: float = 60.0  # a longer robots.txt Crawl-delay is cut to this
    max_redirects: int = 5
    max_bytes: int = 10_000_000
    robots_max_age_s: float = 24 * 3600
    max_hosts_in_parallel: int = 8
    user_agent: str = USER_AGENT

    def __post_init__(self) -> None:
        if self.min_interval_s < 0 or self.max_attempts < 1 or not self.deadline_s > 0:
            raise ValueError("min_interval_s must be >= 0, max_attempts >= 1 and deadline_s > 0")


@dataclass(frozen=True)
class FetchResult:
    url: str  # final URL after redirects
    status: int
    content: bytes
    headers: dict[str, str]
    from_cache: bool
    attempts: int = 0

    @property
    def text(self) -> str:
        """The body as text: the Content-Type charset first (see page.decode)."""
        return decode(self.content, self.headers.get("content-type"))


@dataclass
class _Host:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_request: Optional[float] = None
    robots: Optional[Protego] = None
    robots_error: Optional[str] = None
    crawl_delay: float = 0.0
    gaps: list[float] = field(default_factory=list)  # observed spacing, for benchmarks


class PoliteFetcher:
    """Fetch pages from configured retailers only, one request at a time per host, hosts in parallel."""

    def __init__(
        self,
        registry: Optional[Registry] = None,
        config: Optional[FetchConfig] = None,
        cache: Optional[HttpCache] = None,
        transport: Optional[httpx.AsyncBaseTransport] = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.registry = registry or Registry()
        self.config = config or FetchConfig()
        self.cache = cache
        self._transport = transport
        self._clock = clock
        self._sleep = sleep
        self._hosts: dict[str, _Host] = {}
        self._client: Optional[httpx.AsyncClient] = None
        self.requests_made = 0
        self.retry_waits: list[float] = []  # backoff / Retry-After waits, in order (for tests and logs)

    # ------------------------------------------------------------ public API

    async def fetch(self, url: str, use_cache: bool = True) -> FetchResult:
        """GET one URL politely; FetchError with a one-line reason on any failure."""
        self.registry.check_allowed(url)
        if use_cache and self.cache is not None:
            hit = self.cache.get(url)  # the cache's own max-age
            if hit is not None:
                return FetchResult(url, hit.status, hit.body, hit.headers, True)
        result = await self._get_following_redirects(url)
        if self.cache is not None and 200 <= result.status < 300:
            self.cache.put(url, result.status, result.headers, result.content)
        return result

    async def fetch_all(
        self, urls: Sequence[str], on_done: Optional[Callable[[str, FetchResult | FetchError], None]] = None
    ) -> list[FetchResult | FetchError]:
        """Fetch many URLs: hosts run concurrently, each host's URLs one after another. Input order kept."""
        results: list[FetchResult | FetchError | None] = [None] * len(urls)
        by_host: dict[str, list[int]] = {}
        for i, u in enumerate(urls):
            by_host.setdefault(urlsplit(u).netloc.lower(), []).append(i)
        gate = asyncio.Semaphore(self.config.max_hosts_in_parallel)

        async def worker(indices: list[int]) -> None:
            async with gate:
                for i in indices:
                    try:
                        r: FetchResult | FetchError = await self.fetch(urls[i])
                    except FetchError as exc:
                        r = exc
                    results[i] = r
                    if on_done is not None:
                        on_done(urls[i], r)

        await asyncio.gather(*(worker(ix) for ix in by_host.values()))
        return [r for r in results if r is not None]

    def fetch_sync(self, url: str) -> FetchResult:
        async def run() -> FetchResult:
            try:
                return await self.fetch(url)
            finally:
                await self.aclose()

        return asyncio.run(run())

    def gaps(self) -> dict[str, list[float]]:
        """Observed seconds between consecutive requests, per host."""
        return {h: list(s.gaps) for h, s in self._hosts.items()}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    async def __aenter__(self) -> "PoliteFetcher":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # ------------------------------------------------------------ internals

    def _http(self) -> httpx.AsyncClient:
        if self._client is None:
            self._client = httpx.AsyncClient(
                transport=self._transport,
                timeout=httpx.Timeout(self.config.timeout_s),
                headers={"User-Agent": self.config.user_agent, "Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"},
                follow_redirects=False,
            )
        return self._client

    def _host(self, netloc: str) -> _Host:
        h = self._hosts.get(netloc)
        if h is None:
            h = self._hosts[netloc] = _Host()
        return h

    async def _get_following_redirects(self, url: str) -> FetchResult:
        current = url
        for _ in range(self.config.max_redirects + 1):
            self.registry.check_allowed(current)
            await self._check_robots(current)
            result = await self._get_with_retries(current)
            if result.status in (301, 302, 303, 307, 308) and result.headers.get("location"):
                current = urljoin(current, result.headers["location"])
                continue
            if result.status >= 400:
                raise FetchError(_status_message(current, result))
            return result
        raise FetchError(f"too many redirects fetching {url}")

    async def _turn(self, host: _Host) -> None:
        """Wait until this host may be asked again: min interval (or its Crawl-delay) after the end of
        the previous response, so the shop never sees two of our requests closer than that."""
        interval = max(self.config.min_interval_s, host.crawl_delay)
        if host.last_request is not None:
            wait = host.last_request + interval - self._clock()
            if wait > 0:
                await self._sleep(wait)
            host.gaps.append(self._clock() - host.last_request)

    async def _once(self, url: str) -> FetchResult:
        """One GET under the host's lock and spacing; the body is capped at max_bytes."""
        host = self._host(urlsplit(url).netloc.lower())
        async with host.lock:
            await self._turn(host)
            self.requests_made += 1
            try:
                return await asyncio.wait_for(self._read(url), self.config.deadline_s)
            except asyncio.TimeoutError:
                raise httpx.ReadTimeout(f"no complete answer within {self.config.deadline_s:g} s") from None
            finally:
                host.last_request = self._clock()

    async def _read(self, url: str) -> FetchResult:
        async with self._http().stream("GET", url) as resp:
            chunks, total = [], 0
            async for chunk in resp.aiter_bytes():
                total += len(chunk)
                if total > self.config.max_bytes:
                    raise FetchError(f"{url} is larger than {self.config.max_bytes} bytes")
                chunks.append(chunk)
            headers = {k.lower(): v for k, v in resp.headers.items()}
            return FetchResult(str(resp.url), resp.status_code, b"".join(chunks), headers, False)

    async def _get_with_retries(self, url: str) -> FetchResult:
        cfg = self.config
        last_error = ""
        delay: Optional[float]  # seconds before the next attempt
        for attempt in range(1, cfg.max_attempts + 1):
            try:
                result = await self._once(url)
            except httpx.TimeoutException as exc:
                last_error = f"timed out ({exc or f'{cfg.timeout_s:g} s without data'})"
                delay = self._backoff(attempt)
            except httpx.TransportError as exc:
                last_error = f"network error ({type(exc).__name__})"
                delay = self._backoff(attempt)
            except httpx.HTTPError as exc:  # a body that does not decode (bad gzip...): retrying will not help
                raise FetchError(f"{url}: unreadable answer ({type(exc).__name__}: {exc})"[:300]) from None
            else:
                if result.status != 429 and result.status < 500:
                    return FetchResult(result.url, result.status, result.content, result.headers, False, attempt)
                last_error = f"HTTP {result.status}"
                delay = self._retry_after(result) if result.status in (429, 503) else None
                if delay is None:
                    delay = self._backoff(attempt)
            if attempt < cfg.max_attempts:
                self.retry_waits.append(delay)
                await self._sleep(delay)
        raise FetchError(f"gave up on {url} after {cfg.max_attempts} attempt(s): {last_error}")

    def _backoff(self, attempt: int) -> float:
        return min(self.config.backoff_s * (2 ** (attempt - 1)), self.config.backoff_cap_s)

    def _retry_after(self, result: FetchResult) -> Optional[float]:
        """Seconds a Retry-After header asks for (delta or HTTP date), capped; None when unreadable ('²')."""
        return parse_retry_after(result.headers.get("retry-after"), self.config.retry_after_cap_s)

    async def _check_robots(self, url: str) -> None:
        parts = urlsplit(url)
        netloc = parts.netloc.lower()
        host = self._host(netloc)
        if host.robots is None and host.robots_error is None:
            await self._load_robots(f"{parts.scheme}://{parts.netloc}/robots.txt", host)
        if host.robots_error is not None:
            raise FetchError(f"not fetching {url}: {host.robots_error}")
        assert host.robots is not None
        if not host.robots.can_fetch(url, ROBOTS_AGENT):
            raise FetchError(f"robots.txt of {netloc} disallows {parts.path or '/'}")

    async def _robots_body(self, robots_url: str) -> tuple[int, bytes]:
        """GET robots.txt, following up to 5 redirects on the same host (another host: no rules)."""
        url = robots_url
        for _ in range(5):
            r = await self._once(url)
            location = r.headers.get("location")
            if r.status in (301, 302, 303, 307, 308) and location:
                nxt = urljoin(url, location)
                if urlsplit(nxt).netloc.lower() != urlsplit(robots_url).netloc.lower():
                    return 404, b""
                url = nxt
                continue
            return r.status, r.content
        return 404, b""

    async def _load_robots(self, robots_url: str, host: _Host) -> None:
        """RFC 9309: 2xx -> rules; 4xx -> no rules; 5xx or unreachable -> assume everything disallowed."""
        body: Optional[bytes] = None
        status = 0
        cached = self.cache.get(robots_url, self.config.robots_max_age_s) if self.cache is not None else None
        if cached is not None:
            body, status = cached.body, cached.status
        else:
            try:
                status, body = await self._robots_body(robots_url)
            except (httpx.HTTPError, FetchError) as exc:
                host.robots_error = f"robots.txt unreachable ({type(exc).__name__})"
                return
            if self.cache is not None and status < 500:
                self.cache.put(robots_url, status, {}, body if 200 <= status < 300 else b"")
        if 200 <= status < 300:
            rp = Protego.parse(decode(body or b"")[:500_000])
        elif 400 <= status < 500:
            rp = Protego.parse("")  # no robots.txt: everything allowed
        else:
            host.robots_error = f"robots.txt answered HTTP {status}"
            return
        host.robots = rp
        delay = rp.crawl_delay(ROBOTS_AGENT)
        host.crawl_delay = _capped(delay, self.config.crawl_delay_cap_s)


def _capped(seconds: object, cap: float) -> float:
    """A wait a server asked for, as a finite number of seconds in [0, cap]."""
    try:
        value = float(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return 0.0
    return max(0.0, min(value, cap)) if math.isfinite(value) else 0.0


def parse_retry_after(value: Optional[str], cap: float) -> Optional[float]:
    """Retry-After as seconds in [0, cap]: ASCII digits or an HTTP date; anything else ('²', '1e9') -> None."""
    if not value:
        return None
    value = value.strip()
    if re.fullmatch(r"[0-9]{1,12}", value):
        return _capped(int(value), cap)
    try:
        when = email.utils.parsedate_to_datetime(value)
        secs = when.timestamp() - time.time()
    except (TypeError, ValueError, OverflowError, IndexError):
        return None
    return _capped(secs, cap)


def _status_message(url: str, result: FetchResult) -> str:
    body = result.content[:20000].decode("utf-8", errors="replace").lower()
    if result.status in (403, 405, 429, 503) and any(w in body for w in ("captcha", "are you human", "robot",
                                                                         "access denied", "blocked")):
        return f"{url} answered HTTP {result.status}: blocked by a bot wall (captcha)"
    return f"{url} answered HTTP {result.status}"
