"""Classify log records against the catalogue, tell load from idle, and group them into incidents."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal, Optional

from planner.doctor.catalogue import BUGCHECK_HINTS, LINUX_SOURCES, EventInfo, lookup
from planner.doctor.readers import RawRecord, Stamp
from planner.doctor.timestamps import LocalStamp, resolve

LoadState = Literal["load", "idle", "unknown", "no_metrics"]  # no_metrics: outside the metrics file's rows
MAX_KEPT = 100_000  # catalogued events kept in memory; a System log holds far fewer
INCIDENT_GAP = timedelta(hours=1)
# Kernel-Power 41, EventLog 6008 and BugCheck 1001 are written at the next boot, which can be hours
# after the freeze (the user pulls the plug in the morning): they join the incident before them.
BOOT_LOOKBACK = timedelta(hours=12)
BOOT_LOGGED = ("hard_reset", "unexpected_shutdown", "bugcheck", "dump_failed")
_HEX = re.compile(r"0x[0-9a-fA-F]{1,16}")
_CLOCK_TEXT = re.compile(r"\d{1,2}:\d{2}:\d{2}(?:\s*[AaPp]\.?[Mm]\.?)?")
_DATE_TEXT = re.compile(r"\d{1,4}/\d{1,2}/\d{1,4}|\d{1,4}\.\d{1,2}\.\d{1,4}|\d{4}-\d{2}-\d{2}")
_MARKS = dict.fromkeys(map(ord, "\u200e\u200f\u202a\u202c"), None)
_GPU_NAME = re.compile(r"GeForce\s+(GTX|RTX)\s*(\d{3,4})\s*(Ti|SUPER)?", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class LogEvent:
    """A catalogued event with the details that matter for diagnosis."""

    time: datetime
    info: EventInfo
    stop_code: Optional[int] = None  # 41's BugcheckCode or 1001's stop code; None = not in this export
    power_button: Optional[bool] = None  # 41: PowerButtonTimestamp != 0
    sleep_in_progress: Optional[bool] = None
    load: LoadState = "unknown"
    detail: str = ""  # e.g. the shutdown time an EventLog 6008 reports, as written in the log
    device: str = ""  # PCI address (Linux Xid and AER lines)
    count: int = 1  # errors this one line reports (EDAC "262 CE ..." counts 262)

    @property
    def kind(self) -> str:
        return self.info.kind


@dataclass
class Collected:
    """What one pass over a log yields: catalogued events plus counts of everything else."""

    events: list[LogEvent] = field(default_factory=list)
    noise: Counter[str] = field(default_factory=Counter)
    unrecognised: int = 0
    total: int = 0
    truncated: bool = False
    gpu_mentions: set[str] = field(default_factory=set)


def _int(text: Optional[str]) -> Optional[int]:
    if text is None or not str(text).strip():
        return None
    s = str(text).strip()
    try:
        return int(s, 16) if s.lower().startswith("0x") else int(s)
    except ValueError:
        return None


def _field(data: dict[str, str], name: str) -> Optional[str]:
    lowered = name.lower()
    return next((v for k, v in data.items() if k.lower() == lowered), None)


def stop_code_of(record: RawRecord, info: EventInfo) -> Optional[int]:
    """The stop code a 41 (BugcheckCode, decimal) or a 1001 (param1 or message, hex) carries."""
    if info.kind == "hard_reset":
        return _int(_field(record.data, "BugcheckCode"))
    if info.kind == "bugcheck":
        text = _field(record.data, "param1") or record.message
        m = _HEX.search(text or "")
        return int(m.group(0), 16) if m else None
    return None


def shutdown_time_text(record: RawRecord) -> str:
    """The 'previous shutdown at <time> on <date>' of an EventLog 6008, verbatim (local time, any locale)."""
    text = (record.message or " ".join(record.data.values())).translate(_MARKS)
    clock, day = _CLOCK_TEXT.search(text), _DATE_TEXT.search(text)
    return f"{clock.group(0)} {day.group(0)}" if clock and day else ""


def collect(records: Iterable[RawRecord], name: str = "log", limit: int = MAX_KEPT) -> tuple[Collected, list[Stamp]]:
    """One streaming pass: keep catalogued events (stamps unresolved), count noise and the rest."""
    out = Collected()
    stamps: list[Stamp] = []
    for rec in records:
        out.total += 1
        if "geforce" in rec.message.lower():
            for m in _GPU_NAME.finditer(rec.message):
                out.gpu_mentions.add(" ".join(p for p in m.groups() if p).upper().replace("TI", "Ti"))
        info = lookup(rec.provider, rec.event_id)
        if info is None:
            out.unrecognised += 1
            continue
        if info.noise:
            out.noise[f"{info.source} {info.event_id}"] += 1
            continue
        if len(out.events) >= limit:
            out.truncated = True
            continue
        power = _int(_field(rec.data, "PowerButtonTimestamp"))
        sleeping = _int(_field(rec.data, "SleepInProgress"))
        out.events.append(LogEvent(
            time=datetime.min,
            info=info,
            stop_code=stop_code_of(rec, info),
            power_button=None if power is None else power != 0,
            sleep_in_progress=None if sleeping is None else sleeping != 0,
            detail=(shutdown_time_text(rec) if info.kind == "unexpected_shutdown" and "_detail" not in rec.data
                    else rec.data.get("_detail", "")),
            device=rec.data.get("_device", ""),
            count=int(rec.data.get("_count", "1") or 1),
        ))
        stamps.append(rec.local_stamp(name))
    return out, stamps


def with_times(events: list[LogEvent], stamps: list[Stamp], day_first: bool) -> list[LogEvent]:
    """Resolve each event's stamp (local stamps need the file's date order) and sort by time."""
    timed = [
        replace(ev, time=resolve(st, day_first) if isinstance(st, LocalStamp) else st)
        for ev, st in zip(events, stamps)
    ]
    return sorted(timed, key=lambda e: e.time)  # stable: exports are often newest first


def sleep_intervals(events: list[LogEvent]) -> list[tuple[datetime, datetime]]:
    """Spans between 'entering sleep' and the next wake marker."""
    spans: list[tuple[datetime, datetime]] = []
    asleep: Optional[datetime] = None
    for ev in events:
        if ev.kind == "sleep":
            asleep = ev.time
        elif ev.kind == "wake" and asleep is not None:
            spans.append((asleep, ev.time))
            asleep = None
    return spans


class _Spans:
    """Time spans merged and sorted once, so 'is t inside one?' is a binary search (logs hold many events)."""

    def __init__(self, spans: list[tuple[datetime, datetime]]) -> None:
        merged: list[tuple[datetime, datetime]] = []
        for a, b in sorted(spans):
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        self.starts = [a for a, _ in merged]
        self.spans = merged

    def __contains__(self, t: datetime) -> bool:
        i = bisect_right(self.starts, t) - 1
        return i >= 0 and t <= self.spans[i][1]

    def __bool__(self) -> bool:
        return bool(self.spans)


def assign_load(
    events: list[LogEvent], busy: Optional[list[tuple[datetime, datetime]]] = None,
    covered: Optional[list[tuple[datetime, datetime]]] = None,
) -> list[LogEvent]:
    """Load state per event: asleep or SleepInProgress -> idle; busy windows given -> load or idle, except outside
    the spans a metrics file covers (`covered`), where nothing is known: no_metrics."""
    asleep = _Spans(sleep_intervals(events))
    windows = _Spans(busy or [])
    known = _Spans(covered or [])
    out = []
    for ev in events:
        state: LoadState = "unknown"
        if ev.kind in BOOT_LOGGED:
            state = "unknown"  # logged at boot: the crash time is not in the record
        elif ev.sleep_in_progress or ev.time in asleep:
            state = "idle"
        elif windows and ev.time in windows:
            state = "load"
        elif covered is not None and ev.time not in known:
            state = "no_metrics"
        elif windows:
            state = "idle"
        if ev.kind == "hard_reset" and ev.sleep_in_progress:
            state = "idle"
        out.append(replace(ev, load=state))
    return out


@dataclass
class IncidentGroup:
    """Events close together on the timeline (plus the boot-time records of the crash that ended them)."""

    events: list[LogEvent]
    kinds: Counter[str] = field(default_factory=Counter)  # kept up to date by add(): has() is O(1)

    def __post_init__(self) -> None:
        self.kinds = Counter(ev.kind for ev in self.events)

    def add(self, ev: LogEvent) -> None:
        self.events.append(ev)
        self.kinds[ev.kind] += 1

    @property
    def start(self) -> datetime:
        return self.events[0].time

    @property
    def end(self) -> datetime:
        return self.events[-1].time

    def has(self, *kinds: str) -> bool:
        return any(self.kinds[k] for k in kinds)

    def of(self, *kinds: str) -> list[LogEvent]:
        return [ev for ev in self.events if ev.kind in kinds]

    def load(self) -> LoadState:
        """Load state of the live events (not the boot-time records): load wins over idle."""
        states = {ev.load for ev in self.events if ev.kind not in BOOT_LOGGED}
        for state in ("load", "idle"):
            if state in states:
                return state  # type: ignore[return-value]
        return "unknown"

    def reset_without_stop_code(self, ev: LogEvent) -> bool:
        """A 41 with BugcheckCode 0, or with no code in this export and no BugCheck 1001 beside it."""
        if ev.kind != "hard_reset":
            return False
        if ev.stop_code is not None:
            return ev.stop_code == 0
        if not self.kinds["bugcheck"]:
            return True
        return not any(abs(other.time - ev.time) <= timedelta(minutes=10) for other in self.of("bugcheck"))

    def stop_codes(self) -> list[int]:
        return sorted({ev.stop_code for ev in self.events if ev.stop_code})


def group_incidents(
    events: list[LogEvent], gap: timedelta = INCIDENT_GAP, lookback: timedelta = BOOT_LOOKBACK
) -> list[IncidentGroup]:
    """Split time-sorted events into incidents at quiet gaps; boot-time crash records join the previous one."""
    groups: list[IncidentGroup] = []
    for ev in events:
        if ev.info.context:
            continue
        if groups:
            current = groups[-1]
            quiet = ev.time - current.end
            crash_closed = current.has(*BOOT_LOGGED) and ev.kind not in BOOT_LOGGED
            if quiet <= gap and not crash_closed:
                current.add(ev)
                continue
            if ev.kind in BOOT_LOGGED and quiet <= lookback and not current.has("hard_reset", "bugcheck"):
                current.add(ev)
                continue
            if ev.kind in BOOT_LOGGED and current.has(*BOOT_LOGGED) and quiet <= timedelta(minutes=10):
                current.add(ev)  # 41, 6008 and 1001 of the same boot
                continue
        groups.append(IncidentGroup([ev]))
    return groups


def describe(ev: LogEvent, group: IncidentGroup) -> str:
    """One-line summary of an event in the context of its incident."""
    parts = [ev.info.meaning]
    if ev.info.source in LINUX_SOURCES:
        if ev.detail:
            parts.append(ev.detail)
    elif ev.kind == "hard_reset":
        if ev.stop_code == 0:
            parts.append("BugcheckCode 0: no stop code recorded (hard reset, power loss or total hang)")
        elif ev.stop_code is not None:
            name = BUGCHECK_HINTS.get(ev.stop_code, ("", ""))[0]
            parts.append(f"BugcheckCode {ev.stop_code} = 0x{ev.stop_code:X} {name}".rstrip())
        elif group.reset_without_stop_code(ev):
            parts.append("no BugCheck 1001 beside it, so no stop code was recorded (hard reset, power loss or hang)")
        if ev.power_button:
            parts.append("the power button was held (PowerButtonTimestamp is not 0)")
        if len(group.events) > 1 and group.events[0] is not ev:
            parts.append("logged at the next boot; the freeze came after the previous event")
    elif ev.kind == "unexpected_shutdown" and ev.detail:
        parts.append(f"the log dates that shutdown {ev.detail} (machine local time)")
    elif ev.kind == "bugcheck" and ev.stop_code:
        name = BUGCHECK_HINTS.get(ev.stop_code, ("", ""))[0]
        parts.append(f"stop code 0x{ev.stop_code:08X} {name}".rstrip())
    if ev.load == "load":
        parts.append("during a busy (training) window")
    elif ev.load == "idle":
        parts.append("while idle")
    elif ev.load == "no_metrics":
        parts.append("no metrics at that time (outside the metrics file's rows): load unknown")
    return "; ".join(parts)


BOOT_DAY = datetime(1970, 1, 1).date()  # raw dmesg: seconds since boot are placed on this day


def days_text(groups: Iterable[IncidentGroup]) -> str:
    """The days incidents started on, for evidence lines ('the logged boot' for raw dmesg uptimes)."""
    days = sorted({g.start.date() for g in groups})
    shown = ", ".join("the logged boot" if d == BOOT_DAY else d.isoformat() for d in days[:6])
    return shown + (f" and {len(days) - 6} more" if len(days) > 6 else "")
