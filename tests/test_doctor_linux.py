"""Doctor on Linux: journalctl/dmesg formats, each kernel-log family diagnosed into the one ranking of causes."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.doctor import diagnose_events
from planner.doctor.catalogue import lookup
from planner.doctor.markdown import events_markdown
from planner.doctor.kernel import classify
from planner.doctor.timestamps import parse_window

LINUX = Path(__file__).parent / "data" / "doctor" / "linux"
runner = CliRunner()


def names(report) -> list[str]:
    return [h.name for h in report.hypotheses]


def kinds(report) -> list[tuple[str, int]]:
    return [(ev.source, ev.id) for inc in report.incidents for ev in inc.events]


def evidence(report, name: str) -> str:
    return " | ".join(next(h for h in report.hypotheses if h.name == name).evidence)


def test_xid_lines_parse_with_their_pci_address_and_process():
    hit = classify("NVRM: Xid (PCI:0000:01:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")
    assert (hit.provider, hit.event_id, hit.device) == ("NVRM Xid", 79, "0000:01:00")
    app_fault = classify("NVRM: Xid (PCI:0000:2b:00): 13, pid=7781, name=python3, Graphics SM Warp Exception")
    assert app_fault.event_id == 13 and "python3 (pid 7781)" in app_fault.detail
    assert lookup("NVRM Xid", 13).kind == "xid_app" and lookup("NVRM Xid", 95).kind == "gpu_memory"
    assert lookup("NVRM Xid", 119).kind == "xid_gsp" and lookup("NVRM Xid", 62).kind == "xid_internal"
    assert lookup("NVRM Xid", 45).noise
    assert lookup("NVRM Xid", 74).kind == "xid_other"  # any code: still a GPU event, cited to the catalogue
    assert "docs.nvidia.com/deploy/xid-errors" in lookup("NVRM Xid", 79).reference


@pytest.mark.parametrize("message, provider, number", [
    ("nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)", "PCIe AER", 0),
    ("pcieport 0000:00:1c.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)",
     "PCIe AER", 1),
    ("pcieport 0000:00:03.1: PCIe Bus Error: severity=Corrected, type=Data Link Layer, id=0019(Transmitter ID)",
     "PCIe AER", 0),
    ("mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: bea0000000000108", "MCE", 1),  # UC + PCC set
    ("mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 17: 9c2040000000011b", "MCE", 0),  # corrected
    ("[Hardware Error]: CPU:0 (19:21:2) MC18_STATUS[Over|CE|MiscV|AddrV|-|-|SyndV|CECC|-|-|-]: 0xdc2040000000011b",
     "MCE", 0),
    ("Kernel panic - not syncing: Fatal machine check", "MCE", 1),
    ("EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x12345)", "EDAC", 0),
    ("EDAC MC1: 1 UE on mc#1csrow#0channel#1 (csrow:0 channel:1 page:0x0 offset:0x0 grain:64)", "EDAC", 1),
    ("CPU2: Package temperature above threshold, cpu clock throttled (total events = 1)", "thermal", 0),
    ("thermal thermal_zone0: critical temperature reached (105 C), shutting down", "thermal", 1),
    ("Out of memory: Killed process 48213 (python3) total-vm:61234512kB, anon-rss:30412288kB, file-rss:70144kB",
     "OOM killer", 0),
    ("Memory cgroup out of memory: Killed process 991 (nginx) total-vm:1024kB, anon-rss:512kB", "OOM killer", 1),
    ("watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python3:4242]", "kernel", 2),
    ("EXT4-fs (nvme0n1p2): recovery complete", "boot", 1),
])
def test_kernel_message_families(message, provider, number):
    hit = classify(message)
    assert hit is not None and (hit.provider, hit.event_id) == (provider, number)


def test_harmless_kernel_lines_stay_noise_or_unrelated():
    for message in ("ACPI BIOS Error (bug): Could not resolve symbol [\\_SB.PCI0.GPP0.SWUS], AE_NOT_FOUND",
                    "nvidia: loading out-of-tree module taints kernel.",
                    "nvidia-gpu 0000:01:00.3: i2c timeout error e0000000"):
        assert lookup(classify(message).provider, classify(message).event_id).noise
    for message in ("CPU2: Core temperature/speed normal", "EDAC MC: Ver: 3.0.0",
                    "[Hardware Error]: Corrected error, no action required.",
                    "pcieport 0000:00:01.1: AER: Corrected error received: 0000:01:00.0",
                    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.120  Fri Sep 13 10:10:01 UTC 2024"):
        assert classify(message) is None, message  # context lines: the event is counted once, on its own line


def test_noise_only_log_gives_no_hypothesis():
    report = diagnose_events(LINUX / "noise.log", year=2025)
    assert report.incidents == [] and report.hypotheses == []
    assert report.ignored == {"NVRM Xid 45": 1, "kernel 100": 2, "kernel 101": 2, "kernel 102": 2}


def test_journal_short_xid79_after_aer_then_unclean_boot():
    nights = [parse_window("2025-10-13T22:00/2025-10-14T06:00"), parse_window("2025-10-14T21:00/2025-10-15T06:00")]
    report = diagnose_events(LINUX / "journal-short.log", busy=nights)
    assert report.platform == "linux" and report.format == "journal-short"
    assert report.incidents[1].start == datetime(2025, 10, 14, 1, 52, 31)  # year from the "-- Logs begin" header
    crash = report.incidents[1]
    ids = [(ev.source, ev.id) for ev in crash.events]
    assert ids.count(("NVRM Xid", 79)) == 1  # the driver's own "fallen off the bus" line is not a second event
    assert ("boot", 0) in ids and ("boot", 1) in ids  # the unclean boot, confirmed by the ext4 journal replay
    xid = next(ev for ev in crash.events if ev.id == 79)
    assert "0000:01:00" in xid.summary and xid.load == "load"
    assert names(report)[:2] == ["PSU transient/power", "PCIe link (slot, riser, seating)"]
    assert "same PCI device logged PCIe AER errors before it fell off the bus" in evidence(
        report, "PCIe link (slot, riser, seating)")
    assert "1 of them training processes" in evidence(report, "training program / host RAM use")
    assert not any("Kernel-Power" in e or "TdrDelay" in e for h in report.hypotheses for e in h.evidence)
    steps = " ".join(t.step for t in report.runbook)
    assert "journalctl -k -b -1" in steps and "TdrDelay" not in steps and "DDU" not in steps
    costs = [t.cost for t in report.runbook]
    assert costs == sorted(costs, key=["free", "low", "medium", "high"].index)


def test_without_evidence_a_new_boot_is_not_called_a_crash():
    text = ("[    0.000000] Linux version 6.8.0-45-generic (buildd@x) #45-Ubuntu SMP\n"
            "[  100.000000] NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n"
            "[  160.000000] reboot: Restarting system\n"
            "[    0.000000] Linux version 6.8.0-45-generic (buildd@x) #45-Ubuntu SMP\n"
            "[    5.000000] r8169 0000:05:00.0 enp5s0: Link is Up\n")
    report = diagnose_events(text)
    assert ("boot", 0) not in kinds(report)  # a clean restart closed the boot
    crashed = text.replace("[  160.000000] reboot: Restarting system\n", "")
    assert ("boot", 0) in kinds(diagnose_events(crashed))  # the boot ended on the Xid 79, no shutdown


def test_journal_iso_gpu_memory_points_at_the_card():
    report = diagnose_events(LINUX / "journal-iso.log")
    assert report.format == "journal-iso" and names(report)[0] == "GPU hardware"
    assert "Xid 48/63/94" in evidence(report, "GPU hardware")
    assert report.ignored == {"NVRM Xid 45": 1}
    assert any("ROW_REMAPPER" in t.step for t in report.runbook)


def test_application_xids_point_at_the_program_not_the_card():
    report = diagnose_events(LINUX / "journal-app.log")
    assert names(report)[0] == "training program / host RAM use"
    assert report.runbook[0].step.startswith("Find the failing kernel in the program")


def test_journal_json_memory_and_cpu_errors():
    report = diagnose_events(LINUX / "journal.json")
    assert report.format == "journal-json" and report.utc and report.clock == "utc"
    assert names(report)[0] == "memory"
    assert "2 corrected ECC RAM errors (EDAC)" in evidence(report, "memory")
    assert "corrected machine checks (MCE)" in evidence(report, "overclock")
    assert "CPU clock throttled by temperature" in evidence(report, "thermals")
    assert report.incidents[0].start == datetime(2025, 10, 22, 23, 47, 30)  # UTC from __REALTIME_TIMESTAMP


def test_journal_json_message_as_byte_array():
    message = list(b"NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\xff")
    line = json.dumps({"__REALTIME_TIMESTAMP": "1760400835000000", "_BOOT_ID": "a" * 32, "MESSAGE": message})
    report = diagnose_events((line + "\n").encode())
    assert kinds(report) == [("NVRM Xid", 79)]


def test_dmesg_gsp_timeout_points_at_the_driver_on_the_boot_clock():
    report = diagnose_events(LINUX / "dmesg.txt")
    assert report.format == "dmesg" and report.clock == "boot"
    assert names(report)[0] == "driver"
    assert any("NVreg_EnableGpuFirmware=0" in t.step for t in report.runbook)
    assert "the logged boot" in evidence(report, "driver")
    md = runner.invoke(app, ["doctor", "events", str(LINUX / "dmesg.txt"), "--format", "md"])
    assert md.exit_code == 0 and "boot+2:17:41" in md.stdout  # 8261 s after boot


def test_dmesg_T_uncorrected_aer_and_a_non_training_oom():
    report = diagnose_events(LINUX / "dmesg-T.txt")
    assert report.format == "dmesg-T"
    assert names(report)[0] == "PCIe link (slot, riser, seating)"
    assert "uncorrected PCIe error(s)" in evidence(report, "PCIe link (slot, riser, seating)")
    software = evidence(report, "training program / host RAM use")
    assert "training processes" not in software and "firefox" in " ".join(
        ev.summary for inc in report.incidents for ev in inc.events)
    assert "CPU clock throttled" in evidence(report, "thermals")


def test_short_format_year_is_stated_or_given():
    text = "Oct 14 02:13:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n"
    guessed = diagnose_events(text)
    assert any("prints no year" in n for n in guessed.notes)
    given = diagnose_events(text, year=2024)
    assert given.incidents[0].start == datetime(2024, 10, 14, 2, 13, 55)
    assert not any("prints no year" in n for n in given.notes)


def test_runbook_psu_sizing_matches_planner_check(no_price_history):
    """A GTX 1080 Ti owner with a 650 W unit: the doctor must not advise a smaller unit than `check` requires."""
    check = runner.invoke(app, ["check", "gpu-nvidia-gtx1080ti-fe", "psu-seasonic-focus-gx-650-2019",
                                "cpu-amd-ryzen5-7600", "--json"])
    assert check.exit_code == 0, check.output
    breakdown = json.loads(check.stdout)["power"]["breakdown"]
    report = diagnose_events(LINUX / "journal-short.log", gpu_name="GTX 1080 Ti", cpu_power_w=breakdown["cpu_w"],
                             psu_w=650)
    assert report.psu == breakdown  # one sizing, the checker's, vendor floor included
    swap = next(t.step for t in report.runbook if "PSU" in t.step and t.cost == "medium")
    assert "already meets the planner's sizing" in swap and "at least 650 W" in swap
    assert "550 W" not in " ".join(t.step for t in report.runbook)


def test_unknown_gpu_name_is_one_line_exit_2():
    result = runner.invoke(app, ["doctor", "events", str(LINUX / "noise.log"), "--gpu", "Voodoo 5 [/]"])
    assert result.exit_code == 2 and "not a GPU the planner knows" in result.stderr
    assert "Traceback" not in result.output


def test_markdown_report_has_sections_and_escapes_log_text():
    hostile = ("2025-10-20T14:02:11+02:00 rig kernel: NVRM: Xid (PCI:0000:01:00): 13, pid=1, "
               "name=![x](http://evil/t.png) [click](http://evil/p) <script>, Graphics Exception\n")
    md = events_markdown(diagnose_events(hostile.encode()))
    for heading in ("# Doctor report", "## Incidents", "## Likely causes", "## Runbook, cheapest test first"):
        assert heading in md
    assert not re.search(r"(?<!\\)\]\(", md) and "<script>" not in md and "\\!\\[x\\]" in md
    cli = runner.invoke(app, ["doctor", "events", str(LINUX / "journal-short.log"), "--format", "md",
                              "--smi", str(LINUX / "smi-q.txt")])
    assert cli.exit_code == 0 and "## nvidia-smi evidence" in cli.stdout and "Xid 79" in cli.stdout


def test_journalctl_hint_paragraph_is_not_a_log_line():
    text = ("Hint: You are currently not seeing messages from other users and the system.\n"
            "      Users in groups 'adm', 'systemd-journal', 'wheel' can see all messages.\n"
            "Oct 14 02:13:55 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the "
            "bus.\n")
    report = diagnose_events(text.encode(), year=2025)
    assert report.format == "journal-short" and kinds(report) == [("NVRM Xid", 79)]


def test_markdown_escape_keeps_plain_text_readable_and_links_inert():
    from planner.doctor.markdown import md_escape

    assert md_escape("utf-8 (TDR: 2 s)") == "utf-8 (TDR: 2 s)"
    assert md_escape("- not a list") == "\\- not a list" and md_escape("1. not a list") == "1\\. not a list"
    assert "://" not in md_escape("http://host/x") and "www\\." in md_escape("www.host.com")  # no autolink forms
    assert md_escape("line one\nline two") == "line one line two"
