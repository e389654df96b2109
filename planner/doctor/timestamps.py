"""Parse the timestamps of Windows log exports: ISO/UTC from XML, locale dates from CSV and text."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime, timedelta, timezone

from planner.errors import InputError

# Event Viewer and PowerShell print dates in the user's locale: 10/14/2025 2:13:55 AM (en-US),
# 14/10/2025 02:13:55 (fr-FR, en-GB), 14.10.2025 02:13:55 (de-DE), 2025-10-14 02:13:55 (ISO, sv, ja).
# Some exports wrap date parts in invisible direction marks (U+200E, U+200F).
_MARKS = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202c\ufeff"), None)
_LOCAL = re.compile(
    r"^\s*(\d{1,4})[/.\-](\d{1,2})[/.\-](\d{1,4})[ T,]+(\d{1,2}):(\d{2})(?::(\d{2}))?(?:[.,](\d+))?"
    r"\s*([AaPp]\.?\s?[Mm]\.?)?\s*$"
)
_ISO_FRACTION = re.compile(r"(\.\d{6})\d+")
_DATE_TOKEN = re.compile(r"^(\d{1,4})[/.\-](\d{1,2})[/.\-](\d{1,4})")
_AMPM_TAIL = ("am", "pm", "a.m.", "p.m.", "a.m", "p.m")


@lru_cache(maxsize=4096)
def _date_fields(token: str) -> tuple[int, int, bool] | None:
    m = _DATE_TOKEN.match(token)
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), len(m.group(1)) == 4


@dataclass(frozen=True, slots=True)
class LocalStamp:
    """A local wall-clock date whose day/month order is decided once per file (see DateOrder)."""

    first: int
    second: int
    year: int
    hour: int
    minute: int
    second_of_minute: int
    ampm: str  # "", "am" or "pm"
    iso: bool  # year came first (no ambiguity)


class DateOrder:
    """Collects evidence about day-first vs month-first dates while a file streams past."""

    def __init__(self) -> None:
        self.day_first_seen = False  # a first field > 12 (must be a day)
        self.month_first_seen = False  # a second field > 12
        self.ampm_seen = False

    def observe_text(self, text: str) -> None:
        """Cheap vote from a raw date-time string (the date token is cached; days repeat in a log)."""
        cleaned = text.translate(_MARKS).strip()
        fields = _date_fields(cleaned.split(" ", 1)[0].split("T", 1)[0])
        if fields is None:
            return  # reported when (if) the event is parsed for real
        first, second, iso = fields
        if iso:
            return
        if first > 12:
            self.day_first_seen = True
        if second > 12:
            self.month_first_seen = True
        if cleaned.lower().endswith(_AMPM_TAIL):
            self.ampm_seen = True

    def day_first(self) -> bool:
        """Day-first unless the file proves month-first, or uses AM/PM (en-US) without proof of day-first."""
        if self.day_first_seen and self.month_first_seen:
            raise InputError("the file mixes day-first and month-first dates; export it again in one locale")
        if self.day_first_seen:
            return True
        if self.month_first_seen:
            return False
        return not self.ampm_seen


def parse_local(text: str) -> LocalStamp | None:
    """Split a locale date-time into its fields; None if it is not one."""
    m = _LOCAL.match(text.translate(_MARKS))
    if not m:
        return None
    a, b, c, hh, mm, ss, _frac, ampm = m.groups()
    hour = int(hh)
    marker = (ampm or "").lower().replace(".", "").replace(" ", "")
    if marker and not 1 <= hour <= 12:
        return None
    if len(a) == 4:
        return LocalStamp(int(b), int(c), int(a), hour, int(mm), int(ss or 0), marker, True)
    year = int(c)
    if year < 100:
        year += 2000
    return LocalStamp(int(a), int(b), year, hour, int(mm), int(ss or 0), marker, False)


def resolve(stamp: LocalStamp, day_first: bool) -> datetime:
    """The naive local datetime of a stamp, once the file's date order is known."""
    if stamp.iso:
        month, day = stamp.first, stamp.second
    elif day_first:
        day, month = stamp.first, stamp.second
    else:
        month, day = stamp.first, stamp.second
    hour = stamp.hour
    if stamp.ampm == "pm" and hour != 12:
        hour += 12
    elif stamp.ampm == "am" and hour == 12:
        hour = 0
    try:
        return datetime(stamp.year, month, day, hour, stamp.minute, stamp.second_of_minute)
    except ValueError as exc:
        raise InputError(f"impossible date {stamp.year}-{month}-{day} {hour}:{stamp.minute}: {exc}") from None


def parse_utc(text: str) -> datetime:
    """XML SystemTime ('2025-10-14T02:13:55.4870113Z') as a naive UTC datetime."""
    cleaned = _ISO_FRACTION.sub(r"\1", text.strip().translate(_MARKS))
    try:
        value = datetime.fromisoformat(cleaned)
    except ValueError:
        raise InputError(f"unreadable SystemTime {text!r}") from None
    if value.tzinfo is not None:
        try:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        except OverflowError:
            raise InputError(f"SystemTime {text.strip()[:40]!r} is out of range once converted to UTC") from None
    return value.replace(microsecond=0)


def parse_window(text: str) -> tuple[datetime, datetime]:
    """A busy window 'START/END' in ISO form, e.g. 2025-10-13T22:00/2025-10-14T06:30."""
    parts = text.split("/")
    if len(parts) != 2:
        raise InputError(f"window {text!r}: expected START/END, e.g. 2025-10-13T22:00/2025-10-14T06:30")
    try:
        start, end = (datetime.fromisoformat(p.strip()) for p in parts)
    except ValueError:
        raise InputError(f"window {text!r}: dates must be ISO, e.g. 2025-10-13T22:00") from None
    try:
        start, end = (d.astimezone(timezone.utc).replace(tzinfo=None) if d.tzinfo else d for d in (start, end))
    except OverflowError:
        raise InputError(f"window {text[:60]!r}: a date is out of range once converted to UTC") from None
    if end <= start:
        raise InputError(f"window {text!r}: end is not after start")
    return start, end


def windows_from_times(
    times: list[datetime], max_gap: timedelta = timedelta(minutes=10)
) -> list[tuple[datetime, datetime]]:
    """Busy windows from the timestamps of a metrics log: runs of rows no more than max_gap apart."""
    out: list[tuple[datetime, datetime]] = []
    for t in sorted(times):
        if out and t - out[-1][1] <= max_gap:
            out[-1] = (out[-1][0], t)
        else:
            out.append((t, t))
    return out
