"""nvidia-smi evidence: -q dumps and --format=csv logs -> link, power cap, slowdown, heat, ECC -> the ranking."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from planner.cli import app
from planner.doctor import diagnose_events
from planner.doctor.smi import read_smi

LINUX = Path(__file__).parent / "data" / "doctor" / "linux"
runner = CliRunner()


def by_kind(findings) -> dict[str, object]:
    """Findings by kind; the 'info' ones (what the output could show) are checked on their own."""
    return {f.kind: f for f in findings if f.severity != "info"}


def test_q_dump_link_trained_down_and_power_brake():
    found = by_kind(read_smi(LINUX / "smi-q.txt"))
    assert set(found) == {"link_down", "hw_slowdown"}
    assert "Gen1 x4 (max Gen3 x16)" in found["link_down"].message
    assert "power brake" in found["hw_slowdown"].message and found["hw_slowdown"].causes == (("psu_power", 3.0),)


def test_idle_card_at_gen1_is_not_a_link_problem():
    idle = (LINUX / "smi-q.txt").read_text().replace("Gpu                               : 97 %",
                                                     "Gpu                               : 0 %")
    idle = idle.replace("Power Draw                        : 131.52 W", "Power Draw                        : 11.52 W")
    assert "link_down" not in by_kind(read_smi(idle.encode()))


def test_q_dump_memory_health():
    text = (LINUX / "smi-q.txt").read_text().replace(
        "    Retired Pages\n        Single Bit ECC                    : N/A\n        Double Bit ECC                    : N/A\n"
        "        Pending Page Blacklist            : N/A\n",
        "    Remapped Rows\n        Correctable Error                 : 0\n        Uncorrectable Error               : 2\n"
        "        Pending                           : Yes\n        Remapping Failure Occurred        : No\n")
    found = by_kind(read_smi(text.encode()))
    assert "retired_pages" in found and found["retired_pages"].causes == (("gpu_hardware", 2.0),)


def test_csv_log_power_cap_and_narrow_link_per_gpu():
    found = read_smi(LINUX / "smi-log.csv")
    assert found[-1].kind == "coverage" and "Xid" in found[-1].message  # issue 33: says what a log cannot show
    kinds = {(f.gpu, f.kind) for f in found if f.severity != "info"}
    assert kinds == {("0", "link_down"), ("1", "power_cap")}
    link = next(f for f in found if f.kind == "link_down")
    assert "Gen3 x4 (max Gen4 x16)" in link.message and "24 of 24 samples under load" in link.message


def test_smi_evidence_joins_the_event_ranking_and_the_json():
    plain = diagnose_events(LINUX / "journal-short.log")
    with_smi = diagnose_events(LINUX / "journal-short.log", smi=[LINUX / "smi-q.txt"])
    score = {h.name: h.score for h in plain.hypotheses}
    score_smi = {h.name: h.score for h in with_smi.hypotheses}
    assert score_smi["PSU transient/power"] == score["PSU transient/power"] + 3.0
    assert score_smi["PCIe link (slot, riser, seating)"] == score["PCIe link (slot, riser, seating)"] + 3.0
    assert [f["kind"] for f in with_smi.to_json()["smi"]] == ["link_down", "hw_slowdown"]
    assert "smi" not in plain.to_json()  # the issue-8 JSON contract is unchanged without nvidia-smi evidence
    only = diagnose_events(LINUX / "noise.log", year=2025, smi=[LINUX / "smi-log.csv"])
    assert only.incidents == [] and only.hypotheses[0].name == "PCIe link (slot, riser, seating)"


def test_smi_cli_json_and_bad_input(tmp_path):
    result = runner.invoke(app, ["doctor", "smi", str(LINUX / "smi-log.csv"), "--json"])
    assert result.exit_code == 0
    assert {f["kind"] for f in json.loads(result.stdout) if f["severity"] != "info"} == {"link_down", "power_cap"}
    bad = tmp_path / "x.csv"
    bad.write_text("a,b,c\n1,2,3\n")
    wrong = runner.invoke(app, ["doctor", "smi", str(bad)])
    assert wrong.exit_code == 2 and "not nvidia-smi output" in wrong.stderr and "Traceback" not in wrong.output


def test_a_csv_log_whose_gpu_stopped_answering_is_a_problem_not_an_idle_card():
    log = ("timestamp, index, name, temperature.gpu, utilization.gpu [%], clocks_throttle_reasons.active\n"
           "2026/12/05 21:00:00.000, 0, NVIDIA GeForce RTX 3090, 70, 99 %, 0x0000000000000000\n"
           "2026/12/05 21:00:05.000, 0, NVIDIA GeForce RTX 3090, [GPU requires reset], [GPU requires reset], "
           "[GPU requires reset]\n")
    found = by_kind(read_smi(log.encode()))
    assert found["gpu_lost"].severity == "problem" and "requires reset" in found["gpu_lost"].message
    assert dict(found["gpu_lost"].causes)["gpu_hardware"] > 0
