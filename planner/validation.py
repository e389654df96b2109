"""Input guards every edge shares: finite bounded numbers, capped file reads, JSON that cannot blow the stack."""

from __future__ import annotations

import io
import json
import math
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any, BinaryIO, Optional, Union

from planner.errors import InputError, PlannerError

# No quantity the planner takes (watts, millimetres, gigabytes, parameters, hours, money) is this large.
MAX_MAGNITUDE = 1e15
MAX_TEXT_FILE_BYTES = 5_000_000  # a build list, a plan, a token file
MAX_JSON_DEPTH = 64  # our own files nest 4 deep; anything deeper is not ours
MAX_INT_DIGITS = 30
# Per unit suffix of a catalog field name: the largest value any real part has, with a wide margin.
UNIT_CAPS: dict[str, float] = {
    "_mm": 2_000, "_w": 10_000, "_gb": 1_000_000, "_gbs": 100_000, "_tflops": 100_000, "_mts": 100_000,
    "_mhz": 100_000, "_pct": 100, "_months": 1_200, "_year": 2_100,
}
# A date written "today" elsewhere may be tomorrow here; more than that is in the future.
DATE_SLACK = timedelta(days=1)


def finite_number(value: float | int | Decimal, what: str, *, lo: Optional[float] = None,
                  hi: Optional[float] = None) -> float | int | Decimal:
    """value itself when it is finite and within [lo, hi] (and |value| <= MAX_MAGNITUDE), else InputError."""
    if isinstance(value, bool):
        raise InputError(f"{what} must be a number, not {value!r}")
    try:
        as_float = float(value)
    except (OverflowError, ValueError):
        raise InputError(f"{what} {_short(value)} is too large") from None
    if not math.isfinite(as_float):
        raise InputError(f"{what} must be a finite number (got {_short(value)})")
    if abs(as_float) > MAX_MAGNITUDE:
        raise InputError(f"{what} {_short(value)} is out of range (at most {MAX_MAGNITUDE:g})")
    if lo is not None and as_float < lo:
        raise InputError(f"{what} must be at least {lo:g} (got {_short(value)})")
    if hi is not None and as_float > hi:
        raise InputError(f"{what} must be at most {hi:g} (got {_short(value)})")
    return value


def unit_cap(field: str) -> Optional[float]:
    """The cap for a field by its unit suffix (`length_mm` -> 2000), None when the name carries no unit."""
    for suffix in sorted(UNIT_CAPS, key=len, reverse=True):
        if field.endswith(suffix):
            return UNIT_CAPS[suffix]
    return None


def not_future(day: date, what: str, today: Optional[date] = None) -> date:
    """day itself when it is not after today (+1 day of time-zone slack), else ValueError naming it."""
    limit = (today or date.today()) + DATE_SLACK
    if day > limit:
        raise ValueError(f"{what} {day.isoformat()} is in the future")
    return day


def _short(value: object, limit: int = 40) -> str:
    text = repr(value) if not isinstance(value, (int, float, Decimal)) else str(value)
    if len(text) > limit:
        text = text[:limit] + "..."
    return text


# ---------------------------------------------------------------- files


def read_text_capped(path: Path, *, max_bytes: int = MAX_TEXT_FILE_BYTES, what: str = "file") -> str:
    """UTF-8 text of a regular file of at most max_bytes; devices, folders, binary or other encodings refused."""
    path = Path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise InputError(f"{path}: cannot read (no such {what})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"{path}: not a regular file (a folder or a device), cannot be a {what}")
    if info.st_size > max_bytes:
        raise InputError(f"{path}: {info.st_size} bytes, over the {max_bytes} byte limit for a {what}")
    try:
        with path.open("rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > max_bytes:
        raise InputError(f"{path}: over the {max_bytes} byte limit for a {what}")
    return decode_text(raw, str(path))


Source = Union[str, Path, bytes, BinaryIO]  # a path, uploaded bytes or an open binary stream


@contextmanager
def open_binary(source: Source, what: str, max_bytes: Optional[int] = None) -> Iterator[tuple[BinaryIO, str]]:
    """(binary stream, display name) for a log a reader streams: a path (a directory, a missing or unreadable file or
    one over `max_bytes` is one InputError line naming `what` it should be), uploaded bytes or an open stream."""
    if isinstance(source, bytes):
        yield io.BytesIO(source), "uploaded data"
    elif isinstance(source, (str, Path)):
        path = Path(source)
        if path.is_dir():
            raise InputError(f"{path} is a directory, not {what}")
        try:
            fh = path.open("rb")
        except FileNotFoundError:
            raise InputError(f"cannot read {path}: no such file") from None
        except OSError as exc:
            raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None
        with fh:
            if max_bytes is not None:
                try:
                    size = path.stat().st_size
                except OSError:
                    size = 0
                if size > max_bytes:
                    raise InputError(f"{path}: {size / 2**20:,.0f} MB; the limit for {what} is "
                                     f"{max_bytes // 2**20} MB (cut it to the part that matters)")
            yield fh, path.name
    else:
        yield source, str(getattr(source, "name", "uploaded file"))


def decode_text(raw: bytes, where: str) -> str:
    """Strict UTF-8 (a BOM allowed); UTF-16, Latin-1 and binary data get one line saying which."""
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError(f"{where}: UTF-16 text; save it as UTF-8")
    if b"\x00" in raw:
        raise InputError(f"{where}: NUL bytes (binary data, or UTF-16 without a byte-order mark), not UTF-8 text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{where}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"an integer of {len(text)} digits")
    return int(text)


def _depth(text: str) -> int:
    """Deepest nesting of [ and { outside strings, in one linear pass."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def load_json(text: str | bytes, where: str, error: type[PlannerError] = InputError) -> Any:
    """json.loads for untrusted text: depth <= MAX_JSON_DEPTH, no NaN/Infinity, integers of <= 30 digits."""
    if isinstance(text, bytes):
        try:
            text = decode_text(text, where)
        except InputError as exc:
            raise error(str(exc)) from None
    if _depth(text) > MAX_JSON_DEPTH:
        raise error(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels (refused)")
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        raise error(f"{where}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except (ValueError, RecursionError) as exc:
        raise error(f"{where}: not acceptable JSON ({exc})") from None
