"""Weak signals from training metrics one row at a time (constant memory): NaN, divergence, plateau, drops, idle GPU."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from planner.doctor.metrics import DEFAULT_TEMP_LIMIT_C, DIVERGENCE_RISE, MIN_RUN, PLATEAU_MAX_DROP, THROUGHPUT_DROP

FAST, SLOW = 0.2, 0.02  # smoothing of the exponential moving averages (weight of the newest row)
WARMUP_ROWS = 20  # rows before a baseline is trusted
PLATEAU_ROWS = 200  # rows without a 0.5 % improvement of the smoothed loss
IDLE_UTIL, BUSY_UTIL = 5.0, 50.0
KINDS = ("nan", "divergence", "plateau", "throughput_drop", "throttling", "gpu_idle", "hang", "kernel")


@dataclass(frozen=True)
class Signal:
    """One weak signal as it appears: its kind (the key for --on actions), the step and a sentence."""

    kind: str
    step: Optional[float]
    message: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "message": self.message}


@dataclass
class Detector:
    """Running state over the rows seen so far; only numbers, so memory stays flat for runs of any length."""

    temp_limit_c: float = DEFAULT_TEMP_LIMIT_C
    rows: int = 0
    last_step: Optional[float] = None
    loss_fast: Optional[float] = None
    loss_best: Optional[float] = None
    best_row: int = 0
    diverging: bool = False
    plateau_said: bool = False
    tp_fast: Optional[float] = None
    tp_slow: Optional[float] = None
    tp_low_rows: int = 0
    hot_rows: int = 0
    idle_rows: dict[str, int] = field(default_factory=dict)
    active: dict[str, bool] = field(default_factory=dict)  # condition currently raised, so it is said once

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Detector":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**known)

    def _raise(self, key: str, on: bool, signal: Callable[[], Signal]) -> list[Signal]:
        """The signal (built only then) when the condition turns on; nothing while it stays on or off."""
        was = self.active.get(key, False)
        self.active[key] = on
        return [signal()] if on and not was else []

    def row(self, step: Optional[float], values: dict[str, float], per_gpu_util: dict[str, float]) -> list[Signal]:
        """Feed one metrics row (role -> value, NaN = missing); returns the signals that start at this row."""
        self.rows += 1
        step = step if step is not None and math.isfinite(step) else float(self.rows)
        self.last_step = step
        out: list[Signal] = []
        loss = values.get("loss", math.nan)
        if loss != loss or loss in (math.inf, -math.inf):
            if "loss" in values and not _missing(values, "loss"):
                out += self._raise("nan", True, lambda: Signal("nan", step, f"loss is {loss} at step {step:g}: the run "
                                                       "diverged numerically (learning rate, fp16 overflow, bad batch)"))
        else:
            self.active["nan"] = False
            out += self._loss(step, loss)
        out += self._throughput(step, values.get("throughput", math.nan))
        temp = values.get("temp", math.nan)
        if math.isfinite(temp):
            self.hot_rows = self.hot_rows + 1 if temp >= self.temp_limit_c else 0
            out += self._raise("throttling", self.hot_rows >= MIN_RUN, lambda: Signal(
                "throttling", step, f"GPU at {temp:g} °C for {self.hot_rows} rows (limit {self.temp_limit_c:g} °C): "
                "clocks drop there (docs/doctor.md §4.1)"))
        out += self.idle_gpus(step, per_gpu_util)
        return out

    def _loss(self, step: float, loss: float) -> list[Signal]:
        self.loss_fast = loss if self.loss_fast is None else self.loss_fast + FAST * (loss - self.loss_fast)
        out: list[Signal] = []
        if self.rows < WARMUP_ROWS:
            return out
        if self.loss_best is None or self.loss_fast < self.loss_best * (1 - PLATEAU_MAX_DROP):
            self.loss_best, self.best_row, self.plateau_said = self.loss_fast, self.rows, False
            self.active["plateau"] = False
        best = self.loss_best
        rising = best > 0 and self.loss_fast > best * (1 + DIVERGENCE_RISE)
        out += self._raise("divergence", rising, lambda: Signal(
            "divergence", step, f"smoothed loss {self.loss_fast:.4g} is {self.loss_fast / best - 1:.0%} above its best "
            f"{best:.4g} at step {step:g}"))
        flat = self.rows - self.best_row >= PLATEAU_ROWS and not rising
        out += self._raise("plateau", flat, lambda: Signal(
            "plateau", step, f"smoothed loss has not improved by {PLATEAU_MAX_DROP:.1%} for {self.rows - self.best_row} "
            f"rows (best {best:.4g}) at step {step:g}"))
        return out

    def _throughput(self, step: float, tp: float) -> list[Signal]:
        if not math.isfinite(tp) or tp < 0:
            return []
        self.tp_fast = tp if self.tp_fast is None else self.tp_fast + FAST * (tp - self.tp_fast)
        if self.rows < WARMUP_ROWS or self.tp_slow is None:
            self.tp_slow = tp if self.tp_slow is None else self.tp_slow + 0.2 * (tp - self.tp_slow)
            return []
        low = self.tp_fast < THROUGHPUT_DROP * self.tp_slow
        self.tp_low_rows = self.tp_low_rows + 1 if low else 0
        if not low:  # the baseline follows only healthy rows, so a long drop stays a drop
            self.tp_slow += SLOW * (tp - self.tp_slow)
        return self._raise("throughput_drop", self.tp_low_rows >= MIN_RUN, lambda: Signal(
            "throughput_drop", step, f"throughput {self.tp_fast:.4g}/s is {1 - self.tp_fast / self.tp_slow:.0%} under "
            f"its usual {self.tp_slow:.4g}/s at step {step:g}"))

    def idle_gpus(self, step: Optional[float], util: dict[str, float]) -> list[Signal]:
        """One GPU near 0 % while another works, for MIN_RUN rows in a row."""
        finite = {g: u for g, u in util.items() if math.isfinite(u)}
        busy = any(u >= BUSY_UTIL for u in finite.values())
        out: list[Signal] = []
        for gpu, u in finite.items():
            idle = busy and u <= IDLE_UTIL
            self.idle_rows[gpu] = self.idle_rows.get(gpu, 0) + 1 if idle else 0
            where = f" at step {step:g}" if step is not None else ""
            out += self._raise(f"gpu_idle:{gpu}", self.idle_rows[gpu] >= MIN_RUN, lambda: Signal(
                "gpu_idle", step, f"GPU {gpu} idle ({u:g} %) while another works, {self.idle_rows[gpu]} samples in a "
                f"row{where}: a stuck rank, a dead dataloader or an imbalanced split"))
        return out


def _missing(values: dict[str, float], role: str) -> bool:
    """A NaN from an empty cell is missing data; only an explicit NaN/inf is a numeric blow-up."""
    return values.get(f"{role}__missing", 0.0) == 1.0
