"""Burn-in verdict: does a new machine survive sustained training load? Readers in (nvidia-smi CSV log, kernel or
System log, training metrics), `pass | fail | incomplete` out, with the evidence for each criterion.

The thresholds are stated once here and printed by `planner burnin` and docs/doctor.md:

- at least MIN_LOADED_MIN minutes with every GPU under load: heat soak of the card, the case air and the VRMs
  takes 10-20 minutes, and PSU or memory faults that kill a night's sweep show up at the hour scale, so an hour
  gives about 45 minutes of steady state after the warm-up; shorter logs are `incomplete`, not `pass`;
- no HW slowdown, HW thermal slowdown, HW power brake or SW thermal slowdown bit in any sample (NVML clock-event
  reasons): on a healthy machine they never assert; one sample is the hardware already protecting itself.
  SW power cap is normal at full load and is only reported;
- no sample at or above TEMP_FAIL_C (NVIDIA's published maximum GPU temperature of the RTX 4090 and 5090 is 90 C;
  older cards slow down at 91-93 C), a warning from TEMP_WARN_C (the doctor's own hot limit);
- after the WARMUP_MIN warm-up, temperature and SM clock stable: the median of the last STABLE_WINDOW_MIN minutes
  within TEMP_DRIFT_C of the first window's (more = still heating: the cooling does not reach a steady state) and
  the SM clock within CLOCK_SAG of it (GPU Boost moves clocks by 15 MHz bins with temperature, about 1-3 % over a
  run; more is throttling nvidia-smi did not flag); no run of CLOCK_DIP_SAMPLES loaded samples below CLOCK_DIP of
  the steady median;
- no Xid, WHEA, Kernel-Power 41, nvlddmkm, machine-check, PCIe AER or OOM event in the kernel or System log: every
  event the doctor's catalogue knows (noise excluded) fails a burn-in;
- training throughput (tokens/s, samples/s) after its warm-up: the median of the last fifth within THROUGHPUT_SAG
  of the first fifth's (the same batches at the same speed: more is a machine slowing down under sustained load).
"""

from __future__ import annotations

import csv
import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from planner.doctor.metrics_io import MetricSeries
from planner.doctor.report import EventReport
from planner.doctor.smi import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, LOADED_UTIL, SW_POWER_CAP, SW_THERMAL, \
    csv_header, csv_row
from planner.doctor.textio import Source, open_text, whole_lines
from planner.errors import InputError

MIN_LOADED_MIN = 60.0
WARMUP_MIN = 15.0
STABLE_WINDOW_MIN = 10.0
TEMP_FAIL_C = 90.0
TEMP_WARN_C = 83.0
TEMP_DRIFT_C = 5.0
CLOCK_SAG = 0.05
CLOCK_DIP = 0.85
CLOCK_DIP_SAMPLES = 3
THROUGHPUT_SAG = 0.05
MIN_METRIC_POINTS = 20
EVENT_SLACK = timedelta(minutes=10)  # events this long before the first nvidia-smi sample still count
GAP_S = 120.0  # samples further apart than this: the log was interrupted (a reboot, a hang or a stopped logger)
FAIL_REASONS = {HW_SLOWDOWN: "HW slowdown", HW_THERMAL: "HW thermal slowdown", HW_POWER_BRAKE: "HW power brake",
                SW_THERMAL: "SW thermal slowdown"}
SMI_FIELDS = ("timestamp", "index", "name", "temperature.gpu", "clocks.sm", "clocks_throttle_reasons.active",
              "power.draw", "power.limit", "utilization.gpu")
SMI_COMMAND = f"nvidia-smi --query-gpu={','.join(SMI_FIELDS)} --format=csv -l 5"
_CLOCK_FIELDS = ("clocks.sm", "clocks.current.sm")
_TIME_FORMATS = ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S")

Status = Literal["pass", "warn", "fail", "incomplete", "skipped"]
Verdict = Literal["pass", "fail", "incomplete"]


def thresholds() -> dict[str, Any]:
    """The numbers the verdict uses, as `planner burnin` and the JSON print them."""
    return {"min_loaded_minutes": MIN_LOADED_MIN, "warmup_minutes": WARMUP_MIN, "stable_window_minutes": STABLE_WINDOW_MIN,
            "temp_fail_c": TEMP_FAIL_C, "temp_warn_c": TEMP_WARN_C, "temp_drift_c": TEMP_DRIFT_C,
            "clock_sag": CLOCK_SAG, "clock_dip": CLOCK_DIP, "clock_dip_samples": CLOCK_DIP_SAMPLES,
            "throughput_sag": THROUGHPUT_SAG, "gap_seconds": GAP_S,
            "fail_reasons": sorted(FAIL_REASONS.values()), "loaded_util_pct": LOADED_UTIL}


@dataclass(frozen=True, slots=True)
class Sample:
    time: datetime
    util: Optional[float]
    temp: Optional[float]
    clock: Optional[float]
    power: Optional[float]
    reasons: int

    @property
    def loaded(self) -> bool:
        return self.util is not None and self.util >= LOADED_UTIL


class Check(BaseModel):
    """One criterion's outcome and its evidence (when, the numbers)."""

    criterion: str
    status: Status
    message: str
    gpu: Optional[str] = None
    time: Optional[str] = None
    numbers: dict[str, Any] = Field(default_factory=dict)


class BurninReport(BaseModel):
    verdict: Verdict
    checks: list[Check]
    gpus: list[dict[str, Any]] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status in ("fail", "incomplete")]

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "failed": [c.criterion for c in self.checks if c.status == "fail"],
                "checks": [c.model_dump(exclude_none=True) for c in self.checks], "gpus": self.gpus,
                "thresholds": thresholds(), "notes": self.notes}


# ---- reading ------------------------------------------------------------------------------------------
def _time(text: str) -> Optional[datetime]:
    text = text.strip()
    for fmt in _TIME_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    try:
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        return None


def _float(text: str) -> Optional[float]:
    try:
        value = float(text.strip().split()[0])
    except (ValueError, IndexError):
        return None
    return value if value == value and abs(value) < 1e7 else None


def read_smi_series(source: Source) -> dict[str, list[Sample]]:
    """Per-GPU samples of an `nvidia-smi --query-gpu=... --format=csv -l N` log (the doctor's CSV reader per row)."""
    with open_text(source) as stream:
        lines = (ln for ln in whole_lines(stream.lines, stream.name) if ln.strip())
        first = next(lines, "")
        fields = csv_header(first)
        if fields is None:
            raise InputError(f"{stream.name}: not an nvidia-smi --format=csv log (first line {first.strip()[:60]!r}); "
                             f"record one with `{SMI_COMMAND}`")
        cells = [c.split(" [")[0].strip().lower() for c in next(csv.reader([first]), [])]
        missing = [f for f, role in (("timestamp", "time"), ("temperature.gpu", "temp"), ("utilization.gpu", "util"),
                                     ("clocks_throttle_reasons.active", "reasons")) if role not in fields.values()]
        if missing:
            raise InputError(f"{stream.name}: the burn-in needs {', '.join(missing)} in the log; record it with "
                             f"`{SMI_COMMAND}`")
        clock_at = next((i for i, c in enumerate(cells) if c in _CLOCK_FIELDS), None)
        header, series, undated = first.strip(), {}, 0
        for n, line in enumerate(lines, 2):
            if line.strip() == header:
                continue  # nvidia-smi repeats its header
            row_cells = next(csv.reader([line]), [])
            row = csv_row(row_cells, fields, n)
            when = _time(row.time)
            if when is None:
                undated += 1
                continue
            clock = _float(row_cells[clock_at]) if clock_at is not None and clock_at < len(row_cells) else None
            series.setdefault(row.gpu, []).append(Sample(when, row.util, row.temp, clock, row.power, row.reasons))
    if not series:
        raise InputError(f"{stream.name}: no dated samples (timestamps like 2026/12/05 21:00:05.123 expected)")
    if undated > sum(len(s) for s in series.values()):
        raise InputError(f"{stream.name}: {undated} rows have no readable timestamp")
    for samples in series.values():
        samples.sort(key=lambda s: s.time)
    return series


# ---- judging (pure) -------------------------------------------------------------------------------------
def _stamp(t: datetime) -> str:
    return t.isoformat(sep=" ", timespec="seconds")


def _loaded_minutes(samples: Sequence[Sample]) -> float:
    total = 0.0
    for a, b in itertools.pairwise(samples):
        dt = (b.time - a.time).total_seconds()
        if a.loaded and b.loaded and 0 < dt <= GAP_S:
            total += dt
    return total / 60.0


def _window_median(samples: Sequence[Sample], attr: str, start: datetime, end: datetime) -> Optional[float]:
    values = [getattr(s, attr) for s in samples if start <= s.time < end and getattr(s, attr) is not None]
    return statistics.median(values) if values else None


def _gpu_checks(gpu: str, samples: Sequence[Sample]) -> tuple[list[Check], dict[str, Any]]:
    checks: list[Check] = []
    loaded = [s for s in samples if s.loaded]
    minutes = _loaded_minutes(samples)
    temps = [s.temp for s in samples if s.temp is not None]
    summary: dict[str, Any] = {"gpu": gpu, "samples": len(samples), "loaded_minutes": round(minutes, 1),
                               "first": _stamp(samples[0].time), "last": _stamp(samples[-1].time),
                               "max_temp_c": max(temps) if temps else None}
    label = f"GPU {gpu}"
    if minutes < MIN_LOADED_MIN:
        checks.append(Check(criterion="duration", status="incomplete", gpu=gpu, numbers={"loaded_minutes": round(minutes, 1)},
                            message=f"{label}: {minutes:.0f} min under load (utilisation >= {LOADED_UTIL:g} %), "
                                    f"under the {MIN_LOADED_MIN:g} min a burn-in needs to judge heat soak and stability"))
    else:
        checks.append(Check(criterion="duration", status="pass", gpu=gpu, numbers={"loaded_minutes": round(minutes, 1)},
                            message=f"{label}: {minutes:.0f} min under load"))
    for a, b in itertools.pairwise(samples):
        gap = (b.time - a.time).total_seconds()
        if gap > GAP_S:
            checks.append(Check(criterion="gap", status="incomplete", gpu=gpu, time=_stamp(a.time),
                                numbers={"gap_minutes": round(gap / 60, 1)},
                                message=f"{label}: the log stops for {gap / 60:.1f} min after {_stamp(a.time)} (a reboot, "
                                        "a hang or a stopped logger: check the kernel/System log, rerun unbroken)"))
            break
    throttled = [s for s in samples if s.reasons & sum(FAIL_REASONS)]
    if throttled:
        first = throttled[0]
        names = sorted({name for bit, name in FAIL_REASONS.items() for s in throttled if s.reasons & bit})
        checks.append(Check(criterion="throttle", status="fail", gpu=gpu, time=_stamp(first.time),
                            numbers={"samples": len(throttled), "of": len(samples), "temp_c_at_first": first.temp,
                                     "sm_clock_mhz_at_first": first.clock, "reasons_hex": hex(first.reasons)},
                            message=f"{label}: {', '.join(names)} in {len(throttled)} of {len(samples)} samples, first at "
                                    f"{_stamp(first.time)}" + (f" at {first.temp:g} °C" if first.temp is not None else "")
                                    + (f", SM {first.clock:g} MHz" if first.clock is not None else "")))
    else:
        capped = sum(1 for s in loaded if s.reasons & SW_POWER_CAP)
        checks.append(Check(criterion="throttle", status="pass", gpu=gpu, numbers={"sw_power_cap_samples": capped},
                            message=f"{label}: no thermal or power slowdown" + (
                                f" (at its power cap in {capped} of {len(loaded)} loaded samples: normal at full load)"
                                if capped else "")))
    hot = [s for s in samples if s.temp is not None and s.temp >= TEMP_FAIL_C]
    peak = max(temps) if temps else None
    if hot:
        checks.append(Check(criterion="temperature", status="fail", gpu=gpu, time=_stamp(hot[0].time),
                            numbers={"max_temp_c": peak, "samples_at_or_above": len(hot), "limit_c": TEMP_FAIL_C},
                            message=f"{label}: {peak:g} °C, at or above {TEMP_FAIL_C:g} °C in {len(hot)} samples from "
                                    f"{_stamp(hot[0].time)}: airflow, fan curve, paste/pads or the case"))
    elif peak is not None:
        warm = peak >= TEMP_WARN_C
        checks.append(Check(criterion="temperature", status="warn" if warm else "pass", gpu=gpu,
                            numbers={"max_temp_c": peak, "limit_c": TEMP_FAIL_C},
                            message=f"{label}: peak {peak:g} °C" + (f" (above {TEMP_WARN_C:g} °C: little headroom for a "
                                                                     "warmer room)" if warm else "")))
    checks += _stability(gpu, loaded)
    return checks, summary


def _stability(gpu: str, loaded: Sequence[Sample]) -> list[Check]:
    label = f"GPU {gpu}"
    if not loaded:
        return []
    start = loaded[0].time + timedelta(minutes=WARMUP_MIN)
    steady = [s for s in loaded if s.time >= start]
    window = timedelta(minutes=STABLE_WINDOW_MIN)
    if not steady or steady[-1].time - start < 2 * window:
        return [Check(criterion="stability", status="incomplete", gpu=gpu,
                      message=f"{label}: under {WARMUP_MIN + 2 * STABLE_WINDOW_MIN:g} min of load: too short to compare "
                              "the temperature and clocks after warm-up")]
    end = steady[-1].time
    out: list[Check] = []
    t0, t1 = _window_median(steady, "temp", start, start + window), _window_median(steady, "temp", end - window, end + window)
    if t0 is not None and t1 is not None:
        rise = t1 - t0
        ok = rise <= TEMP_DRIFT_C
        out.append(Check(criterion="temperature_stable", status="pass" if ok else "fail", gpu=gpu, time=_stamp(end),
                         numbers={"after_warmup_c": t0, "at_end_c": t1, "rise_c": round(rise, 1), "limit_c": TEMP_DRIFT_C},
                         message=f"{label}: median {t0:g} °C after warm-up, {t1:g} °C at the end" + (
                             "" if ok else f": still rising (+{rise:.1f} °C > {TEMP_DRIFT_C:g}), the cooling does not "
                                           "reach a steady state")))
    c0, c1 = _window_median(steady, "clock", start, start + window), _window_median(steady, "clock", end - window, end + window)
    if c0 is None or c1 is None or c0 <= 0:
        out.append(Check(criterion="clock_stable", status="skipped", gpu=gpu,
                         message=f"{label}: no clocks.sm column: SM clock stability not checked"))
        return out
    sag = (c0 - c1) / c0
    ok = sag <= CLOCK_SAG
    out.append(Check(criterion="clock_stable", status="pass" if ok else "fail", gpu=gpu, time=_stamp(end),
                     numbers={"after_warmup_mhz": c0, "at_end_mhz": c1, "sag": round(sag, 4), "limit": CLOCK_SAG},
                     message=f"{label}: SM clock median {c0:g} MHz after warm-up, {c1:g} MHz at the end" + (
                         "" if ok else f": {sag:.0%} lower (> {CLOCK_SAG:.0%}), throttling as it heats")))
    median = statistics.median(s.clock for s in steady if s.clock is not None)
    run: list[Sample] = []
    for s in steady:
        if s.clock is not None and s.clock < CLOCK_DIP * median:
            run.append(s)
            if len(run) >= CLOCK_DIP_SAMPLES:
                low = min(x.clock for x in run if x.clock is not None)
                out.append(Check(criterion="clock_dips", status="fail", gpu=gpu, time=_stamp(run[0].time),
                                 numbers={"lowest_mhz": low, "steady_median_mhz": median, "limit": CLOCK_DIP},
                                 message=f"{label}: SM clock down to {low:g} MHz (steady {median:g} MHz) for "
                                         f"{CLOCK_DIP_SAMPLES}+ samples from {_stamp(run[0].time)} while under load"))
                break
        else:
            run = []
    return out


def _event_checks(reports: Sequence[EventReport], start: Optional[datetime] = None) -> list[Check]:
    """Every catalogued event fails, except those a local-clock log dates before the burn-in began (the nvidia-smi
    log's first sample, less EVENT_SLACK): a crash while setting the machine up is not the burn-in's. Logs on
    another clock (UTC, seconds since boot) are not compared with nvidia-smi's local time: all their events count."""
    if not reports:
        return [Check(criterion="events", status="skipped", message="no kernel or System log given: Xid, WHEA and "
                      "Kernel-Power 41 events were not checked (give --kernel-log or --events)")]
    lines, before = [], []
    for r in reports:
        for e in (e for i in r.incidents for e in i.events):
            early = start is not None and r.clock == "local" and e.time < start - EVENT_SLACK
            (before if early else lines).append(e)
    out = [Check(criterion="events_before", status="warn", numbers={"events": len(before)},
                 message=f"{len(before)} event(s) before the burn-in began ({_stamp(start)}) ignored, the last "
                         f"{before[-1].source} {before[-1].id} at {_stamp(before[-1].time)}")] if before and start else []
    if not lines:
        total = sum(r.total_events for r in reports)
        return out + [Check(criterion="events", status="pass", numbers={"events_read": total},
                            message=f"no Xid, WHEA, Kernel-Power 41 or other hardware event in {total} log events")]
    return out + [Check(criterion="events", status="fail", time=_stamp(e.time), numbers={"source": e.source, "id": e.id},
                        message=f"{e.source} {e.id} at {_stamp(e.time)}: {e.summary}") for e in lines[:20]]


def _metrics_checks(series: Optional[MetricSeries]) -> list[Check]:
    if series is None:
        return [Check(criterion="throughput", status="skipped",
                      message="no training metrics given: throughput sag not checked (give --metrics)")]
    tp = [v for v in series.values.get("throughput", ()) if v == v and v > 0]
    if not series.roles.get("throughput"):
        raise InputError(f"{series.name}: no throughput column (tokens/s, samples/s, it/s) to check for a sag")
    if len(tp) < MIN_METRIC_POINTS:
        return [Check(criterion="throughput", status="incomplete", numbers={"points": len(tp)},
                      message=f"{series.name}: {len(tp)} throughput points, under the {MIN_METRIC_POINTS} needed")]
    steady = tp[max(1, len(tp) // 10):]  # the first tenth is warm-up (compilation, caches, data loader)
    fifth = max(1, len(steady) // 5)
    first, last = statistics.median(steady[:fifth]), statistics.median(steady[-fifth:])
    sag = (first - last) / first
    ok = sag <= THROUGHPUT_SAG
    column = series.roles["throughput"]
    return [Check(criterion="throughput", status="pass" if ok else "fail",
                  numbers={"column": column, "first_fifth_median": round(first, 2), "last_fifth_median": round(last, 2),
                           "sag": round(sag, 4), "limit": THROUGHPUT_SAG},
                  message=f"{column}: median {first:,.1f} after warm-up, {last:,.1f} in the last fifth" + (
                      "" if ok else f": {sag:.0%} slower (> {THROUGHPUT_SAG:.0%}), the machine slows under sustained load"))]


def judge(smi: dict[str, list[Sample]], events: Sequence[EventReport] = (), metrics: Optional[MetricSeries] = None,
          smi_problems: Iterable[str] = ()) -> BurninReport:
    """The verdict: fail if any criterion failed, else incomplete if one could not be judged, else pass."""
    checks: list[Check] = []
    gpus = []
    for gpu in sorted(smi):
        found, summary = _gpu_checks(gpu, smi[gpu])
        checks += found
        gpus.append(summary)
    checks += [Check(criterion="nvidia_smi", status="fail", message=m) for m in smi_problems]
    starts = [samples[0].time for samples in smi.values() if samples]
    checks += _event_checks(events, min(starts) if starts else None)
    checks += _metrics_checks(metrics)
    statuses = {c.status for c in checks}
    verdict: Verdict = "fail" if "fail" in statuses else "incomplete" if "incomplete" in statuses else "pass"
    notes = [c.message for c in checks if c.status == "skipped"]
    return BurninReport(verdict=verdict, checks=checks, gpus=gpus, notes=notes)


def check_burnin(smi: Source, *, events: Sequence[Source] = (), metrics: Optional[Source] = None) -> BurninReport:
    """Read the logs with the doctor's readers and judge them: the entry point front ends call."""
    from planner.doctor.diagnose import as_source, diagnose_events
    from planner.doctor.metrics_io import read_metrics
    from planner.doctor.smi import read_smi

    smi = as_source(smi)
    if hasattr(smi, "read"):  # read twice (samples, then the doctor's findings): keep the bytes
        smi = smi.read()  # type: ignore[union-attr]
    series = read_smi_series(smi)
    problems = [f.message for f in read_smi(smi) if f.severity == "problem" and f.kind != "hw_slowdown"]
    reports = [diagnose_events(e) for e in events]
    return judge(series, reports, read_metrics(as_source(metrics)) if metrics is not None else None, problems)
