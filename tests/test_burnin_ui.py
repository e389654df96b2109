"""The Doctor tab's burn-in check in AppTest: a clean hour passes, a 91 C thermal slowdown fails, bad input is a message."""

from __future__ import annotations

from burnin_logs import smi_log
from helpers_app import open_tab, run, _isolated  # noqa: F401  (_isolated: autouse fixture)

XID = b"2026-12-05T21:42:10+0000 rig kernel: NVRM: Xid (PCI:0000:01:00): 79, pid=1, name=python3, GPU has fallen off the bus.\n"


def doctor_with(smi: bytes, kernel: bytes | None = None):
    at = open_tab(run(), "Doctor")
    at.file_uploader(key="burnin_smi_file").upload("burnin-smi.csv", smi, "text/csv")
    if kernel is not None:
        at.file_uploader(key="burnin_events_file").upload("burnin-kernel.log", kernel, "text/plain")
    return run(at).tabs[5]


def evidence(doctor):
    return next(df.value for df in doctor.dataframe if "Evidence" in df.value.columns)


def test_a_clean_hour_passes():
    doctor = doctor_with(smi_log(60))
    assert any("pass" in s.value for s in doctor.success)
    frame = evidence(doctor)
    assert set(frame["Criterion"]) >= {"duration", "throttle", "temperature", "clock_stable", "events"}


def test_a_thermal_slowdown_at_91_c_fails_with_its_evidence():
    def hot(m, g, row):
        if m >= 40:
            row.update(temp=91, reasons=0x48)
    doctor = doctor_with(smi_log(60, tweak=hot))
    assert any("fail" in e.value for e in doctor.error)
    frame = evidence(doctor)
    row = frame[frame["Criterion"] == "throttle"].iloc[0]
    assert "fail" in row["Result"] and "91 °C" in row["Evidence"] and row["When"] == "2026-12-05 21:40:00"


def test_an_xid_in_the_kernel_log_fails():
    doctor = doctor_with(smi_log(60), XID)
    frame = evidence(doctor)
    assert "fail" in frame[frame["Criterion"] == "events"].iloc[0]["Result"]


def test_a_short_log_is_incomplete_and_bad_input_is_a_message():
    assert any("incomplete" in w.value for w in doctor_with(smi_log(10)).warning)
    doctor = doctor_with(b"hello,world\n1,2\n")
    assert any("not an nvidia-smi" in e.value for e in doctor.error)


def test_the_burn_in_is_judged_once_across_reruns(monkeypatch):
    import planner.doctor.burnin as burnin

    calls = []
    real = burnin.judge
    monkeypatch.setattr(burnin, "judge", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_tab(run(), "Doctor")
    at.file_uploader(key="burnin_smi_file").upload("burnin-smi.csv", smi_log(60), "text/csv")
    at = run(at)
    at.number_input(key="doc_steps").set_value(1000)  # a keystroke elsewhere on the tab
    at = run(at)
    at.text_area(key="doc_busy").input("2026-12-05T21:00/2026-12-05T22:00")
    doctor = run(at).tabs[5]
    assert len(calls) == 1
    assert any("pass" in s.value for s in doctor.success)


def test_an_unmeasured_temperature_is_not_a_pass_on_the_page():
    text = smi_log(60).decode().splitlines()
    cells = text[5].split(", ")
    cells[3] = "[N/A]"
    text[5] = ", ".join(cells)
    doctor = doctor_with(("\n".join(text) + "\n").encode())
    assert not doctor.success
    assert any("not measured" in w.value and "temperature" in w.value for w in doctor.warning)


def test_the_plan_and_check_tabs_point_to_the_burn_in_of_the_build_on_show():
    plan = run()
    assert any("planner burnin --gpu '" in c.value for c in plan.caption)
    at = open_tab(run(), "Check my build")
    gpu = at.selectbox(key="chk_gpu")
    gpu.set_value(gpu.options[1])
    at.number_input(key="chk_gpus").set_value(2)
    at = run(at)
    assert any("planner burnin --gpu '2x " in c.value for c in at.caption)


def test_recommend_text_points_to_the_burn_in():
    from typer.testing import CliRunner

    from planner.cli import app

    result = CliRunner().invoke(app, ["recommend", "--budget", "4000"])
    assert result.exit_code == 0, result.output
    line = next(ln for ln in result.stdout.splitlines() if "planner burnin" in ln)
    assert "planner burnin --gpu '" in line and "planner doctor burnin" in " ".join(result.stdout.split())
