"""The Doctor tab in AppTest: Linux logs, training windows typed or from metrics times, charts, Markdown download."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta


from helpers_app import REPO, _isolated, open_tab, run  # noqa: F401  (_isolated: autouse fixture)

LINUX = REPO / "tests" / "data" / "doctor" / "linux"


def doctor_tab():
    """A page with the Doctor tab open (only the open tab is drawn)."""
    return open_tab(run(), "Doctor")


def night_metrics() -> bytes:
    """A training night as a JSONL logger writes it: one row a minute from 22:00 to 06:00 local time."""
    start = datetime(2025, 10, 13, 22, 0)
    rows = [json.dumps({"time": (start + timedelta(minutes=m)).isoformat(), "step": m * 10,
                        "loss": 4.0 / (1 + m / 60), "tokens_per_s": 1000}) for m in range(8 * 60)]
    return ("\n".join(rows) + "\n").encode()


def timeline(doctor):
    return next(df.value for df in doctor.dataframe if "While" in df.value.columns)


def test_linux_log_with_metrics_times_tells_training_from_idle():
    at = doctor_tab()
    at.file_uploader(key="doc_events_file").upload("journal-short.log", (LINUX / "journal-short.log").read_bytes(),
                                                   "text/plain")
    at.file_uploader(key="doc_metrics_file").upload("night.jsonl", night_metrics(), "application/json")
    run(at)
    doctor = at.tabs[5]
    assert not doctor.error
    assert any("Linux kernel log" in m.value and "journal-short" in m.value for m in doctor.markdown)
    frame = timeline(doctor)
    xid = frame[frame["Source"] == "NVRM Xid"].iloc[0]
    assert xid["While"] == "load"  # 02:13:55 falls inside the metrics file's night
    oom = frame[frame["Source"] == "OOM killer"].iloc[0]
    assert oom["While"] == "no_metrics"  # the next evening, after the metrics file's last row: not "idle"
    assert any("from the metrics file's times" in c.value for c in doctor.caption)
    charts = doctor.get("vega_lite_chart") + doctor.get("arrow_vega_lite_chart")
    assert len(charts) == 2  # the incident timeline and the loss curve
    download = next(b for b in doctor.get("download_button") if b.label.startswith("Download the report"))
    assert download is not None
    assert any("Loss curve" in m.value for m in doctor.markdown)


def test_typed_training_windows_and_a_bad_window():
    at = doctor_tab()
    at.file_uploader(key="doc_events_file").upload("journal-short.log", (LINUX / "journal-short.log").read_bytes(),
                                                   "text/plain")
    at.text_area(key="doc_busy").input("2025-10-14T21:00/2025-10-15T06:00")
    run(at)
    frame = timeline(at.tabs[5])
    assert frame[frame["Source"] == "OOM killer"].iloc[0]["While"] == "load"
    assert frame[frame["Source"] == "NVRM Xid"].iloc[0]["While"] == "idle"
    at.text_area(key="doc_busy").input("yesterday night [/]")
    run(at)
    errors = [e.value for e in at.tabs[5].error]
    assert errors and "\n" not in errors[0] and "dates must be ISO" in errors[0]


def test_report_download_is_the_markdown_report_and_gpu_model_sets_the_psu():
    from ui.pages_doctor import diagnose_events

    report = diagnose_events((LINUX / "journal-short.log").read_bytes(), "journal-short.log", cpu_power_w=88,
                             psu_w=650, gpu_name="GTX 1080 Ti",
                             smi=[((LINUX / "smi-q.txt").read_bytes(), "smi-q.txt")])
    assert report.psu["recommended_w"] == 650 and report.psu["vendor_floor_w"] == 600
    assert [f["kind"] for f in report.smi if f["severity"] != "info"] == ["link_down", "hw_slowdown"]
    at = doctor_tab()
    at.file_uploader(key="doc_events_file").upload("dmesg.txt", (LINUX / "dmesg.txt").read_bytes(), "text/plain")
    run(at)
    doctor = at.tabs[5]
    assert not doctor.error
    assert any(b.label == "Download the report (Markdown)" for b in doctor.get("download_button"))


def test_markdown_in_a_log_is_not_rendered_in_the_error():
    at = doctor_tab()
    at.text_area(key="doc_events_text").input("![x](http://host/track.png) [click](http://host/phish)\nmore")
    run(at)
    error = at.tabs[5].error[0].value
    assert not re.search(r"(?<!\\)\]\(", error) and "\\!\\[x\\]" in error


def test_uploads_are_read_once_per_file_not_on_every_keystroke(monkeypatch):
    import planner.doctor.metrics_io as mio

    calls: list[int] = []
    real = mio.read_metrics

    def counting(source, *args, **kwargs):
        calls.append(1)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(mio, "read_metrics", counting)
    monkeypatch.setattr("planner.doctor.diagnose.read_metrics", counting)
    at = doctor_tab()
    at.file_uploader(key="doc_events_file").upload("journal-short.log", (LINUX / "journal-short.log").read_bytes(),
                                                   "text/plain")
    at.file_uploader(key="doc_metrics_file").upload("night.jsonl", night_metrics(), "application/json")
    run(at)
    assert len(calls) == 1  # windows, report and loss curve all come from one read
    for text in ("G", "GT", "GTX 1080 Ti"):
        at.text_input(key="doc_gpu").input(text)
        run(at)
    assert len(calls) == 1 and not at.tabs[5].error
    assert any("Loss curve" in m.value for m in at.tabs[5].markdown)


def test_an_upload_over_the_stated_cap_is_refused_with_a_message(monkeypatch):
    import ui.pages_doctor as page

    monkeypatch.setattr(page, "MAX_UPLOAD_MB", 0.001)  # 1 kB, so a small fixture is over it
    at = doctor_tab()
    at.file_uploader(key="doc_metrics_file").upload("night.jsonl", night_metrics(), "application/json")
    run(at)
    errors = [e.value for e in at.tabs[5].error]
    assert errors and "over the" in errors[0] and "planner doctor" in errors[0]
    assert not any("Training metrics:" in m.value for m in at.tabs[5].markdown)
