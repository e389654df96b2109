"""`planner profile`: the user's workload stored once; recommend, speedup, sweep and costs use it without flags, a
flag still wins, and every answer says which it used (issue 32, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "profile"


def run(*args: str):
    return runner.invoke(app, list(args))


def store_15m() -> None:
    r = run("profile", "set", "--model-params", "15e6", "--seq", "512", "--batch", "8", "--runs", "8", "--hours", "7")
    assert r.exit_code == 0, r.output


def test_set_show_clear_round_trip(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    assert json.loads(run("profile", "show", "--json").stdout)["profile"] is None
    store_15m()
    shown = json.loads(run("profile", "show", "--json").stdout)["profile"]
    assert shown["model_params"] == 15e6 and shown["tokens_per_step"] == 4096 and shown["runs"] == 8
    assert 1 < shown["run_vram_gb"] < 11 and shown["run_vram_source"].startswith("estimate: planner memfit")
    # a later set changes only what it names
    assert run("profile", "set", "--precision", "fp32").exit_code == 0
    again = json.loads((tmp_path / "profile.json").read_text())
    assert again["precision"] == "fp32" and again["model_params"] == 15e6
    assert not list(tmp_path.glob("*.tmp")) and not list(tmp_path.glob(".profile-*"))  # atomic: no leftovers
    cleared = run("profile", "clear", "--json")
    assert json.loads(cleared.stdout)["cleared"] is True and not (tmp_path / "profile.json").exists()


def test_vram_per_run_measured_from_an_nvidia_smi_log(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    r = run("profile", "set", "--model-params", "15e6", "--run-vram-log", str(DATA / "smi-memory-one-run.csv"), "--json")
    assert r.exit_code == 0, r.output
    prof = json.loads(r.stdout)["profile"]
    assert prof["run_vram_gb"] == pytest.approx(4403 / 1024, abs=0.01) and prof["run_vram_source"].startswith("measured")


@pytest.mark.parametrize("args, needle", [
    (("profile", "set"), "nothing to set"),
    (("profile", "set", "--precision", "fp16"), "precision"),
    (("profile", "set", "--model-params", "-3"), "--model-params: "),  # the option as typed, not the field
    (("profile", "set", "--run-vram-gb", "4", "--run-vram-log", "x.csv"), "not both"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, monkeypatch, args, needle) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    r = run(*args)
    assert r.exit_code == 2 and needle in r.stderr and "Traceback" not in r.output


def test_a_broken_profile_is_one_line_with_the_fix(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    (tmp_path / "profile.json").write_text('{"model_params": "lots"}')
    r = run("sweep", "RTX 5090")
    assert r.exit_code == 2 and "planner profile clear" in r.stderr


def test_recommend_uses_the_stored_profile_and_says_so(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    before = json.loads(run("recommend", "7000", "--json").stdout)
    assert before["profile"]["source"] == "default" and "typical" in before["profile"]["note"]
    store_15m()
    after = json.loads(run("recommend", "7000", "--json").stdout)
    assert after["profile"]["source"] == "profile" and "model_params" in after["profile"]["from_profile"]
    assert after["request"]["model_params"] == 15e6 and after["model"]["assumed"] is False
    # the 15 M model's runs share the cards: the planned sweep is shorter than the default's
    assert after["plans"][0]["summary"]["sweep_hours"] < before["plans"][0]["summary"]["sweep_hours"]
    assert after["plans"][0]["sweep"]["runs_sharing_each_gpu"]["runs_per_gpu"] >= 2
    flagged = json.loads(run("recommend", "7000", "--model-params", "1e9", "--json").stdout)
    assert flagged["request"]["model_params"] == 1e9 and "model_params" not in flagged["profile"]["from_profile"]
    assert flagged["request"]["run_vram_gb"] is None  # the stored estimate was for the 15 M model
    text = " ".join(run("recommend", "7000").stdout.split())
    squeeze = lambda t: "".join(t.split())  # noqa: E731 - an 80-column console may break a long tmp path anywhere
    assert squeeze(f"profile: stored in {tmp_path / 'profile.json'}") in squeeze(text)


def test_speedup_sweep_and_costs_change_with_a_stored_profile(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    out = {}
    for stage in ("default", "profile"):
        if stage == "profile":
            store_15m()
            assert run("profile", "set", "--runs", "16").exit_code == 0
        sp = json.loads(run("speedup", "RTX 5090", "--json").stdout)
        sw = json.loads(run("sweep", "RTX 5090", "--json").stdout)
        co = json.loads(run("costs", "--limit", "1", "--json").stdout)
        assert sp["profile"]["source"] == sw["profile"]["source"] == co["profile"]["source"] == stage
        out[stage] = (sp["results"][0]["speedup"], sw["runs"], sw["results"][0].get("runs_per_gpu", 1),
                      co["verdict"]["runs"] if "runs" in co.get("verdict", {}) else co["options"][0]["hours_to_finish"])
    assert out["default"][0] != out["profile"][0]  # the 15 M model's speed, not the typical 160 M one's
    assert (out["default"][1], out["profile"][1]) == (8, 16)
    assert out["profile"][2] >= 2  # its runs share the card
    assert out["default"][3] != out["profile"][3]
    # a flag still wins
    assert json.loads(run("sweep", "RTX 5090", "--runs", "3", "--json").stdout)["runs"] == 3


def _set_one(args: tuple[str, str, str]) -> int:
    import os

    home, flag, value = args
    os.environ["PLANNER_HOME"] = home
    return run("profile", "set", flag, value).exit_code


def test_parallel_profile_sets_keep_every_change(tmp_path, monkeypatch) -> None:
    """One atomic, locked read-modify-write (planner.atomicfile, shared with the calibration store): six `profile set`
    at once, each naming a different field, leave all six set and no temporary file."""
    import multiprocessing

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    sets = [("--model-params", "15e6"), ("--seq", "512"), ("--batch", "8"), ("--runs", "8"), ("--hours", "7"),
            ("--precision", "fp32")]
    with multiprocessing.get_context("fork").Pool(len(sets)) as pool:
        codes = pool.map(_set_one, [(str(tmp_path), f, v) for f, v in sets])
    assert codes == [0] * len(sets)
    stored = json.loads((tmp_path / "profile.json").read_text())
    assert (stored["model_params"], stored["seq_len"], stored["batch"], stored["runs"], stored["hours_per_run"],
            stored["precision"]) == (15e6, 512, 8, 8, 7, "fp32")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
