"""Doctor events: catalogue, incidents on a timeline, load vs idle, and the ranking of causes with evidence."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest

from planner.doctor import diagnose_events
from planner.doctor.catalogue import lookup
from planner.doctor.events import IncidentGroup, LogEvent, group_incidents
from planner.doctor.runbook import COST_ORDER
from planner.doctor.timestamps import parse_window
from planner.compat.power import size_psu

DATA = Path(__file__).parent / "data" / "doctor"
USER_LOG = DATA / "user-system.xml"
# The nights the user trained (the idle 153 on 2025-10-11 14:25 falls outside them).
NIGHTS = [parse_window(w) for w in (
    "2025-10-09T22:00/2025-10-10T05:30", "2025-10-10T22:00/2025-10-11T05:30", "2025-10-12T22:00/2025-10-13T05:30")]
NS = "http://schemas.microsoft.com/win/2004/08/events/event"


def xml_event(when: str, provider: str, event_id: int, data: dict[str, str] | None = None, message: str = "") -> str:
    items = "".join(f"<Data Name='{k}'>{v}</Data>" for k, v in (data or {}).items())
    rendered = f"<RenderingInfo Culture='en-US'><Message>{message}</Message></RenderingInfo>" if message else ""
    return (f"<Event xmlns='{NS}'><System><Provider Name='{provider}'/><EventID>{event_id}</EventID>"
            f"<TimeCreated SystemTime='{when}Z'/></System><EventData>{items}</EventData>{rendered}</Event>\n")


def names(report) -> list[str]:
    return [h.name for h in report.hypotheses]


def test_catalogue_keys_on_provider_and_id():
    assert lookup("Microsoft-Windows-Hyper-V-Hypervisor", 42).noise
    assert lookup("Microsoft-Windows-Kernel-Power", 42).kind == "sleep"  # same id, other provider: not noise
    assert lookup("Kernel-Power", 41).kind == "hard_reset"
    assert lookup("Microsoft-Windows-WER-SystemErrorReporting", 1001).source == "BugCheck"
    assert lookup("Kernel-PnP", 219).noise
    assert lookup("nvlddmkm", 4101) is None and lookup("Display", 4101).kind == "gpu_hang"


def test_user_sequence_incidents_and_noise():
    report = diagnose_events(USER_LOG)
    assert [len(i.events) for i in report.incidents] == [2, 3, 1, 5]
    last = report.incidents[-1]
    assert [(e.source, e.id) for e in last.events] == [
        ("nvlddmkm", 153), ("Display", 4101), ("nvlddmkm", 153), ("Kernel-Power", 41), ("EventLog", 6008)]
    # the 41 is written at the next boot, six hours after the last 153: it still closes that incident
    assert last.end - last.start > timedelta(hours=6)
    assert "2:31:58 AM" in last.events[-1].summary  # 6008 says when the machine really died
    seen = {(e.source, e.id) for i in report.incidents for e in i.events}
    assert not seen & {("Kernel-PnP", 219), ("Hyper-V-Hypervisor", 42)}
    assert report.ignored == {"Kernel-PnP 219": 2, "Hyper-V-Hypervisor 42": 2}
    assert report.unrecognised == 2  # Service Control Manager 7036, Kernel-General 12


def test_user_sequence_ranks_driver_and_power_first():
    report = diagnose_events(USER_LOG)
    top = names(report)[:3]
    assert {"driver", "PSU transient/power"} <= set(top)
    likely = {h.name: h.likelihood for h in report.hypotheses}
    assert likely["driver"] == likely["PSU transient/power"] == "high"
    assert likely["memory"] == "low"
    psu = report.hypotheses[names(report).index("PSU transient/power")]
    assert any("no stop code" in e and "§5.2" in e for e in psu.evidence)
    assert any("escalated" in e for e in psu.evidence)


def test_with_training_windows_power_leads_and_idle_hang_is_evidence_for_the_driver():
    report = diagnose_events(USER_LOG, busy=NIGHTS)
    loads = [e.load for i in report.incidents for e in i.events if e.id == 153]
    assert loads == ["load", "load", "load", "idle", "load", "load"]
    assert names(report)[0] == "PSU transient/power"
    driver = next(h for h in report.hypotheses if h.name == "driver")
    assert any("while idle" in e for e in driver.evidence)
    without = {h.name: h.score for h in diagnose_events(USER_LOG).hypotheses}
    with_busy = {h.name: h.score for h in report.hypotheses}
    assert with_busy["PSU transient/power"] > without["PSU transient/power"]


def test_noise_alone_creates_no_hypothesis():
    text = "".join([
        xml_event("2025-10-09T19:02:05", "Microsoft-Windows-Hyper-V-Hypervisor", 42),
        xml_event("2025-10-09T19:02:11", "Microsoft-Windows-Kernel-PnP", 219),
        xml_event("2025-10-10T19:02:11", "Microsoft-Windows-Kernel-PnP", 219),
        xml_event("2025-10-10T19:05:00", "Service Control Manager", 7036),
    ])
    report = diagnose_events(text)
    assert report.hypotheses == [] and report.incidents == []
    assert report.to_json() == {"incidents": [], "hypotheses": []}
    assert report.ignored == {"Hyper-V-Hypervisor 42": 1, "Kernel-PnP 219": 2}


def test_psu_hypothesis_links_to_the_planner_sizing():
    report = diagnose_events(USER_LOG, gpu_tgp_w=[250], cpu_power_w=88, psu_w=600)
    expected = size_psu([250], 88)
    psu = next(h for h in report.hypotheses if h.name == "PSU transient/power")
    sizing = next(e for e in psu.evidence if e.startswith("planner sizing"))
    assert f"{expected.required_atx2_w} W" in sizing and f"{expected.recommended_w} W ATX 3.1" in sizing
    assert any("your 600 W unit is below" in e for e in psu.evidence)  # 600 < 644: no transient margin
    swap = next(t for t in psu.tests if t.step.startswith("Swap the PSU"))
    assert f"{expected.recommended_w} W" in swap.step and swap.cost == "medium"
    assert report.psu == expected.to_json()
    bigger = diagnose_events(USER_LOG, gpu_tgp_w=[250], cpu_power_w=88, psu_w=850)
    score = {h.name: h.score for h in bigger.hypotheses}
    assert score["PSU transient/power"] < next(h.score for h in report.hypotheses if h.name == psu.name)


def test_psu_link_without_figures_is_honest():
    psu = next(h for h in diagnose_events(USER_LOG).hypotheses if h.name == "PSU transient/power")
    assert any("pass --gpu-tgp" in e for e in psu.evidence)
    assert not any(e.startswith("planner sizing") for e in psu.evidence)


def test_gpu_named_in_the_log_is_used_with_an_assumed_cpu():
    text = (xml_event("2025-10-13T02:05:13", "nvlddmkm", 153, message="GeForce GTX 1080 Ti: Error occurred on GPUID")
            + xml_event("2025-10-13T08:14:09", "Microsoft-Windows-Kernel-Power", 41, {"BugcheckCode": "0"}))
    report = diagnose_events(text)
    psu = next(h for h in report.hypotheses if h.name == "PSU transient/power")
    sizing = next(e for e in psu.evidence if e.startswith("planner sizing"))
    assert "GTX 1080 Ti the log names (250 W)" in sizing and "assumed generic CPU" in sizing
    driver = next(h for h in report.hypotheses if h.name == "driver")
    assert any("R580" in e for e in driver.evidence)  # Pascal's last driver branch (§5.4)


def test_stop_codes_point_at_their_cause():
    tdr = xml_event("2025-10-13T08:14:09", "Microsoft-Windows-Kernel-Power", 41, {"BugcheckCode": "278"})  # 0x116
    report = diagnose_events(tdr)
    assert names(report)[0] == "driver"
    assert "BugcheckCode 278 = 0x116 VIDEO_TDR_FAILURE" in report.incidents[0].events[0].summary
    assert "PSU transient/power" not in names(report)  # a recorded stop code is not a hard reset
    bsod = xml_event("2025-10-13T08:14:12", "Microsoft-Windows-WER-SystemErrorReporting", 1001,
                     {"param1": "0x0000001a (0x0000000000041792, 0xffffce0000000000)"})
    assert names(diagnose_events(bsod))[0] == "memory"


@pytest.mark.parametrize("provider,event_id,leader", [
    ("Microsoft-Windows-WHEA-Logger", 47, "memory"),
    ("Microsoft-Windows-WHEA-Logger", 19, "overclock"),
    ("Microsoft-Windows-WHEA-Logger", 18, "overclock"),
    ("Microsoft-Windows-WHEA-Logger", 17, "GPU hardware"),
    ("nvlddmkm", 13, "GPU hardware"),
])
def test_hardware_error_events_lead_to_their_hypothesis(provider, event_id, leader):
    report = diagnose_events(xml_event("2025-10-13T02:00:00", provider, event_id))
    assert names(report)[0] == leader


def test_bugcheck_beside_a_41_means_a_stop_code_was_recorded():
    text = (xml_event("2025-10-13T08:14:09", "Microsoft-Windows-Kernel-Power", 41)
            + xml_event("2025-10-13T08:14:30", "Microsoft-Windows-WER-SystemErrorReporting", 1001,
                        message="The computer has rebooted from a bugcheck. The bugcheck was: 0x00000116 (0x1, 0x2)."))
    report = diagnose_events(text)
    assert len(report.incidents) == 1
    assert names(report)[0] == "driver"
    assert "no stop code" not in report.incidents[0].events[0].summary


def test_power_button_and_dump_failures_adjust_the_picture():
    held = xml_event("2025-10-13T08:14:09", "Microsoft-Windows-Kernel-Power", 41,
                     {"BugcheckCode": "0", "PowerButtonTimestamp": "133995216000000000"})
    plain = xml_event("2025-10-13T08:14:09", "Microsoft-Windows-Kernel-Power", 41, {"BugcheckCode": "0"})
    score = lambda r, n: next(h.score for h in r.hypotheses if h.name == n)  # noqa: E731
    assert score(diagnose_events(held), "PSU transient/power") < score(diagnose_events(plain), "PSU transient/power")
    dump = plain + xml_event("2025-10-13T08:14:15", "volmgr", 161)
    report = diagnose_events(dump)
    driver = next(h for h in report.hypotheses if h.name == "driver")
    assert any("crash dump" in t.step for t in driver.tests)


def test_sleep_markers_make_events_idle():
    text = (xml_event("2025-10-13T01:00:00", "Microsoft-Windows-Kernel-Power", 42)
            + xml_event("2025-10-13T01:30:00", "nvlddmkm", 153)
            + xml_event("2025-10-13T02:00:00", "Microsoft-Windows-Power-Troubleshooter", 1))
    report = diagnose_events(text, busy=None)
    assert [e.load for i in report.incidents for e in i.events] == ["idle"]


def test_tests_are_ordered_by_cost():
    report = diagnose_events(USER_LOG, gpu_tgp_w=[250], cpu_power_w=88)
    for h in report.hypotheses:
        costs = [COST_ORDER[t.cost] for t in h.tests]
        assert costs == sorted(costs), h.name
        assert h.tests, h.name
    runbook = [COST_ORDER[t.cost] for t in report.runbook]
    assert runbook == sorted(runbook) and report.runbook[0].cost == "free"
    steps = [t.step for t in report.runbook]
    assert steps.index(next(s for s in steps if s.startswith("Clean driver"))) < steps.index(
        next(s for s in steps if s.startswith("Power-limit")))  # §5.3 order among free steps
    assert report.runbook[-1].cost == "high" and "GPU" in report.runbook[-1].step


def _ev(t: datetime, provider: str, event_id: int) -> LogEvent:
    info = lookup(provider, event_id)
    assert info is not None
    return LogEvent(time=t, info=info)


def test_grouping_gaps_and_boot_lookback():
    t0 = datetime(2025, 10, 13, 2, 0)
    events = [
        _ev(t0, "nvlddmkm", 153),
        _ev(t0 + timedelta(minutes=50), "Display", 4101),  # within the 1 h gap
        _ev(t0 + timedelta(hours=3), "nvlddmkm", 153),  # new incident
        _ev(t0 + timedelta(hours=14), "Kernel-Power", 41),  # boot record 11 h later: joins it
        _ev(t0 + timedelta(hours=14, minutes=1), "EventLog", 6008),  # same boot
        _ev(t0 + timedelta(hours=14, minutes=20), "nvlddmkm", 153),  # after a crash: new incident
        _ev(t0 + timedelta(days=3), "Kernel-Power", 41),  # far from anything: its own incident
    ]
    groups = group_incidents(events)
    assert [len(g.events) for g in groups] == [2, 3, 1, 1]
    assert isinstance(groups[0], IncidentGroup) and groups[1].has("hard_reset")


def test_every_hypothesis_carries_evidence_and_tests():
    kinds = [("nvlddmkm", 153, None), ("nvlddmkm", 13, None),
             ("Microsoft-Windows-Kernel-Power", 41, {"BugcheckCode": "0"}),
             ("Microsoft-Windows-Kernel-Power", 41, {"BugcheckCode": "292"}), ("EventLog", 6008, None),
             ("Microsoft-Windows-WHEA-Logger", 17, None), ("Microsoft-Windows-WHEA-Logger", 18, None),
             ("Microsoft-Windows-WHEA-Logger", 19, None), ("Microsoft-Windows-WHEA-Logger", 47, None),
             ("volmgr", 161, None), ("Microsoft-Windows-WER-SystemErrorReporting", 1001, {"param1": "0x000000ef"})]
    for i, first in enumerate(kinds):
        for second in kinds[i + 1:]:
            text = "".join(xml_event(f"2025-10-13T0{j}:00:00", p, e, d) for j, (p, e, d) in enumerate((first, second)))
            report = diagnose_events(text)
            assert report.hypotheses, (first, second)
            for h in report.hypotheses:
                assert h.evidence and h.tests, (first, second, h.name)
