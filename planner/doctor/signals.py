"""What the watch says: a signal (a finding of the one engine as it appears) and the kinds `--on` accepts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

# The kinds of the one engine (planner.doctor.metrics, planner.doctor.smi) and the watch's own two.
METRIC_KINDS = ("nan_loss", "divergence", "loss_plateau", "throughput_drop", "utilisation_dip", "thermal_throttling",
                "gpu_imbalance", "grad_spike", "step_gap", "run_restarted", "logging_gap", "run_stopped")
SMI_KINDS = ("gpu_lost", "hw_slowdown", "thermal_slowdown", "power_cap", "hot", "link_down", "ecc", "retired_pages", "gpu_idle", "gpu_imbalance")
WATCH_KINDS = ("hang", "kernel")
KINDS = tuple(dict.fromkeys(METRIC_KINDS + SMI_KINDS + WATCH_KINDS))
# Names the watch used before it shared the engine, still accepted by --on.
ALIASES: dict[str, tuple[str, ...]] = {
    "nan": ("nan_loss",),
    "plateau": ("loss_plateau",),
    "throttling": ("thermal_throttling", "hw_slowdown", "thermal_slowdown"),
    "idle": ("gpu_idle", "gpu_imbalance"),
}


def kinds_for(name: str) -> tuple[str, ...]:
    """The kinds an --on KIND= names (an alias names several); () if unknown."""
    if name in KINDS:
        return (name,)
    return ALIASES.get(name, ())


@dataclass(frozen=True)
class Signal:
    """One weak signal as it appears: its kind (the key for --on actions), the step and a sentence."""

    kind: str
    step: Optional[float]
    message: str
    severity: str = "warning"
    to_step: Optional[float] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "severity": self.severity, "step": self.step,
                               "message": self.message}
        if self.to_step is not None:
            out["to_step"] = self.to_step
        return out
