"""Several runs per GPU: how many fit VRAM, the labelled gain estimate, its replacement by a calibration, and the
sweep time that uses it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import InputError
from planner.perf import calibration as cal
from planner.perf.concurrency import GAIN_SOURCE, plan_concurrency
from planner.perf.model import load_perf_model
from planner.perf.sweep import Estimate, sweep_time

runner = CliRunner()


def test_runs_that_fit_vram_and_add_throughput() -> None:
    c = plan_concurrency(32, 15e6)  # a run is assumed to take the 1080 Ti's 11 GB: two fit 90 % of 32 GB
    assert (c.runs_per_gpu, c.gain) == (2, 1.5) and c.gain_basis == GAIN_SOURCE and "arXiv:2209.06018" in c.gain_basis
    assert plan_concurrency(32, 15e6, per_run_gib=6).runs_per_gpu == 4
    assert plan_concurrency(16, 15e6).runs_per_gpu == 1  # 16 GB holds one 11 GB run
    assert plan_concurrency(96, 1e9).runs_per_gpu == 1  # a large model keeps the card busy: no gain, no sharing
    assert plan_concurrency(96, 1e8, per_run_gib=4).runs_per_gpu == 2  # mid-size: a second run helps, more do not
    with pytest.raises(InputError, match="do not fit"):
        plan_concurrency(24, 15e6, runs_per_gpu=3)


def test_sweep_time_with_runs_sharing_a_gpu() -> None:
    speed = Estimate(7.0, 5.0, 9.0)
    alone = sweep_time(8, 7.0, speed, 1)
    shared = sweep_time(8, 7.0, speed, 1, runs_per_gpu=2, concurrency_gain=1.5)
    assert shared.waves == 4 and alone.waves == 8
    assert shared.hours_per_run == pytest.approx(1.0 * 2 / 1.5)
    assert shared.wall_hours == pytest.approx(alone.wall_hours / 1.5)
    assert shared.to_json()["runs_per_gpu"] == 2
    with pytest.raises(InputError, match="between 1 and 2"):
        sweep_time(8, 7.0, speed, 1, runs_per_gpu=2, concurrency_gain=2.5)


def log(path, rate: float):
    path.write_text("step,tokens_per_sec\n" + "".join(f"{i},{rate * (1 + 0.002 * (i % 3))}\n" for i in range(30)))
    return str(path)


def test_a_calibration_replaces_the_estimate(tmp_path) -> None:
    m = load_perf_model()
    chip = m.chips["rtx-5090"]
    assert runner.invoke(app, ["calibrate", log(tmp_path / "a.csv", 100000), "--gpu", "RTX 5090"]).exit_code == 0
    r = runner.invoke(app, ["calibrate", log(tmp_path / "b.csv", 70000), "--gpu", "RTX 5090", "--concurrent", "2",
                            "--json"])
    assert r.exit_code == 0, r.output
    k, gain, label = cal.concurrency_gain(chip, "amp")
    assert k == 2 and gain == pytest.approx(1.4, rel=0.01) and "your logs" in label
    c = plan_concurrency(32, 15e6, measured=cal.concurrency_gain(chip, "amp"))
    assert c.gain == pytest.approx(1.4, rel=0.01) and c.gain_basis.startswith("measured")
    # the shared log is not the card's speed: the solo measurement still is
    assert cal._usable(cal.load_store(), chip, "amp").concurrent == 1


def test_planner_sweep_uses_it_for_a_small_model() -> None:
    def wall(*extra: str) -> dict:
        r = runner.invoke(app, ["sweep", "RTX 5090", "--runs", "8", "--json", *extra])
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout)["results"][0]
    small = wall("--model-params", "15e6")
    one = wall("--model-params", "15e6", "--runs-per-gpu", "1")
    assert small["runs_per_gpu"] == 2 and small["concurrency"]["gain_basis"] == GAIN_SOURCE
    assert small["wall_hours"]["value"] == pytest.approx(one["wall_hours"]["value"] / 1.5, rel=0.02)
    assert "runs_per_gpu" not in wall()  # no model size given: one run per GPU, as before
    r = runner.invoke(app, ["sweep", "RTX 5090", "--runs-per-gpu", "lots"])
    assert r.exit_code == 2 and "--runs-per-gpu" in r.output


def test_recommend_shows_runs_sharing_the_target_card() -> None:
    r = runner.invoke(app, ["recommend", "7000", "--model-params", "15e6", "--target", "RTX 5090", "--json"])
    assert r.exit_code == 0, r.output
    builds = json.loads(r.stdout)["side_by_side"]["builds"]
    target = next(b for b in builds if b["gpu"]["chip"] == "rtx-5090")
    shared = target["runs_sharing_each_gpu"]
    # the sweep shown is the planned one (2 runs sharing the card), the figure the solver ranks on; one run per GPU
    # is said beside it
    assert shared["runs_per_gpu"] == 2 and shared["wall_hours"]["value"] == pytest.approx(target["sweep_hours"], abs=0.01)
    assert shared["one_run_per_gpu_hours"]["value"] > target["sweep_hours"]
