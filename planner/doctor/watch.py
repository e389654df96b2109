"""`doctor watch`: follow growing metrics, kernel and nvidia-smi logs with the one engine, run the user's commands."""

from __future__ import annotations

import json
import math
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from planner import atomicfile
from planner.doctor.catalogue import lookup
from planner.doctor.engine import MetricsFeed, check_expected_steps, check_temp_limit, finding_key, metrics_report
from planner.doctor.kernel import classify
from planner.settings import GPU_HOT_C
from planner.doctor.metrics_io import parse_column_map
from planner.doctor.signals import ALIASES, KINDS, Signal, kinds_for
from planner.doctor.smi import SmiLog
from planner.doctor.tail import Tail
from planner.errors import InputError

STATE_VERSION = 2
MAX_STATE_BYTES = 1_000_000  # the state file read back; what is written stays under it
MAX_REPORTED = 5_000  # findings remembered as said (oldest forgotten first)
MAX_PER_KIND = 20  # signals of one kind said in one poll; the rest are counted in one line
MAX_ENV_CHARS = 4_000  # DOCTOR_MESSAGE handed to --on commands (an environment string must stay far below 128 kB)
ACTION_TIMEOUT_S = 60.0
SLOW_ANALYSIS_S = 0.5  # an analysis slower than this runs at most every 4x its own time


@dataclass
class WatchOptions:
    """What to follow and what to do; the CLI builds it from its options."""

    metrics: str
    kernel_log: Optional[str] = None
    smi_log: Optional[str] = None
    actions: dict[str, str] = field(default_factory=dict)  # kind (or alias, or "any") -> command line
    cooldown_s: float = 600.0
    hang_min: float = 10.0
    interval_s: float = 5.0
    state_path: Optional[str] = None
    temp_limit_c: float = GPU_HOT_C
    columns: list[str] = field(default_factory=list)  # --column KIND=NAME
    expected_steps: Optional[int] = None

    def validate(self) -> None:
        for kind, command in self.actions.items():
            if kind != "any" and not kinds_for(kind):
                raise InputError(f"--on {kind[:30]}=...: unknown signal; choose from {', '.join(KINDS)}, "
                                 f"{', '.join(ALIASES)} or any")
            check_command(kind, command)
        for name, value, low, high in (("--cooldown-s", self.cooldown_s, 0, 7 * 86400),
                                       ("--hang-min", self.hang_min, 0.01, 7 * 1440),
                                       ("--interval-s", self.interval_s, 0.01, 3600)):
            if not (math.isfinite(value) and low <= value <= high):
                raise InputError(f"{name} {value} is out of range ({low}-{high})")
        check_temp_limit(self.temp_limit_c)
        check_expected_steps(self.expected_steps)
        for path in (self.metrics, self.kernel_log, self.smi_log):
            if path and Path(path).exists() and not Path(path).is_file():
                raise InputError(f"{path} is not a regular file; the watch follows files a logger appends to")
        parse_column_map(self.columns)


def check_command(kind: str, command: str) -> list[str]:
    """The argv of an --on command, refused at start when it cannot run (bad quoting, NUL, no such program)."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise InputError(f"--on {kind[:30]}: cannot split the command {command[:60]!r}: {exc}") from None
    if not argv or "\x00" in command:
        raise InputError(f"--on {kind[:30]}: empty command or NUL byte in {command[:60]!r}")
    program = argv[0]
    found = shutil.which(program) if os.sep not in program else (program if os.access(program, os.X_OK) else None)
    if found is None:
        raise InputError(f"--on {kind[:30]}: program {program[:60]!r} not found or not executable")
    return argv


def _clean_env(text: str) -> str:
    """A message for the environment of a command: no NUL or control characters, bounded length."""
    cleaned = "".join(ch if ch.isprintable() else " " for ch in text[:MAX_ENV_CHARS * 2])
    return cleaned[:MAX_ENV_CHARS]


class Watch:
    """One watcher: poll() reads what is new in each file and returns the signals it raised."""

    def __init__(self, options: WatchOptions, emit: Callable[[Signal], None] = lambda s: None,
                 clock: Callable[[], float] = time.time) -> None:
        options.validate()
        self.o, self.emit, self.clock = options, emit, clock
        self.state_path = Path(options.state_path or f"{options.metrics}.doctor-watch.json")
        state = self._load()
        # The metrics are read again from the start on a resume (as fast as `doctor metrics`): the engine needs
        # the rows, and the state stays small; what was already said is remembered and not said again.
        self.metrics = Tail(path=options.metrics)
        self.feed = MetricsFeed(Path(options.metrics).name, parse_column_map(options.columns))
        self.kernel = Tail.from_json(state.get("kernel", {}), options.kernel_log) if options.kernel_log else None
        self.smi_tail = Tail.from_json(state.get("smi", {}), options.smi_log) if options.smi_log else None
        self.smi = SmiLog.from_json(state.get("smi_counts", {}), options.smi_log, options.temp_limit_c) \
            if options.smi_log else None
        # what was said: key -> step ranges [from, to] (oldest first), at most MAX_REPORTED ranges in all
        self.reported: dict[str, list[list[float]]] = {}
        try:
            for key, spans in list(dict(state.get("reported", {})).items())[-MAX_REPORTED:]:
                self.reported[str(key)] = [[float(a), float(b)] for a, b in list(spans)[-MAX_REPORTED:]]
        except (TypeError, ValueError):
            raise InputError(f"{self.state_path}: unreadable watch state; delete it to start over") from None
        self.last_progress = float(state.get("last_progress", self.clock()))
        self.hang_said = bool(state.get("hang_said", False))
        self.last_action: dict[str, float] = {str(k): float(v) for k, v in dict(state.get("last_action", {})).items()}
        self.resumed = bool(state)
        self.actions_run: list[tuple[str, int]] = []
        self._rows_seen = -1
        self._rows_at_last_progress = 0
        self._next_analysis = 0.0
        self.report: Any = None  # the engine's last MetricsReport

    # ---- state ------------------------------------------------------------------------------
    def _load(self) -> dict[str, Any]:
        try:
            fd = os.open(self.state_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except NotADirectoryError:  # a file stands where a folder of the path should be: nothing to delete
            raise InputError(f"{self.state_path}: cannot read the watch state (a file stands in its path); pass "
                             "--state a path in a folder") from None
        except OSError as exc:
            raise InputError(f"{self.state_path}: cannot open the watch state ({exc.strerror or exc}; a symbolic link "
                             "is refused); delete it or pass --state") from None
        try:
            with os.fdopen(fd, "rb") as fh:
                raw = fh.read(MAX_STATE_BYTES + 1)
            if len(raw) > MAX_STATE_BYTES:
                raise ValueError("too large")
            state = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, RecursionError):
            raise InputError(f"{self.state_path}: unreadable watch state; delete it to start over") from None
        if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
            raise InputError(f"{self.state_path}: not a watch state file of this version; delete it to start over")
        return state

    def _state(self) -> dict[str, Any]:
        state: dict[str, Any] = {"version": STATE_VERSION, "metrics": self.o.metrics,
                                 "last_progress": self.last_progress, "hang_said": self.hang_said,
                                 "last_action": self.last_action, "reported": self.reported}
        if self.kernel:
            state["kernel"] = self.kernel.to_json()
        if self.smi_tail and self.smi:
            state["smi"] = self.smi_tail.to_json()
            state["smi_counts"] = self.smi.to_json()
        return state

    def save(self) -> None:
        text = json.dumps(self._state())
        while len(text.encode("utf-8")) > MAX_STATE_BYTES and self.reported:
            self._forget(max(1, self._spans() // 2))  # the oldest half of what was said: the state stays readable
            text = json.dumps(self._state())
        # A fresh temporary name beside the state, renamed over it (planner.atomicfile): a kill never leaves half a
        # state file, and a planted file or link there is never followed; the state's directory is not created.
        atomicfile.write_bytes(self.state_path, text.encode("utf-8"), "the watch state",
                               "pass --state with a writable path", make_dirs=False)

    # ---- one poll ---------------------------------------------------------------------------
    def poll(self) -> list[Signal]:
        signals: list[Signal] = []
        for lines in self.metrics.chunks():
            self.feed.feed(lines)
        rows = self.feed.rows
        now = self.clock()
        if rows > self._rows_at_last_progress:
            self._rows_at_last_progress = rows
            self.last_progress, self.hang_said = now, False
        elif not self.hang_said and now - self.last_progress >= self.o.hang_min * 60:
            self.hang_said = True
            s = self.feed.series()
            last = s.last_step if s is not None else None
            signals.append(Signal("hang", last, f"no new step for {(now - self.last_progress) / 60:.1f} min (last "
                                  f"step {last:g})" if last is not None else
                                  f"no metrics row for {(now - self.last_progress) / 60:.1f} min", "problem"))
        signals += self._analyse()
        last_step = self.report.last_step if self.report is not None else None
        if self.kernel:
            for lines in self.kernel.chunks():
                for line in lines:
                    signals += self._kernel_line(line, last_step)
        if self.smi_tail and self.smi:
            before = self.smi_tail.lines
            for lines in self.smi_tail.chunks():
                for line in lines:
                    self.smi.feed(line)
            if self.smi_tail.lines != before:
                signals += self._new([(f"smi:{f.kind}:{f.gpu}", Signal(f.kind, None, f"nvidia-smi: {f.message}",
                                                                       f.severity)) for f in self.smi.findings()])
        for signal in _bounded(signals):
            self.emit(signal)
            self._act(signal)
        self.save()
        return signals

    def _analyse(self) -> list[Signal]:
        """Run the engine over the rows so far when new rows came (not more often than it can afford)."""
        rows = self.feed.rows
        if rows == self._rows_seen or time.monotonic() < self._next_analysis:
            return []
        series = self.feed.series()
        if series is None:
            return []
        started = time.monotonic()
        self.report = metrics_report(series, expected_steps=self.o.expected_steps, temp_limit_c=self.o.temp_limit_c)
        took = time.monotonic() - started
        self._next_analysis = started + 4 * took if took > SLOW_ANALYSIS_S else 0.0
        self._rows_seen = rows
        return self._new([(finding_key(f), Signal(f.kind, f.from_step, f.message, f.severity, f.to_step))
                                for f in self.report.findings])

    def _spans(self) -> int:
        return sum(len(v) for v in self.reported.values())

    def _forget(self, n: int) -> None:
        """Drop the n oldest ranges (the first keys' first ranges)."""
        for key in list(self.reported):
            if n <= 0:
                return
            spans = self.reported[key]
            cut = min(n, len(spans))
            del spans[:cut]
            n -= cut
            if not spans:
                del self.reported[key]

    def _new(self, keyed: list[tuple[str, Signal]]) -> list[Signal]:
        """The signals not said yet: a finding whose steps overlap a range already said under its key is the same
        finding grown (the range is widened), not a new one."""
        out = []
        for key, signal in keyed:
            lo = signal.step if signal.step is not None else -math.inf
            hi = signal.to_step if signal.to_step is not None else lo
            spans = self.reported.setdefault(key, [])
            same = next((r for r in spans if lo <= r[1] and r[0] <= hi or signal.step is None), None)
            if same is not None:
                same[0], same[1] = min(same[0], lo), max(same[1], hi)
                continue
            spans.append([lo, hi])
            if self._spans() > MAX_REPORTED:
                self._forget(1)
            out.append(signal)
        return out

    def _kernel_line(self, line: str, step: Optional[float]) -> list[Signal]:
        hit = classify(line)
        if hit is None or hit.provider == "boot":
            return []
        info = lookup(hit.provider, hit.event_id)
        if info is None or info.noise:
            return []
        return [Signal("kernel", step, f"kernel: {info.meaning}" + (f"; {hit.detail}" if hit.detail else ""),
                       "problem" if info.weight == "high" else "warning")]

    # ---- actions ----------------------------------------------------------------------------
    def _command(self, kind: str) -> Optional[str]:
        if kind in self.o.actions:
            return self.o.actions[kind]
        for alias, kinds in ALIASES.items():
            if kind in kinds and alias in self.o.actions:
                return self.o.actions[alias]
        return self.o.actions.get("any")

    def _act(self, signal: Signal) -> None:
        command = self._command(signal.kind)
        if not command:
            return
        now = self.clock()
        if now - self.last_action.get(signal.kind, -math.inf) < self.o.cooldown_s:
            return  # cool-down: one notification per kind per period, not one per row
        env = dict(os.environ, DOCTOR_SIGNAL=signal.kind, DOCTOR_MESSAGE=_clean_env(signal.message),
                   DOCTOR_STEP="" if signal.step is None else f"{signal.step:g}")
        try:
            done = subprocess.run(shlex.split(command), env=env, stdin=subprocess.DEVNULL, timeout=ACTION_TIMEOUT_S,
                                  check=False)
            code = done.returncode
            failure = f"exit status {code}" if code else ""
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            code, failure = -1, str(exc)[:200]
        self.actions_run.append((signal.kind, code))
        if failure:  # a failed action does not start the cool-down: the next signal of this kind tries again
            self.emit(Signal("action_failed", signal.step, f"--on {signal.kind}: {command[:60]!r} failed: {failure}"))
        else:
            self.last_action[signal.kind] = now

    def run(self, once: bool = False, max_seconds: Optional[float] = None,
            sleep: Callable[[float], None] = time.sleep) -> None:
        """Poll until stopped (Ctrl-C), after one pass (--once), or after max_seconds."""
        started = time.monotonic()
        while True:
            self.poll()
            if once or (max_seconds is not None and time.monotonic() - started >= max_seconds):
                return
            sleep(self.o.interval_s)


def _bounded(signals: list[Signal]) -> list[Signal]:
    """At most MAX_PER_KIND signals of a kind in one poll, then one line that counts the rest."""
    out: list[Signal] = []
    count: dict[str, int] = {}
    for s in signals:
        n = count[s.kind] = count.get(s.kind, 0) + 1
        if n <= MAX_PER_KIND:
            out.append(s)
    for kind, n in count.items():
        if n > MAX_PER_KIND:
            out.append(Signal(kind, None, f"{n - MAX_PER_KIND} more {kind} finding(s) not shown one by one; "
                              "`planner doctor metrics` lists them all"))
    return out
