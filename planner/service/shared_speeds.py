"""Measured speeds in a share: the sender's own (planner calibrate) go into the token; the receiver may adopt them."""

from __future__ import annotations

from typing import Any, Sequence


def my_measurements() -> tuple[Any, ...]:
    """The user's calibration measurements, for the token of a build they share ((): none, or an unreadable file)."""
    from planner.errors import PlannerError
    from planner.perf.calibration import load_store

    try:
        return tuple(load_store().measurements)
    except PlannerError:
        return ()


def use_shared_measurements(measurements: Sequence[Any]) -> int:
    """Add the sender's measurements to the user's calibration store, so the speeds read 'measured' as they do for
    the sender; the number added (one already there for the same card, precision and unit is replaced)."""
    from planner.perf.calibration import add_measurement, load_store, save_store

    store = load_store()
    for m in measurements:
        store = add_measurement(store, m)
    save_store(store)
    return len(measurements)

