"""Burn-in against hostile logs (issue 37.1-37.3, 33.4): a GPU that fell off the bus, cells that measure nothing, a run
that died or collapsed, and the duration and phases the verdict covers. None of these may pass."""

from __future__ import annotations

import functools
import re
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from burnin_logs import HEADER, START, metrics_csv, smi_log
from planner.doctor.burnin import SAFETY, check_burnin
from planner.doctor.smi import reasons_value
from planner.errors import InputError

COLUMNS = {name.split(" [")[0]: i for i, name in enumerate(HEADER.split(", "))}


def edit(log: bytes, change) -> bytes:
    """Apply `change(minute, gpu, cells)` to each data row (cells as written, a list to edit in place; return False
    to drop the row)."""
    out = []
    for line in log.decode().splitlines():
        if line.startswith("timestamp"):
            out.append(line)
            continue
        cells = line.split(", ")
        when = datetime.strptime(cells[0].split(".")[0], "%Y/%m/%d %H:%M:%S")
        if change((when - START).total_seconds() / 60, int(cells[1]), cells) is not False:
            out.append(", ".join(cells))
    return ("\n".join(out) + "\n").encode()


def by(report, criterion: str):
    return [c for c in report.checks if c.criterion == criterion]


# ---- 37.1 a GPU that fell off the bus -------------------------------------------------------------------
@pytest.mark.parametrize("text", ["[GPU requires reset]", "[Unknown Error]", "GPU is lost"])
def test_rows_of_a_gpu_that_no_longer_answers_fail_without_a_kernel_log(text):
    def lost(minute, gpu, cells):
        if gpu == 1 and minute >= 30:
            for col in ("temperature.gpu", "clocks.sm", "clocks_throttle_reasons.active", "power.draw",
                        "utilization.gpu"):
                cells[COLUMNS[col]] = text
    report = check_burnin(edit(smi_log(60, gpus=2), lost))
    assert report.verdict == "fail"
    [check] = by(report, "gpu_lost")
    assert check.gpu == "1" and check.time == "2026-12-05 21:30:00" and text in check.message


def test_a_device_handle_error_line_in_the_log_fails():
    lines = smi_log(60).decode().splitlines()
    lines.insert(400, "Unable to determine the device handle for GPU 0000:01:00.0: Unknown Error")
    report = check_burnin(("\n".join(lines) + "\n").encode())
    assert report.verdict == "fail" and by(report, "gpu_lost")[0].gpu == "0000:01:00.0"


@pytest.mark.parametrize("back", [None, 45])
def test_a_gpu_that_stops_appearing_while_the_others_go_on_fails(back):
    def drop(minute, gpu, cells):
        return not (gpu == 1 and minute >= 30 and (back is None or minute < back))
    report = check_burnin(edit(smi_log(60, gpus=2), drop))
    assert report.verdict == "fail"
    [check] = by(report, "gpu_missing")
    assert check.gpu == "1" and check.status == "fail" and check.time.startswith("2026-12-05 21:29:55")


# ---- 37.2 what was never measured ---------------------------------------------------------------------------
@pytest.mark.parametrize("column, text, criterion", [
    ("temperature.gpu", "[N/A]", "temperature"),
    ("temperature.gpu", "[Not Supported]", "temperature"),
    ("temperature.gpu", "-40", "temperature"),
    ("clocks_throttle_reasons.active", "[N/A]", "throttle"),
    ("clocks_throttle_reasons.active", "[Not Supported]", "throttle"),
    ("clocks.sm [MHz]", "0 MHz", "clock_stable"),
])
def test_a_safety_criterion_without_data_is_not_checked_and_not_a_pass(column, text, criterion):
    def blank(minute, gpu, cells):
        cells[COLUMNS[column.split(" [")[0]]] = text
    report = check_burnin(edit(smi_log(60), blank))
    assert report.verdict == "not_checked"
    assert {c.status for c in by(report, criterion)} == {"not_checked"}
    assert criterion in report.headline and "not a pass" in report.headline


@pytest.mark.parametrize("written", ["64", "0000000000000040", "40", "HW Thermal Slowdown",
                                     "SW Power Cap | HW Thermal Slowdown"])
def test_throttle_reasons_in_decimal_without_0x_or_as_text_fail(written):
    def hot(minute, gpu, cells):
        if minute >= 40:
            cells[COLUMNS["clocks_throttle_reasons.active"]] = written
    report = check_burnin(edit(smi_log(60), hot))
    assert report.verdict == "fail" and by(report, "throttle")[0].status == "fail"


def test_reason_cells_read_as_bitmasks():
    assert reasons_value("64") == reasons_value("0x40") == reasons_value("HW Thermal Slowdown") == 0x40
    assert reasons_value("0000000000000004") == 0x4 and reasons_value("Not Active") == 0
    assert reasons_value("[N/A]") is None and reasons_value("[Not Supported]") is None and reasons_value("?") is None


def test_a_duplicated_temperature_column_uses_the_hotter_reading():
    log = smi_log(60).decode().replace(HEADER, HEADER + ", temperature.gpu")
    lines = [ln if ln.startswith("timestamp") else ln + ", 70" for ln in log.splitlines()]  # the copy says 70 C

    def hot(minute, gpu, cells):
        if minute >= 40:
            cells[COLUMNS["temperature.gpu"]] = "95"
    report = check_burnin(edit(("\n".join(lines) + "\n").encode(), hot))
    assert report.verdict == "fail" and by(report, "temperature")[0].numbers["max_temp_c"] == 95
    assert any("appears 2 times" in n for n in report.notes)


@functools.cache
def _clean() -> bytes:
    return smi_log(60, gpus=2)


MALFORMED = ["[N/A]", "[Not Supported]", "", "N/A", "-40", "garbage", "[Unknown Error]", "nan", "1e999", "-1",
             "[GPU requires reset]", "\"\"", "0x", "Unknown"]
SAFETY_COLUMNS = ["temperature.gpu", "clocks.sm", "clocks_throttle_reasons.active"]
# (column, text) pairs that measure nothing there; "0" is a reading for the reasons (none active), not for a clock
CELLS = st.one_of(st.tuples(st.sampled_from(SAFETY_COLUMNS), st.sampled_from(MALFORMED)),
                  st.tuples(st.just("clocks.sm"), st.sampled_from(["0 MHz", "0", "50 MHz"])),
                  st.tuples(st.just("temperature.gpu"), st.sampled_from(["0", "255", "-273"])))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hits=st.lists(st.tuples(st.integers(0, 720), st.integers(0, 1), CELLS), min_size=1, max_size=4))
def test_property_random_malformed_safety_cells_never_pass(hits):
    rows = {(i * 5 / 60, g): cell for i, g, cell in hits}
    placed = []

    def spoil(minute, gpu, cells):
        for (m, g), (col, text) in rows.items():
            if g == gpu and abs(m - minute) < 1e-6:
                cells[COLUMNS[col]] = text
                placed.append(text)
    try:
        report = check_burnin(edit(_clean(), spoil))
    except InputError:
        return  # refused in one line: not a pass either
    assert placed
    assert report.verdict != "pass", report.headline
    assert report.verdict == "fail" or any(c.status == "not_checked" and c.criterion in SAFETY for c in report.checks)


# ---- 37.3 a run that died or collapsed ---------------------------------------------------------------------
def test_utilisation_at_zero_for_two_hours_after_the_first_is_not_a_pass():
    report = check_burnin(smi_log(180, tweak=lambda m, g, row: row.update(util=0) if m > 60 else None))
    assert report.verdict != "pass"
    [check] = by(report, "load_held")
    assert check.status == "incomplete" and check.numbers["idle_minutes"] == pytest.approx(120, abs=0.5)


def test_the_sm_clock_at_half_in_two_samples_of_three_fails():
    def halve(minute, gpu, row):
        if round(minute * 12) % 3:
            row["clock"] = 1350
    report = check_burnin(smi_log(60, tweak=halve))
    assert report.verdict == "fail"
    [dips] = by(report, "clock_dips")
    assert dips.numbers["lowest_mhz"] == 1350 and dips.numbers["samples_below"] > 0.6 * dips.numbers["of"]


@pytest.mark.parametrize("low", [0.02, 0.0])
def test_throughput_collapsed_in_the_middle_of_the_run_fails(low):
    rows = metrics_csv(120, start_min=60).decode().splitlines()
    out = [rows[0]]
    for i, line in enumerate(rows[1:]):
        cells = line.split(",")
        if 24 <= i < 96:  # the middle 60 %
            cells[-1] = f"{float(cells[-1]) * low:.0f}"
        out.append(",".join(cells))
    metrics = ("\n".join(out) + "\n").encode()
    report = check_burnin(smi_log(180), metrics=metrics)
    assert report.verdict == "fail"
    [tp] = by(report, "throughput")
    assert tp.status == "fail" and tp.numbers["lowest_tenth_median"] <= 0.03 * tp.numbers["first_fifth_median"]


def test_a_logger_restart_after_a_110_s_hole_is_reported_and_not_a_pass():
    lines = smi_log(60).decode().splitlines()
    cut = 1 + 30 * 12  # the row at minute 30
    restarted = lines[:cut] + [HEADER] + lines[cut + 22:]  # 110 s of rows gone, the header written again
    report = check_burnin(("\n".join(restarted) + "\n").encode())
    assert report.verdict == "incomplete"
    [check] = by(report, "logger_restart")
    assert check.status == "incomplete" and check.numbers["hole_seconds"] == pytest.approx(115, abs=1)


def test_timestamps_near_year_9999_are_refused_in_one_line_not_an_overflow():
    log = smi_log(10).decode()
    with pytest.raises(InputError, match="timestamp"):
        check_burnin(re.sub(r"^2026/12/05 2\d", "9999/12/31 23", log, flags=re.M).encode())
    one_row = log.replace("2026/12/05 21:05:00", "9999/12/31 23:59:59", 1).encode()
    assert check_burnin(one_row).verdict == "incomplete"  # that row skipped and counted; ten minutes are too few


# ---- 33.4 duration and phases ----------------------------------------------------------------------------------
def test_720_samples_every_5_s_are_an_hour():
    log = smi_log(59.99)  # 720 samples, 21:00:00 to 21:59:55
    assert log.decode().splitlines()[-1].startswith("2026/12/05 21:59:55")
    report = check_burnin(log)
    [duration] = by(report, "duration")
    assert duration.status == "pass" and duration.numbers["loaded_minutes"] == 60.0
    assert report.verdict == "pass" and "training phase was not given" in report.headline


def test_one_verdict_covers_both_phases_or_says_which_is_missing():
    both = check_burnin(smi_log(180), metrics=metrics_csv(120, start_min=60))
    assert both.verdict == "pass" and by(both, "phases")[0].status == "pass"
    assert both.phases["training"]["from"] == (START + timedelta(minutes=60)).isoformat(sep=" ")
    no_stress = check_burnin(smi_log(120), metrics=metrics_csv(120))  # training from the first minute
    assert no_stress.verdict == "incomplete"
    assert [c.numbers["missing"] for c in by(no_stress, "phases")] == ["stress"]
    no_telemetry = check_burnin(smi_log(90), metrics=metrics_csv(120, start_min=60))  # the logger stopped early
    assert no_telemetry.verdict == "incomplete"
    assert [c.numbers["missing"] for c in by(no_telemetry, "phases")] == ["training telemetry"]


def test_cr_only_line_ends_and_quoted_cells_are_read():
    assert check_burnin(smi_log(60).decode().replace("\n", "\r").encode()).verdict == "pass"
    quoted = "\n".join(ln if ln.startswith("timestamp") else ", ".join(f'"{c}"' for c in ln.split(", "))
                       for ln in smi_log(60).decode().splitlines()) + "\n"
    report = check_burnin(quoted.encode())
    assert report.verdict == "pass" and [g["gpu"] for g in report.gpus] == ["0"]


def test_metrics_that_do_not_overlap_the_nvidia_smi_log_are_not_a_pass():
    report = check_burnin(smi_log(60), metrics=metrics_csv(120, start_min=24 * 60))  # the next day's run
    assert report.verdict == "incomplete"
    assert [c.numbers["missing"] for c in by(report, "phases")] == ["overlap"]
