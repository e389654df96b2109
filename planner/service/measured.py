"""Your measured speeds (`planner calibrate`, the Plan tab's upload, a share): store one from a training log, list,
forget, share, adopt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path
from typing import Any, Optional


@dataclass(frozen=True)
class Calibrated:
    """A measurement stored from a log: it, the store after it, the store's file, and the gain of several runs per
    GPU when the store now holds both a shared and an alone log of the card ((K, gain, label), else None)."""

    measurement: Any  # planner.perf.calibration.Measurement
    store: Any  # planner.perf.calibration.Store
    path: Path
    concurrency_gain: Optional[tuple[int, float, str]] = None


class MeasurementStore:
    """Your measured speeds as front ends use them (one use case): store one from a log or a share, list, forget, the
    ones a share carries, and the hours per run they give the baseline card. Every change is one locked
    read-modify-write of the store (planner.perf.calibration.update_store)."""

    def calibrate(self, reading: Any, chip: Any, precision: str, log_name: str, *, run_steps: Optional[float] = None,
                  concurrent: int = 1) -> Calibrated:
        """Store the card's throughput read from a training log (a reading of `read_training_log`); one already there
        for the same card, precision and unit is replaced."""
        from planner.perf.calibration import concurrency_gain, measurement_from

        m = measurement_from(reading, chip, precision, log_name, run_steps=run_steps, concurrent=concurrent)
        stored, path = self._add([m])
        return Calibrated(m, stored, path, concurrency_gain(chip, precision, stored))

    def adopt(self, shared: Sequence[Any]) -> int:
        """Add a sender's measurements (from a shared link) to yours, so the speeds read 'measured' as they do for the
        sender; the number added (one already there for the same card, precision and unit is replaced)."""
        self._add(shared)
        return len(shared)

    def _add(self, found: Sequence[Any]) -> tuple[Any, Path]:
        """The store with `found` added under its lock, and the store's file."""
        from planner.perf.calibration import add_measurement, store_path, update_store

        return update_store(lambda current: reduce(add_measurement, found, current)), store_path()

    def mine(self) -> tuple[Any, Path]:
        """Your stored measurements (a Store; a broken file is one InputError line) and the store's file."""
        from planner.perf.calibration import load_store, store_path

        return load_store(), store_path()

    def to_share(self) -> tuple[Any, ...]:
        """Your measurements for the token of a build you share (`mine`; (): none, or a file that does not read, which
        `planner calibrate --list` reports)."""
        from planner.errors import PlannerError

        try:
            return tuple(self.mine()[0].measurements)
        except PlannerError:
            return ()

    def forget(self, gpu_id: Optional[str] = None) -> tuple[int, int, Path]:
        """Delete your measurements (of one card with `gpu_id`; all of them works on a damaged file too): (removed,
        left, the store's file)."""
        from planner.perf.calibration import clear_store, remove, store_path, update_store

        if gpu_id is None:
            return clear_store(), 0, store_path()
        removed = [0]

        def drop(current: Any) -> Any:
            kept, removed[0] = remove(current, gpu_id)
            return kept

        store = update_store(drop)
        return removed[0], len(store.measurements), store_path()

    def baseline_hours(self, given: Optional[float], baseline: Optional[str] = None) -> tuple[float, str]:
        """Hours per run on the GTX 1080 Ti (or `baseline`): given, else your calibrated run, else the default; with
        where the figure comes from."""
        from planner.perf.calibration import resolve_baseline_hours as resolve

        return resolve(given) if baseline is None else resolve(given, baseline)


def measurements() -> MeasurementStore:
    """The use case behind `planner calibrate`, the Plan tab's upload and every command's hours per run."""
    return MeasurementStore()
