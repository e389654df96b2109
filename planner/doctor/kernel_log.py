"""Stream records out of Linux kernel logs: journalctl -k (short, short-iso, short-full, json), dmesg, dmesg -T."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Literal, Optional

from planner.doctor.catalogue import lookup
from planner.doctor.kernel import BOOT_START, CLEAN_SHUTDOWN, classify
from planner.doctor.readers import RawRecord
from planner.errors import InputError

KernelFormat = Literal["journal-short", "journal-iso", "journal-full", "journal-json", "dmesg", "dmesg-T"]
Clock = Literal["utc", "local", "boot"]
# Kinds after which a machine is gone: a boot that ends on one of them, with no shutdown, crashed.
SERIOUS = frozenset({"gpu_off_bus", "kernel_panic", "mce_fatal", "xid_gsp", "lockup", "thermal_shutdown",
                     "edac_ue", "aer_uncorrected"})
BOOT_EPOCH = datetime(1970, 1, 1)  # raw dmesg stamps are seconds since boot: shown on this made-up day
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_SHORT = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)? (\S+) ([^\s:\[]+)(?:\[\d+\])?: ?(.*)$")
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:[.,]\d+)?(Z|[+-]\d{2}:?\d{2})? (.*)$")
_HOST_IDENT = re.compile(r"^(\S+) ([^\s:\[]+)(?:\[\d+\])?: ?(.*)$")
_FULL = re.compile(r"^[A-Z][a-z]{2} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.\d+)? \S+ (\S+) ([^\s:\[]+)(?:\[\d+\])?: ?"
                   r"(.*)$")
_DMESG = re.compile(r"^(?:[a-z]+ *:[a-z]+ *: )?\[\s*(\d{1,10}\.\d{1,9})\] ?(.*)$")
_DMESG_T = re.compile(r"^(?:[a-z]+ *:[a-z]+ *: )?\[([A-Z][a-z]{2}) ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) "
                      r"(\d{4})\] ?(.*)$")
_UPTIME_PREFIX = re.compile(r"^\[\s*\d{1,10}\.\d{1,9}\] ")
_HEADER = re.compile(r"^-- (?:Logs begin at|Journal begins at) \S+ (\d{4})-\d{2}-\d{2}")
_SEPARATOR = re.compile(r"^-- (?:Boot [0-9a-f]{32}|Reboot) --\s*$")
_OTHER_MARK = re.compile(r"^-- .* --\s*$")


def sniff(line: str) -> Optional[KernelFormat]:
    """The kernel-log format a first line shows, or None (then it is a Windows export or unknown)."""
    text = line.strip().lstrip("\ufeff")
    if _HEADER.match(text) or _SEPARATOR.match(text) or text.startswith("-- No entries --"):
        return "journal-short"  # the next lines decide between short and short-iso; both are read
    if text.startswith("{") and ('"__REALTIME_TIMESTAMP"' in text or '"__CURSOR"' in text):
        return "journal-json"
    if _SHORT.match(text):
        return "journal-short"
    if _FULL.match(text):
        return "journal-full"
    if _ISO.match(text):
        return "journal-iso"
    if _DMESG_T.match(text):
        return "dmesg-T"
    if _DMESG.match(text):
        return "dmesg"
    return None


class KernelLogReader:
    """Yields RawRecords (stamp already a datetime) plus one 'boot' record per boot without a clean shutdown."""

    def __init__(self, lines: Iterator[str], name: str, fmt: KernelFormat, year: Optional[int] = None) -> None:
        self.name, self.format, self._lines = name, fmt, lines
        self.clock: Clock = "utc" if fmt == "journal-json" else "boot" if fmt == "dmesg" else "local"
        self.year = year or datetime.now().year
        self.year_guessed = year is None
        self._month = 0
        self._boot_records = 0
        self._clean = False
        self._last: Optional[datetime] = None
        self._pending_unclean: Optional[datetime] = None  # last time seen in the boot that ended badly
        self._boot_id = ""
        self._last_kind = self._ended_by = ""
        self._unclean_logged = False
        self._off_bus: dict[str, datetime] = {}

    # ---- boots ------------------------------------------------------------------------------
    # `journalctl -k` does not show a clean shutdown (journald stops before the kernel prints
    # "reboot: Power down"), so a boot counts as ended badly only on evidence: the next boot replays a
    # filesystem journal, or the boot's last catalogued kernel event was one that stops a machine.
    def _boundary(self) -> None:
        if self._boot_records and not self._clean and self._last_kind in SERIOUS:
            self._pending_unclean = self._last
        self._boot_records, self._clean, self._last_kind, self._unclean_logged = 0, False, "", False

    def _unclean(self, stamp: datetime, message: str, line_no: int, detail: str) -> RawRecord:
        self._unclean_logged = True
        return RawRecord(stamp=stamp, provider="boot", event_id=0, message=message, where=f"line {line_no}",
                         data={"_detail": detail})

    def _record(self, stamp: datetime, message: str, line_no: int) -> Iterator[RawRecord]:
        if BOOT_START.match(message) and self._boot_records:
            self._boundary()
        if self._pending_unclean is not None:
            last, self._pending_unclean = self._pending_unclean, None
            when = f" at {last:%Y-%m-%d %H:%M:%S}" if self.clock != "boot" else ""
            yield self._unclean(stamp, message, line_no, f"the previous boot's last kernel event{when} "
                                f"({self._ended_by}) was not followed by a shutdown")
        self._boot_records += 1
        self._last = stamp
        if CLEAN_SHUTDOWN.search(message):
            self._clean = True
        hit = classify(message)
        if hit is not None and hit.provider == "NVRM Xid" and hit.event_id == 79:
            seen = self._off_bus.get(hit.device[:10])
            self._off_bus[hit.device[:10]] = stamp
            if seen is not None and stamp - seen <= timedelta(seconds=10):
                hit = None  # the driver repeats an Xid 79 in its own words: one event, not two
        if hit is not None and hit.provider == "boot" and hit.event_id == 1 and not self._unclean_logged:
            yield self._unclean(stamp, message, line_no, f"{hit.detail}: its journal was replayed at boot, so the "
                                "previous shutdown was not clean")
            return
        if hit is None:
            yield RawRecord(stamp=stamp, provider="kernel", event_id=-1, message=message, where=f"line {line_no}")
            return
        info = lookup(hit.provider, hit.event_id)
        if info is not None and not info.noise:
            self._last_kind, self._ended_by = info.kind, info.meaning.split(" (")[0]
        yield RawRecord(stamp=stamp, provider=hit.provider, event_id=hit.event_id, message=message,
                        data={"_detail": hit.detail, "_device": hit.device}, where=f"line {line_no}")

    # ---- stamps -------------------------------------------------------------------------------
    def _short_stamp(self, m: re.Match[str], line_no: int) -> datetime:
        month = _MONTHS.get(m.group(1))
        if month is None:
            raise InputError(f"{self.name}: line {line_no}: unknown month {m.group(1)!r}")
        if self._month and month < self._month - 6:
            self.year += 1  # the log ran over New Year
        self._month = month
        return self._checked(line_no, self.year, month, int(m.group(2)), int(m.group(3)), int(m.group(4)),
                             int(m.group(5)))

    def _checked(self, line_no: int, *fields: int) -> datetime:
        try:
            return datetime(*fields)
        except ValueError as exc:
            raise InputError(f"{self.name}: line {line_no}: impossible date {fields[:3]}: {exc}") from None

    def _iso(self, day: str, clock: str, line_no: int) -> datetime:
        try:
            return datetime.fromisoformat(f"{day}T{clock}")
        except ValueError:
            raise InputError(f"{self.name}: line {line_no}: impossible date {day} {clock}") from None

    # ---- lines --------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[RawRecord]:
        if self.format == "journal-json":
            yield from self._json()
            return
        for line_no, raw in enumerate(self._lines, 1):
            line = raw.rstrip("\r\n").lstrip("\ufeff")
            if not line.strip() or line[0] in " \t" or line.startswith("Hint: "):
                continue  # blank, a continuation (journalctl indents it), or journalctl's own hint line
            if line.startswith("-- "):
                head = _HEADER.match(line)
                if head and self.year_guessed:
                    self.year, self.year_guessed = int(head.group(1)), False
                if _SEPARATOR.match(line):
                    self._boundary()
                elif not _OTHER_MARK.match(line):
                    raise InputError(f"{self.name}: line {line_no}: unexpected journal marker {line[:60]!r}")
                continue
            stamp, message = self._parse(line, line_no)
            yield from self._record(stamp, _UPTIME_PREFIX.sub("", message, count=1), line_no)

    def _parse(self, line: str, line_no: int) -> tuple[datetime, str]:
        fmt = self.format
        if fmt in ("journal-short", "journal-iso", "journal-full"):
            m = _SHORT.match(line)
            if m:
                self.format = "journal-short"
                return self._short_stamp(m, line_no), m.group(8)
            full = _FULL.match(line)
            if full:
                self.format = "journal-full"
                return self._iso(full.group(1), full.group(2), line_no), full.group(5)
            iso = _ISO.match(line)
            if iso:
                self.format = "journal-iso"
                rest = _HOST_IDENT.match(iso.group(4))
                return self._iso(iso.group(1), iso.group(2), line_no), rest.group(3) if rest else iso.group(4)
        elif fmt == "dmesg-T":
            m = _DMESG_T.match(line)
            if m and m.group(2) in _MONTHS:
                return self._checked(line_no, int(m.group(7)), _MONTHS[m.group(2)], int(m.group(3)), int(m.group(4)),
                                     int(m.group(5)), int(m.group(6))), m.group(8)
        elif fmt == "dmesg":
            m = _DMESG.match(line)
            if m:
                seconds = float(m.group(1))
                return BOOT_EPOCH + timedelta(seconds=seconds), m.group(2)
        raise InputError(f"{self.name}: line {line_no}: not a {self.format} line: {line.strip()[:60]!r}")

    def _json(self) -> Iterator[RawRecord]:
        for line_no, line in enumerate(self._lines, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError) as exc:
                why = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deep"
                raise InputError(f"{self.name}: line {line_no} is not valid JSON ({why})") from None
            if not isinstance(obj, dict):
                raise InputError(f"{self.name}: line {line_no} is not a JSON object")
            micros = str(obj.get("__REALTIME_TIMESTAMP", ""))
            if not micros.isdigit() or len(micros) > 17:
                raise InputError(f"{self.name}: line {line_no}: __REALTIME_TIMESTAMP {micros[:20]!r} is not "
                                 "microseconds since 1970")
            stamp = datetime.fromtimestamp(int(micros) / 1e6, timezone.utc).replace(tzinfo=None, microsecond=0)
            boot = str(obj.get("_BOOT_ID", ""))
            if boot and self._boot_id and boot != self._boot_id:
                self._boundary()
            self._boot_id = boot or self._boot_id
            yield from self._record(stamp, _message(obj.get("MESSAGE")), line_no)


def _message(value: object) -> str:
    """journalctl -o json prints MESSAGE as a string, or as an array of bytes when it is not valid UTF-8."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value).decode("utf-8", errors="replace")
    return ""
