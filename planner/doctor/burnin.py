"""Burn-in verdict: does a new machine survive sustained training load? Readers in (nvidia-smi CSV log, kernel or
System log, training metrics), `pass | fail | not_checked | incomplete` out, with the evidence for each criterion.

The thresholds are stated once (planner/doctor/burnin_gpu.py for the nvidia-smi criteria, here for the rest) and
printed by `planner burnin` and docs/doctor.md §11:

- at least MIN_LOADED_MIN minutes with every GPU under load, each sample counting its sampling interval, unbroken,
  every GPU present throughout (a GPU that drops out, or rows saying `[GPU requires reset]`, fail);
- no HW slowdown, HW thermal slowdown, HW power brake or SW thermal slowdown bit in any sample; no sample at or above
  TEMP_FAIL_C; temperature and SM clock stable after the warm-up, no clock dips;
- a safety criterion (throttle reasons, temperature, SM clock) without data in every sample is `not_checked`, and a
  verdict with one not checked is not a pass;
- no Xid, WHEA, Kernel-Power 41, nvlddmkm, machine-check, PCIe AER or OOM event in the kernel or System log: every
  event the doctor's catalogue knows (noise excluded) fails a burn-in;
- training throughput (tokens/s, samples/s) after its warm-up: the median of the last fifth within THROUGHPUT_SAG
  of the first fifth's, and no tenth under THROUGHPUT_COLLAPSE of it;
- one verdict for both phases of the plan (GPU stress, then the user's training, told apart by the metrics' times), or
  it says which phase is missing.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from planner.doctor.burnin_gpu import (CLOCK_DIP, CLOCK_DIP_SAMPLES, CLOCK_DIP_SHARE, CLOCK_SAG, FAIL_REASONS, GAP_S,
                                       IDLE_TAIL_MIN, MIN_LOADED_MIN, SAFETY, STABLE_WINDOW_MIN, TEMP_DRIFT_C,
                                       TEMP_FAIL_C, WARMUP_MIN, Check, gpu_checks, loaded_minutes,
                                       lost_checks, restart_checks, stamp)
from planner.doctor.burnin_log import SMI_COMMAND, SMI_FIELDS, Sample, SmiSeries, read_smi_series
from planner.doctor.metrics_io import MetricSeries
from planner.doctor.report import EventLine, EventReport
from planner.doctor.smi import LOADED_UTIL
from planner.doctor.textio import Source
from planner.errors import InputError
from planner.settings import GPU_HOT_C

__all__ = ["CLOCK_DIP", "CLOCK_DIP_SAMPLES", "CLOCK_DIP_SHARE", "CLOCK_SAG", "FAIL_REASONS", "GAP_S", "IDLE_TAIL_MIN",
           "MIN_LOADED_MIN", "SAFETY", "SMI_COMMAND", "SMI_FIELDS", "STABLE_WINDOW_MIN", "TEMP_DRIFT_C", "TEMP_FAIL_C",
           "WARMUP_MIN", "BurninReport", "Check", "Sample", "check_burnin", "judge", "read_smi_series",
           "thresholds"]

THROUGHPUT_SAG = 0.05
THROUGHPUT_COLLAPSE = 0.5  # a tenth of the run whose median throughput is under half the first fifth's
MIN_METRIC_POINTS = 20
EVENT_SLACK = timedelta(minutes=10)  # events this long before the first nvidia-smi sample still count

Verdict = Literal["pass", "fail", "incomplete", "not_checked"]


def thresholds() -> dict[str, Any]:
    """The numbers the verdict uses, as `planner burnin` and the JSON print them."""
    return {"min_loaded_minutes": MIN_LOADED_MIN, "warmup_minutes": WARMUP_MIN, "stable_window_minutes": STABLE_WINDOW_MIN,
            "temp_fail_c": TEMP_FAIL_C, "temp_warn_c": GPU_HOT_C, "temp_drift_c": TEMP_DRIFT_C,
            "clock_sag": CLOCK_SAG, "clock_dip": CLOCK_DIP, "clock_dip_samples": CLOCK_DIP_SAMPLES,
            "clock_dip_share": CLOCK_DIP_SHARE, "throughput_sag": THROUGHPUT_SAG,
            "throughput_collapse": THROUGHPUT_COLLAPSE, "idle_tail_minutes": IDLE_TAIL_MIN, "gap_seconds": GAP_S,
            "fail_reasons": sorted(FAIL_REASONS.values()), "loaded_util_pct": LOADED_UTIL}


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
def _event_checks(reports: Sequence[EventReport], start: Optional[datetime] = None) -> list[Check]:
    """Every catalogued event fails, except those a local-clock log dates before the burn-in began (the nvidia-smi
    log's first sample, less EVENT_SLACK): a crash while setting the machine up is not the burn-in's. Logs on
    another clock (UTC, seconds since boot) are not compared with nvidia-smi's local time: all their events count."""
    if not reports:
        return [Check(criterion="events", status="skipped", message="no kernel or System log given: Xid, WHEA and "
                      "Kernel-Power 41 events were not checked (give --kernel-log or --events)")]
    lines: list[EventLine] = []
    before: list[EventLine] = []
    for r in reports:
        for e in (e for i in r.incidents for e in i.events):
            early = start is not None and r.clock == "local" and e.time < start - EVENT_SLACK
            (before if early else lines).append(e)
    out = [Check(criterion="events_before", status="warn", numbers={"events": len(before)},
                 message=f"{len(before)} event(s) before the burn-in began ({stamp(start)}) ignored, the last "
                         f"{before[-1].source} {before[-1].id} at {stamp(before[-1].time)}")] if before and start else []
    if not lines:
        total = sum(r.total_events for r in reports)
        return out + [Check(criterion="events", status="pass", numbers={"events_read": total},
                            message=f"no Xid, WHEA, Kernel-Power 41 or other hardware event in {total} log events")]
    return out + [Check(criterion="events", status="fail", time=stamp(e.time), numbers={"source": e.source, "id": e.id},
                        message=f"{e.source} {e.id} at {stamp(e.time)}: {e.summary}") for e in lines[:20]]


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
    interval = smi.interval_s
    stress_min = min((loaded_minutes(s, interval) for s in smi.samples.values()), default=0.0)
    if metrics is None:
        phases: dict[str, Optional[dict[str, Any]]] = {"stress": {"loaded_minutes": round(stress_min, 1)},
                                                       "training": None}
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
    logged = [s.time for ss in smi.samples.values() for s in ss]
    if logged and (end < min(logged) or begin > max(logged)):
        return {"stress": None, "training": {"from": stamp(begin), "to": stamp(end)}}, [Check(
            criterion="phases", status="incomplete", numbers={"missing": "overlap"},
            message=f"the training's times ({stamp(begin)} to {stamp(end)}) do not overlap the nvidia-smi log's "
                    f"({stamp(min(logged))} to {stamp(max(logged))}): another run, or another clock (a metrics file in "
                    "UTC, nvidia-smi in local time); the training phase is not covered by telemetry")]
    stress_min = min((loaded_minutes(s, interval, lambda x, b=begin: x.loaded and x.time < b) for s in smi.samples.values()),
                     default=0.0)
    train_min = min((loaded_minutes(s, interval, lambda x, b=begin, e=end: x.loaded and b <= x.time <= e)
                     for s in smi.samples.values()), default=0.0)
    span = (end - begin).total_seconds() / 60
    phases = {"stress": {"loaded_minutes": round(stress_min, 1)},
              "training": {"from": stamp(begin), "to": stamp(end), "minutes": round(span, 1),
                           "loaded_minutes_logged": round(train_min, 1)}}
    out = []
    if stress_min < MIN_LOADED_MIN - 1e-9:
        out.append(Check(criterion="phases", status="incomplete", numbers={"missing": "stress"},
                         message=f"the GPU stress phase is missing or short: {stress_min:.0f} min of load before the "
                                 f"training began at {stamp(begin)} (the plan's phase 1 is {MIN_LOADED_MIN:g} min)"))
    if train_min < 0.9 * span - interval / 60:
        out.append(Check(criterion="phases", status="incomplete", numbers={"missing": "training telemetry"},
                         message=f"the nvidia-smi log covers {train_min:.0f} of the training's {span:.0f} min under "
                                 f"load ({stamp(begin)} to {stamp(end)}): keep the logger running through phase 2"))
    if not out:
        out.append(Check(criterion="phases", status="pass", message=f"both phases: {stress_min:.0f} min of GPU stress, "
                         f"then {span:.0f} min of training ({stamp(begin)} to {stamp(end)}) under nvidia-smi"))
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
    checks: list[Check] = lost_checks(smi.lost)
    gpus = []
    for gpu in sorted(smi.samples):
        found, summary = gpu_checks(gpu, smi.samples[gpu], smi)
        checks += found
        gpus.append(summary)
    checks += restart_checks(smi)
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
    """The training metrics, through the doctor's metrics reader: CSV and JSONL with the column vocabulary
    `planner calibrate` reads, training stdout and trainer_state.json through calibrate's own reader
    (planner.perf.trainlog)."""
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
