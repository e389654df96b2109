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

import itertools
import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from planner.doctor.burnin_log import SMI_COMMAND, SMI_FIELDS, Lost, Sample, SmiSeries, read_smi_series
from planner.doctor.metrics_io import MetricSeries
from planner.doctor.report import EventReport
from planner.doctor.smi import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, LOADED_UTIL, SW_POWER_CAP, SW_THERMAL
from planner.doctor.textio import Source
from planner.errors import InputError
from planner.settings import GPU_HOT_C

__all__ = ["SMI_COMMAND", "SMI_FIELDS", "BurninReport", "Check", "Sample", "check_burnin", "judge", "read_smi_series",
           "thresholds"]

MIN_LOADED_MIN = 60.0
WARMUP_MIN = 15.0
STABLE_WINDOW_MIN = 10.0
TEMP_FAIL_C = 90.0
TEMP_WARN_C = GPU_HOT_C
TEMP_DRIFT_C = 5.0
CLOCK_SAG = 0.05
CLOCK_DIP = 0.85
CLOCK_DIP_SAMPLES = 3
CLOCK_DIP_SHARE = 0.2  # loaded samples below CLOCK_DIP of the steady clock (its 90th percentile), in any order
THROUGHPUT_SAG = 0.05
THROUGHPUT_COLLAPSE = 0.5  # a tenth of the run whose median throughput is under half the first fifth's
MIN_METRIC_POINTS = 20
IDLE_TAIL_MIN = 15.0  # the load stopped this long before the log's end: the run died or was stopped
EVENT_SLACK = timedelta(minutes=10)  # events this long before the first nvidia-smi sample still count
GAP_S = 120.0  # samples further apart than this: the log was interrupted (a reboot, a hang or a stopped logger)
FAIL_REASONS = {HW_SLOWDOWN: "HW slowdown", HW_THERMAL: "HW thermal slowdown", HW_POWER_BRAKE: "HW power brake",
                SW_THERMAL: "SW thermal slowdown"}
SAFETY = ("throttle", "temperature", "clock_stable")  # without data for one of these there is no pass

Status = Literal["pass", "warn", "fail", "incomplete", "not_checked", "skipped"]
Verdict = Literal["pass", "fail", "incomplete", "not_checked"]


def thresholds() -> dict[str, Any]:
    """The numbers the verdict uses, as `planner burnin` and the JSON print them."""
    return {"min_loaded_minutes": MIN_LOADED_MIN, "warmup_minutes": WARMUP_MIN, "stable_window_minutes": STABLE_WINDOW_MIN,
            "temp_fail_c": TEMP_FAIL_C, "temp_warn_c": TEMP_WARN_C, "temp_drift_c": TEMP_DRIFT_C,
            "clock_sag": CLOCK_SAG, "clock_dip": CLOCK_DIP, "clock_dip_samples": CLOCK_DIP_SAMPLES,
            "clock_dip_share": CLOCK_DIP_SHARE, "throughput_sag": THROUGHPUT_SAG,
            "throughput_collapse": THROUGHPUT_COLLAPSE, "idle_tail_minutes": IDLE_TAIL_MIN, "gap_seconds": GAP_S,
            "fail_reasons": sorted(FAIL_REASONS.values()), "loaded_util_pct": LOADED_UTIL}


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
    headline: str = ""
    checks: list[Check]
    gpus: list[dict[str, Any]] = Field(default_factory=list)
    phases: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)

    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status in ("fail", "incomplete", "not_checked")]

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "headline": self.headline,
                "failed": [c.criterion for c in self.checks if c.status == "fail"],
                "not_checked": sorted({c.criterion for c in self.checks if c.status == "not_checked"}),
                "checks": [c.model_dump(exclude_none=True) for c in self.checks], "gpus": self.gpus,
                "phases": self.phases, "thresholds": thresholds(), "notes": self.notes}


# ---- judging (pure) -------------------------------------------------------------------------------------
def _stamp(t: Optional[datetime]) -> str:
    return t.isoformat(sep=" ", timespec="seconds") if t else "an unknown time"


def _minutes(samples: Sequence[Sample], interval_s: float, keep: Any = lambda s: s.loaded) -> float:
    """Minutes the kept samples stand for: each one the time to the next sample (the sampling interval for the last,
    or after a gap): 720 samples every 5 s are 60 min."""
    total = 0.0
    for i, s in enumerate(samples):
        if not keep(s):
            continue
        dt = (samples[i + 1].time - s.time).total_seconds() if i + 1 < len(samples) else interval_s
        total += dt if 0 < dt <= GAP_S else interval_s if dt > GAP_S else 0.0
    return total / 60.0


def _window_median(samples: Sequence[Sample], attr: str, start: datetime, end: datetime) -> Optional[float]:
    values = [getattr(s, attr) for s in samples if start <= s.time < end and getattr(s, attr) is not None]
    return statistics.median(values) if values else None


def _unmeasured(label: str, criterion: str, what: str, missing: Sequence[Sample], total: int, gpu: str) -> Check:
    return Check(criterion=criterion, status="not_checked", gpu=gpu, time=_stamp(missing[0].time),
                 numbers={"samples_without": len(missing), "of": total},
                 message=f"{label}: {what} not measured in {len(missing)} of {total} samples (first at "
                         f"{_stamp(missing[0].time)}: [N/A], [Not Supported], unreadable or out of range): not checked, "
                         "so no pass; log it with `" + SMI_COMMAND + "`")


def _gaps(gpu: str, samples: Sequence[Sample], series: SmiSeries) -> list[Check]:
    """A hole in one GPU's series while another GPU went on being logged: that GPU dropped out (fail). A hole in
    every GPU's series: the logger or the machine stopped (incomplete)."""
    label, out = f"GPU {gpu}", []
    others = [s.time for g, ss in series.samples.items() if g != gpu for s in ss]
    end = max([s.time for ss in series.samples.values() for s in ss])
    holes = [(a.time, b.time) for a, b in itertools.pairwise(samples) if (b.time - a.time).total_seconds() > GAP_S]
    if (end - samples[-1].time).total_seconds() > GAP_S:
        holes.append((samples[-1].time, None))
    for a, b in holes:
        seen = [t for t in others if a < t and (b is None or t < b)]
        if seen:
            until = f"until {_stamp(b)}" if b else "to the end of the log"
            out.append(Check(criterion="gpu_missing", status="fail", gpu=gpu, time=_stamp(a),
                             numbers={"others_sampled": len(seen)},
                             message=f"{label} stops appearing after {_stamp(a)} {until} while the other GPUs go on "
                                     "being logged: it dropped off the bus or hung (check the kernel log for Xid 79)"))
        elif b is not None:
            gap = (b - a).total_seconds()
            out.append(Check(criterion="gap", status="incomplete", gpu=gpu, time=_stamp(a),
                             numbers={"gap_minutes": round(gap / 60, 1)},
                             message=f"{label}: the log stops for {gap / 60:.1f} min after {_stamp(a)} (a reboot, "
                                     "a hang or a stopped logger: check the kernel/System log, rerun unbroken)"))
        if len(out) >= 3:
            break
    return out


def _gpu_checks(gpu: str, samples: Sequence[Sample], series: SmiSeries) -> tuple[list[Check], dict[str, Any]]:
    checks: list[Check] = []
    interval = series.interval_s()
    loaded = [s for s in samples if s.loaded]
    minutes = _minutes(samples, interval)
    temps = [s.temp for s in samples if s.temp is not None]
    summary: dict[str, Any] = {"gpu": gpu, "samples": len(samples), "loaded_minutes": round(minutes, 1),
                               "first": _stamp(samples[0].time), "last": _stamp(samples[-1].time),
                               "max_temp_c": max(temps) if temps else None, "interval_s": interval}
    label = f"GPU {gpu}"
    ok = minutes >= MIN_LOADED_MIN - 1e-9
    checks.append(Check(criterion="duration", status="pass" if ok else "incomplete", gpu=gpu,
                        numbers={"loaded_minutes": round(minutes, 1), "interval_s": interval},
                        message=f"{label}: {minutes:.0f} min under load (utilisation >= {LOADED_UTIL:g} %, each sample "
                                f"counting its {interval:g} s interval)" + ("" if ok else
                                f", under the {MIN_LOADED_MIN:g} min a burn-in needs to judge heat soak and stability")))
    checks += _gaps(gpu, samples, series)
    if loaded and (samples[-1].time - loaded[-1].time).total_seconds() > IDLE_TAIL_MIN * 60:
        idle = (samples[-1].time - loaded[-1].time).total_seconds() / 60
        checks.append(Check(criterion="load_held", status="incomplete", gpu=gpu, time=_stamp(loaded[-1].time),
                            numbers={"idle_minutes": round(idle, 1)},
                            message=f"{label}: the load stopped at {_stamp(loaded[-1].time)} and the GPU idled "
                                    f"{idle:.0f} min while the logger ran on: the run died or was stopped early "
                                    "(its own log says which); a burn-in that stopped is not a pass"))
    checks.append(_throttle(gpu, samples, loaded))
    checks.append(_temperature(gpu, samples, temps))
    checks += _stability(gpu, loaded, series.has_clock)
    return checks, summary


def _throttle(gpu: str, samples: Sequence[Sample], loaded: Sequence[Sample]) -> Check:
    label = f"GPU {gpu}"
    throttled = [s for s in samples if s.reasons is not None and s.reasons & sum(FAIL_REASONS)]
    if throttled:
        first = throttled[0]
        names = sorted({name for bit, name in FAIL_REASONS.items() for s in throttled if (s.reasons or 0) & bit})
        return Check(criterion="throttle", status="fail", gpu=gpu, time=_stamp(first.time),
                     numbers={"samples": len(throttled), "of": len(samples), "temp_c_at_first": first.temp,
                              "sm_clock_mhz_at_first": first.clock, "reasons_hex": hex(first.reasons or 0)},
                     message=f"{label}: {', '.join(names)} in {len(throttled)} of {len(samples)} samples, first at "
                             f"{_stamp(first.time)}" + (f" at {first.temp:g} °C" if first.temp is not None else "")
                             + (f", SM {first.clock:g} MHz" if first.clock is not None else ""))
    missing = [s for s in samples if s.reasons is None]
    if missing:
        return _unmeasured(label, "throttle", "throttle reasons", missing, len(samples), gpu)
    capped = sum(1 for s in loaded if (s.reasons or 0) & SW_POWER_CAP)
    return Check(criterion="throttle", status="pass", gpu=gpu, numbers={"sw_power_cap_samples": capped},
                 message=f"{label}: no thermal or power slowdown" + (
                     f" (at its power cap in {capped} of {len(loaded)} loaded samples: normal at full load)"
                     if capped else ""))


def _temperature(gpu: str, samples: Sequence[Sample], temps: Sequence[float]) -> Check:
    label = f"GPU {gpu}"
    hot = [s for s in samples if s.temp is not None and s.temp >= TEMP_FAIL_C]
    peak = max(temps) if temps else None
    if hot and peak is not None:
        return Check(criterion="temperature", status="fail", gpu=gpu, time=_stamp(hot[0].time),
                     numbers={"max_temp_c": peak, "samples_at_or_above": len(hot), "limit_c": TEMP_FAIL_C},
                     message=f"{label}: {peak:g} °C, at or above {TEMP_FAIL_C:g} °C in {len(hot)} samples from "
                             f"{_stamp(hot[0].time)}: airflow, fan curve, paste/pads or the case")
    missing = [s for s in samples if s.temp is None]
    if missing or peak is None:
        return _unmeasured(label, "temperature", "temperature", missing or samples, len(samples), gpu)
    warm = peak >= TEMP_WARN_C
    return Check(criterion="temperature", status="warn" if warm else "pass", gpu=gpu,
                 numbers={"max_temp_c": peak, "limit_c": TEMP_FAIL_C},
                 message=f"{label}: peak {peak:g} °C" + (f" (above {TEMP_WARN_C:g} °C: little headroom for a "
                                                          "warmer room)" if warm else ""))


def _stability(gpu: str, loaded: Sequence[Sample], has_clock: bool) -> list[Check]:
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
    missing = [s for s in loaded if s.clock is None]
    if not has_clock or missing:
        return out + [Check(criterion="clock_stable", status="not_checked", gpu=gpu,
                            numbers={"samples_without": len(missing), "of": len(loaded)},
                            message=f"{label}: " + ("no clocks.sm column" if not has_clock else
                                                    f"SM clock unreadable or 0 MHz in {len(missing)} of {len(loaded)} "
                                                    f"loaded samples from {_stamp(missing[0].time)}")
                                    + f": SM clock stability not checked, so no pass; log it with `{SMI_COMMAND}`")]
    c0, c1 = _window_median(steady, "clock", start, start + window), _window_median(steady, "clock", end - window, end + window)
    assert c0 is not None and c1 is not None  # every steady sample has a clock
    sag = (c0 - c1) / c0
    ok = sag <= CLOCK_SAG
    out.append(Check(criterion="clock_stable", status="pass" if ok else "fail", gpu=gpu, time=_stamp(end),
                     numbers={"after_warmup_mhz": c0, "at_end_mhz": c1, "sag": round(sag, 4), "limit": CLOCK_SAG},
                     message=f"{label}: SM clock median {c0:g} MHz after warm-up, {c1:g} MHz at the end" + (
                         "" if ok else f": {sag:.0%} lower (> {CLOCK_SAG:.0%}), throttling as it heats")))
    return out + _clock_dips(label, gpu, steady)


def _clock_dips(label: str, gpu: str, steady: Sequence[Sample]) -> list[Check]:
    """Dips below CLOCK_DIP of the steady clock (its 90th percentile, so dips in most samples cannot hide in the
    median): CLOCK_DIP_SAMPLES in a row, or CLOCK_DIP_SHARE of the loaded samples in any order."""
    clocks = sorted(s.clock for s in steady if s.clock is not None)
    top = clocks[min(len(clocks) - 1, int(0.9 * len(clocks)))]
    low = [s for s in steady if s.clock is not None and s.clock < CLOCK_DIP * top]
    run, longest = 0, 0
    for s in steady:
        run = run + 1 if s in low else 0
        longest = max(longest, run)
    if not low or (longest < CLOCK_DIP_SAMPLES and len(low) < CLOCK_DIP_SHARE * len(steady)):
        return []
    lowest = min(s.clock for s in low if s.clock is not None)
    return [Check(criterion="clock_dips", status="fail", gpu=gpu, time=_stamp(low[0].time),
                  numbers={"lowest_mhz": lowest, "steady_mhz": top, "samples_below": len(low), "of": len(steady),
                           "limit": CLOCK_DIP},
                  message=f"{label}: SM clock down to {lowest:g} MHz (steady {top:g} MHz) in {len(low)} of {len(steady)} "
                          f"loaded samples from {_stamp(low[0].time)}: throttling nvidia-smi did not flag")]


def _lost_checks(lost: Sequence[Lost]) -> list[Check]:
    by_gpu: dict[str, list[Lost]] = {}
    for item in lost:
        by_gpu.setdefault(item.gpu, []).append(item)
    return [Check(criterion="gpu_lost", status="fail", gpu=gpu, time=_stamp(items[0].time) if items[0].time else None,
                  numbers={"rows": len(items)},
                  message=f"GPU {gpu}: nvidia-smi wrote {items[0].text!r} in {len(items)} row(s) from "
                          f"{_stamp(items[0].time)}: the GPU fell off the bus or stopped answering (Xid 79): reseat it, "
                          "check its power cables and riser, read the kernel log")
            for gpu, items in sorted(by_gpu.items())]


def _restart_checks(series: SmiSeries) -> list[Check]:
    out = []
    for r in series.restarts[:5]:
        hole = r.hole_s
        broken = hole is None or hole > 2 * series.interval_s() + 1
        out.append(Check(criterion="logger_restart", status="incomplete" if broken else "warn", time=_stamp(r.at),
                         numbers={"hole_seconds": round(hole, 1) if hole is not None else None},
                         message=f"the nvidia-smi logger started again at {_stamp(r.at)}" + (
                             f" after a {hole:.0f} s hole" if hole is not None else "") + (
                             ": a reboot or a stopped logger hides there (check `journalctl -k -b -1`); rerun unbroken"
                             if broken else " (its header written again)")))
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


def _throughput(series: MetricSeries) -> list[float]:
    """Throughput points in order: zeros are data (a stalled run), NaN and negative values are not."""
    return [v for v in series.values.get("throughput", ()) if v == v and 0 <= v < float("inf")]


def _metrics_checks(series: Optional[MetricSeries]) -> list[Check]:
    if series is None:
        return [Check(criterion="throughput", status="skipped",
                      message="no training metrics given: throughput sag not checked (give --metrics)")]
    if not series.roles.get("throughput"):
        raise InputError(f"{series.name}: no throughput column (tokens/s, samples/s, it/s) to check for a sag")
    tp = _throughput(series)
    if len(tp) < MIN_METRIC_POINTS:
        return [Check(criterion="throughput", status="incomplete", numbers={"points": len(tp)},
                      message=f"{series.name}: {len(tp)} throughput points, under the {MIN_METRIC_POINTS} needed")]
    steady = tp[max(1, len(tp) // 10):]  # the first tenth is warm-up (compilation, caches, data loader)
    fifth, tenth = max(1, len(steady) // 5), max(1, len(steady) // 10)
    column = series.roles["throughput"]
    first, last = statistics.median(steady[:fifth]), statistics.median(steady[-fifth:])
    if first <= 0:
        return [Check(criterion="throughput", status="fail", numbers={"column": column, "first_fifth_median": first},
                      message=f"{column}: no throughput after warm-up (median {first:g}): the run was not training")]
    tenths = [statistics.median(steady[k:k + tenth]) for k in range(0, len(steady) - tenth + 1, tenth)]
    worst = min(tenths)
    sag = (first - last) / first
    numbers = {"column": column, "first_fifth_median": round(first, 2), "last_fifth_median": round(last, 2),
               "sag": round(sag, 4), "limit": THROUGHPUT_SAG, "lowest_tenth_median": round(worst, 2)}
    if worst < (1 - THROUGHPUT_COLLAPSE) * first:
        k = tenths.index(worst)
        return [Check(criterion="throughput", status="fail", numbers={**numbers, "collapse_limit": THROUGHPUT_COLLAPSE},
                      message=f"{column}: median {first:,.1f} after warm-up, {worst:,.1f} in tenth {k + 1} of the run "
                              f"({worst / first:.0%}): throughput collapsed under sustained load")]
    ok = sag <= THROUGHPUT_SAG
    return [Check(criterion="throughput", status="pass" if ok else "fail", numbers=numbers,
                  message=f"{column}: median {first:,.1f} after warm-up, {last:,.1f} in the last fifth" + (
                      "" if ok else f": {sag:.0%} slower (> {THROUGHPUT_SAG:.0%}), the machine slows under sustained load"))]


def _phases(smi: SmiSeries, metrics: Optional[MetricSeries]) -> tuple[dict[str, Any], list[Check]]:
    """The plan's two phases in the logs: the GPU stress (the nvidia-smi log's load before training began) and the
    user's own training (the metrics file's span). One verdict covers both, or says which one is missing."""
    interval = smi.interval_s()
    stress_min = min((_minutes(s, interval) for s in smi.samples.values()), default=0.0)
    if metrics is None:
        phases = {"stress": {"loaded_minutes": round(stress_min, 1)}, "training": None}
        return phases, [Check(criterion="phases", status="skipped", numbers={"missing": "training"},
                              message="the training phase (the plan's phase 2) is missing: this verdict covers the "
                                      "GPU stress only; give your training's metrics with --metrics")]
    try:
        times = metrics.times
    except (OverflowError, ValueError, OSError):
        times = []
    if not times:
        return {"stress": None, "training": {"points": metrics.total_rows}}, [Check(
            criterion="phases", status="warn", message=f"{metrics.name} has no times: the stress and training phases "
            "cannot be told apart; the nvidia-smi criteria cover the whole log")]
    begin, end = min(times), max(times)
    stress_min = min((_minutes(s, interval, lambda x, b=begin: x.loaded and x.time < b) for s in smi.samples.values()),
                     default=0.0)
    train_min = min((_minutes(s, interval, lambda x, b=begin, e=end: x.loaded and b <= x.time <= e)
                     for s in smi.samples.values()), default=0.0)
    span = (end - begin).total_seconds() / 60
    phases = {"stress": {"loaded_minutes": round(stress_min, 1)},
              "training": {"from": _stamp(begin), "to": _stamp(end), "minutes": round(span, 1),
                           "loaded_minutes_logged": round(train_min, 1)}}
    out = []
    if stress_min < MIN_LOADED_MIN - 1e-9:
        out.append(Check(criterion="phases", status="incomplete", numbers={"missing": "stress"},
                         message=f"the GPU stress phase is missing or short: {stress_min:.0f} min of load before the "
                                 f"training began at {_stamp(begin)} (the plan's phase 1 is {MIN_LOADED_MIN:g} min)"))
    if train_min < 0.9 * span - interval / 60:
        out.append(Check(criterion="phases", status="incomplete", numbers={"missing": "training telemetry"},
                         message=f"the nvidia-smi log covers {train_min:.0f} of the training's {span:.0f} min under "
                                 f"load ({_stamp(begin)} to {_stamp(end)}): keep the logger running through phase 2"))
    if not out:
        out.append(Check(criterion="phases", status="pass", message=f"both phases: {stress_min:.0f} min of GPU stress, "
                         f"then {span:.0f} min of training ({_stamp(begin)} to {_stamp(end)}) under nvidia-smi"))
    return phases, out


def _verdict(checks: Sequence[Check]) -> tuple[Verdict, str]:
    """fail if any criterion failed; else not_checked if a safety criterion had no data; else incomplete; else pass."""
    def names(status: str) -> str:
        return ", ".join(dict.fromkeys(c.criterion + (f" (GPU {c.gpu})" if c.gpu else "") for c in checks
                                       if c.status == status))
    if any(c.status == "fail" for c in checks):
        return "fail", f"fail: {names('fail')}"
    if any(c.status == "not_checked" for c in checks):
        return "not_checked", f"not checked, so not a pass: {names('not_checked')} not measured"
    if any(c.status == "incomplete" for c in checks):
        return "incomplete", f"incomplete: {names('incomplete')}"
    stress_only = any(c.criterion == "phases" and c.status == "skipped" for c in checks)
    return "pass", "pass" + (" (the GPU stress phase only: the training phase was not given)" if stress_only else "")


def judge(smi: SmiSeries, events: Sequence[EventReport] = (), metrics: Optional[MetricSeries] = None,
          smi_problems: Iterable[str] = ()) -> BurninReport:
    """The verdict on the logs read: every criterion with its evidence, and the phases they cover."""
    checks: list[Check] = _lost_checks(smi.lost)
    gpus = []
    for gpu in sorted(smi.samples):
        found, summary = _gpu_checks(gpu, smi.samples[gpu], smi)
        checks += found
        gpus.append(summary)
    checks += _restart_checks(smi)
    checks += [Check(criterion="nvidia_smi", status="fail", message=m) for m in [*smi.problems, *smi_problems]]
    starts = [samples[0].time for samples in smi.samples.values() if samples]
    checks += _event_checks(events, min(starts) if starts else None)
    checks += _metrics_checks(metrics)
    phases, phase_checks = _phases(smi, metrics)
    checks += phase_checks
    verdict, headline = _verdict(checks)
    notes = smi.notes + [c.message for c in checks if c.status == "skipped"]
    return BurninReport(verdict=verdict, headline=headline, checks=checks, gpus=gpus, phases=phases, notes=notes)


def read_training_metrics(source: Source) -> MetricSeries:
    """The training metrics, through the doctor's metrics reader (the one call to swap for a shared reader)."""
    from planner.doctor.diagnose import as_source
    from planner.doctor.metrics_io import read_metrics

    return read_metrics(as_source(source))


def check_burnin(smi: Source, *, events: Sequence[Source] = (), metrics: Optional[Source] = None) -> BurninReport:
    """Read the logs with the doctor's readers (the nvidia-smi log once) and judge them: the entry point front ends
    call."""
    from planner.doctor.diagnose import as_source, diagnose_events

    series = read_smi_series(as_source(smi))
    reports = [diagnose_events(e) for e in events]
    return judge(series, reports, read_training_metrics(metrics) if metrics is not None else None)
