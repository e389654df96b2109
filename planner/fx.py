"""Currency conversion with ECB reference rates: shipped snapshot, user refresh, Decimal arithmetic."""

from __future__ import annotations

import re
import time
import zlib
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping, Optional, Union

from lxml import etree

from planner.resources import SHIPPED_DATA_DIR, user_data_dir
from planner.settings import USER_AGENT
from planner import atomicfile
from planner.errors import CatalogError, CurrencyError, FetchError, InputError
from planner.money import CENT, check_currency

if TYPE_CHECKING:
    import httpx

ECB_DAILY_URL = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"
SNAPSHOT_PATH = SHIPPED_DATA_DIR / "fx" / "eurofxref.xml"
FILE_NAME = "eurofxref.xml"
TIMEOUT_S = 10.0  # connect / between two reads
DEADLINE_S = 30.0  # the whole fetch, however slowly a server trickles its bytes
MAX_BYTES = 1_000_000  # the daily file is ~1.5 kB; anything this large is not it

# Units of a currency per EUR that a reference rate can be: the ECB's extremes are ~0.4 (KWD-like) to ~27 000
# (VND-like); outside this it is a misprint or an attack (1E-30 and 1E+999999 made every USD plan fail).
MIN_RATE = Decimal("0.0001")
MAX_RATE = Decimal("1000000")
# A refresh that moves a rate by more than this factor against the last stored one is refused: reference rates
# move a few percent a month; a 10x rate priced an RTX 4090 at USD 21 327.
MAX_JUMP = Decimal("1.5")

_GESMES = "http://www.gesmes.org/xml/2002-08-01"
_ECB = "http://www.ecb.int/vocabulary/2002-08-01/eurofxref"
_CODE = re.compile(r"^[A-Z]{3}$")


class FxFormatError(CatalogError):
    """A file or answer is not an ECB daily reference-rate XML."""


@dataclass(frozen=True)
class Rates:
    """ECB reference rates of one day: 1 EUR = rates[ccy] units of ccy (EUR itself is 1)."""

    rates: Mapping[str, Decimal]
    date: date
    source: str  # file path or URL the rates were read from
    age_days: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def rate(self, code: str) -> Decimal:
        c = str(code).strip().upper()
        try:
            return self.rates[c]
        except KeyError:
            known = ", ".join(sorted(self.rates))
            raise CurrencyError(
                f"no ECB reference rate for {code!r} in the rates of {self.date.isoformat()} (known: {known})"
            ) from None

    def to_json(self) -> dict[str, object]:
        return {
            "base": "EUR",
            "date": self.date.isoformat(),
            "age_days": self.age_days,
            "source": self.source,
            "rates": {k: str(v) for k, v in sorted(self.rates.items())},
            "warnings": list(self.warnings),
        }


def parse_ecb_xml(data: Union[str, bytes], source: str = "ECB XML") -> tuple[date, dict[str, Decimal]]:
    """Validate and read an ECB daily reference-rate file; any deviation raises FxFormatError."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    if not raw.strip():
        raise FxFormatError(f"{source}: empty answer, not an ECB reference-rate file")
    if len(raw) > MAX_BYTES:
        raise FxFormatError(f"{source}: {len(raw)} bytes is too large for an ECB daily file")
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=False)
    try:
        root = etree.fromstring(raw, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise FxFormatError(f"{source}: not well-formed XML ({exc})") from None
    if root.tag != f"{{{_GESMES}}}Envelope":
        raise FxFormatError(f"{source}: root element is {root.tag!r}, expected gesmes:Envelope")
    days = root.findall(f"{{{_ECB}}}Cube/{{{_ECB}}}Cube[@time]")
    if len(days) != 1:
        raise FxFormatError(f"{source}: expected one <Cube time=...> day, found {len(days)}")
    day = days[0]
    try:
        when = date.fromisoformat(day.get("time", ""))
    except ValueError:
        raise FxFormatError(f"{source}: bad date {day.get('time')!r} in <Cube time=...>") from None
    rates: dict[str, Decimal] = {}
    for cube in day.findall(f"{{{_ECB}}}Cube"):
        code, text = cube.get("currency", ""), cube.get("rate", "")
        if not _CODE.match(code):
            raise FxFormatError(f"{source}: bad currency code {code!r}")
        try:
            value = Decimal(text)
        except InvalidOperation:
            raise FxFormatError(f"{source}: rate {text!r} for {code} is not a number") from None
        if not value.is_finite() or value <= 0:
            raise FxFormatError(f"{source}: rate {text!r} for {code} is not a positive number")
        if not MIN_RATE <= value <= MAX_RATE:
            raise FxFormatError(f"{source}: rate {text[:30]!r} for {code} is outside the sane range "
                                f"{MIN_RATE}-{MAX_RATE:f} {code} per EUR")
        if code in rates or code == "EUR":
            raise FxFormatError(f"{source}: currency {code} appears twice")
        rates[code] = value
    if not rates:
        raise FxFormatError(f"{source}: the day {when.isoformat()} holds no rates")
    rates["EUR"] = Decimal(1)
    return when, rates


def user_fx_dir() -> Path:
    """Where `planner fx refresh` stores its copy: $PLANNER_FX_DIR, else the platform user data dir."""
    from planner.settings import current

    folder = current().fx_dir
    if folder is not None:
        return folder
    return user_data_dir() / "fx"


def read_rates_file(path: Path, today: Optional[date] = None) -> Rates:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise FxFormatError(f"{path}: cannot read ({exc.strerror or exc})") from None
    when, rates = parse_ecb_xml(data, source=str(path))
    _not_future(when, str(path), today)
    return Rates(rates=rates, date=when, source=str(path), age_days=((today or date.today()) - when).days)


def load_rates(
    *, today: Optional[date] = None, snapshot: Optional[Path] = None, user_dir: Optional[Path] = None
) -> Rates:
    """The fresher of the user's fetched copy and the shipped snapshot (a broken user copy is ignored)."""
    shipped = read_rates_file(snapshot or SNAPSHOT_PATH, today)
    user_path = (user_dir or user_fx_dir()) / FILE_NAME
    if not user_path.exists():
        return shipped
    try:
        fetched = read_rates_file(user_path, today)
    except FxFormatError as exc:
        return replace(shipped, warnings=shipped.warnings + (f"ignored the fetched copy: {exc}",))
    return fetched if fetched.date >= shipped.date else shipped


def _not_future(when: date, source: str, today: Optional[date]) -> None:
    """A reference-rate day after tomorrow cannot be real (it would also win over every later file)."""
    if when > (today or date.today()) + timedelta(days=1):
        raise FxFormatError(f"{source}: rates dated {when.isoformat()}, in the future (refused)")


def _bounded_body(response: httpx.Response, url: str, deadline: float, deadline_s: float) -> bytes:
    """The body, read as it arrives and decompressed here with a size limit: more than MAX_BYTES (an endless
    body, a gzip bomb) or past the deadline (a slow server) stops the read with a FetchError."""
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding not in ("identity", "", "gzip", "x-gzip", "deflate"):
        raise FetchError(f"{url} answered in an encoding this reader does not take ({encoding[:20]})")
    inflater = None if encoding in ("identity", "") else zlib.decompressobj(32 + zlib.MAX_WBITS)
    body = bytearray()
    for raw in response.iter_raw():
        try:
            body += raw if inflater is None else inflater.decompress(raw, MAX_BYTES + 1 - len(body))
        except zlib.error:
            raise FetchError(f"{url} sent a damaged compressed body") from None
        if len(body) > MAX_BYTES:
            raise FetchError(f"{url} sent more than {MAX_BYTES // 1000} kB: not the ECB daily file (stopped)")
        if time.monotonic() > deadline:
            raise FetchError(f"{url} took longer than the {deadline_s:g} s allowed (stopped)")
    return bytes(body)


def refresh(
    url: str = ECB_DAILY_URL,
    *,
    user_dir: Optional[Path] = None,
    today: Optional[date] = None,
    client: Optional[httpx.Client] = None,
    timeout_s: float = TIMEOUT_S,
    deadline_s: float = DEADLINE_S,
) -> Rates:
    """Fetch the ECB daily XML (at most MAX_BYTES, within deadline_s), validate it, store it atomically in the
    user dir; FetchError on any failure."""
    own = client is None
    import httpx  # only a refresh talks to the network

    http = client or httpx.Client(timeout=timeout_s, headers={"User-Agent": USER_AGENT}, follow_redirects=True)
    deadline = time.monotonic() + deadline_s
    try:
        with http.stream("GET", url, headers={"User-Agent": USER_AGENT, "Accept": "application/xml, text/xml",
                                                   "Accept-Encoding": "gzip, identity"}) as response:
            if response.status_code != 200:
                raise FetchError(f"{url} answered HTTP {response.status_code}")
            content = _bounded_body(response, url, deadline, deadline_s)
    except httpx.HTTPError as exc:
        raise FetchError(f"could not reach {url}: {type(exc).__name__}: {exc}") from None
    finally:
        if own:
            http.close()
    folder = user_dir or user_fx_dir()
    try:
        when, rates = parse_ecb_xml(content, source=url)
        _not_future(when, url, today)
    except FxFormatError as exc:
        raise FetchError(f"{exc}") from None
    _check_jumps(rates, url, today, folder)
    try:
        target = atomicfile.write_bytes(folder / FILE_NAME, content, "the ECB rates",
                                        f"check {folder} (PLANNER_FX_DIR) is a writable directory with free space")
    except InputError as exc:
        raise FetchError(str(exc)) from None  # the front end keeps the rates in use and says so
    return Rates(rates=rates, date=when, source=str(target), age_days=((today or date.today()) - when).days)


def _check_jumps(rates: Mapping[str, Decimal], url: str, today: Optional[date], folder: Path) -> None:
    """Refuse a refresh whose rate for a currency moved by more than MAX_JUMP (either way) against the last
    stored rate for it (the user's copy, else the shipped snapshot); nothing is written then."""
    try:
        last = load_rates(today=today, user_dir=folder)
    except (FxFormatError, OSError):
        return  # nothing usable to compare with: the range check alone applies
    for code, new in sorted(rates.items()):
        old = last.rates.get(code)
        if old is None or code == "EUR":
            continue
        factor = max(new / old, old / new)
        if factor > MAX_JUMP:
            raise FetchError(f"{url}: refused the {code} rate {new} per EUR: {factor:.2f}x the last stored {old} "
                             f"(of {last.date.isoformat()}), more than the x{MAX_JUMP} a refresh may move a rate; "
                             "the stored rates are kept")


def _rates_map(rates: Union[Rates, Mapping[str, Decimal]]) -> Mapping[str, Decimal]:
    return rates.rates if isinstance(rates, Rates) else rates


def convert_exact(
    amount: Decimal, from_ccy: str, to_ccy: str, rates: Union[Rates, Mapping[str, Decimal]]
) -> Decimal:
    """amount in from_ccy -> to_ccy through EUR, unrounded (for sums that are rounded once at the end)."""
    if not isinstance(amount, Decimal):
        raise TypeError("amount must be a Decimal")
    src, dst = str(from_ccy).strip().upper(), str(to_ccy).strip().upper()
    table = _rates_map(rates)
    missing = [c for c in (src, dst) if c not in table and c != "EUR"]
    if missing:
        known = ", ".join(sorted(set(table) | {"EUR"}))
        raise CurrencyError(f"unknown currency {missing[0]!r}: no ECB reference rate (known: {known})")
    if src == dst:
        return amount
    in_eur = amount if src == "EUR" else amount / table[src]
    return in_eur if dst == "EUR" else in_eur * table[dst]


def convert(amount: Decimal, from_ccy: str, to_ccy: str, rates: Union[Rates, Mapping[str, Decimal]]) -> Decimal:
    """amount in from_ccy -> to_ccy through EUR, rounded half-up to cents once, at the end."""
    return convert_exact(amount, from_ccy, to_ccy, rates).quantize(CENT, rounding=ROUND_HALF_UP)


@lru_cache(maxsize=1)
def reference_rates() -> Rates:
    """The rates every conversion of a run uses (user's refreshed copy, else the shipped snapshot), read once."""
    return load_rates()


def convert_money(amount: Decimal, from_ccy: str, to_ccy: str) -> Decimal:
    """amount in from_ccy expressed in to_ccy at the ECB reference rates, unrounded: convert, then add."""
    src, dst = check_currency(from_ccy), check_currency(to_ccy)
    if src == dst:
        return amount
    return convert_exact(amount, src, dst, reference_rates())
