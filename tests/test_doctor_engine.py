"""Issue 27: one signal engine for `doctor metrics` and `doctor watch`, the loggers people use, and a watch that
cannot be blinded (rotation, planted links, failing actions, flapping backlogs)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.doctor.signals import Signal
from planner.doctor.watch import Watch, WatchOptions

runner = CliRunner()
DATA = Path(__file__).parent / "data" / "doctor"
# every metrics fixture: what is not a System log export, a kernel log or a burn-in's nvidia-smi log
METRIC_FIXTURES = sorted(p for p in DATA.iterdir() if p.suffix in (".csv", ".jsonl") and
                         not p.name.startswith(("user-system", "burnin-")))


def metrics_json(path: Path, *extra: str) -> dict:
    result = runner.invoke(app, ["doctor", "metrics", str(path), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def as_tuples(findings: list[dict]) -> list[tuple]:
    return sorted((f["kind"], f["severity"], f["from_step"], f["to_step"], f["message"]) for f in findings)


@pytest.mark.parametrize("fixture", METRIC_FIXTURES, ids=lambda p: p.name)
def test_metrics_and_watch_report_the_same_findings_on_every_fixture(fixture, tmp_path):
    copy = tmp_path / fixture.name
    shutil.copy(fixture, copy)
    after = as_tuples(metrics_json(fixture)["findings"])
    result = runner.invoke(app, ["doctor", "watch", str(copy), "--once", "--json"])
    assert result.exit_code == 0, result.output
    during = sorted((s["kind"], s["severity"], s["step"], s.get("to_step"), s["message"])
                    for s in map(json.loads, result.stdout.splitlines()))
    assert during == after


def test_the_fixtures_have_something_to_find():
    found = {p.name: {f["kind"] for f in metrics_json(p)["findings"]} for p in METRIC_FIXTURES}
    assert {"thermal_throttling", "throughput_drop", "gpu_imbalance"} <= found["troubled-run.csv"]
    assert found["clean-run.jsonl"] == set()


def test_a_watch_fed_in_small_pieces_ends_with_the_report_of_doctor_metrics(tmp_path, monkeypatch):
    monkeypatch.setattr("planner.doctor.tail.MAX_READ_BYTES", 700)  # many polls, lines cut across chunks
    path = tmp_path / "run.csv"
    text = (DATA / "troubled-run.csv").read_text()
    path.write_text("")
    watch = Watch(WatchOptions(metrics=str(path)))
    for start in range(0, len(text), 1500):
        with path.open("a") as fh:
            fh.write(text[start:start + 1500])
        watch.poll()
    assert as_tuples([f.to_json() for f in watch.report.findings]) == \
        as_tuples(metrics_json(DATA / "troubled-run.csv")["findings"])


# ---- the loggers people use ----------------------------------------------------------------------------
def test_wandb_export_names_and_the_61_percent_stall():
    report = metrics_json(DATA / "wandb-export.csv")
    drop = [f for f in report["findings"] if f["kind"] == "throughput_drop"]
    assert drop and drop[0]["from_step"] == 300 and "tokens/sec" in drop[0]["message"]
    assert report["ignored"] == ["_runtime", "system.gpu.0.memory"]  # memory use is not GPU utilisation
    result = runner.invoke(app, ["doctor", "metrics", str(DATA / "wandb-export.csv")])
    assert "gpu1_util=system.gpu.1.gpu" in " ".join(result.stdout.split())
    assert "ignored: _runtime, system.gpu.0.memory" in " ".join(result.stdout.split())


def test_lightning_csvlogger_validation_rows_on_the_same_step_are_no_restart():
    report = metrics_json(DATA / "lightning-metrics.csv")
    kinds = [f["kind"] for f in report["findings"]]
    assert "run_restarted" not in kinds and kinds == ["thermal_throttling"]
    assert "88 °C" in report["findings"][0]["message"] and "GPU0" in report["findings"][0]["message"]
    assert {"val_loss", "lr-AdamW", "epoch"} <= set(report["ignored"])


def test_tensorboard_csv_takes_its_role_from_the_tag_in_the_file_name(tmp_path):
    report = metrics_json(DATA / "run-train-tag-loss.csv")
    assert [f["kind"] for f in report["findings"]] == ["divergence"]
    renamed = tmp_path / "export.csv"  # the tag is gone with the name: the user says what Value is
    shutil.copy(DATA / "run-train-tag-loss.csv", renamed)
    refused = runner.invoke(app, ["doctor", "metrics", str(renamed)])
    assert refused.exit_code == 2 and "--column" in refused.stderr
    mapped = metrics_json(renamed, "--column", "loss=Value")
    assert [f["kind"] for f in mapped["findings"]] == ["divergence"]


def test_column_option_maps_a_name_and_wins_over_the_default(tmp_path):
    path = tmp_path / "m.csv"
    rows = ["step,loss,val/perplexity"] + [f"{s},{2.0 - s / 1000:.4f},{30 if s < 150 else 30 * (1 + (s - 150) / 10)}"
                                           for s in range(1, 201)]
    path.write_text("\n".join(rows) + "\n")
    plain = metrics_json(path)
    assert plain["ignored"] == ["val/perplexity"] and not plain["findings"]
    mapped = metrics_json(path, "--column", "loss=val/perplexity")
    assert "divergence" in [f["kind"] for f in mapped["findings"]] and mapped.get("ignored") == ["loss"]
    bad = runner.invoke(app, ["doctor", "metrics", str(path), "--column", "speed"])
    assert bad.exit_code == 2 and "KIND=NAME" in bad.stderr and "Traceback" not in bad.output


def test_per_gpu_imbalance_is_named_an_input_pipeline_bottleneck():
    report = metrics_json(DATA / "imbalance-run.csv")
    imbalance = [f for f in report["findings"] if f["kind"] == "gpu_imbalance"]
    assert len(imbalance) == 1
    assert "GPU0 works" in imbalance[0]["message"] and "input-pipeline bottleneck" in imbalance[0]["message"]


def smi_rows(instants: int, utils: tuple[int, ...], reasons: str = "0x0000000000000000", start: int = 0) -> str:
    return "".join(f"2025/10/14 02:{(s // 60) % 60:02d}:{s % 60:02d}.000, {g}, NVIDIA GeForce RTX 3090, {u} %, "
                   f"300.00 W, 350.00 W, {reasons}\n" for s in range(start, start + instants)
                   for g, u in enumerate(utils))


SMI_HEADER = ("timestamp, index, name, utilization.gpu [%], power.draw [W], power.limit [W], "
              "clocks_throttle_reasons.active\n")


def test_multi_gpu_smi_log_shows_a_lagging_gpu_in_doctor_smi_and_in_the_watch(tmp_path):
    smi = tmp_path / "smi.csv"
    smi.write_text(SMI_HEADER + smi_rows(20, (100, 20, 22)))
    result = runner.invoke(app, ["doctor", "smi", str(smi), "--json"])
    assert result.exit_code == 0, result.output
    lagging = {f["gpu"] for f in json.loads(result.stdout) if f["kind"] == "gpu_imbalance"}
    assert lagging == {"1", "2"}
    metrics = tmp_path / "m.csv"
    metrics.write_text("step,loss\n1,2.0\n")
    seen: list[Signal] = []
    Watch(WatchOptions(metrics=str(metrics), smi_log=str(smi)), seen.append).poll()
    assert sorted(s.message.split(":")[1].strip().split(" ")[1] for s in seen if s.kind == "gpu_imbalance") == \
        ["1", "2"]


# ---- watch hardening -----------------------------------------------------------------------------------
def test_state_is_never_written_through_a_planted_link(tmp_path):
    metrics = tmp_path / "run.csv"
    metrics.write_text("step,loss\n1,2.0\n")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    state = tmp_path / "state.json"
    (tmp_path / "state.json.tmp").symlink_to(victim)  # the old fixed temporary name
    Watch(WatchOptions(metrics=str(metrics), state_path=str(state))).poll()
    assert victim.read_text() == "precious" and json.loads(state.read_text())["version"] == 2
    state.unlink()
    state.symlink_to(victim)  # the state itself replaced by a link: refused, the target untouched
    result = runner.invoke(app, ["doctor", "watch", str(metrics), "--once", "--state", str(state)])
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert victim.read_text() == "precious"


def test_copytruncate_of_the_smi_log_is_followed(tmp_path):
    metrics, smi = tmp_path / "m.csv", tmp_path / "smi.csv"
    metrics.write_text("step,loss\n1,2.0\n")
    smi.write_text(SMI_HEADER + smi_rows(6, (98,)))
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(metrics), smi_log=str(smi)), seen.append)
    watch.poll()
    shutil.copy(smi, tmp_path / "smi.csv.1")
    with smi.open("r+") as fh:  # logrotate copytruncate: the same file, emptied; nvidia-smi writes on, no header
        fh.truncate(0)
    with smi.open("a") as fh:
        fh.write(smi_rows(12, (98,), "0x0000000000000040", start=10))  # hardware thermal slowdown
    watch.poll()
    assert watch.smi_tail.rotated == 1 and watch.smi.tallies["0"].samples == 18
    assert any(s.kind == "hw_slowdown" and "thermal" in s.message for s in seen)


def test_copytruncate_of_the_metrics_csv_does_not_blind_the_watch(tmp_path):
    metrics = tmp_path / "run.csv"
    metrics.write_text("step,loss,tokens_per_s\n" + "".join(f"{s},{2 - s / 1000:.4f},1000\n" for s in range(1, 41)))
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(metrics)), seen.append)
    watch.poll()
    size = metrics.stat().st_size
    with metrics.open("r+") as fh:
        fh.truncate(0)
    with metrics.open("a") as fh:  # rows go on, and pass the old size before the watch looks again
        fh.write("".join(f"{s},nan,1000\n" for s in range(41, 41 + size // 10)))
    assert metrics.stat().st_size >= size
    watch.poll()
    assert watch.metrics.rotated == 1 and any(s.kind == "nan_loss" and s.step == 41 for s in seen)
    assert watch.feed.bad_lines == 0


def kernel_setup(tmp_path: Path, script_body: str) -> tuple[Path, Path, Path]:
    metrics, kernel = tmp_path / "m.csv", tmp_path / "kern.log"
    metrics.write_text("step,loss\n1,2.0\n")
    kernel.write_text("")
    script = tmp_path / "notify.py"
    script.write_text(script_body)
    return metrics, kernel, script


def test_a_failed_action_does_not_consume_the_cool_down(tmp_path):
    count = tmp_path / "count"
    metrics, kernel, script = kernel_setup(tmp_path, (
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\nn = int(p.read_text()) if p.exists() else 0\n"
        "p.write_text(str(n + 1))\nsys.exit(1 if n == 0 else 0)\n"))  # the first call fails
    watch = Watch(WatchOptions(metrics=str(metrics), kernel_log=str(kernel), cooldown_s=600,
                               actions={"kernel": f"{sys.executable} {script} {count}"}))
    for n in (1, 2):
        with kernel.open("a") as fh:
            fh.write(f"Oct 14 02:1{n}:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has "
                     "fallen off the bus.\n")
        watch.poll()
    assert watch.actions_run == [("kernel", 1), ("kernel", 0)]  # tried again, and the second one ran


def test_a_crafted_kernel_line_cannot_break_the_action(tmp_path):
    out = tmp_path / "message"
    metrics, kernel, script = kernel_setup(tmp_path, (
        "import os, sys\nopen(sys.argv[1], 'w').write(os.environ['DOCTOR_MESSAGE'])\n"))
    watch = Watch(WatchOptions(metrics=str(metrics), kernel_log=str(kernel),
                               actions={"kernel": f"{sys.executable} {script} {out}"}))
    with kernel.open("a") as fh:
        fh.write("Oct 14 02:13:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=py\x00" + "A" * 128_000
                 + ", GPU has fallen off the bus.\n")
    watch.poll()
    assert watch.actions_run == [("kernel", 0)]
    message = out.read_text()
    assert "fallen off the bus" in message and "\x00" not in message and len(message) <= 4_000


@pytest.mark.parametrize("on, why", [("nan='\"unclosed'", "cannot split"),
                                     ("nan=/no/such/program --now", "not found"),
                                     ("nan=", "expected KIND=COMMAND")])
def test_a_malformed_on_is_refused_at_start(tmp_path, on, why):
    metrics = tmp_path / "run.jsonl"
    metrics.write_text('{"step": 1, "loss": 1.0}\n')
    kind, _, command = on.partition("=")
    result = runner.invoke(app, ["doctor", "watch", str(metrics), "--once", "--on", f"{kind}={command.strip(chr(39))}"])
    assert result.exit_code == 2 and why in result.stderr and "Traceback" not in result.output
    assert not Path(f"{metrics}.doctor-watch.json").exists()  # refused before anything was read


def test_state_stays_under_what_is_read_back(tmp_path):
    metrics = tmp_path / "wide.csv"
    header = ",".join(f"custom_metric_{i:05d}_" + "x" * 150 for i in range(5_000))  # a 0.8 MB header line
    metrics.write_text("step,loss," + header + "\n" + "1,2.0" + "," * 5_000 + "\n")
    state = tmp_path / "state.json"
    Watch(WatchOptions(metrics=str(metrics), state_path=str(state))).poll()
    assert state.stat().st_size < 100_000
    resumed = Watch(WatchOptions(metrics=str(metrics), state_path=str(state)))  # readable again
    assert resumed.resumed


def test_watch_prints_the_columns_it_ignores(tmp_path):
    path = tmp_path / DATA.joinpath("wandb-export.csv").name
    shutil.copy(DATA / "wandb-export.csv", path)
    result = runner.invoke(app, ["doctor", "watch", str(path), "--once"])
    assert result.exit_code == 0 and "ignored: _runtime, system.gpu.0.memory" in " ".join(result.stdout.split())


def test_env_messages_of_the_action_are_clean():
    from planner.doctor.watch import _clean_env

    assert _clean_env("a\x00b\nc" + "x" * 10_000) == "a b c" + "x" * 3_995


def test_no_metrics_outside_the_file_and_during_training_just_after_its_last_row(tmp_path):
    from planner.doctor import diagnose_events
    from planner.doctor.diagnose import metrics_windows

    metrics = tmp_path / "night.csv"
    metrics.write_text("time,step,loss\n" + "".join(f"2025-10-14T{h:02d}:{m:02d}:00,{h * 60 + m},1.0\n"
                                                     for h in range(0, 2) for m in range(0, 60, 1)))
    log = ("2025-10-14T01:59:10+0000 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen "
           "off the bus.\n"  # 10 s after the last row (01:59:00)
           "2025-10-16T03:00:00+0000 rig kernel: NVRM: Xid (PCI:0000:01:00): 13, pid=1, name=python3, Graphics "
           "Exception\n")  # a night the metrics file does not cover
    busy, span = metrics_windows(metrics)
    report = diagnose_events(log, busy=busy, covered=[span])
    loads = [e.load for i in report.incidents for e in i.events]
    assert loads == ["load", "no_metrics"]
    summaries = [e.summary for i in report.incidents for e in i.events]
    assert "during a busy (training) window" in summaries[0] and "no metrics at that time" in summaries[1]
    kern = tmp_path / "kern.log"
    kern.write_text(log)
    result = runner.invoke(app, ["doctor", "events", str(kern), "--metrics", str(metrics)])
    assert result.exit_code == 0 and "while idle" not in result.stdout and "no metrics" in result.stdout


if os.name != "posix":  # pragma: no cover
    pytestmark = pytest.mark.skip("symlinks and O_NOFOLLOW are POSIX")


def test_a_finding_that_grows_with_the_run_is_said_once(tmp_path):
    """Whole-run findings (a slow decline, a starved GPU) start where the baseline puts them, which moves as rows
    arrive: the watch says each once, not at every look."""
    path = tmp_path / "run.csv"
    path.write_text("step,loss,tokens_per_s,gpu_util\n")
    seen: list[Signal] = []
    watch = Watch(WatchOptions(metrics=str(path)), seen.append)
    for start in range(1, 601, 20):
        with path.open("a") as fh:
            fh.writelines(f"{s},{2 - s / 1000:.4f},{1000 - s * 0.6:.1f},{40 + s % 3}\n" for s in range(start, start + 20))
        watch.poll()
    kinds = [s.kind for s in seen]
    assert kinds.count("throughput_drop") == 1 and kinds.count("utilisation_dip") == 1, kinds
