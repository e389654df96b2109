"""Sweep arithmetic: waves of independent runs, ranges from the speedup range, energy, estimated wall power."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.perf.model import Estimate, load_perf_model, sweep_time
from planner.perf.sweep import energy_kwh, estimated_wall_power_w


def test_sweep_by_hand() -> None:
    s = sweep_time(8, 7.0, Estimate(4.0, 3.0, 5.0), gpu_count=2, wall_power_w=500)
    assert s.waves == 4
    assert (s.hours_per_run, s.hours_per_run_low, s.hours_per_run_high) == pytest.approx((1.75, 1.4, 7 / 3))
    assert (s.wall_hours, s.wall_hours_low, s.wall_hours_high) == pytest.approx((7.0, 5.6, 28 / 3))
    assert (s.energy_kwh, s.energy_kwh_low, s.energy_kwh_high) == pytest.approx((3.5, 2.8, 14 / 3))
    assert s.gpu_hours == pytest.approx(14.0)


@pytest.mark.parametrize("runs, gpus, waves", [(8, 1, 8), (8, 3, 3), (9, 2, 5), (2, 8, 1)])
def test_waves_round_up(runs: int, gpus: int, waves: int) -> None:
    s = sweep_time(runs, 7.0, Estimate(2.0, 2.0, 2.0), gpu_count=gpus)
    assert s.waves == waves and s.wall_hours == pytest.approx(waves * 3.5)
    assert s.energy_kwh is None


def test_more_gpus_never_slower() -> None:
    e = Estimate(3.0, 2.0, 4.0)
    walls = [sweep_time(8, 7.0, e, gpu_count=n).wall_hours for n in range(1, 10)]
    assert all(b <= a for a, b in zip(walls, walls[1:]))


def test_user_case_with_the_real_model() -> None:
    m = load_perf_model()
    s = sweep_time(8, 7.0, m.speedup("rtx-3090", precision="amp"), gpu_count=2)
    assert s.wall_hours == pytest.approx(4 * 7.0 / m.speedup("rtx-3090").value)
    assert s.wall_hours_low < s.wall_hours < s.wall_hours_high


def test_energy_and_wall_power() -> None:
    assert energy_kwh(850, 4.0) == pytest.approx(3.4)
    chip = load_perf_model().chips["rtx-4090"]
    assert estimated_wall_power_w(chip, 2, 0.8) == pytest.approx(450 * 0.8 * 2 + 150)


@pytest.mark.parametrize("args", [(0, 7.0), (8, 0.0), (8, -1.0), (2.5, 7.0), (8, float("inf"))])
def test_bad_sweep_inputs(args) -> None:
    with pytest.raises(InputError):
        sweep_time(args[0], args[1], Estimate(2.0, 1.5, 2.5))


def test_bad_gpu_count_and_speedup() -> None:
    with pytest.raises(InputError):
        sweep_time(8, 7.0, Estimate(2.0, 1.5, 2.5), gpu_count=0)
    with pytest.raises(InputError):
        sweep_time(8, 7.0, Estimate(2.0, 2.5, 3.0))
    with pytest.raises(InputError):
        energy_kwh(0, 3.0)
