"""Your measured speeds (`planner calibrate`, the Plan tab's upload, a share): store one from a training log, list,
forget, share, adopt."""

from __future__ import annotations

from dataclasses import dataclass
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


def calibrate(reading: Any, chip: Any, precision: str, log_name: str, *, run_steps: Optional[float] = None,
              concurrent: int = 1) -> Calibrated:
    """Store the card's throughput read from a training log (a reading of `read_training_log`) under the store's
    lock; one already there for the same card, precision and unit is replaced."""
    from planner.perf.calibration import add_measurement, concurrency_gain, measurement_from, store_path, update_store

    m = measurement_from(reading, chip, precision, log_name, run_steps=run_steps, concurrent=concurrent)
    stored = update_store(lambda current: add_measurement(current, m))
    return Calibrated(m, stored, store_path(), concurrency_gain(chip, precision, stored))


def my_calibration() -> tuple[Any, Path]:
    """Your stored measurements (a Store; a broken file is one InputError line) and the store's file."""
    from planner.perf.calibration import load_store, store_path

    return load_store(), store_path()


def forget_measurements(gpu_id: Optional[str] = None) -> tuple[int, int, Path]:
    """Delete your measurements (of one card with `gpu_id`; all of them works on a damaged file too): (removed, left,
    the store's file)."""
    from planner.perf.calibration import clear_store, remove, store_path, update_store

    if gpu_id is None:
        return clear_store(), 0, store_path()
    removed = [0]

    def drop(current):  # type: ignore[no-untyped-def]
        kept, removed[0] = remove(current, gpu_id)
        return kept

    store = update_store(drop)
    return removed[0], len(store.measurements), store_path()


def resolve_baseline_hours(given: Optional[float], baseline: Optional[str] = None) -> tuple[float, str]:
    """Hours per run on the GTX 1080 Ti (or `baseline`): given, else your calibrated run, else the default; with
    where the figure comes from."""
    from planner.perf.calibration import resolve_baseline_hours as resolve

    return resolve(given) if baseline is None else resolve(given, baseline)


class MeasurementStore:
    """Your measured speeds as front ends use them (one use case): store one from a log, list, forget, and the hours
    per run they give the baseline card."""

    def calibrate(self, reading: Any, chip: Any, precision: str, log_name: str, *, run_steps: Optional[float] = None,
                  concurrent: int = 1) -> Calibrated:
        return calibrate(reading, chip, precision, log_name, run_steps=run_steps, concurrent=concurrent)

    def mine(self) -> tuple[Any, Path]:
        return my_calibration()

    def forget(self, gpu_id: Optional[str] = None) -> tuple[int, int, Path]:
        return forget_measurements(gpu_id)

    def baseline_hours(self, given: Optional[float], baseline: Optional[str] = None) -> tuple[float, str]:
        return resolve_baseline_hours(given, baseline)

    def to_share(self) -> tuple[Any, ...]:
        """Your measurements for the token of a build you share (planner.service.shared_speeds.my_measurements)."""
        from planner.service.shared_speeds import my_measurements

        return my_measurements()

    def adopt(self, shared: Any) -> int:
        """Add a sender's measurements to yours (planner.service.shared_speeds.use_shared_measurements)."""
        from planner.service.shared_speeds import use_shared_measurements

        return use_shared_measurements(shared)


def measurements() -> MeasurementStore:
    """The use case behind `planner calibrate`, the Plan tab's upload and every command's hours per run."""
    return MeasurementStore()
