"""Formats people paste (issue 33): each is sniffed from content and named; odd lines are skipped and counted; a GPU
that fell off the bus is Xid 79 in any wording; counts come from the line; a GPU cause needs a GPU behind it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.doctor.catalogue import lookup
from planner.errors import InputError
from planner.service import diagnose

diagnose_events, read_smi = diagnose().events, diagnose().smi  # the door: one use case, a method per log kind

runner = CliRunner()


def kinds(report) -> list[str]:
    return [lookup(ev.source, ev.id).kind for inc in report.incidents for ev in inc.events]


def test_fallen_off_the_bus_over_several_journal_lines_without_an_xid_is_one_xid_79_naming_the_gpu():
    log = ("Feb 14 05:03:41 gpu-1 kernel: mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link ACTIVE\n"
           "Feb 14 05:03:42 gpu-1 kernel: NVRM: The NVIDIA GPU 0000:b3:00.0\n"
           "Feb 14 05:03:42 gpu-1 kernel: NVRM: (PCI ID: 10de:26b5) installed in this system has\n"
           "Feb 14 05:03:42 gpu-1 kernel: NVRM: fallen off the bus and is not responding to commands.\n")
    report = diagnose_events(log, year=2026)
    assert kinds(report) == ["gpu_off_bus"]
    assert "0000:b3:00.0" in report.incidents[0].events[0].summary
    assert report.hypotheses and report.format == "journal-short"


def test_an_xid_79_and_the_drivers_own_off_bus_line_are_one_event():
    log = ("[ 100.000001] NVRM: GPU at PCI:0000:01:00: GPU-0b5c\n"
           "[ 100.000002] NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python3, GPU has fallen off the bus.\n"
           "[ 100.000003] NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.\n")
    assert kinds(diagnose_events(log)) == ["gpu_off_bus"]


def test_dmesg_reltime_is_read_with_the_year_assumed_and_said_or_given():
    log = ("[May19 19:57] pcieport 0000:00:01.0: AER: Multiple Corrected error received: 0000:01:00.0\n"
           "[  +0.000316] nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
           "(Receiver ID)\n"
           "[  +2.500000] NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python, GPU has fallen off the bus.\n")
    report = diagnose_events(log)
    assert report.format == "dmesg-H" and sorted(set(kinds(report))) == ["aer_corrected", "gpu_off_bus"]
    assert any("assumed" in n for n in report.notes)
    given = diagnose_events(log, year=2024)
    assert given.incidents[0].start.year == 2024 and not any("assumed" in n for n in given.notes)
    last = given.incidents[0].events[-1].time
    assert (last - given.incidents[0].start).total_seconds() == pytest.approx(2, abs=1)
    # the AER came from the nvidia driver on the GPU that then fell off: the link is blamed, and the card may be
    names = [h.name for h in given.hypotheses]
    assert "PCIe link (slot, riser, seating)" in names and "GPU hardware" in names


def test_kern_log_without_host_and_odd_lines_never_aborts_the_file():
    log = ("May 19 19:57:01 kernel: [  12.3] EDAC MC0: 262 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 "
           "(channel:1 slot:0 page:0x0 offset:0x0 grain:32 syndrome:0x0 -  OVERFLOW area:DRAM)\n"
           "garbage that is no log line\n"
           "May 32 19:57:01 kernel: an impossible date\n"
           "another odd line\n"
           "May 19 19:58:01 kernel: something unrelated\n")
    report = diagnose_events(log, year=2025)
    assert kinds(report) == ["edac_ce"]
    assert any(n.startswith("3 lines not understood") for n in report.notes)
    memory = next(h for h in report.hypotheses if h.name == "memory")
    assert any(e.startswith("262 corrected ECC RAM errors") for e in memory.evidence)  # 262, not 1 line


def test_aer_on_a_chipset_port_with_no_gpu_behind_it_adds_nothing_to_gpu_hardware():
    log = "".join(f"[  {n}.1] pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
                  f"(Receiver ID)\n" for n in range(3, 9))
    report = diagnose_events(log)
    names = [h.name for h in report.hypotheses]
    assert names[0] == "PCIe link (slot, riser, seating)" and "GPU hardware" not in names
    assert any("pcieport 0000:00:1c.5" in e for h in report.hypotheses for e in h.evidence)


def test_grep_output_without_times_is_read_in_file_order_and_said_so():
    log = "$ dmesg | grep NVRM\nkernel: NVRM: Xid (PCI:0000:41:00): 48, pid=9, name=python, DBE\n"
    report = diagnose_events(log)
    assert report.format == "kernel-lines" and report.clock == "none" and kinds(report) == ["gpu_memory"]
    assert any("carry no times" in n for n in report.notes)


def test_copy_details_as_text_reads_the_event_xml_for_the_stop_code():
    text = ("Log Name:      System\nSource:        Microsoft-Windows-Kernel-Power\nDate:          10/13/2025 "
            "2:31:58 AM\nEvent ID:      41\nTask Category: (63)\nLevel:         Critical\nDescription:\nThe system "
            "has rebooted without cleanly shutting down first.\nEvent Xml:\n<Event xmlns=\"http://schemas.microsoft."
            "com/win/2004/08/events/event\">\n  <EventData>\n    <Data Name=\"BugcheckCode\">0</Data>\n    <Data "
            "Name=\"PowerButtonTimestamp\">0</Data>\n  </EventData>\n</Event>\n\nLog Name:      System\nSource:      "
            "  nvlddmkm\nDate:          10/13/2025 2:20:00 AM\nEvent ID:      153\nLevel:         Error\nDescription:"
            "\n\\Device\\Video3 Error occurred on GPUID: 100\n")
    report = diagnose_events(text)
    assert report.format == "details-text" and sorted(kinds(report)) == ["gpu_hang", "hard_reset"]
    reset = next(ev for inc in report.incidents for ev in inc.events if ev.id == 41)
    assert "BugcheckCode 0" in reset.summary


@pytest.mark.parametrize("line,kind", [
    ("Display driver nvlddmkm stopped responding and has successfully recovered.", "gpu_hang"),
    ("The previous system shutdown at 2:31:58 AM on 10/13/2025 was unexpected.", "unexpected_shutdown"),
    ("The computer has rebooted from a bugcheck.  The bugcheck was: 0x00000116 (0xffff, 0x0, 0x0, 0x2).", "bugcheck"),
])
def test_a_message_alone_is_the_event_it_describes(line, kind):
    report = diagnose_events(line + "\n")
    assert report.format == "message-text" and kinds(report) == [kind]


def test_an_unknown_paste_names_every_format_read_and_smi_text_is_sent_to_the_smi_reader():
    with pytest.raises(InputError, match="Copy details as text.*dmesg"):
        diagnose_events("hello\nworld\n")
    with pytest.raises(InputError, match="nvidia-smi output"):
        diagnose_events("| NVIDIA-SMI 535.54    Driver Version: 535.54    CUDA Version: 12.2 |\n")


def test_a_table_with_err_cells_is_a_problem_and_a_missing_card_shows_against_the_build():
    table = ("+-----------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |\n"
             "|   0  NVIDIA GeForce RTX 3090  Off | 00000000:01:00.0 Off |                  N/A |\n"
             "|ERR!   ERR!  ERR!    ERR! / 350W |   1MiB / 24576MiB |    ERR!      Default |\n"
             "|   1  NVIDIA GeForce RTX 3090  Off | 00000000:02:00.0 Off |                  N/A |\n"
             "| 30%   88C    P2   300W / 350W |  20000MiB / 24576MiB |    100%      Default |\n")
    found = {f.kind: f for f in read_smi(table.encode())}
    assert found["gpu_error"].severity == "problem" and found["gpu_error"].gpu == "00000000:01:00.0"
    assert found["hot"].gpu == "00000000:02:00.0" and "lists 2 GPUs" in found["gpu_count"].message
    assert "no Xid" in found["coverage"].message
    missing = {f.kind for f in read_smi(table.encode(), expected_gpus=3)}
    assert "gpu_missing" in missing


def test_cli_smi_gpus_flag_and_a_q_fragment_is_never_called_healthy(tmp_path):
    fragment = tmp_path / "q.txt"
    fragment.write_text("    Clocks\n        Graphics                          : 435 MHz\n"
                        "        SM                                : 435 MHz\n        Memory                            : "
                        "810 MHz\n")
    result = runner.invoke(app, ["doctor", "smi", str(fragment)])
    assert result.exit_code == 0 and "look normal" not in result.output
    assert "cannot say the GPU is healthy" in " ".join(result.output.split())


def test_events_with_a_smi_table_and_the_gpus_fitted_ranks_the_missing_card():
    real = __import__("pathlib").Path(__file__).parent / "data" / "real"
    result = runner.invoke(app, ["doctor", "events", str(real / "kernel" / "hivemind-509-xid79-syslog.txt"), "--smi",
                                 str(real / "smi" / "cbio-39-table-3-of-4.txt"), "--gpus", "4", "--json"])
    assert result.exit_code == 0, result.output
    smi = __import__("json").loads(result.stdout)["smi"]
    assert [f["kind"] for f in smi] == ["gpu_missing"] and "4 fitted" in smi[0]["message"]
