"""Public entry points: diagnose_events and diagnose_metrics wire the readers (I/O) to the pure analysis."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from collections.abc import Iterable, Sequence
from typing import BinaryIO, Optional, Union

from planner.doctor.events import (
    INCIDENT_GAP,
    assign_load,
    collect,
    describe,
    group_incidents,
    with_times,
)
from planner.doctor.hypotheses import PowerContext, find_chip, rank
from planner.doctor.engine import check_expected_steps, check_temp_limit, metrics_report
from planner.settings import GPU_HOT_C
from planner.doctor.metrics_io import MetricSeries, parse_column_map, read_metrics
from planner.doctor.readers import FORMATS_READ, LogReader
from planner.doctor.smi import read_smi
from planner.doctor.report import EventLine, EventReport, Incident, MetricsReport
from planner.doctor.textio import Source, as_source, open_text
from planner.doctor.timestamps import windows_from_times
from planner.errors import InputError

Window = tuple[datetime, datetime]


GRACE_MIN, GRACE_MAX = timedelta(minutes=1), timedelta(minutes=10)


def metrics_windows(path: Union[str, Path, bytes, BinaryIO]) -> tuple[list[Window], Window]:
    """(training windows, the span the file covers) from a metrics file's time column.

    Rows no more than 10 min apart are one window. A window runs on past its last row by a short grace (three
    usual row intervals, 1-10 min): a GPU hang seconds after the last logged row happened during training. Outside
    the covered span (first row to last row plus the grace) the file says nothing: "no metrics", not "idle"."""
    return series_windows(read_metrics(as_source(path)))


def series_windows(series: MetricSeries) -> tuple[list[Window], Window]:
    """metrics_windows for a series already read (the web UI reads an upload once)."""
    if not series.times:
        raise InputError(f"{series.name}: no time/timestamp column, so it cannot tell load from idle")
    times = sorted(series.times)
    # Long logs are read in buckets of `bucket` rows stamped with their first row's time: allow the same
    # 10-minute quiet gap per row of a bucket, so one bucket does not look like a pause.
    max_gap = timedelta(minutes=10) * series.bucket
    steps = sorted(b - a for a, b in zip(times, times[1:]) if b > a)
    usual = steps[len(steps) // 2] if steps else timedelta(0)
    grace = min(max(3 * usual, GRACE_MIN), GRACE_MAX) * series.bucket
    windows = [(a, b + grace) for a, b in windows_from_times(times, max_gap=max_gap)]
    return windows, (times[0], times[-1] + grace)


def training_windows(typed: Iterable[str], metrics: Union[None, MetricSeries, str, Path, bytes, BinaryIO] = None, *,
                     lenient: bool = False) -> tuple[list[Window], Optional[list[Window]], list[str]]:
    """(training windows, the spans where load is known, notes): the windows typed (one START/END a line) plus those
    the metrics file's times show (a path or a series already read). Without metrics `covered` is None: outside the
    windows is idle. `lenient`: a metrics file that gives no windows is a note (the web UI), not an error (the CLI)."""
    from planner.doctor.timestamps import parse_window
    from planner.errors import PlannerError

    windows = [parse_window(t.strip()) for t in typed if t.strip()]
    notes = [f"{len(windows)} training window(s) typed"] if windows else []
    covered = None
    if metrics is not None:
        try:
            found, span = series_windows(metrics if isinstance(metrics, MetricSeries) else read_metrics(as_source(metrics)))
        except PlannerError as exc:
            if not lenient:
                raise
            notes.append(f"the metrics file gives no training windows: {exc}")
        else:
            windows += found
            covered = [span] + windows  # typed windows are known too; elsewhere the metrics file says nothing
            notes.append(f"{len(found)} training window(s) from the metrics file's times; outside its rows: no metrics")
    return windows, covered, notes


def busy_windows_from_metrics(path: Union[str, Path, bytes, BinaryIO]) -> list[Window]:
    """Training windows from the timestamps of a metrics file (see metrics_windows)."""
    return metrics_windows(path)[0]


def coverage_note(platform: str, fmt: str, found: bool) -> str:
    """What this kind of file can and cannot show: a quiet file is evidence only of what it would have recorded."""
    if platform == "windows":
        seen = ("GPU driver resets (nvlddmkm 153, Display 4101), hard resets (Kernel-Power 41), blue screens, WHEA "
                "hardware errors")
        blind = ("GPU temperatures, clocks and power, or a hang that ended in no reboot (Kernel-Power 41 is written "
                 "only at the next boot)")
        if fmt == "message-text":
            blind += ", and any event not pasted (a message alone is one event, not the log)"
    else:
        seen = "NVIDIA Xid events (79 = fallen off the bus), PCIe AER, machine checks, EDAC, thermal, OOM, panics"
        blind = ("what happened after the kernel stopped logging (a hard freeze writes nothing), GPU temperatures, "
                 "clocks and power draw over time (use nvidia-smi logging)")
        if fmt == "kernel-lines":
            blind += ", and every line the grep left out"
    head = "what it could show" if found else "nothing found; this file could show"
    return f"{head}: {seen}; it cannot show {blind}"


def diagnose_events(
    path_or_text: Union[str, Path, bytes, BinaryIO],
    *,
    gpu_tgp_w: Optional[list[int]] = None,
    cpu_power_w: Optional[int] = None,
    psu_w: Optional[int] = None,
    busy: Optional[list[Window]] = None,
    gap: timedelta = INCIDENT_GAP,
    year: Optional[int] = None,
    gpu_name: Optional[str] = None,
    smi: Sequence[Union[str, Path, bytes, BinaryIO]] = (),
    covered: Optional[list[Window]] = None,
    expected_gpus: Optional[int] = None,
) -> EventReport:
    """Read a System log (Windows CSV/XML/Format-List, Linux journalctl/dmesg), group incidents, rank causes."""
    for name, value in (("--cpu-power", cpu_power_w), ("--psu-w", psu_w)):
        if value is not None and not 0 < value <= 5000:
            raise InputError(f"{name} {value} W is out of range (1-5000)")
    if gpu_tgp_w is not None and any(not 0 < w <= 1500 for w in gpu_tgp_w):
        raise InputError(f"--gpu-tgp {gpu_tgp_w} is out of range (1-1500 W per GPU)")
    if gpu_name is not None and find_chip(gpu_name) is None:
        raise InputError(f"--gpu {gpu_name[:40]!r}: not a GPU the planner knows (e.g. 'GTX 1080 Ti')")
    if year is not None and not 1970 <= year <= 2100:
        raise InputError(f"--year {year} is out of range (1970-2100)")
    with open_text(as_source(path_or_text)) as stream:
        reader = LogReader(stream.lines, stream.name, year=year)
        collected, stamps = collect(reader, stream.name)
        day_first = reader.dates.day_first()
        name, encoding, utc, clock, platform = stream.name, stream.encoding, reader.utc, reader.clock, reader.platform
        kernel = reader.kernel
        if kernel is not None:
            clock = kernel.clock  # type: ignore[attr-defined]  # a dmesg -H paste may hold only relative stamps
        text = getattr(reader, "_text", None)
        if text is not None:
            clock, utc = text.clock, text.utc  # details copied without their Date; wevtutil /f:text dates are UTC
            other_logs = sorted(text.logs - {"System"})
        else:
            other_logs = []
        fmt = kernel.format if kernel is not None else reader.format  # type: ignore[attr-defined]
        skipped, skipped_example = reader.skipped
    if collected.total == 0:
        raise InputError(f"{name}: no events found" + (f" ({skipped} lines not understood, e.g. {skipped_example!r}); "
                                                       f"{FORMATS_READ}" if skipped else ""))
    wall = clock not in ("boot", "none")
    events = assign_load(with_times(collected.events, stamps, day_first), busy if wall else None,
                         covered if wall else None)
    groups = group_incidents(events, gap=gap)
    power = PowerContext(gpu_tgp_w=gpu_tgp_w, cpu_power_w=cpu_power_w, psu_w=psu_w,
                         gpu_mentions=collected.gpu_mentions, gpu_name=gpu_name)
    smi_findings = [f for source in smi for f in read_smi(as_source(source), expected_gpus=expected_gpus)]
    hypotheses, steps, sizing = rank(groups, power, platform=platform, smi=smi_findings)
    incidents = [
        Incident(
            start=g.start,
            end=g.end,
            events=[EventLine(time=ev.time, source=ev.info.source, id=ev.info.event_id, summary=describe(ev, g),
                              load=ev.load) for ev in g.events],
        )
        for g in groups
    ]
    if platform == "linux":
        notes = [{"utc": "times are UTC (journal __REALTIME_TIMESTAMP)",
                  "boot": "times are seconds since boot (dmesg without -T), shown as 1970-01-01 plus the uptime; "
                          "use dmesg -T or journalctl -k for wall-clock times",
                  "local": "times are the machine's local time, as printed",
                  "none": "the lines carry no times (grep output or a copied fragment): events are in file order, "
                          "shown as line numbers, and cannot be matched with training windows"}[clock]]
        if kernel is not None and kernel.year_guessed and fmt in ("journal-short", "dmesg-H"):  # type: ignore[attr-defined]
            notes.append(f"this format prints no year: {kernel.year} assumed "  # type: ignore[attr-defined]
                         "(pass --year, or export with journalctl -o short-iso / dmesg -T)")
        if busy and clock in ("boot", "none"):
            notes.append("busy windows ignored: raw dmesg times are not on the wall clock")
    elif clock == "none":
        notes = ["the text carries no times (the event's message only): events are in the order pasted, shown as "
                 "line numbers"]
    else:
        notes = [f"times are {'UTC (from the XML SystemTime)' if utc and fmt == 'xml' else 'UTC' if utc else 'local, as exported'}"]
    if other_logs:
        notes.append(f"this is the {', '.join(other_logs)} log; GPU resets and crashes are in the System log "
                     "(wevtutil qe System /f:text, or Event Viewer > Windows Logs > System)")
    if skipped:
        notes.append(f"{skipped} line{'s' if skipped != 1 else ''} not understood and skipped (first: "
                     f"{skipped_example!r})")
    notes.append(coverage_note(platform, fmt, bool(groups)))
    if platform == "windows" and fmt not in ("xml", "message-text") and not utc:
        notes.append("dates read " + ("day-first (dd/mm)" if day_first else "month-first (mm/dd)"))
    if busy and utc:
        notes.append("busy windows were compared with the XML's UTC times")
    if covered and wall and any(e.load == "no_metrics" for e in events):
        notes.append("events outside the metrics file's rows say 'no metrics': the file cannot tell load from idle "
                     "then")
    if not busy:
        notes.append("load vs idle unknown: give the training time windows (CLI: --busy START/END or --metrics FILE with timestamps)")
    if collected.truncated:
        notes.append(f"only the first {len(collected.events)} catalogued events were analysed")
    return EventReport(
        incidents=incidents,
        hypotheses=hypotheses,
        runbook=steps,
        ignored=dict(collected.noise),
        unrecognised=collected.unrecognised,
        total_events=collected.total,
        format=fmt,
        encoding=encoding,
        utc=utc,
        clock=clock,
        smi=[f.__dict__ | {"causes": [list(c) for c in f.causes]} for f in smi_findings],
        platform=platform,
        notes=notes,
        psu=sizing.to_json() if sizing is not None else None,
    )


def diagnose_metrics(
    path: Union[str, Path, bytes, BinaryIO, MetricSeries],
    *,
    expected_steps: Optional[int] = None,
    temp_limit_c: float = GPU_HOT_C,
    columns: Optional[list[str]] = None,
) -> MetricsReport:
    """Read a CSV or JSONL of training metrics (or take a series read already with read_metrics, as the web UI does
    to draw its windows and loss curve from the same reading) and report weak signals with their step ranges."""
    check_expected_steps(expected_steps)
    check_temp_limit(temp_limit_c)
    series = path if isinstance(path, MetricSeries) else read_metrics(as_source(path), parse_column_map(columns))
    return metrics_report(series, expected_steps=expected_steps, temp_limit_c=temp_limit_c)
