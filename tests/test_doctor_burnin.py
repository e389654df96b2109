"""Issue 25 item 6: `planner burnin` prints the plan; `planner doctor burnin` passes a clean hour and fails one with a
thermal slowdown at 91 °C, reading the logs with the doctor's readers."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Optional

from typer.testing import CliRunner

from planner.cli import app
from planner.doctor.burnin import SMI_COMMAND, check_burnin

runner = CliRunner()
LINUX = Path(__file__).parent / "data" / "doctor" / "linux"
HEADER = ("timestamp, index, name, utilization.gpu [%], temperature.gpu, power.draw [W], power.limit [W], "
          "clocks.current.sm [MHz], clocks.max.sm [MHz], clocks_throttle_reasons.active\n")


def burnin_smi(minutes: int = 62, gpus: int = 2, hot_from: Optional[int] = None) -> bytes:
    """An nvidia-smi log every 5 s as `planner burnin` records it: warm-up to about 72 °C in 10 minutes, then steady;
    with hot_from, GPU 0 reaches 91 °C from that minute with SW thermal slowdown and lower clocks."""
    start = datetime(2026, 3, 1, 21, 0, 0)
    lines = [HEADER]
    for k in range(minutes * 12 + 1):
        t = start + timedelta(seconds=5 * k)
        minute = k / 12
        for g in range(gpus):
            temp = 45 + 27 * min(1.0, minute / 10) + (k * 7 + g) % 3 - 1
            clock, reasons = 2520 + (k * 13 + g) % 30 - 15, "0x0000000000000000"
            if k % 50 == 7:
                reasons = "0x0000000000000004"  # SW power cap now and then: the card at its limit, not a fault
            if hot_from is not None and g == 0 and minute >= hot_from:
                temp, clock, reasons = 91, 2100, "0x0000000000000020"
            lines.append(f"{t:%Y/%m/%d %H:%M:%S}.000, {g}, NVIDIA GeForce RTX 5090, {97 + k % 3} %, {temp:.0f}, "
                         f"560.00 W, 575.00 W, {clock} MHz, 2700 MHz, {reasons}\n")
    return "".join(lines).encode()


def test_a_clean_hour_passes(tmp_path):
    smi = tmp_path / "smi-burnin.csv"
    smi.write_bytes(burnin_smi())
    report = check_burnin(smi)
    assert report.verdict == "pass" and report.gpus == ["0", "1"] and 61 <= report.minutes <= 63
    statuses = {c.name: c.status for c in report.checks}
    assert statuses["no thermal or power slowdown"] == "pass" and statuses["clocks stable under load"] == "pass"
    assert statuses["no throughput sag"] == "not_checked"
    result = runner.invoke(app, ["doctor", "burnin", str(smi), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["verdict"] == "pass"


def test_a_thermal_slowdown_at_91_c_fails_with_its_evidence(tmp_path):
    smi = tmp_path / "smi-burnin.csv"
    smi.write_bytes(burnin_smi(hot_from=40))
    result = runner.invoke(app, ["doctor", "burnin", str(smi), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["verdict"] == "fail"
    failed = {c["name"]: c["evidence"] for c in report["checks"] if c["status"] == "fail"}
    assert "SW thermal at 91 °C" in failed["no thermal or power slowdown"] and "GPU 0" in \
        failed["no thermal or power slowdown"]
    assert "GPU 0 reached 91 °C" in failed["temperatures below the limit and settled"]
    assert "GPU 0: SM clock under 90%" in failed["clocks stable under load"]
    text = runner.invoke(app, ["doctor", "burnin", str(smi)])
    assert text.exit_code == 1 and "Burn-in: FAIL" in text.stdout


def test_too_short_or_idle_fails_and_kernel_and_metrics_count(tmp_path):
    short = tmp_path / "short.csv"
    short.write_bytes(burnin_smi(minutes=20))
    report = check_burnin(short)
    assert report.verdict == "fail" and report.checks[0].status == "fail" and "20 min" in report.checks[0].evidence
    smi = tmp_path / "smi.csv"
    smi.write_bytes(burnin_smi())
    xid = check_burnin(smi, kernel_log=LINUX / "journal-iso.log")
    kernel = next(c for c in xid.checks if c.name.startswith("no Xid"))
    assert xid.verdict == "fail" and kernel.status == "fail" and "NVRM Xid" in kernel.evidence
    metrics = tmp_path / "m.csv"
    metrics.write_text("step,tokens_per_s\n" + "".join(f"{s},{1000 if not 60 <= s < 70 else 500}\n"
                                                       for s in range(1, 121)))
    sag = check_burnin(smi, metrics=metrics)
    assert sag.verdict == "fail" and "throughput_drop" in next(c for c in sag.checks if c.name == "no throughput sag"
                                                               ).evidence


def test_not_an_smi_log_is_one_line(tmp_path):
    bad = tmp_path / "x.csv"
    bad.write_text("step,loss\n1,2\n")
    result = runner.invoke(app, ["doctor", "burnin", str(bad)])
    assert result.exit_code == 2 and "nvidia-smi" in result.stderr and "Traceback" not in result.output


def test_the_plan_names_the_logs_the_line_and_the_criteria():
    result = runner.invoke(app, ["burnin", "--gpu", "RTX 5090", "--hours", "7", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["logs"]["nvidia-smi"] == f"{SMI_COMMAND} > smi-burnin.csv"
    assert "clocks_throttle_reasons.active" in SMI_COMMAND and "clocks.sm" in SMI_COMMAND
    assert plan["logs"]["kernel"].startswith("journalctl -k")
    assert any("Kernel-Power 41" in c for c in plan["criteria"]) and any("slowdown" in c for c in plan["criteria"])
    assert plan["check"].startswith("planner doctor burnin smi-burnin.csv")
    windows = runner.invoke(app, ["burnin", "--system", "windows", "--json"])
    assert "wevtutil qe System" in json.loads(windows.stdout)["logs"]["windows_system"]
    text = runner.invoke(app, ["burnin", "--gpus", "2"])
    assert text.exit_code == 0 and "Pass criteria" in text.stdout and "all GPUs at once" in text.stdout
    bad = runner.invoke(app, ["burnin", "--system", "mac"])
    assert bad.exit_code == 2 and "linux or windows" in bad.stderr


def test_the_plan_of_a_saved_build():
    saved = Path(__file__).parent / "data" / "costs" / "user-target-build.json"
    result = runner.invoke(app, ["burnin", "--plan", str(saved), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["build"] == "1 x GeForce RTX 5090 32 GB"
    missing = runner.invoke(app, ["burnin", "--plan", "no-such-plan.json"])
    assert missing.exit_code == 2 and "Traceback" not in missing.output
