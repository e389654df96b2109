"""Fakes for the cost-model tests: a speed estimate and a sweep result with hand-picked numbers."""

from __future__ import annotations

from dataclasses import dataclass

from planner.perf.model import Estimate as Est  # noqa: F401 - the real estimate type, re-exported for the tests


@dataclass(frozen=True)
class Sweep:
    hours_per_run: float
    wall_hours: float
