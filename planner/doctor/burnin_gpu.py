"""The burn-in's nvidia-smi criteria, per GPU and for the log as a whole: duration, gaps and dropped-out GPUs, lost
GPUs, logger restarts, throttle reasons, temperature, and temperature and clock stability after warm-up. A criterion
without data is `not_checked`, never a pass (planner/doctor/burnin.py turns the checks into one verdict)."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from planner.doctor.burnin_log import SMI_COMMAND, Lost, Sample, SmiSeries
from planner.doctor.smi import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, LOADED_UTIL, SW_POWER_CAP, SW_THERMAL
from planner.settings import GPU_HOT_C

MIN_LOADED_MIN = 60.0
WARMUP_MIN = 15.0
STABLE_WINDOW_MIN = 10.0
TEMP_FAIL_C = 90.0
TEMP_DRIFT_C = 5.0
CLOCK_SAG = 0.05
CLOCK_DIP = 0.85
CLOCK_DIP_SAMPLES = 3
CLOCK_DIP_SHARE = 0.2  # loaded samples below CLOCK_DIP of the steady clock (its 90th percentile), in any order
IDLE_TAIL_MIN = 15.0  # the load stopped this long before the log's end: the run died or was stopped
GAP_S = 120.0  # samples further apart than this: the log was interrupted (a reboot, a hang or a stopped logger)
FAIL_REASONS = {HW_SLOWDOWN: "HW slowdown", HW_THERMAL: "HW thermal slowdown", HW_POWER_BRAKE: "HW power brake",
                SW_THERMAL: "SW thermal slowdown"}
SAFETY = ("throttle", "temperature", "clock_stable")  # without data for one of these there is no pass

Status = Literal["pass", "warn", "fail", "incomplete", "not_checked", "skipped"]


class Check(BaseModel):
    """One criterion's outcome and its evidence (when, the numbers)."""

    criterion: str
    status: Status
    message: str
    gpu: Optional[str] = None
    time: Optional[str] = None
    numbers: dict[str, Any] = Field(default_factory=dict)


def stamp(t: Optional[datetime]) -> str:
    return t.isoformat(sep=" ", timespec="seconds") if t else "an unknown time"


def loaded_minutes(samples: Sequence[Sample], interval_s: float, keep: Any = lambda s: s.loaded) -> float:
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
    return Check(criterion=criterion, status="not_checked", gpu=gpu, time=stamp(missing[0].time),
                 numbers={"samples_without": len(missing), "of": total},
                 message=f"{label}: {what} not measured in {len(missing)} of {total} samples (first at "
                         f"{stamp(missing[0].time)}: [N/A], [Not Supported], unreadable or out of range): not checked, "
                         "so no pass; log it with `" + SMI_COMMAND + "`")


def _gaps(gpu: str, samples: Sequence[Sample], series: SmiSeries) -> list[Check]:
    """A hole in one GPU's series while another GPU went on being logged: that GPU dropped out (fail). A hole in
    every GPU's series: the logger or the machine stopped (incomplete)."""
    label, out = f"GPU {gpu}", []
    others = [s.time for g, ss in series.samples.items() if g != gpu for s in ss]
    end = max([s.time for ss in series.samples.values() for s in ss])
    holes: list[tuple[datetime, Optional[datetime]]] = [
        (a.time, b.time) for a, b in itertools.pairwise(samples) if (b.time - a.time).total_seconds() > GAP_S]
    if (end - samples[-1].time).total_seconds() > GAP_S:
        holes.append((samples[-1].time, None))
    for a, b in holes:
        seen = [t for t in others if a < t and (b is None or t < b)]
        if seen:
            until = f"until {stamp(b)}" if b else "to the end of the log"
            out.append(Check(criterion="gpu_missing", status="fail", gpu=gpu, time=stamp(a),
                             numbers={"others_sampled": len(seen)},
                             message=f"{label} stops appearing after {stamp(a)} {until} while the other GPUs go on "
                                     "being logged: it dropped off the bus or hung (check the kernel log for Xid 79)"))
        elif b is not None:
            gap = (b - a).total_seconds()
            out.append(Check(criterion="gap", status="incomplete", gpu=gpu, time=stamp(a),
                             numbers={"gap_minutes": round(gap / 60, 1)},
                             message=f"{label}: the log stops for {gap / 60:.1f} min after {stamp(a)} (a reboot, "
                                     "a hang or a stopped logger: check the kernel/System log, rerun unbroken)"))
        if len(out) >= 3:
            break
    return out


def gpu_checks(gpu: str, samples: Sequence[Sample], series: SmiSeries) -> tuple[list[Check], dict[str, Any]]:
    checks: list[Check] = []
    interval = series.interval_s
    loaded = [s for s in samples if s.loaded]
    minutes = loaded_minutes(samples, interval)
    temps = [s.temp for s in samples if s.temp is not None]
    summary: dict[str, Any] = {"gpu": gpu, "samples": len(samples), "loaded_minutes": round(minutes, 1),
                               "first": stamp(samples[0].time), "last": stamp(samples[-1].time),
                               "max_temp_c": max(temps) if temps else None, "interval_s": round(interval, 3)}
    label = f"GPU {gpu}"
    ok = minutes >= MIN_LOADED_MIN - 1e-9
    checks.append(Check(criterion="duration", status="pass" if ok else "incomplete", gpu=gpu,
                        numbers={"loaded_minutes": round(minutes, 1), "interval_s": round(interval, 3)},
                        message=f"{label}: {minutes:.0f} min under load (utilisation >= {LOADED_UTIL:g} %, each sample "
                                f"counting its {interval:.3g} s interval)" + ("" if ok else
                                f", under the {MIN_LOADED_MIN:g} min a burn-in needs to judge heat soak and stability")))
    checks += _gaps(gpu, samples, series)
    if loaded and (samples[-1].time - loaded[-1].time).total_seconds() > IDLE_TAIL_MIN * 60:
        idle = (samples[-1].time - loaded[-1].time).total_seconds() / 60
        checks.append(Check(criterion="load_held", status="incomplete", gpu=gpu, time=stamp(loaded[-1].time),
                            numbers={"idle_minutes": round(idle, 1)},
                            message=f"{label}: the load stopped at {stamp(loaded[-1].time)} and the GPU idled "
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
        return Check(criterion="throttle", status="fail", gpu=gpu, time=stamp(first.time),
                     numbers={"samples": len(throttled), "of": len(samples), "temp_c_at_first": first.temp,
                              "sm_clock_mhz_at_first": first.clock, "reasons_hex": hex(first.reasons or 0)},
                     message=f"{label}: {', '.join(names)} in {len(throttled)} of {len(samples)} samples, first at "
                             f"{stamp(first.time)}" + (f" at {first.temp:g} °C" if first.temp is not None else "")
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
        return Check(criterion="temperature", status="fail", gpu=gpu, time=stamp(hot[0].time),
                     numbers={"max_temp_c": peak, "samples_at_or_above": len(hot), "limit_c": TEMP_FAIL_C},
                     message=f"{label}: {peak:g} °C, at or above {TEMP_FAIL_C:g} °C in {len(hot)} samples from "
                             f"{stamp(hot[0].time)}: airflow, fan curve, paste/pads or the case")
    missing = [s for s in samples if s.temp is None]
    if missing or peak is None:
        return _unmeasured(label, "temperature", "temperature", missing or samples, len(samples), gpu)
    warm = peak >= GPU_HOT_C
    return Check(criterion="temperature", status="warn" if warm else "pass", gpu=gpu,
                 numbers={"max_temp_c": peak, "limit_c": TEMP_FAIL_C},
                 message=f"{label}: peak {peak:g} °C" + (f" (above {GPU_HOT_C:g} °C: little headroom for a "
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
        out.append(Check(criterion="temperature_stable", status="pass" if ok else "fail", gpu=gpu, time=stamp(end),
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
                                                    f"loaded samples from {stamp(missing[0].time)}")
                                    + f": SM clock stability not checked, so no pass; log it with `{SMI_COMMAND}`")]
    c0, c1 = _window_median(steady, "clock", start, start + window), _window_median(steady, "clock", end - window, end + window)
    assert c0 is not None and c1 is not None  # every steady sample has a clock
    sag = (c0 - c1) / c0
    ok = sag <= CLOCK_SAG
    out.append(Check(criterion="clock_stable", status="pass" if ok else "fail", gpu=gpu, time=stamp(end),
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
        run = run + 1 if s.clock is not None and s.clock < CLOCK_DIP * top else 0
        longest = max(longest, run)
    if not low or (longest < CLOCK_DIP_SAMPLES and len(low) < CLOCK_DIP_SHARE * len(steady)):
        return []
    lowest = min(s.clock for s in low if s.clock is not None)
    return [Check(criterion="clock_dips", status="fail", gpu=gpu, time=stamp(low[0].time),
                  numbers={"lowest_mhz": lowest, "steady_mhz": top, "samples_below": len(low), "of": len(steady),
                           "limit": CLOCK_DIP},
                  message=f"{label}: SM clock down to {lowest:g} MHz (steady {top:g} MHz) in {len(low)} of {len(steady)} "
                          f"loaded samples from {stamp(low[0].time)}: throttling nvidia-smi did not flag")]


def lost_checks(lost: Sequence[Lost]) -> list[Check]:
    by_gpu: dict[str, list[Lost]] = {}
    for item in lost:
        by_gpu.setdefault(item.gpu, []).append(item)
    return [Check(criterion="gpu_lost", status="fail", gpu=gpu, time=stamp(items[0].time) if items[0].time else None,
                  numbers={"rows": len(items)},
                  message=f"GPU {gpu}: nvidia-smi wrote {items[0].text!r} in {len(items)} row(s) from "
                          f"{stamp(items[0].time)}: the GPU fell off the bus or stopped answering (Xid 79): reseat it, "
                          "check its power cables and riser, read the kernel log")
            for gpu, items in sorted(by_gpu.items())]


def restart_checks(series: SmiSeries) -> list[Check]:
    out = []
    for r in series.restarts[:5]:
        hole = r.hole_s
        broken = hole is None or hole > 2 * series.interval_s + 1
        out.append(Check(criterion="logger_restart", status="incomplete" if broken else "warn", time=stamp(r.at),
                         numbers={"hole_seconds": round(hole, 1) if hole is not None else None},
                         message=f"the nvidia-smi logger started again at {stamp(r.at)}" + (
                             f" after a {hole:.0f} s hole" if hole is not None else "") + (
                             ": a reboot or a stopped logger hides there (check `journalctl -k -b -1`); rerun unbroken"
                             if broken else " (its header written again)")))
    return out
