"""`planner calibrate`: logs of the common loggers read to a steady-state median, stored under PLANNER_HOME, and the
speedups they anchor (measured ratio, re-anchored neighbours, baseline run hours)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import InputError
from planner.perf import calibration as cal
from planner.perf.calibration_log import read_log
from planner.perf.model import load_perf_model

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def wobble(i: int) -> float:
    """A deterministic +-1 % ripple around 1."""
    return 1.0 + 0.01 * ((i * 7) % 5 - 2) / 2


def lightning_csv(path: Path, rate: float, n: int = 40, warmup: int = 3) -> Path:
    lines = ["epoch,step,train_loss,throughput/tokens_per_sec"]
    for i in range(n):
        v = rate * 0.3 if i < warmup else rate * wobble(i)
        lines.append(f"0,{i * 50},{3 - i * 0.01:.3f},{v:.1f}")
        lines.append(f"0,{i * 50 + 25},{3 - i * 0.01:.3f},")  # a row where only the loss was logged
    path.write_text("\n".join(lines) + "\n")
    return path


def wandb_jsonl(path: Path, rate: float, n: int = 40) -> Path:
    path.write_text("".join(json.dumps({"_step": i, "_runtime": 10.0 * i, "tokens/sec": rate * wobble(i) if i > 2
                                        else rate / 4, "loss": 2.0}) + "\n" for i in range(n)))
    return path


def test_steady_state_median_drops_the_warm_up_and_reports_the_spread(tmp_path) -> None:
    r = read_log(lightning_csv(tmp_path / "a.csv", 21000))
    assert r.unit == "tokens/s" and r.column == "throughput/tokens_per_sec"
    assert r.warmup_dropped >= 3 and r.points == 40 - r.warmup_dropped
    assert r.median == pytest.approx(21000, rel=0.005)  # the three slow warm-up points do not pull it down
    assert 0 < r.spread < 0.02


def test_wandb_tensorboard_and_step_time_logs(tmp_path) -> None:
    assert read_log(wandb_jsonl(tmp_path / "w.jsonl", 126000)).median == pytest.approx(126000, rel=0.005)
    tb = tmp_path / "tb.csv"  # TensorBoard scalar export: the tag's meaning comes from --unit
    tb.write_text("Wall time,Step,Value\n" + "".join(f"{1.7e9 + 3 * i},{100 * i},{0.25 * wobble(i)}\n" for i in range(30)))
    r = read_log(tb, unit="s/step", tokens_per_step=4096)
    assert r.unit == "tokens/s" and r.median == pytest.approx(4096 / 0.25, rel=0.01)
    r = read_log(tb)  # without --unit: steps per second from Wall time and Step (100 steps every 3 s)
    assert r.unit == "steps/s" and r.median == pytest.approx(100 / 3, rel=1e-6)
    st = tmp_path / "st.csv"
    st.write_text("step,loss,step_time_ms\n" + "".join(f"{i},1.0,{200 * wobble(i)}\n" for i in range(20)))
    assert read_log(st).median == pytest.approx(5.0, rel=0.01)


def test_column_override_and_bad_logs(tmp_path) -> None:
    p = tmp_path / "x.csv"
    p.write_text("step,mine\n" + "".join(f"{i},{1000 + i % 3}\n" for i in range(20)))
    with pytest.raises(InputError, match="--unit"):
        read_log(p, column="mine")
    assert read_log(p, column="mine", unit="samples/s").unit == "samples/s"
    with pytest.raises(InputError, match="no column 'nope'"):
        read_log(p, column="nope")
    short = tmp_path / "s.csv"
    short.write_text("step,tokens_per_sec\n1,100\n2,100\n")
    with pytest.raises(InputError, match="only 2 throughput points"):
        read_log(short)
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(InputError, match="empty"):
        read_log(tmp_path / "e.csv")


def calibrate_both(tmp_path) -> None:
    assert run("calibrate", str(lightning_csv(tmp_path / "1080ti.csv", 21000)), "--gpu", "GTX 1080 Ti").exit_code == 0
    r = run("calibrate", str(wandb_jsonl(tmp_path / "4090.jsonl", 126000)), "--gpu", "RTX 4090", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["stored"]["precision"] == "amp"


def test_done_when_measured_4090_is_6x_and_the_5090_is_re_anchored(tmp_path, home) -> None:
    calibrate_both(tmp_path)
    assert (home / "calibration.json").exists()
    r = run("speedup", "RTX 4090", "RTX 5090", "--vs", "GTX 1080 Ti", "--json")
    assert r.exit_code == 0, r.output
    got = {x["id"]: x for x in json.loads(r.stdout)["results"]}
    m4 = got["rtx-4090"]
    assert m4["basis"] == "measured" and round(m4["speedup"], 1) == 6.0
    assert m4["high"] / m4["low"] < 1.05  # the logs' own spread, not the model's 4x band
    m5 = got["rtx-5090"]
    model = load_perf_model()
    ratio = model.speedup("rtx-5090", baseline="rtx-4090").value
    assert m5["basis"] == "re-anchored" and m5["anchor"] == "GeForce RTX 4090"
    assert m5["speedup"] == pytest.approx(ratio * 126000 / 21000, rel=0.01)
    assert m5["speedup"] != pytest.approx(model.speedup("rtx-5090").value, rel=0.02)


def test_without_a_measurement_the_model_answers_and_says_so() -> None:
    r = run("speedup", "RTX 4090", "--json")
    x = json.loads(r.stdout)["results"][0]
    assert x["basis"] == "model" and x["speedup"] == pytest.approx(load_perf_model().speedup("rtx-4090").value, abs=0.01)


def test_a_card_measured_without_a_baseline_log_stays_modelled(tmp_path) -> None:
    assert run("calibrate", str(wandb_jsonl(tmp_path / "4090.jsonl", 126000)), "--gpu", "RTX 4090").exit_code == 0
    a = cal.anchored_speedup(load_perf_model(), "rtx-4090")
    assert a.basis == "model" and "baseline" in a.note


def test_solver_speed_uses_the_measurement(tmp_path) -> None:
    from planner.perf.speed import gpu_speed

    model = load_perf_model()
    before = gpu_speed(model.chips["rtx-4090"], model.chips, "transformer", "amp")
    calibrate_both(tmp_path)
    after = gpu_speed(model.chips["rtx-4090"], model.chips, "transformer", "amp")
    assert before.basis == "model" and after.basis == "measured"
    assert after.value == pytest.approx(6.0, rel=0.01)


def test_baseline_run_hours_from_the_log(tmp_path) -> None:
    log = lightning_csv(tmp_path / "1080ti.csv", 21000)
    # 21000 tok/s at 4096 tokens per step is 5.13 steps/s; 100 000 steps take 5.42 h
    r = run("calibrate", str(log), "--gpu", "1080 Ti", "--tokens-per-step", "4096", "--steps-per-run", "100000", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["stored"]["run_hours"] == pytest.approx(100000 * 4096 / 21000 / 3600, rel=0.01)
    s = json.loads(run("sweep", "RTX 4090", "--runs", "8", "--json").stdout)
    assert s["baseline_hours"] == pytest.approx(5.42, abs=0.02) and s["baseline_hours_source"].startswith("measured")
    s = json.loads(run("sweep", "RTX 4090", "--runs", "8", "--hours", "7", "--json").stdout)
    assert s["baseline_hours"] == 7


def test_list_clear_and_a_broken_store(tmp_path, home) -> None:
    calibrate_both(tmp_path)
    listed = json.loads(run("calibrate", "--list", "--json").stdout)["measurements"]
    assert [m["gpu_id"] for m in listed] == ["gtx-1080-ti", "rtx-4090"]
    assert json.loads(run("calibrate", "--clear", "--gpu", "RTX 4090", "--json").stdout)["cleared"] == 1
    assert json.loads(run("calibrate", "--clear", "--json").stdout)["cleared"] == 1
    (home / "calibration.json").write_text('{"version": 1, "measurements": [{"gpu_id": "x"}]}')
    r = run("calibrate", "--list")
    assert r.exit_code == 2 and "not a valid calibration file" in r.output and "--clear" in r.output
    assert run("calibrate", "--clear").exit_code == 0  # what the message suggests works on the damaged file
    assert not (home / "calibration.json").exists()


def test_cli_errors_are_one_line(tmp_path) -> None:
    r = run("calibrate", str(tmp_path / "missing.csv"), "--gpu", "RTX 4090")
    assert r.exit_code == 2 and "cannot read" in r.output
    r = run("calibrate", str(lightning_csv(tmp_path / "a.csv", 1000)))
    assert r.exit_code == 2 and "--gpu" in r.output
    r = run("calibrate", str(lightning_csv(tmp_path / "a.csv", 1000)), "--gpu", "RTX 9999")
    assert r.exit_code == 2 and "unknown GPU" in r.output


def test_recommend_and_costs_take_the_baseline_hours_and_speeds_from_the_logs(tmp_path) -> None:
    """Both read the calibrated 1080 Ti run (5.42 h, not the 7 h default) and the measured speeds, and costs' buy
    option sweeps the recommended build as recommend plans it: a 15 M model's runs share each card (issue 35 item 4:
    costs counted one run per GPU on its own path)."""
    calibrate_both(tmp_path)
    r = run("calibrate", str(lightning_csv(tmp_path / "1080ti.csv", 21000)), "--gpu", "GTX 1080 Ti",
            "--tokens-per-step", "4096", "--steps-per-run", "100000")
    assert r.exit_code == 0, r.output
    d = json.loads(run("recommend", "7000", "--model-params", "15e6", "--json").stdout)
    assert d["request"]["baseline_hours"] == pytest.approx(5.42, abs=0.02)  # not the 7 h default
    head = d["plans"][0]
    assert head["speedup_basis"] in ("measured", "re-anchored")
    shared = head["sweep"]["runs_sharing_each_gpu"]
    assert shared and shared["runs_per_gpu"] >= 2  # the planned sweep: several of the user's runs on each card
    k, gain = shared["runs_per_gpu"], shared["gain"]
    c = json.loads(run("costs", "--budget", "7000", "--model-params", "15e6", "--json").stdout)
    buy = next(o for o in c["options"] if o["kind"] == "buy")
    assert buy["gpu"] == head["gpu"]["chip"] and buy["gpus"] == head["gpu"]["count"]
    # one run takes k / gain times as long when k share a card; the sweep is recommend's to the hundredth
    assert buy["hours_per_run"] == pytest.approx(5.42 / head["speedup_vs_1080ti"] * k / gain, rel=0.05)
    assert buy["hours_per_run"] == pytest.approx(head["sweep"]["hours_per_run"]["value"], abs=0.01)
    assert buy["hours_to_finish"] == pytest.approx(head["summary"]["sweep_hours"], abs=0.01)
    assert buy["hours_high"] == pytest.approx(head["summary"]["sweep_hours_high"], abs=0.01)


def test_the_readme_calibrate_block_runs_and_says_what_it_claims() -> None:
    import re
    import shlex

    from conftest import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"### Measure, don't guess.*?```bash\n(.*?)```", readme, flags=re.S).group(1)
    outputs = []
    for line in filter(str.strip, block.splitlines()):
        args = shlex.split(line.partition("  #")[0])
        assert args[0] == "planner"
        r = runner.invoke(app, [a.replace("tests/data", str(REPO / "tests" / "data")) for a in args[1:]])
        assert r.exit_code == 0, (line, r.output)
        outputs.append(r.stdout)
    got = {x["id"]: x for x in json.loads(outputs[2])["results"]}
    assert round(got["rtx-4090"]["speedup"], 1) == 6.0 and got["rtx-4090"]["basis"] == "measured"
    assert got["rtx-5090"]["basis"] == "re-anchored"


def test_costs_say_which_speeds_are_measured(tmp_path) -> None:
    calibrate_both(tmp_path)
    c = json.loads(run("costs", "--budget", "7000", "--json").stdout)
    bases = {o["gpu"]: o["speed_basis"] for o in c["options"]}
    assert bases.get("rtx-4090") == "measured"
    assert set(bases.values()) <= {"measured", "re-anchored", "model", "spec estimate"}
    assert "re-anchored" in bases.values()
