"""Burn-in: `planner doctor burnin` judges the logs (pass | fail | incomplete with evidence), `planner burnin` plans it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from burnin_logs import HEADER, metrics_csv, smi_log
from planner.cli import app
from planner.doctor.burnin import (MIN_LOADED_MIN, SMI_COMMAND, TEMP_FAIL_C, check_burnin, read_smi_series)

LINUX = Path(__file__).parent / "data" / "doctor" / "linux"
DOCTOR = Path(__file__).parent / "data" / "doctor"
runner = CliRunner()
XID = ("2026-12-05T21:42:10+0000 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=4242, name=python3, "
       "GPU has fallen off the bus.\n")


def write(tmp_path: Path, name: str, data: bytes | str) -> str:
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(path)


def burnin(*args: str):
    result = runner.invoke(app, ["doctor", "burnin", *args, "--json"])
    return result, (json.loads(result.stdout) if result.exit_code in (0, 1) else None)


def hot_from(minute: float):
    def tweak(m: float, gpu: int, row: dict) -> None:
        if m >= minute:
            row.update(temp=91, reasons=0x48, clock=1950)  # HW slowdown + HW thermal slowdown at 91 C
    return tweak


def test_a_clean_hour_passes(tmp_path):
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(60)))
    assert result.exit_code == 0, result.output
    assert out["verdict"] == "pass" and out["failed"] == []
    assert out["gpus"][0]["loaded_minutes"] >= MIN_LOADED_MIN
    by = {c["criterion"]: c["status"] for c in out["checks"]}
    assert by["throttle"] == by["temperature"] == by["clock_stable"] == "pass"
    assert by["events"] == "skipped"  # said, not silently passed


def test_a_thermal_slowdown_at_91_c_fails_with_when_and_the_numbers(tmp_path):
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(60, tweak=hot_from(40))))
    assert result.exit_code == 1
    assert out["verdict"] == "fail"
    throttle = next(c for c in out["checks"] if c["criterion"] == "throttle")
    assert throttle["status"] == "fail" and throttle["time"] == "2026-12-05 21:40:00"
    assert throttle["numbers"]["temp_c_at_first"] == 91
    assert "HW thermal slowdown" in throttle["message"]
    temp = next(c for c in out["checks"] if c["criterion"] == "temperature")
    assert temp["status"] == "fail" and temp["numbers"]["max_temp_c"] == 91 >= TEMP_FAIL_C


def test_a_power_brake_alone_fails_and_a_power_cap_does_not(tmp_path):
    def brake(m: float, gpu: int, row: dict) -> None:
        row["reasons"] = 0x84 if gpu == 1 and 30 <= m < 30.1 else 0x4  # one sample of HW power brake on GPU 1
    out = check_burnin(smi_log(60, gpus=2, tweak=brake))
    assert out.verdict == "fail"
    failed = [c for c in out.checks if c.status == "fail"]
    assert [(c.criterion, c.gpu) for c in failed] == [("throttle", "1")]
    assert "HW power brake" in failed[0].message


def test_clocks_sagging_as_it_heats_fail_without_any_throttle_bit(tmp_path):
    def sag(m: float, gpu: int, row: dict) -> None:
        row["clock"] = 2700 - max(0.0, m - 15) * 6  # 2700 -> 2430 MHz, no reason bit set
    out = check_burnin(smi_log(60, tweak=sag))
    assert out.verdict == "fail"
    clock = next(c for c in out.checks if c.criterion == "clock_stable")
    assert clock.status == "fail" and clock.numbers["sag"] > 0.05


def test_temperature_still_rising_after_warm_up_fails():
    out = check_burnin(smi_log(60, tweak=lambda m, g, row: row.update(temp=60 + m / 3)))  # 65 -> 80 C, never settles
    check = next(c for c in out.checks if c.criterion == "temperature_stable")
    assert out.verdict == "fail" and check.status == "fail" and check.numbers["rise_c"] > 5


def test_a_kernel_log_with_an_xid_fails_and_a_clean_one_passes(tmp_path):
    smi = write(tmp_path, "smi.csv", smi_log(60))
    result, out = burnin(smi, "--kernel-log", write(tmp_path, "kernel.log", XID))
    assert result.exit_code == 1 and out["verdict"] == "fail"
    event = next(c for c in out["checks"] if c["criterion"] == "events")
    assert event["numbers"] == {"source": "NVRM Xid", "id": 79} and "21:42:10" in event["time"]
    result, out = burnin(smi, "--kernel-log", str(LINUX / "noise.log"))
    assert result.exit_code == 0 and out["verdict"] == "pass"


WINDOWS = ("\ufeffLevel,Date and Time,Source,Event ID,Task Category\n"
           "Critical,12/5/2026 9:45:12 PM,Kernel-Power,41,(63),The system has rebooted without cleanly shutting down "
           "first.\n"
           "Information,12/5/2026 8:00:00 PM,Kernel-General,12,None,The operating system started.\n")


def test_a_windows_system_log_with_kernel_power_41_during_the_burn_in_fails(tmp_path):
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(60)), "--events", write(tmp_path, "system.csv", WINDOWS))
    assert out["verdict"] == "fail"
    event = next(c for c in out["checks"] if c["criterion"] == "events")
    assert event["numbers"] == {"source": "Kernel-Power", "id": 41} and event["time"] == "2026-12-05 21:45:12"


def test_events_from_before_the_burn_in_are_shown_but_do_not_fail_it(tmp_path):
    # the doctor's Windows fixture: crashes in October 2025, long before this burn-in
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(60)), "--events", str(DOCTOR / "user-system.csv"))
    assert result.exit_code == 0 and out["verdict"] == "pass", out
    before = next(c for c in out["checks"] if c["criterion"] == "events_before")
    assert before["status"] == "warn" and before["numbers"]["events"] >= 1


def test_a_throughput_sag_in_the_metrics_fails_and_a_flat_run_passes(tmp_path):
    smi = write(tmp_path, "smi.csv", smi_log(180))  # an hour of stress, then two hours of training
    sag = metrics_csv(120, sag_from=80, sag=0.12, start_min=60)
    result, out = burnin(smi, "--metrics", write(tmp_path, "sag.csv", sag))
    assert result.exit_code == 1 and out["failed"] == ["throughput"]
    tp = next(c for c in out["checks"] if c["criterion"] == "throughput")
    assert tp["numbers"]["sag"] == pytest.approx(0.12, abs=0.01)
    result, out = burnin(smi, "--metrics", write(tmp_path, "flat.csv", metrics_csv(120, start_min=60)))
    assert result.exit_code == 0 and out["verdict"] == "pass", out["headline"]
    phases = next(c for c in out["checks"] if c["criterion"] == "phases")
    assert phases["status"] == "pass" and out["phases"]["stress"]["loaded_minutes"] == pytest.approx(60, abs=0.2)


def test_a_short_log_is_incomplete_not_a_pass(tmp_path):
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(20)))
    assert result.exit_code == 1 and out["verdict"] == "incomplete"
    duration = next(c for c in out["checks"] if c["criterion"] == "duration")
    assert duration["status"] == "incomplete" and duration["numbers"]["loaded_minutes"] == pytest.approx(20, abs=0.2)


def test_a_log_that_stops_for_a_while_is_incomplete(tmp_path):
    text = smi_log(90).decode().splitlines()
    cut = text[:400] + text[700:]  # 25 minutes missing in the middle: a reboot or a hang hides there
    out = check_burnin(("\n".join(cut) + "\n").encode())
    gap = next(c for c in out.checks if c.criterion == "gap")
    assert out.verdict == "incomplete" and gap.numbers["gap_minutes"] == pytest.approx(25, abs=0.2)


def test_an_idle_gpu_does_not_count_as_burn_in(tmp_path):
    out = check_burnin(smi_log(60, tweak=lambda m, g, row: row.update(util=3)))
    assert out.verdict == "incomplete"


@pytest.mark.parametrize("make, reason", [
    (lambda p: write(p, "x.csv", "hello,world\n1,2\n"), "not an nvidia-smi"),
    (lambda p: write(p, "x.csv", "timestamp, index, temperature.gpu, utilization.gpu [%]\n"
                                 "2026/12/05 21:00:00.000, 0, 70, 99 %\n"), "clocks_throttle_reasons.active"),
    (lambda p: str(LINUX / "smi-q.txt"), "not an nvidia-smi --format=csv log"),
    (lambda p: str(p / "missing.csv"), "no such file"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, make, reason):
    result = runner.invoke(app, ["doctor", "burnin", make(tmp_path)])
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert reason.lower() in " ".join(result.stderr.split()).lower()


def test_metrics_without_a_throughput_column_is_bad_input(tmp_path):
    smi = write(tmp_path, "smi.csv", smi_log(60))
    metrics = write(tmp_path, "loss.csv", "step,loss\n" + "".join(f"{i},{4 - i / 100}\n" for i in range(50)))
    result = runner.invoke(app, ["doctor", "burnin", smi, "--metrics", metrics])
    assert result.exit_code == 2 and "no throughput column" in result.stderr


def test_the_command_the_plan_prints_records_what_the_check_reads():
    fields = SMI_COMMAND.split("--query-gpu=")[1].split()[0].split(",")
    assert [f.split(" [")[0] for f in HEADER.split(", ")] == fields  # the generator writes that command's header
    assert read_smi_series(smi_log(1)).samples["0"][0].clock == 2700


# ---- planner burnin -------------------------------------------------------------------------------------
def plan(*args: str) -> dict:
    result = runner.invoke(app, ["burnin", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_plan_covers_one_run_and_the_sweep_and_says_what_to_keep():
    out = plan("--gpu", "2x RTX 5090", "--runs", "8", "--hours", "7")
    stress, training = out["phases"]
    assert stress["hours"] == MIN_LOADED_MIN / 60
    sweep = out["sweep"]
    assert training["hours"] >= sweep["hours_per_run"]["high"] and training["hours"] >= sweep["wall_hours"]["value"]
    assert out["total_hours"] == stress["hours"] + training["hours"]
    commands = " ".join(log["command"] for log in out["logs"])
    assert SMI_COMMAND in commands and "journalctl -k -f" in commands and "wevtutil qe System" in commands
    assert out["check"].startswith("planner doctor burnin ")
    assert out["thresholds"]["temp_fail_c"] == TEMP_FAIL_C


def test_the_8_x_7_h_sweep_gets_a_night_a_longer_one_is_capped_and_a_long_run_gets_the_whole_run():
    night = plan("--gpu", "RTX 5090", "--runs", "8", "--hours", "7")  # the sweep on one card: about 5 h
    stress, training = night["phases"]
    assert training["hours"] >= night["sweep"]["wall_hours"]["value"] and night["total_hours"] >= 6
    assert "overnight" in training["why"]
    capped = plan("--gpu", "RTX 5090", "--runs", "40", "--hours", "7")
    assert capped["sweep"]["wall_hours"]["value"] > 8 and capped["phases"][1]["hours"] == 8  # at most one night
    long_run = plan("--gpu", "RTX 5090", "--runs", "1", "--hours", "60")
    assert long_run["phases"][1]["hours"] >= long_run["sweep"]["hours_per_run"]["high"] > 8
    short = plan("--gpu", "2x RTX 5090", "--runs", "2", "--hours", "1")  # minutes of work: the floor is an hour
    assert short["phases"][1]["hours"] == 1 and "overnight" not in short["phases"][1]["why"]


def test_the_plan_of_a_saved_build_uses_its_gpus(tmp_path):
    saved = {"plans": [{"parts": [{"category": "gpu", "id": "gpu-x", "chip": "rtx-4090", "name": "Some 4090",
                                   "quantity": 2}, {"category": "cpu", "id": "cpu-x"}]}]}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(saved))
    result = runner.invoke(app, ["burnin", "--build", str(path), "--json", "--os", "linux"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["gpu_count"] == 2 and "4090" in out["build"]
    assert not any(log["os"] == "windows" for log in out["logs"])


@pytest.mark.parametrize("args, reason", [
    ([], "give one of"),
    (["--gpu", "RTX 5090", "--budget", "7000"], "only one of --budget, --build or --gpu (got --budget and --gpu)"),  # names the clash
    (["--gpu", "RTX 9999"], "unknown GPU"),
    (["--gpu", "RTX 5090", "--os", "mac"], "--os"),
    (["--gpu", "RTX 5090", "--runs", "0"], "--runs"),
])
def test_plan_bad_input_exits_2(args, reason):
    result = runner.invoke(app, ["burnin", *args])
    assert result.exit_code == 2
    assert reason.lower() in result.stderr.lower() and len(result.stderr.strip().splitlines()) == 1


def test_the_plan_for_a_budget_is_for_the_build_recommend_gives():
    out = plan("--budget", "7000")
    assert "planner recommend --budget 7000" in out["basis"]
    assert out["gpu_count"] == out["sweep"]["gpu_count"] >= 1
    assert out["phases"][1]["hours"] >= out["sweep"]["hours_per_run"]["high"]


@pytest.mark.parametrize("fixture, verdict, code", [("burnin-clean.csv", "pass", 0), ("burnin-hot.csv", "fail", 1)])
def test_the_committed_two_gpu_logs(fixture, verdict, code):
    result, out = burnin(str(DOCTOR / fixture))
    assert result.exit_code == code and out["verdict"] == verdict
    assert [g["gpu"] for g in out["gpus"]] == ["0", "1"]
    if verdict == "fail":  # only the card that overheated is blamed
        assert {c["gpu"] for c in out["checks"] if c["status"] == "fail"} == {"1"}


@pytest.mark.parametrize("line", [
    "pcieport 0000:00:01.1: AER: Uncorrected (Fatal) error received: 0000:01:00.0",
    "pcieport 0000:00:03.0: AER: Multiple Uncorrected (Fatal) error received: 0000:03:00.0",
    "pcieport 0000:00:1c.0: AER: Uncorrected (Fatal) error received: id=00e0",
    "aer 0000:00:01.1: AER: Uncorrected (Fatal) error message received from 0000:01:00.0",
])
def test_a_fatal_pcie_aer_summary_line_alone_fails_the_burn_in(tmp_path, line):
    kernel = write(tmp_path, "kernel.log", f"2026-12-05T21:42:10+0000 rig kernel: {line}\n")
    result, out = burnin(write(tmp_path, "smi.csv", smi_log(60)), "--kernel-log", kernel)
    assert result.exit_code == 1 and out["verdict"] == "fail", out
    event = next(c for c in out["checks"] if c["criterion"] == "events")
    assert event["numbers"] == {"source": "PCIe AER", "id": 1} and "21:42:10" in event["time"]


def test_the_cli_says_not_checked_and_exits_1_when_the_temperature_was_never_measured(tmp_path):
    lines = smi_log(60).decode().splitlines()
    blank = [lines[0]] + [", ".join("[N/A]" if i == 3 else c for i, c in enumerate(ln.split(", "))) for ln in lines[1:]]
    path = write(tmp_path, "smi.csv", "\n".join(blank) + "\n")
    result = runner.invoke(app, ["doctor", "burnin", path])
    assert result.exit_code == 1
    first = result.stdout.splitlines()[0]
    assert first.startswith("verdict: not checked, so not a pass") and "temperature (GPU 0)" in first
    result, out = burnin(path)
    assert out["verdict"] == "not_checked" and out["not_checked"] == ["temperature"] and out["failed"] == []
