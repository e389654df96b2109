"""`doctor watch`: follow growing metrics, kernel and nvidia-smi logs, raise signals, run the user's commands."""

from __future__ import annotations

import csv
import json
import math
import os
import shlex
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from planner.doctor.catalogue import lookup
from planner.doctor.kernel import classify
from planner.doctor.metrics_io import _PER_GPU, _PER_GPU_ROLE, ALIASES, normalise
from planner.doctor.signals import KINDS, Detector, Signal
from planner.doctor.smi import HW_POWER_BRAKE, HW_SLOWDOWN, HW_THERMAL, SW_THERMAL, csv_header, csv_row
from planner.doctor.tail import Tail
from planner.errors import InputError

STATE_VERSION = 1
MAX_DEPTH = 8  # JSON nesting kept when flattening a metrics row (W&B-style "train/loss" keys)
ACTION_TIMEOUT_S = 60.0


@dataclass
class WatchOptions:
    """What to follow and what to do; the CLI builds it from its options."""

    metrics: str
    kernel_log: Optional[str] = None
    smi_log: Optional[str] = None
    actions: dict[str, str] = field(default_factory=dict)  # kind (or "any") -> command line
    cooldown_s: float = 600.0
    hang_min: float = 10.0
    interval_s: float = 5.0
    state_path: Optional[str] = None
    temp_limit_c: float = 83.0

    def validate(self) -> None:
        for kind in self.actions:
            if kind not in KINDS and kind != "any":
                raise InputError(f"--on {kind}=...: unknown signal; choose from {', '.join(KINDS)} or any")
        for name, value, low, high in (("--cooldown-s", self.cooldown_s, 0, 7 * 86400),
                                       ("--hang-min", self.hang_min, 0.01, 7 * 1440),
                                       ("--interval-s", self.interval_s, 0.01, 3600),
                                       ("--temp-limit", self.temp_limit_c, 20, 130)):
            if not (math.isfinite(value) and low <= value <= high):
                raise InputError(f"{name} {value} is out of range ({low}-{high})")
        for path in (self.metrics, self.kernel_log, self.smi_log):
            if path and Path(path).exists() and not Path(path).is_file():
                raise InputError(f"{path} is not a regular file; the watch follows files a logger appends to")


class Watch:
    """One watcher: poll() reads what is new in each file and returns the signals it raised."""

    def __init__(self, options: WatchOptions, emit: Callable[[Signal], None] = lambda s: None,
                 clock: Callable[[], float] = time.time) -> None:
        options.validate()
        self.o, self.emit, self.clock = options, emit, clock
        self.state_path = Path(options.state_path or f"{options.metrics}.doctor-watch.json")
        state = self._load()
        self.metrics = Tail.from_json(state.get("metrics", {}), options.metrics)
        self.kernel = Tail.from_json(state.get("kernel", {}), options.kernel_log) if options.kernel_log else None
        self.smi = Tail.from_json(state.get("smi", {}), options.smi_log) if options.smi_log else None
        self.detector = Detector.from_json(state.get("detector", {})) if state else Detector()
        self.detector.temp_limit_c = options.temp_limit_c
        self.last_progress = float(state.get("last_progress", self.clock()))
        self.hang_said = bool(state.get("hang_said", False))
        self.last_action: dict[str, float] = dict(state.get("last_action", {}))
        self.resumed = bool(state)
        self.actions_run: list[tuple[str, int]] = []
        self._columns: dict[str, tuple[str, str]] = {}

    # ---- state ------------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        if not self.state_path.exists():
            return {}
        try:
            state = json.loads(self.state_path.read_text(encoding="utf-8")[:1_000_000])
        except (OSError, ValueError, RecursionError):
            raise InputError(f"{self.state_path}: unreadable watch state; delete it to start over") from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise InputError(f"{self.state_path}: not a watch state file of this version; delete it to start over")
        return state

    def save(self) -> None:
        state = {"version": STATE_VERSION, "metrics": self.metrics.to_json(), "detector": self.detector.to_json(),
                 "last_progress": self.last_progress, "hang_said": self.hang_said, "last_action": self.last_action}
        if self.kernel:
            state["kernel"] = self.kernel.to_json()
        if self.smi:
            state["smi"] = self.smi.to_json()
        tmp = self.state_path.with_name(self.state_path.name + ".tmp")
        try:
            tmp.write_text(json.dumps(state), encoding="utf-8")
            os.replace(tmp, self.state_path)  # atomic: a kill never leaves half a state file
        except OSError as exc:
            raise InputError(f"cannot write the watch state {self.state_path}: {exc.strerror or exc}; pass --state "
                             "with a writable path") from None

    # ---- one poll ---------------------------------------------------------------------------
    def poll(self) -> list[Signal]:
        signals: list[Signal] = []
        rows_before = self.detector.rows
        for lines in self.metrics.chunks():
            signals += self._metrics_lines(lines)
        now = self.clock()
        if self.detector.rows > rows_before:
            self.last_progress, self.hang_said = now, False
        elif not self.hang_said and now - self.last_progress >= self.o.hang_min * 60:
            self.hang_said = True
            last = self.detector.last_step
            signals.append(Signal("hang", last, f"no new step for {(now - self.last_progress) / 60:.1f} min (last "
                                  f"step {last:g})" if last is not None else
                                  f"no metrics row for {(now - self.last_progress) / 60:.1f} min"))
        for tail, handle in ((self.kernel, self._kernel_line), (self.smi, self._smi_line)):
            for lines in tail.chunks() if tail else ():
                for line in lines:
                    signals += handle(line)
        for signal in signals:
            self.emit(signal)
            self._act(signal)
        self.save()
        return signals

    def _metrics_lines(self, lines: list[str]) -> list[Signal]:
        extra = self.metrics.extra
        lines = [ln for ln in lines if ln.strip()]
        if lines and "format" not in extra:
            extra["format"] = "jsonl" if lines[0].lstrip().startswith("{") else "csv"
        out: list[Signal] = []
        if extra.get("format") == "jsonl":
            for line in lines:
                try:
                    obj = json.loads(line)
                except (ValueError, RecursionError):
                    extra["bad_lines"] = int(extra.get("bad_lines", 0)) + 1  # half-written or hostile: skip it
                    continue
                if isinstance(obj, dict):
                    out += self._row(_flatten(obj))
            return out
        rows = csv.reader(lines)  # one reader per chunk: much cheaper than one per line
        while True:
            try:
                cells = next(rows)
            except StopIteration:
                return out
            except csv.Error:
                extra["bad_lines"] = int(extra.get("bad_lines", 0)) + 1
                continue
            if "header" not in extra:
                extra["header"] = [c.strip() for c in cells]
                continue
            out += self._row(dict(zip(extra["header"], cells)))

    def _column(self, col: str) -> tuple[str, str]:
        """('util', gpu) for a per-GPU utilisation column, ('role', name) for a metric, ('', '') otherwise; cached."""
        found = self._columns.get(col)
        if found is None:
            norm = normalise(str(col))
            per = _PER_GPU.match(norm)
            if per:
                found = ("util", per.group(1)) if _PER_GPU_ROLE.get(per.group(2), per.group(2)) == "util" else ("", "")
            else:
                role = ALIASES.get(norm) or (ALIASES.get(norm[6:]) if norm.startswith("train_") else None)
                found = ("role", role) if role else ("", "")
            if len(self._columns) < 10_000:  # JSONL rows may invent keys: keep the cache bounded
                self._columns[col] = found
        return found

    def _row(self, row: dict[str, Any]) -> list[Signal]:
        values: dict[str, float] = {}
        util: dict[str, float] = {}
        step: Optional[float] = None
        for col, raw in row.items():
            what, name = self._column(col)
            if not what:
                continue
            value, missing = _number(raw)
            if what == "util":
                util[name] = value
            elif name == "step":
                step = value if math.isfinite(value) else None
            elif name not in values:
                values[name] = value
                if missing:
                    values[f"{name}__missing"] = 1.0
        return self.detector.row(step, values, util)

    def _kernel_line(self, line: str) -> list[Signal]:
        hit = classify(line)
        if hit is None or hit.provider == "boot":
            return []
        info = lookup(hit.provider, hit.event_id)
        if info is None or info.noise:
            return []
        return [Signal("kernel", self.detector.last_step, f"kernel: {info.meaning}" +
                       (f"; {hit.detail}" if hit.detail else ""))]

    def _smi_line(self, line: str) -> list[Signal]:
        extra = self.smi.extra if self.smi else {}
        if "fields" not in extra:
            fields = csv_header(line)
            if fields is None:
                raise InputError(f"{self.o.smi_log}: not an nvidia-smi --format=csv log (header {line[:60]!r})")
            extra["fields"], extra["header"] = {str(k): v for k, v in fields.items()}, line.strip()
            return []
        if line.strip() == extra["header"]:
            return []
        fields = {int(k): v for k, v in extra["fields"].items()}
        row = csv_row(next(csv.reader([line]), []), fields, 0)
        out: list[Signal] = []
        slow = row.reasons & (HW_SLOWDOWN | HW_THERMAL | HW_POWER_BRAKE | SW_THERMAL)
        key = f"throttling:{row.gpu}"
        was = self.detector.active.get(key, False)
        self.detector.active[key] = bool(slow)
        if slow and not was:
            what = "power brake" if row.reasons & HW_POWER_BRAKE else "thermal" if row.reasons & (
                HW_THERMAL | SW_THERMAL) else "HW slowdown"
            out.append(Signal("throttling", self.detector.last_step, f"nvidia-smi: GPU {row.gpu} clocks throttled "
                              f"({what}, reasons {row.reasons:#x})"))
        if extra.get("time") != row.time:  # a new sampling instant: judge the previous one
            out += self.detector.idle_gpus(None, {g: float(u) for g, u in extra.get("utils", {}).items()})
            extra["time"], extra["utils"] = row.time, {}
        if row.util is not None:
            extra["utils"][row.gpu] = row.util
        return out

    # ---- actions ----------------------------------------------------------------------------
    def _act(self, signal: Signal) -> None:
        command = self.o.actions.get(signal.kind) or self.o.actions.get("any")
        if not command:
            return
        now = self.clock()
        if now - self.last_action.get(signal.kind, -math.inf) < self.o.cooldown_s:
            return  # cool-down: one notification per kind per period, not one per row
        self.last_action[signal.kind] = now
        env = dict(os.environ, DOCTOR_SIGNAL=signal.kind, DOCTOR_MESSAGE=signal.message,
                   DOCTOR_STEP="" if signal.step is None else f"{signal.step:g}")
        try:
            done = subprocess.run(shlex.split(command), env=env, stdin=subprocess.DEVNULL, timeout=ACTION_TIMEOUT_S,
                                  check=False)
            self.actions_run.append((signal.kind, done.returncode))
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            self.actions_run.append((signal.kind, -1))
            self.emit(Signal("action_failed", signal.step, f"--on {signal.kind}: {command[:60]!r} failed: {exc}"))

    def run(self, once: bool = False, max_seconds: Optional[float] = None,
            sleep: Callable[[float], None] = time.sleep) -> None:
        """Poll until stopped (Ctrl-C), after one pass (--once), or after max_seconds."""
        started = time.monotonic()
        while True:
            self.poll()
            if once or (max_seconds is not None and time.monotonic() - started >= max_seconds):
                return
            sleep(self.o.interval_s)


def _number(raw: Any) -> tuple[float, bool]:
    """(value, missing): an empty cell is missing; 'nan'/'inf' are real values that blew up."""
    if type(raw) is str:  # the common case first: a CSV cell that is a plain number
        try:
            return float(raw), False
        except ValueError:
            pass
    if raw is None or isinstance(raw, bool):
        return math.nan, True
    if isinstance(raw, (int, float)):
        try:
            return float(raw), False
        except OverflowError:  # an integer too large for a float
            return math.inf, False
    text = str(raw).strip().rstrip("%")
    if text.lower() in ("", "none", "null", "na", "n/a", "-"):
        return math.nan, True
    try:
        return float(text), False
    except ValueError:
        return math.nan, True


def _flatten(obj: dict[str, Any], prefix: str = "", depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            if depth < MAX_DEPTH:
                out.update(_flatten(value, name + "/", depth + 1))
        else:
            out[name] = value
    return out
