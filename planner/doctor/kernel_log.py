"""Stream records out of Linux kernel logs: journalctl -k (short, short-iso, short-full, json), syslog/kern.log,
dmesg (raw, -T, -H/--reltime), and grep output without times. A line that fits no format is skipped and counted."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Literal, Optional

from planner.doctor.catalogue import lookup
from planner.doctor.kernel import BOOT_START, CLEAN_SHUTDOWN, PCI_ADDRESS, classify, fallen_off_bus
from planner.doctor.readers import RawRecord

KernelFormat = Literal["journal-short", "journal-iso", "journal-full", "journal-json", "dmesg", "dmesg-T", "dmesg-H",
                       "kernel-lines"]
Clock = Literal["utc", "local", "boot", "none"]
FORMAT_NAMES = {
    "journal-short": "journalctl -k / syslog / kern.log (short: 'May 19 19:57:01 host kernel: ...')",
    "journal-iso": "journalctl -o short-iso / rsyslog ISO ('2024-05-19T19:57:01+0200 host kernel: ...')",
    "journal-full": "journalctl -o short-full ('Tue 2024-05-19 19:57:01 CEST host kernel: ...')",
    "journal-json": "journalctl -o json",
    "dmesg": "dmesg ('[ 1843.308145] ...', seconds since boot)",
    "dmesg-T": "dmesg -T ('[Tue May 19 19:57:01 2020] ...')",
    "dmesg-H": "dmesg -H / --reltime ('[May19 19:57] ...', '[  +0.000316] ...')",
    "kernel-lines": "kernel lines without times (grep output: 'kernel: NVRM: Xid ...')",
}
# Kinds after which a machine is gone: a boot that ends on one of them, with no shutdown, crashed.
SERIOUS = frozenset({"gpu_off_bus", "kernel_panic", "mce_fatal", "xid_gsp", "lockup", "thermal_shutdown",
                     "edac_ue", "aer_uncorrected"})
BOOT_EPOCH = datetime(1970, 1, 1)  # raw dmesg stamps are seconds since boot: shown on this made-up day
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_SHORT = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:\.\d+)? (.*)$")
_ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:[.,]\d+)?(Z|[+-]\d{2}:?\d{2})? (.*)$")
_HOST_IDENT = re.compile(r"^(\S+) ([^\s:\[]+)(?:\[\d+\])?: ?(.*)$")
_FULL = re.compile(r"^[A-Z][a-z]{2} (\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})(?:\.\d+)? \S+ (\S+) ([^\s:\[]+)(?:\[\d+\])?: ?"
                   r"(.*)$")
_DMESG = re.compile(r"^(?:[a-z]+ *:[a-z]+ *: )?\[\s*(\d{1,10}\.\d{1,9})\] ?(.*)$")
_DMESG_T = re.compile(r"^(?:[a-z]+ *:[a-z]+ *: )?\[([A-Z][a-z]{2}) ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2}) "
                      r"(\d{4})\] ?(.*)$")
# dmesg -H / --reltime / -wH: "[May19 19:57] msg" opens a minute, "[  +0.000316] msg" is the gap since the line before.
_DMESG_H = re.compile(r"^\[([A-Z][a-z]{2})(\d{1,2}) (\d{2}):(\d{2})(?::(\d{2}))?\] ?(.*)$")
_DMESG_REL = re.compile(r"^\[\s*\+\s*(\d{1,9}\.\d{1,9})\] ?(.*)$")
# The time is gone (grep, copied from a web page) but the kernel's words are there.
_BARE = re.compile(r"^(?:.{0,60}?\bkernel: )?(?:\[\s*\d{1,10}\.\d{1,9}\] )?"
                   r"(NVRM: |nvidia\S* |pcieport |mce: |EDAC |pci |Out of memory|Kernel panic|watchdog: |\[Hardware Error\])")
# After a syslog stamp: "host ident[pid]: msg", or "ident: msg" when the host name was left out.
_IDENT_FIRST = re.compile(r"^([^\s:\[]+)(?:\[\d+\])?: ?(.*)$")
_UPTIME_PREFIX = re.compile(r"^\[\s*\d{1,10}\.\d{1,9}\] ")
_HEADER = re.compile(r"^-- (?:Logs begin at|Journal begins at) \S+ (\d{4})-\d{2}-\d{2}")
_SEPARATOR = re.compile(r"^-- (?:Boot [0-9a-f]{32}|Reboot) --\s*$")
_OTHER_MARK = re.compile(r"^-- .* --\s*$")


def sniff_lines(lines: list[str]) -> Optional[KernelFormat]:
    """The kernel-log format most of the first lines show (a pasted prompt or title line does not decide it)."""
    votes: dict[str, int] = {}
    for line in lines:
        fmt = sniff(line)
        if fmt is not None:
            if fmt == "dmesg" and _DMESG_REL.match(line.strip()):
                fmt = "dmesg-H"
            votes[fmt] = votes.get(fmt, 0) + 1
    if not votes:
        return None
    if "dmesg-H" in votes:  # relative lines follow a "[May19 19:57]" one: the whole file is -H
        return "dmesg-H"
    ranked = sorted(votes.items(), key=lambda kv: (kv[1], kv[0] != "kernel-lines"), reverse=True)
    return ranked[0][0]  # type: ignore[return-value]


def sniff(line: str) -> Optional[KernelFormat]:
    """The kernel-log format a line shows, or None (then it is a Windows export or unknown)."""
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
    if _DMESG_H.match(text) and text[1:4] in _MONTHS or _DMESG_REL.match(text):
        return "dmesg-H"
    if _BARE.match(text):
        return "kernel-lines"
    return None


class KernelLogReader:
    """Yields RawRecords (stamp already a datetime) plus one 'boot' record per boot without a clean shutdown."""

    def __init__(self, lines: Iterator[str], name: str, fmt: KernelFormat, year: Optional[int] = None) -> None:
        self.name, self.format, self._lines = name, fmt, lines
        self.clock: Clock = ("utc" if fmt == "journal-json" else "boot" if fmt == "dmesg" else
                             "none" if fmt == "kernel-lines" else "local")
        self.skipped = 0  # lines that fit no format: skipped and counted, never fatal
        self.skipped_example = ""
        self._gpu = ""  # the last GPU address an NVRM line named (a multi-line message names it once)
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
        self._rel_base: Optional[datetime] = None

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

    def _record(self, stamp: datetime, message: str, line_no: int, same_time: bool = False) -> Iterator[RawRecord]:
        if not same_time and BOOT_START.match(message) and self._boot_records:
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
        if "NVRM" in message:
            named = PCI_ADDRESS.search(message)
            if named:
                self._gpu = named.group(1)
        if hit is not None and hit.provider == "NVRM Xid" and hit.event_id == 79 and not hit.device and self._gpu:
            hit = fallen_off_bus(message, self._gpu)
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
                        data={"_detail": hit.detail, "_device": hit.device, "_count": str(hit.count)},
                        where=f"line {line_no}")

    # ---- stamps -------------------------------------------------------------------------------
    def _short_stamp(self, mon: str, day: str, hh: str, mm: str, ss: str, line_no: int) -> Optional[datetime]:
        month = _MONTHS.get(mon)
        if month is None:
            return None
        if self._month and month < self._month - 6:
            self.year += 1  # the log ran over New Year
        self._month = month
        return self._checked(self.year, month, int(day), int(hh), int(mm), int(ss))

    @staticmethod
    def _checked(year: int, month: int, day: int, hour: int, minute: int, second: int) -> Optional[datetime]:
        try:
            return datetime(year, month, day, hour, minute, second)
        except ValueError:
            return None  # an impossible date: the line is skipped and counted, the file goes on

    @staticmethod
    def _iso(day: str, clock: str) -> Optional[datetime]:
        try:
            return datetime.fromisoformat(f"{day}T{clock}")
        except ValueError:
            return None

    # ---- lines --------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[RawRecord]:
        if self.format == "journal-json":
            yield from self._json()
            return
        for line_no, raw in enumerate(self._lines, 1):
            line = raw.rstrip("\r\n").lstrip("\ufeff")
            if not line.strip() or line.startswith("Hint: "):
                continue  # blank, or journalctl's own hint line
            if line[0] in " \t" and self._last is not None:
                # a continuation: journalctl indents it, dmesg pads it under the stamp; it may carry the words
                # that matter ("NVRM: fallen off the bus and is not responding to commands.")
                text = line.strip()
                if classify(text) is not None or "NVRM" in text:
                    yield from self._record(self._last, _UPTIME_PREFIX.sub("", text, count=1), line_no, True)
                continue
            if line.startswith("-- "):
                head = _HEADER.match(line)
                if head and self.year_guessed:
                    self.year, self.year_guessed = int(head.group(1)), False
                if _SEPARATOR.match(line):
                    self._boundary()
                elif not _OTHER_MARK.match(line):
                    self._skip(line)
                continue
            parsed = self._parse(line.strip(), line_no)
            if parsed is None:
                # not this file's format: a prompt, a title, a line from another tool. Its words still count
                # when they are a kernel event (pasted logs mix formats), at the time of the line before.
                text = line.strip()
                hit = classify(text)
                if hit is not None and (self._last is not None or self.clock == "none"):
                    stamp = self._last if self._last is not None else BOOT_EPOCH + timedelta(seconds=line_no)
                    yield from self._record(stamp, text, line_no, True)
                else:
                    self._skip(line)
                continue
            stamp, message = parsed
            yield from self._record(stamp, _UPTIME_PREFIX.sub("", message, count=1), line_no)

    def _skip(self, line: str) -> None:
        self.skipped += 1
        if not self.skipped_example:
            self.skipped_example = line.strip()[:60]

    def _parse(self, line: str, line_no: int) -> Optional[tuple[datetime, str]]:
        """(time, message) of a line in this file's format (or a close cousin), or None: the line is not one."""
        fmt = self.format
        if fmt in ("journal-short", "journal-iso", "journal-full"):
            m = _SHORT.match(line)
            if m:
                stamp = self._short_stamp(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5), line_no)
                if stamp is None:
                    return None
                self.format = "journal-short"
                return stamp, _after_host(m.group(6))
            full = _FULL.match(line)
            if full:
                self.format = "journal-full"
                stamp = self._iso(full.group(1), full.group(2))
                return (stamp, full.group(5)) if stamp else None
            iso = _ISO.match(line)
            if iso:
                self.format = "journal-iso"
                stamp = self._iso(iso.group(1), iso.group(2))
                return (stamp, _after_host(iso.group(4))) if stamp else None
        elif fmt == "dmesg-T":
            m = _DMESG_T.match(line)
            if m and m.group(2) in _MONTHS:
                stamp = self._checked(int(m.group(7)), _MONTHS[m.group(2)], int(m.group(3)), int(m.group(4)),
                                      int(m.group(5)), int(m.group(6)))
                return (stamp, m.group(8)) if stamp else None
        elif fmt == "dmesg":
            m = _DMESG.match(line)
            if m:
                return BOOT_EPOCH + timedelta(seconds=float(m.group(1))), m.group(2)
        elif fmt == "dmesg-H":
            m = _DMESG_H.match(line)
            if m and m.group(1) in _MONTHS:
                stamp = self._short_stamp(m.group(1), m.group(2), m.group(3), m.group(4), m.group(5) or "0", line_no)
                if stamp is not None:
                    self._rel_base = stamp
                    return stamp, m.group(6)
                return None
            rel = _DMESG_REL.match(line)
            if rel:
                if self._last is None:
                    self.clock = "boot"  # no "[May19 19:57]" line yet: only the gaps are known, counted from here
                base = self._last if self._last is not None else BOOT_EPOCH
                return base + timedelta(seconds=min(float(rel.group(1)), 1e7)), rel.group(2)
        elif fmt == "kernel-lines":
            if _BARE.match(line) or line.startswith(("kernel:", "NVRM")):
                text = _DMESG_PREFIXED.sub("", line, count=1)
                return BOOT_EPOCH + timedelta(seconds=line_no), text
        return None

    def _json(self) -> Iterator[RawRecord]:
        for line_no, line in enumerate(self._lines, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                obj = None
            micros = str(obj.get("__REALTIME_TIMESTAMP", "")) if isinstance(obj, dict) else ""
            if not isinstance(obj, dict) or not micros.isdigit() or len(micros) > 17:
                self._skip(line)  # not a journal JSON object, or no usable __REALTIME_TIMESTAMP
                continue
            stamp = datetime.fromtimestamp(int(micros) / 1e6, timezone.utc).replace(tzinfo=None, microsecond=0)
            boot = str(obj.get("_BOOT_ID", ""))
            if boot and self._boot_id and boot != self._boot_id:
                self._boundary()
            self._boot_id = boot or self._boot_id
            yield from self._record(stamp, _message(obj.get("MESSAGE")), line_no)


_DMESG_PREFIXED = re.compile(r"^(?:\S+ )?kernel: (?:\[\s*\d{1,10}\.\d{1,9}\] )?")


def _after_host(rest: str) -> str:
    """The message after a syslog stamp: drops 'host ident[pid]: ', or 'ident: ' when the host name is absent."""
    first = _IDENT_FIRST.match(rest)
    if first and rest.split(" ", 1)[0].endswith(":") or (first and "[" in rest.split(" ", 1)[0]):
        return first.group(2)
    two = _HOST_IDENT.match(rest)
    return two.group(3) if two else rest


def _message(value: object) -> str:
    """journalctl -o json prints MESSAGE as a string, or as an array of bytes when it is not valid UTF-8."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(b, int) and 0 <= b < 256 for b in value):
        return bytes(value).decode("utf-8", errors="replace")
    return ""
