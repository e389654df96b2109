"""A burn-in plan for a build: what to run, for how long, which logs to keep, and what passes (planner/doctor/burnin.py
judges the logs). Pure: the build's GPUs and its sweep estimate in, the plan out.

How long, and why:
- a GPU stress phase of MIN_LOADED_MIN minutes on every GPU at once: the worst-case heat and PSU load, long enough
  for the card, the case air and the VRMs to reach a steady state after the warm-up;
- then the user's own training script, one run per GPU as the sweep will run them, for the longer of one whole
  run at the slow end of its estimate (a run must finish on this machine) and the sweep's wall time, capped at one
  night (NIGHT_H): faults that kill sweeps (PSU transients, heat soak, marginal memory) show up over hours, and the
  burn-in should cover the longest stretch the machine will be left alone; past one night, the first night of the
  real sweep is itself the test, with the same logs running.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from planner.doctor.burnin import (CLOCK_DIP, CLOCK_SAG, MIN_LOADED_MIN, SMI_COMMAND, TEMP_DRIFT_C, TEMP_FAIL_C,
                                   THROUGHPUT_SAG, WARMUP_MIN, thresholds)
from planner.errors import InputError
from planner.settings import MAX_GPUS_SEEN

NIGHT_H = 8.0
OS = Literal["linux", "windows", "both"]


def _half_hours(hours: float) -> float:
    return max(1.0, math.ceil(hours * 2 - 1e-9) / 2)


@dataclass(frozen=True)
class Phase:
    name: str
    hours: float
    what: str
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "hours": self.hours, "what": self.what, "why": self.why}


@dataclass(frozen=True)
class BurninPlan:
    build: str
    gpu_count: int
    phases: tuple[Phase, ...]
    logs: tuple[tuple[str, str, str], ...]  # (what, os, command)
    criteria: tuple[str, ...]
    check_command: str
    basis: str

    @property
    def total_hours(self) -> float:
        return sum(p.hours for p in self.phases)

    def text(self) -> str:
        """The plan as `planner burnin` prints it."""
        return plan_text(self)

    @staticmethod
    def pointer(gpu: str, count: int = 1) -> str:
        """The line under a planned or checked build that sends its reader to the burn-in (module pointer)."""
        return pointer(gpu, count)

    def to_json(self) -> dict[str, Any]:
        return {"build": self.build, "gpu_count": self.gpu_count, "total_hours": self.total_hours,
                "phases": [p.to_json() for p in self.phases],
                "logs": [{"log": w, "os": o, "command": c} for w, o, c in self.logs],
                "pass_criteria": list(self.criteria), "thresholds": thresholds(), "check": self.check_command,
                "basis": self.basis}


def burnin_plan(build: str, gpu_count: int, *, run_hours: float, run_hours_high: float, sweep_hours: float,
                runs: int, os: OS = "both", basis: str = "") -> BurninPlan:
    """The plan for `gpu_count` GPUs whose one run takes `run_hours` (slow end `run_hours_high`) and whose sweep of
    `runs` runs takes `sweep_hours` of wall time."""
    if not 1 <= gpu_count <= MAX_GPUS_SEEN:
        raise InputError(f"GPU count must be between 1 and {MAX_GPUS_SEEN} (got {gpu_count})")
    for name, value in (("run hours", run_hours), ("run hours (slow end)", run_hours_high), ("sweep hours", sweep_hours)):
        if not (math.isfinite(value) and 0 < value <= 100_000):
            raise InputError(f"{name} must be a positive number of hours (got {value})")
    if os not in ("linux", "windows", "both"):
        raise InputError(f"--os must be linux, windows or both (got {os!r})")
    stress_h = MIN_LOADED_MIN / 60
    train_h = _half_hours(max(run_hours_high, min(sweep_hours, NIGHT_H)))
    every = "each of the " + f"{gpu_count} GPUs" if gpu_count > 1 else "the GPU"
    phases = (
        Phase("GPU stress", stress_h,
              f"all GPUs at full load at once: Linux `./gpu_burn -tc {int(stress_h * 3600)}` (gpu-burn), Windows "
              "OCCT's GPU test or FurMark's stress test; or your training script with the largest batch that fits",
              f"the worst-case heat and PSU load; {MIN_LOADED_MIN:g} min gives about {MIN_LOADED_MIN - WARMUP_MIN:g} "
              f"min of steady state after a {WARMUP_MIN:g} min warm-up"),
        Phase("Your training", train_h,
              f"your own training script, one run on {every} as the sweep runs them (same batch size, precision and "
              "data loader), logging throughput with a time column",
              f"at least one whole run at its slow end ({run_hours_high:.1f} h) and as long as the sweep "
              f"({sweep_hours:.1f} h of {runs} runs), at most one night ({NIGHT_H:g} h): sweep-killing faults (PSU "
              "transients, heat soak, marginal memory) show up over hours"
              + (" — run it overnight" if train_h + stress_h >= 6 else "")),
    )
    hours = math.ceil(stress_h + train_h + 2)
    logs = [("GPU telemetry (start first, stop last)", "any", f"{SMI_COMMAND} > burnin-smi.csv")]
    if os in ("linux", "both"):
        logs += [("kernel log, live", "linux", "journalctl -k -f -o short-iso > burnin-kernel.log  (or: sudo dmesg -w -T "
                  "> burnin-kernel.log)"),
                 ("kernel log of the previous boot, if the machine rebooted", "linux",
                  "journalctl -k -b -1 -o short-iso > burnin-kernel-prev.log")]
    if os in ("windows", "both"):
        logs.append(("Windows System log, after the burn-in", "windows",
                     f'wevtutil qe System /q:"*[System[TimeCreated[timediff(@SystemTime) <= {hours * 3_600_000}]]]" '
                     "/f:xml > burnin-system.xml"))
    logs.append(("training metrics", "any", "your script's CSV/JSONL log with time and tokens/s (or samples/s) columns, "
                 "e.g. Lightning's CSVLogger metrics.csv; keep the file"))
    criteria = (
        "no Xid, WHEA, Kernel-Power 41, nvlddmkm, machine-check, PCIe AER or OOM event in the kernel/System log",
        "no HW slowdown, HW thermal slowdown, HW power brake or SW thermal slowdown in any nvidia-smi sample "
        "(SW power cap is normal at full load)",
        f"no GPU at or above {TEMP_FAIL_C:g} °C (the RTX 4090/5090's published maximum)",
        f"after the {WARMUP_MIN:g} min warm-up: temperature within {TEMP_DRIFT_C:g} °C and SM clock within "
        f"{CLOCK_SAG:.0%} from the first to the last 10 minutes; no 3 samples in a row below {CLOCK_DIP:.0%} of the "
        "steady clock",
        f"training throughput: the last fifth within {THROUGHPUT_SAG:.0%} of the first fifth after warm-up",
        f"at least {MIN_LOADED_MIN:g} min of load in the nvidia-smi log, unbroken (else the verdict is incomplete); "
        "every GPU present throughout: a GPU that drops out or reads [GPU requires reset] fails",
        "every sample carries the throttle reasons, the temperature and the SM clock: a criterion without data is "
        "not checked, and not checked is not a pass",
        "one verdict for both phases: the stress phase before the training's first logged time, the training under "
        "nvidia-smi to its end (without the metrics file the verdict says it covers the stress phase only)",
    )
    events = "--kernel-log burnin-kernel.log" if os != "windows" else "--events burnin-system.xml"
    check = f"planner doctor burnin burnin-smi.csv {events} --metrics metrics.csv"
    return BurninPlan(build, gpu_count, phases, tuple(logs), criteria, check, basis)


def pointer(gpu: str, count: int = 1) -> str:
    """One line that sends the reader of a plan to its burn-in (the Plan and Check tabs, `recommend`'s text)."""
    spec = f"{count}x {gpu}" if count > 1 else gpu
    return (f"Before a sweep, burn the machine in: {MIN_LOADED_MIN:g} min of GPU stress, then your own training; "
            f"`planner burnin --gpu '{spec}'` prints the plan and the logs to keep, and `planner doctor burnin` "
            "(or the Doctor tab) judges them.")


def plan_text(p: BurninPlan) -> str:
    """The plan as the CLI prints it."""
    out = [f"Burn-in for {p.build}: {p.total_hours:g} h in all"]
    for i, ph in enumerate(p.phases, 1):
        out += [f"  {i}. {ph.name}, {ph.hours:g} h: {ph.what}", f"     why: {ph.why}"]
    out.append("Logs to keep (start them before phase 1):")
    out += [f"  - {w} [{o}]: {c}" for w, o, c in p.logs]
    out.append("Pass criteria:")
    out += [f"  - {c}" for c in p.criteria]
    out.append(f"Then check: {p.check_command}")
    if p.basis:
        out.append(f"Durations from: {p.basis}")
    return "\n".join(out)

