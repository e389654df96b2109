"""Doctor readers: the three Windows export formats, encodings, malformed input, and streaming of huge logs."""

from __future__ import annotations

import codecs
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from planner.doctor import diagnose_events
from planner.doctor.readers import LogReader
from planner.doctor.textio import open_text
from planner.errors import InputError

DATA = Path(__file__).parent / "data" / "doctor"
FIXTURES = ["user-system.csv", "user-system.xml", "user-system-fl.txt", "user-system-fl-utf16le.txt"]
EV_HEADER = "Level,Date and Time,Source,Event ID,Task Category\r\n"


def records(source) -> list[tuple[str, str, int]]:
    with open_text(source) as stream:
        return [(r.provider, r.stamp, r.event_id) for r in LogReader(stream.lines, stream.name)]


def skeleton(report) -> list[tuple[str, str, list[tuple[str, str, int]]]]:
    """Incidents reduced to wall-clock times, sources and ids (summaries differ by format detail)."""
    naive = lambda s: datetime.fromisoformat(s.rstrip("Z")).isoformat()  # noqa: E731
    return [
        (naive(i["start"]), naive(i["end"]), [(naive(e["time"]), e["source"], e["id"]) for e in i["events"]])
        for i in report.to_json()["incidents"]
    ]


def test_every_format_yields_the_same_incidents():
    reports = {name: diagnose_events(DATA / name) for name in FIXTURES}
    shapes = {name: skeleton(r) for name, r in reports.items()}
    reference = shapes["user-system.xml"]
    assert len(reference) == 4
    for name, shape in shapes.items():
        assert shape == reference, name
    formats = {name: (r.format, r.encoding) for name, r in reports.items()}
    assert formats == {
        "user-system.csv": ("csv", "utf-8-sig"),
        "user-system.xml": ("xml", "utf-8"),
        "user-system-fl.txt": ("format-list", "utf-8"),
        "user-system-fl-utf16le.txt": ("format-list", "utf-16"),
    }
    assert all(r.total_events == 17 for r in reports.values())
    assert reports["user-system.xml"].utc and not reports["user-system.csv"].utc


def test_xml_reads_named_event_data_and_canonical_sources():
    report = diagnose_events(DATA / "user-system.xml")
    crash = report.incidents[-1]
    kp41 = next(e for e in crash.events if e.id == 41)
    assert kp41.source == "Kernel-Power"  # 'Microsoft-Windows-Kernel-Power' in the XML
    assert "BugcheckCode 0" in kp41.summary
    csv_41 = next(e for e in diagnose_events(DATA / "user-system.csv").incidents[-1].events if e.id == 41)
    assert "BugcheckCode 0" not in csv_41.summary  # the CSV export has no event data...
    assert "no stop code" in csv_41.summary  # ...but no BugCheck 1001 follows, so none was recorded


def test_format_list_continuation_lines_are_joined():
    with open_text(DATA / "user-system-fl.txt") as stream:
        recs = list(LogReader(stream.lines, stream.name))
    nv = next(r for r in recs if r.event_id == 153)
    assert "Error occurred on GPUID: 2d00" in nv.message
    assert nv.message.count("\n") >= 2


@pytest.mark.parametrize("encoding,bom", [("utf-16-be", codecs.BOM_UTF16_BE), ("utf-16-le", b""),
                                          ("utf-8", codecs.BOM_UTF8), ("cp1252", b"")])
def test_other_encodings_of_the_same_export(tmp_path, encoding, bom):
    text = (DATA / "user-system-fl.txt").read_text(encoding="utf-8").replace("\u200e", "")
    path = tmp_path / "export.txt"
    path.write_bytes(bom + text.encode(encoding))
    report = diagnose_events(path)
    assert skeleton(report) == skeleton(diagnose_events(DATA / "user-system-fl.txt"))


def test_pasted_text_and_bytes_are_accepted():
    text = (DATA / "user-system.csv").read_text(encoding="utf-8-sig")
    assert skeleton(diagnose_events(text)) == skeleton(diagnose_events(DATA / "user-system.csv"))
    raw = (DATA / "user-system-fl-utf16le.txt").read_bytes()
    assert len(diagnose_events(raw).incidents) == 4


def test_dates_day_or_month_first_decided_per_file():
    # 24-hour en-US style: only 10/13 proves month-first; 10/10 and 10/11 must then follow it.
    rows = ["Error,10/11/2025 03:12:05,nvlddmkm,153,None,x", "Error,10/13/2025 03:12:05,nvlddmkm,153,None,x"]
    report = diagnose_events((EV_HEADER + "\r\n".join(rows) + "\r\n").encode())
    assert [i.start for i in report.incidents] == [datetime(2025, 10, 11, 3, 12, 5), datetime(2025, 10, 13, 3, 12, 5)]
    # Without proof and without AM/PM: day-first (fr-FR, en-GB).
    report = diagnose_events((EV_HEADER + "Error,05/10/2025 03:12:05,nvlddmkm,153,None,x\r\n").encode())
    assert report.incidents[0].start == datetime(2025, 10, 5, 3, 12, 5)
    mixed = (EV_HEADER + "Error,13/10/2025 03:12:05,nvlddmkm,153,None,x\r\n"
             "Error,10/14/2025 03:12:05,nvlddmkm,153,None,x\r\n")
    with pytest.raises(InputError, match="mixes day-first and month-first"):
        diagnose_events(mixed.encode())


def test_export_csv_and_tab_delimited_variants():
    export_csv = (
        '#TYPE System.Diagnostics.Eventing.Reader.EventLogRecord\r\n'
        '"Message","Id","Version","ProviderName","TimeCreated"\r\n'
        '"Display driver nvlddmkm stopped responding and has successfully recovered.","4101","0","Display",'
        '"10/13/2025 2:05:15 AM"\r\n'
    )
    report = diagnose_events(export_csv.encode())
    assert [(e.source, e.id) for e in report.incidents[0].events] == [("Display", 4101)]
    tabbed = ("Level\tDate and Time\tSource\tEvent ID\tTask Category\r\n"
              "Error\t2025-10-13 02:05:13\tnvlddmkm\t153\tNone\tx\r\n")
    assert diagnose_events(tabbed.encode()).incidents[0].events[0].id == 153
    get_eventlog_fl = "\r\nIndex         : 9\r\nEntryType     : Error\r\nInstanceId    : 3221225625\r\n" \
                      "Message       : x\r\nSource        : nvlddmkm\r\nTimeGenerated : 13/10/2025 02:05:13\r\n"
    # Get-EventLog's InstanceId carries qualifier bits: 0xC0000099 -> event 153.
    assert diagnose_events(get_eventlog_fl.encode()).incidents[0].events[0].id == 153


@pytest.mark.parametrize("content,reason", [
    (b"", "empty"),
    (b"\n\n   \n", "no events"),
    (b"ElfFile\x00" + b"\x00" * 100, "binary .evtx"),
    (b"\x00\x01\x02\x03binary\x00\x00\xff", "binary"),
    (codecs.BOM_UTF16_LE + "TimeCreated : 1/1/2025 1:00:00\r\n".encode("utf-16-le") + b"\x41", "not valid utf-16"),
    ("just some notes about my pc\n".encode(), "unknown format"),
    (b"<Event><System><Provider Name='nvlddmkm'/><EventID>153</EventID>", "malformed XML"),
    (b"<!DOCTYPE x [<!ENTITY a 'aaaa'>]><Event/>", "malformed XML"),
    (b"<Event><System><EventID>153</EventID></System></Event>", "lacks Provider"),
    ((EV_HEADER + "Error,10/13/2025 2:05:13 AM,nvlddmkm,one-five-three,None,x\r\n").encode(), "not a number"),
    ((EV_HEADER + "Error,yesterday,nvlddmkm,153,None,x\r\n").encode(), "unreadable date"),
    ((EV_HEADER + "Error,02/30/2025 2:05:13 AM,nvlddmkm,153,None,x\r\n").encode(), "impossible date"),
    ((EV_HEADER + 'Error,10/13/2025 2:05:13 AM,nvlddmkm,153,None,"unterminated\r\n' + "x" * 1_200_000).encode(),
     "over 1000000 characters"),
    (b"When,What\r\n1,2\r\n", "CSV header not recognised"),
    (b"TimeCreated : 13/10/2025 02:05:13\r\nMessage : no provider\r\n", "needs TimeCreated, ProviderName and Id"),
])
def test_bad_files_raise_one_clean_input_error(tmp_path, content, reason):
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    with pytest.raises(InputError) as err:
        diagnose_events(path)
    message = str(err.value)
    assert reason.lower() in message.lower()
    assert "\n" not in message and "Traceback" not in message


def test_invalid_utf8_late_in_the_file_names_the_line(tmp_path):
    path = tmp_path / "late.csv"
    good = "".join(f"Information,10/13/2025 2:05:{i % 60:02d} AM,Service Control Manager,7036,None,ok\r\n"
                   for i in range(3000))
    path.write_bytes((EV_HEADER + good).encode() + b"Error,10/13/2025 2:05:13 AM,nvlddmkm,153,None,\xff\xfe\xfd\r\n")
    with pytest.raises(InputError, match=r"not valid utf-8 text near line 300\d"):
        diagnose_events(path)


def test_xml_on_one_huge_line_and_overlong_csv_lines(tmp_path):
    # wevtutil can print events back to back on one line; multi-byte characters straddle the read pieces.
    ns = "http://schemas.microsoft.com/win/2004/08/events/event"
    events = "".join(
        f"<Event xmlns='{ns}'><System><Provider Name='{'nvlddmkm' if i == 9000 else 'X'}'/><EventID>153</EventID>"
        f"<TimeCreated SystemTime='2025-10-13T02:{i // 60 % 60:02d}:{i % 60:02d}.1Z'/></System>"
        f"<EventData><Data Name='note'>été àé {i}</Data></EventData></Event>" for i in range(12_000))
    path = tmp_path / "one-line.xml"
    path.write_text(events, encoding="utf-8")
    assert path.stat().st_size > 2_000_000
    report = diagnose_events(path)
    assert report.total_events == 12_000 and [len(i.events) for i in report.incidents] == [1]
    long_csv = tmp_path / "long.csv"
    long_csv.write_text(EV_HEADER + "Error,10/13/2025 2:05:13 AM,nvlddmkm,153,None," + "x" * 1_100_000 + "\r\n")
    with pytest.raises(InputError, match="line 2 is over 1000000 characters"):
        diagnose_events(long_csv)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        diagnose_events(tmp_path / "nope.csv")
    with pytest.raises(InputError, match="directory"):
        diagnose_events(tmp_path)


# ---- huge files: memory stays bounded (a memory bound, not a timing assertion) --------------------------

def _write_big_csv(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(EV_HEADER)
        for i in range(n):
            minute, second = divmod(i % 3600, 60)
            if i % 50_000 == 7:
                fh.write(f"Error,10/13/2025 2:{minute:02d}:{second:02d} AM,nvlddmkm,153,None,\"\\Device\\Video3\n"
                         "Error occurred on GPUID: 2d00\"\r\n")
            else:
                fh.write(f"Information,10/{1 + i // 100_000:02d}/2025 1:{minute:02d}:{second:02d} AM,Service Control "
                         f"Manager,7036,None,The Windows Update service entered the running state. ({i})\r\n")


_RSS_PROBE = """
import resource, sys
from planner.doctor import diagnose_events
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = diagnose_events(sys.argv[1])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(report.total_events, sum(len(i.events) for i in report.incidents), (after - before) * 1024)
"""


def _grown_bytes(path: Path) -> tuple[int, int, int]:
    """Run the doctor on path in a fresh process: (events read, events kept, peak resident growth in bytes).

    The peak resident size (ru_maxrss, kB on Linux) is read after the imports and after the parse. Unlike
    tracemalloc it also sees lxml's C allocations, and it does not slow the parse down."""
    out = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(path)], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1])
    total, kept, grown = (int(x) for x in out.stdout.split())
    return total, kept, grown


def test_huge_csv_streams_in_bounded_memory(tmp_path):
    path = tmp_path / "huge.csv"
    _write_big_csv(path, 200_000)
    size = path.stat().st_size
    assert size > 20_000_000
    total, kept, grown = _grown_bytes(path)
    assert (total, kept) == (200_000, 4)
    assert grown < size / 10, f"resident size grew by {grown} bytes for a {size}-byte file: not streaming"


def test_huge_xml_streams_in_bounded_memory(tmp_path):
    path = tmp_path / "huge.xml"
    ns = "http://schemas.microsoft.com/win/2004/08/events/event"
    n = 100_000
    with path.open("w", encoding="utf-8") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8"?>\n<Events>\n')
        for i in range(n):
            provider, eid = ("nvlddmkm", 153) if i % 25_000 == 3 else ("Service Control Manager", 7036)
            fh.write(f"<Event xmlns='{ns}'><System><Provider Name='{provider}'/><EventID>{eid}</EventID>"
                     f"<TimeCreated SystemTime='2025-10-13T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}."
                     f"1234567Z'/><Channel>System</Channel><Computer>DESKTOP-ML1080</Computer></System>"
                     f"<EventData><Data Name='param1'>Windows Update</Data><Data Name='param2'>running {i}</Data>"
                     "</EventData></Event>\n")
        fh.write("</Events>\n")
    size = path.stat().st_size
    assert size > 30_000_000
    total, kept, grown = _grown_bytes(path)
    assert (total, kept) == (n, 4)
    assert grown < size / 10, f"resident size grew by {grown} bytes for a {size}-byte file: not streaming"
