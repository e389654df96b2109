"""Burn-in: the plan to prove a new machine before trusting it with a sweep, and the pass/fail check of its logs,
read with the doctor's readers and judged with its one engine (nvidia-smi counts, kernel catalogue, metrics)."""

from __future__ import annotations

import math
import statistics
from datetime import datetime
from pathlib import Path
from typing import Any, BinaryIO, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict

from planner.doctor.smi import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, LOADED_UTIL, SW_THERMAL, SmiLog, SmiRow
from planner.doctor.textio import open_text, whole_lines
from planner.errors import InputError

Source = Union[str, Path, bytes, BinaryIO]
SMI_QUERY = ("timestamp,index,name,utilization.gpu,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,"
             "clocks_throttle_reasons.active,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
             "pcie.link.width.max")
SMI_COMMAND = f"nvidia-smi --query-gpu={SMI_QUERY} --format=csv -l 5"
MIN_MINUTES = 60.0  # the shortest burn-in the check accepts
TEMP_MAX_C = 90.0  # a GPU core at or above this fails [our threshold: the slowdown point of current cards is near]
WARMUP_MIN = 10.0  # minutes before temperatures and clocks are expected to settle
SETTLE_C = 3.0  # the last 10 minutes may run at most this much hotter than the 10 before [our threshold]
CLOCK_SAG = 0.90  # a loaded minute under 90 % of the median loaded SM clock is a clock sag [our threshold]
LOADED_SHARE = 0.8  # the GPUs must be under load in at least 80 % of the samples
MAX_MINUTES = 14 * 24 * 60  # minutes of per-GPU means kept (two weeks)
SLOWDOWN = HW_SLOWDOWN | HW_THERMAL | HW_POWER_BRAKE | SW_THERMAL
Status = Literal["pass", "fail", "not_checked"]


class BurnInCheck(BaseModel):
    """One criterion, whether it held, and the evidence."""

    model_config = ConfigDict(frozen=True)
    name: str
    status: Status
    evidence: str


class BurnInReport(BaseModel):
    """`planner doctor burnin`: the verdict and every check behind it."""

    model_config = ConfigDict(frozen=True)
    verdict: Literal["pass", "fail"]
    checks: list[BurnInCheck]
    minutes: float
    gpus: list[str]
    notes: list[str] = []

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "minutes": round(self.minutes, 1), "gpus": self.gpus,
                "checks": [c.model_dump() for c in self.checks], "notes": list(self.notes)}


class BurnInPlan(BaseModel):
    """`planner burnin`: what to run, how long, which logs to keep, the pass criteria and the check to run."""

    model_config = ConfigDict(frozen=True)
    build: str
    system: str
    steps: list[str]
    logs: dict[str, str]
    criteria: list[str]
    check: str

    def to_json(self) -> dict[str, Any]:
        return self.model_dump()


CRITERIA = [
    "no NVIDIA Xid, WHEA error, Kernel-Power 41 (or an unclean boot), machine check, uncorrected PCIe or memory "
    "error in the kernel or System log",
    "no thermal or power slowdown in the nvidia-smi log (clock reasons HW slowdown 0x8, SW thermal 0x20, HW "
    "thermal 0x40, power brake 0x80)",
    f"GPU temperature below {TEMP_MAX_C:g} °C and settled: the last 10 minutes at most {SETTLE_C:g} °C above the 10 "
    "before",
    f"SM clocks stable under load: no loaded minute under {CLOCK_SAG:.0%} of the run's median",
    "no throughput sag (nor NaN loss) in the training metrics",
    f"at least {MIN_MINUTES:g} minutes with the GPUs under load (≥ {LOADED_UTIL:g} % utilisation) in "
    f"{LOADED_SHARE:.0%} of the samples, no PCIe link trained down, no ECC error",
]


def burnin_plan(build: str = "your build", gpus: int = 1, system: str = "linux", hours: float = 7.0) -> BurnInPlan:
    """The burn-in for a build: the user's own training, long enough to meet one sweep run, with three logs."""
    if system not in ("linux", "windows"):
        raise InputError(f"--system {system[:20]!r}: choose linux or windows")
    if not (1 <= gpus <= 16):
        raise InputError(f"--gpus {gpus} is out of range (1-16)")
    if not (math.isfinite(hours) and 1 <= hours <= 72):
        raise InputError(f"--hours {hours} is out of range (1-72)")
    kernel = ("journalctl -k -f -o short-iso > kern-burnin.log   (or afterwards: journalctl -k -b -o short-iso > "
              "kern-burnin.log)" if system == "linux" else
              "afterwards: wevtutil qe System /f:xml /q:\"*[System[TimeCreated[timediff(@SystemTime) <= "
              f"{int(hours * 3600 * 1000) + 3_600_000}]]]\" > system-burnin.xml")
    logs = {"nvidia-smi": f"{SMI_COMMAND} > smi-burnin.csv",
            "kernel" if system == "linux" else "windows_system": kernel,
            "metrics": "your training script's CSV or JSONL log (step, loss, tokens/s or samples/s, with a time "
                       "column): metrics-burnin.csv"}
    both = "all GPUs at once, " if gpus > 1 else ""
    steps = [
        "Before: stock settings (no GPU or CPU overclock, XMP/EXPO as you will run it), current driver, case closed "
        "as it will run, room at its usual temperature.",
        f"Start the logs: `{logs['nvidia-smi']}` and the "
        + ("kernel log (`journalctl -k -f -o short-iso > kern-burnin.log`)." if system == "linux" else
           "Windows System log is exported afterwards."),
        f"Hour 1 (the check's minimum): your own training script on {both}the batch size you will use, with its "
        "DataLoader workers: the load the sweep will put on the GPUs, the CPU and the PSU together.",
        f"Then run on to {hours:g} h (one run of the sweep) before trusting the machine with several nights; keep "
        "all three logs.",
        "After: stop the logs and run the check below; a fail names the evidence and the doctor's next step "
        "(`planner doctor events` / `planner doctor smi`).",
    ]
    check = ("planner doctor burnin smi-burnin.csv " + ("--kernel-log kern-burnin.log" if system == "linux" else
                                                         "--kernel-log system-burnin.xml")
             + " --metrics metrics-burnin.csv")
    return BurnInPlan(build=build, system=system, steps=steps, logs=logs, criteria=CRITERIA, check=check)


def _stamp(text: str) -> Optional[datetime]:
    for fmt in ("%Y/%m/%d %H:%M:%S.%f", "%Y/%m/%d %H:%M:%S", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.strptime(text.strip(), fmt)
        except ValueError:
            continue
    return None


class _Minutes:
    """Per GPU and minute of the log: sums of temperature and loaded SM clock (bounded: MAX_MINUTES minutes)."""

    def __init__(self) -> None:
        self.start: Optional[datetime] = None
        self.last: Optional[datetime] = None
        self.temp: dict[str, dict[int, list[float]]] = {}
        self.clock: dict[str, dict[int, list[float]]] = {}
        self.samples = self.loaded = 0
        self.slow: dict[str, list[tuple[int, float, int]]] = {}  # gpu -> (minute, temp, reasons), first five
        self.slow_count: dict[str, int] = {}

    def add(self, row: SmiRow) -> None:
        t = _stamp(row.time)
        if t is None:
            return
        self.start = self.start or t
        self.last = t
        minute = int((t - self.start).total_seconds() // 60)
        if not 0 <= minute < MAX_MINUTES:
            return
        self.samples += 1
        loaded = row.util is not None and row.util >= LOADED_UTIL
        self.loaded += loaded
        if row.temp is not None:
            cell = self.temp.setdefault(row.gpu, {}).setdefault(minute, [0.0, 0])
            cell[0] += row.temp
            cell[1] += 1
        if loaded and row.clock is not None:
            cell = self.clock.setdefault(row.gpu, {}).setdefault(minute, [0.0, 0])
            cell[0] += row.clock
            cell[1] += 1
        if row.reasons & SLOWDOWN:
            self.slow_count[row.gpu] = self.slow_count.get(row.gpu, 0) + 1
            if len(self.slow.setdefault(row.gpu, [])) < 5:
                self.slow[row.gpu].append((minute, row.temp if row.temp is not None else math.nan, row.reasons))


def _means(cells: dict[int, list[float]]) -> dict[int, float]:
    return {m: s / n for m, (s, n) in cells.items() if n}


def _what(reasons: int) -> str:
    return ", ".join(name for bit, name in ((HW_POWER_BRAKE, "power brake"), (HW_THERMAL, "HW thermal"),
                                            (SW_THERMAL, "SW thermal"), (HW_SLOWDOWN, "HW slowdown"))
                     if reasons & bit)


def check_burnin(smi: Source, kernel_log: Optional[Source] = None, metrics: Optional[Source] = None, *,
                 min_minutes: float = MIN_MINUTES, temp_max_c: float = TEMP_MAX_C) -> BurnInReport:
    """Judge a burn-in from its nvidia-smi `--format=csv` log (required), its kernel/System log and metrics."""
    from planner.doctor.diagnose import as_source, diagnose_events, diagnose_metrics

    if not (math.isfinite(min_minutes) and 1 <= min_minutes <= 10_000):
        raise InputError(f"--min-minutes {min_minutes} is out of range (1-10000)")
    if not (math.isfinite(temp_max_c) and 40 <= temp_max_c <= 120):
        raise InputError(f"--temp-max {temp_max_c} is out of range (40-120)")
    minutes = _Minutes()
    with open_text(as_source(smi)) as stream:
        log = SmiLog(stream.name, temp_max_c, on_row=minutes.add)
        for line in whole_lines(stream.lines, stream.name):
            log.feed(line)
    if log.fields is None or not log.tallies:
        raise InputError(f"{stream.name}: no nvidia-smi samples; record them with `{SMI_COMMAND}`")
    if minutes.start is None or minutes.last is None:
        raise InputError(f"{stream.name}: no readable timestamp column; record with `{SMI_COMMAND}`")
    checks: list[BurnInCheck] = []
    span = (minutes.last - minutes.start).total_seconds() / 60
    gpus = sorted(log.tallies)
    share = minutes.loaded / minutes.samples if minutes.samples else 0.0
    checks.append(BurnInCheck(name="duration under load", status="pass" if span >= min_minutes and share >=
                              LOADED_SHARE else "fail",
                              evidence=f"{span:.0f} min logged (at least {min_minutes:g} needed), GPUs under load in "
                                       f"{share:.0%} of {minutes.samples} samples (at least {LOADED_SHARE:.0%})"))
    slow = [f"GPU {g}: {n} sample(s) with clocks lowered ("
            + "; ".join(f"{_what(r)} at {t:g} °C, minute {m}" for m, t, r in minutes.slow[g]) + ")"
            for g, n in sorted(minutes.slow_count.items())]
    checks.append(BurnInCheck(name="no thermal or power slowdown", status="fail" if slow else "pass",
                              evidence="; ".join(slow) or "no slowdown reason in any sample"))
    hot = {g: max(t.max_temp, -math.inf) for g, t in log.tallies.items()}
    too_hot = [f"GPU {g} reached {v:g} °C" for g, v in sorted(hot.items()) if v >= temp_max_c]
    settle: list[str] = []
    sag: list[str] = []
    for g in gpus:
        temps = _means(minutes.temp.get(g, {}))
        last_min = max(temps, default=0)
        if last_min >= WARMUP_MIN + 20:
            late = [v for m, v in temps.items() if m > last_min - 10]
            before = [v for m, v in temps.items() if last_min - 20 < m <= last_min - 10]
            if late and before and statistics.fmean(late) > statistics.fmean(before) + SETTLE_C:
                settle.append(f"GPU {g} still climbing: {statistics.fmean(before):.0f} → "
                              f"{statistics.fmean(late):.0f} °C over the last 20 minutes")
        clocks = {m: v for m, v in _means(minutes.clock.get(g, {})).items() if m >= WARMUP_MIN}
        if len(clocks) >= 5:
            median = statistics.median(clocks.values())
            low = [m for m, v in clocks.items() if v < CLOCK_SAG * median]
            if low:
                sag.append(f"GPU {g}: SM clock under {CLOCK_SAG:.0%} of its {median:.0f} MHz median in {len(low)} "
                           f"loaded minute(s), first at minute {min(low)} ({clocks[min(low)]:.0f} MHz)")
    peak = ", ".join(f"GPU {g} {v:g} °C" for g, v in sorted(hot.items()) if v > -math.inf)
    checks.append(BurnInCheck(name="temperatures below the limit and settled",
                              status="fail" if too_hot or settle else "pass",
                              evidence="; ".join(too_hot + settle) or f"peak {peak} (limit {temp_max_c:g} °C), "
                                                                      "settled after warm-up"))
    has_clock = any(minutes.clock.values())
    checks.append(BurnInCheck(name="clocks stable under load", status="fail" if sag else "pass" if has_clock
                              else "not_checked",
                              evidence="; ".join(sag) or ("loaded SM clocks within 10 % of their median"
                                                          if has_clock else "the log has no clocks.sm column; "
                                                          f"record with `{SMI_COMMAND}`")))
    hardware = [f for f in log.findings() if f.kind in ("link_down", "ecc", "retired_pages", "remap_failure")]
    checks.append(BurnInCheck(name="PCIe link and GPU memory", status="fail" if hardware else "pass",
                              evidence="; ".join(f.message for f in hardware) or
                              "no link trained down under load, no ECC error or pending retirement"))
    notes: list[str] = []
    if kernel_log is not None:
        report = diagnose_events(kernel_log)
        bad = [f"{e.time:%Y-%m-%d %H:%M:%S} {e.source} {e.id}: {e.summary.split(';')[0]}"
               for i in report.incidents for e in i.events]
        checks.append(BurnInCheck(name="no Xid, WHEA, Kernel-Power 41 or other catalogued event",
                                  status="fail" if bad else "pass",
                                  evidence="; ".join(bad[:8]) + (f" and {len(bad) - 8} more" if len(bad) > 8 else "")
                                  or f"{report.total_events} lines read, none catalogued ({report.format})"))
        notes.append("the whole kernel/System log given is judged: export only the burn-in's boot or hours")
    else:
        checks.append(BurnInCheck(name="no Xid, WHEA, Kernel-Power 41 or other catalogued event",
                                  status="not_checked", evidence="no --kernel-log given"))
    if metrics is not None:
        m = diagnose_metrics(metrics, temp_limit_c=temp_max_c)
        sags = [f"{f.kind} steps {f.from_step}-{f.to_step}: {f.message.split(':')[0]}" for f in m.findings
                if f.kind in ("throughput_drop", "nan_loss", "thermal_throttling", "run_stopped", "logging_gap")]
        checks.append(BurnInCheck(name="no throughput sag", status="fail" if sags else "pass",
                                  evidence="; ".join(sags) or f"{m.rows} metric rows read, throughput steady"))
    else:
        checks.append(BurnInCheck(name="no throughput sag", status="not_checked", evidence="no --metrics given"))
    verdict: Literal["pass", "fail"] = "fail" if any(c.status == "fail" for c in checks) else "pass"
    if verdict == "pass" and any(c.status == "not_checked" for c in checks):
        notes.append("pass on what was given; the checks marked not_checked need their logs")
    return BurnInReport(verdict=verdict, checks=checks, minutes=span, gpus=gpus, notes=notes)
