"""`planner doctor events|metrics`: the issue-8 JSON contract, readable text output, exit 2 with one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app

DATA = Path(__file__).parent / "data" / "doctor"
runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, ["doctor", *args])


@pytest.mark.parametrize("fixture", ["user-system.csv", "user-system.xml", "user-system-fl-utf16le.txt"])
def test_events_json_contract(fixture):
    result = run("events", str(DATA / fixture), "--json", "--gpu-tgp", "250", "--cpu-power", "88")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"incidents", "hypotheses"}
    assert doc["incidents"]
    for inc in doc["incidents"]:
        assert set(inc) == {"start", "end", "events"}
        for ev in inc["events"]:
            assert set(ev) == {"time", "source", "id", "summary"}
            assert isinstance(ev["id"], int) and isinstance(ev["summary"], str) and ev["summary"]
    for hyp in doc["hypotheses"]:
        assert set(hyp) == {"name", "likelihood", "evidence", "tests"}
        assert hyp["likelihood"] in {"high", "medium", "low"}
        assert all(isinstance(e, str) for e in hyp["evidence"])
        for test in hyp["tests"]:
            assert set(test) == {"step", "cost"} and test["cost"] in {"free", "low", "medium", "high"}
    assert {"driver", "PSU transient/power"} <= {h["name"] for h in doc["hypotheses"][:3]}


def test_events_text_output_has_timeline_causes_and_runbook():
    result = run("events", str(DATA / "user-system.csv"), "--busy", "2025-10-12T22:00/2025-10-13T05:30",
                 "--gpu-tgp", "250", "--cpu-power", "88", "--psu-w", "600")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for expected in ("Incident 4", "Kernel-Power 41", "Likely causes", "Runbook", "Ignored as noise",
                     "Kernel-PnP 219", "644 W"):
        assert expected in out, expected
    assert out.index("Likely causes") < out.index("Runbook")


def test_events_busy_windows_from_a_metrics_file(tmp_path):
    metrics = tmp_path / "run.csv"
    metrics.write_text("step,time,loss\n" + "".join(
        f"{i},2025-10-13T{1 + i // 60:02d}:{i % 60:02d}:00,{3 - i / 1000}\n" for i in range(0, 120, 2)))
    result = run("events", str(DATA / "user-system.xml"), "--metrics", str(metrics))
    assert result.exit_code == 0, result.output
    assert "during a busy (training) window" in result.stdout


def test_metrics_json_contract():
    result = run("metrics", str(DATA / "troubled-run.csv"), "--json", "--expected-steps", "3000")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert set(doc) == {"findings"} and doc["findings"]
    for f in doc["findings"]:
        assert set(f) == {"kind", "severity", "from_step", "to_step", "message"}
        assert isinstance(f["from_step"], int) and f["from_step"] <= f["to_step"]
    clean = run("metrics", str(DATA / "clean-run.jsonl"), "--json")
    assert clean.exit_code == 0 and json.loads(clean.stdout) == {"findings": []}
    text = run("metrics", str(DATA / "clean-run.jsonl"))
    assert "No findings" in text.stdout


@pytest.mark.parametrize("args,reason", [
    (["events", "missing.csv"], "no such file"),
    (["events", str(DATA / "make_fixtures.py")], "unknown format"),
    (["events", str(DATA / "user-system.csv"), "--busy", "last night"], "START/END"),
    (["events", str(DATA / "user-system.csv"), "--cpu-power", "-5"], "out of range"),
    (["events", str(DATA / "user-system.csv"), "--metrics", str(DATA / "user-system.csv")], "no metric columns"),
    (["events", str(DATA / "user-system.csv"), "--metrics", str(DATA / "clean-run.jsonl"), "--gap-min", "0"],
     "positive"),
    (["metrics", str(DATA / "user-system.xml")], "no metric columns"),
    (["metrics", str(DATA / "clean-run.jsonl"), "--expected-steps", "-1"], "positive"),
])
def test_bad_input_exits_2_with_one_line(args, reason):
    result = run(*args)
    assert result.exit_code == 2
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
    assert reason.lower() in " ".join(result.stderr.split()).lower()
    assert "Traceback" not in result.output


def test_console_script_subprocess(tmp_path):
    bad = tmp_path / "export.evtx"
    bad.write_bytes(b"ElfFile\x00" + bytes(200))
    cmd = [sys.executable, "-c", "from planner.cli import main; main()", "doctor", "events", str(bad), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 2 and proc.stdout == ""
    assert "wevtutil" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
