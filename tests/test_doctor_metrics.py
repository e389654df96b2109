"""Doctor metrics: each weak signal is found in a crafted series with its step range; a clean run yields none."""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from planner.doctor import diagnose_metrics
from planner.doctor.metrics_io import read_metrics
from planner.errors import InputError

DATA = Path(__file__).parent / "data" / "doctor"
START = datetime(2025, 10, 12, 22, 0)


def clean_rows(n: int = 200, gpus: int = 2, every: int = 10, seed: int = 7) -> list[dict]:
    """A healthy run: loss decays, throughput and utilisation steady, cards cool and balanced."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        row = {
            "step": (i + 1) * every,
            "time": (START + timedelta(seconds=30 * i)).isoformat(),
            "loss": 2.0 + 8.0 * math.exp(-i / 60) + rng.gauss(0, 0.01),
            "tokens_per_s": 50_000 * (1 + rng.gauss(0, 0.01)),
            "grad_norm": 1.0 + rng.gauss(0, 0.05),
        }
        for g in range(gpus):
            row[f"gpu{g}_util"] = 97 + rng.gauss(0, 1)
            row[f"gpu{g}_temp"] = 72 + rng.gauss(0, 1)
        rows.append(row)
    return rows


def as_csv(rows: list[dict]) -> bytes:
    buf = io.StringIO()
    fields = list(dict.fromkeys(k for r in rows for k in r))
    writer = csv.DictWriter(buf, fieldnames=fields)
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()


def as_jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def kinds(report) -> list[str]:
    return [f.kind for f in report.findings]


def only(report, kind: str):
    found = [f for f in report.findings if f.kind == kind]
    assert found, f"no {kind} in {kinds(report)}"
    return found


@pytest.mark.parametrize("encode", [as_csv, as_jsonl])
def test_clean_run_yields_no_findings(encode):
    report = diagnose_metrics(encode(clean_rows()), expected_steps=2000)
    assert report.findings == []
    assert report.to_json() == {"findings": []}
    assert report.rows == 200 and (report.first_step, report.last_step) == (10, 2000)
    assert report.columns["throughput"] == "tokens_per_s" and report.columns["gpu1_temp"] == "gpu1_temp"


def test_nan_loss():
    rows = clean_rows()
    for r in rows[150:]:
        r["loss"] = float("nan")
    found = only(diagnose_metrics(as_jsonl(rows)), "nan_loss")
    assert (found[0].from_step, found[0].to_step) == (1510, 2000)
    assert found[0].severity == "problem" and "never recovered" in found[0].message
    rows = clean_rows()
    rows[100]["loss"] = "inf"  # a CSV cell, not a number literal
    assert only(diagnose_metrics(as_csv(rows)), "nan_loss")[0].from_step == 1010


def test_missing_loss_cells_are_not_nan():
    rows = clean_rows()
    for r in rows[::7]:
        r["loss"] = ""
    assert "nan_loss" not in kinds(diagnose_metrics(as_csv(rows)))


def test_divergence():
    rows = clean_rows()
    for i, r in enumerate(rows[120:], 120):
        r["loss"] = 2.4 + 0.1 * (i - 120)  # climbs away from ~2.5
    found = only(diagnose_metrics(as_csv(rows)), "divergence")[0]
    assert found.severity == "problem"
    assert 1210 <= found.from_step <= 1300 and found.to_step == 2000


def test_single_loss_spike_is_not_divergence():
    rows = clean_rows()
    rows[100]["loss"] = 50.0
    assert "divergence" not in kinds(diagnose_metrics(as_csv(rows)))


def test_loss_plateau():
    rows = clean_rows()
    rng = random.Random(3)
    for r in rows[80:]:
        r["loss"] = 4.2 + rng.gauss(0, 0.01)  # stuck from row 80 on
    found = only(diagnose_metrics(as_csv(rows)), "loss_plateau")[0]
    assert found.severity == "warning"
    assert 810 <= found.from_step <= 1000 and found.to_step == 2000
    assert re.search(r"flat at about 4\.(19|20)", found.message)


def test_throughput_drop_and_slow_decline():
    rows = clean_rows()
    for r in rows[100:130]:
        r["tokens_per_s"] = 20_000.0
    found = only(diagnose_metrics(as_csv(rows)), "throughput_drop")
    assert [(f.from_step, f.to_step, f.severity) for f in found] == [(1010, 1300, "problem")]
    rows = clean_rows()
    for i, r in enumerate(rows):
        r["tokens_per_s"] = 50_000 * (1 - 0.3 * i / len(rows))  # slides to -30 % by the end
    decline = only(diagnose_metrics(as_csv(rows)), "throughput_drop")
    assert decline[0].to_step == 2000 and "declined" in decline[0].message


def test_utilisation_dips_point_at_the_input_pipeline():
    rows = clean_rows(gpus=0)
    for r in rows:
        r["gpu_util"] = 97.0
    for r in rows[60:64]:
        r["gpu_util"] = 35.0
    found = only(diagnose_metrics(as_csv(rows)), "utilisation_dip")
    assert [(f.from_step, f.to_step) for f in found] == [(610, 640)]
    assert "input pipeline" in found[0].message
    for r in rows:
        r["gpu_util"] = 55.0  # starved all along
    starved = only(diagnose_metrics(as_csv(rows)), "utilisation_dip")
    assert len(starved) == 1 and "only about 55 %" in starved[0].message


def test_thermal_throttling_with_and_without_throughput_loss():
    rows = clean_rows(gpus=0)
    for r in rows:
        r["gpu_temp_c"] = 74.0
    for r in rows[150:170]:
        r["gpu_temp_c"] = 84.0
    warm = only(diagnose_metrics(as_csv(rows)), "thermal_throttling")
    assert [(f.from_step, f.to_step, f.severity) for f in warm] == [(1510, 1700, "warning")]
    for r in rows[150:170]:
        r["tokens_per_s"] = 42_000.0  # -16 %: clocks pulled back
    hot = only(diagnose_metrics(as_csv(rows)), "thermal_throttling")
    assert hot[0].severity == "problem" and "throughput" in hot[0].message
    assert "thermal_throttling" not in kinds(diagnose_metrics(as_csv(rows), temp_limit_c=90))


def test_imbalance_between_gpus():
    rows = clean_rows(gpus=2)
    for r in rows[40:]:
        r["gpu1_util"] = 60.0
    found = only(diagnose_metrics(as_csv(rows)), "gpu_imbalance")
    assert found[0].from_step == 410 and "GPU1 lags" in found[0].message
    rows = clean_rows(gpus=2)
    for r in rows:
        r["gpu1_temp"] = 90.0
    hot = [f for f in diagnose_metrics(as_csv(rows), temp_limit_c=95).findings if f.kind == "gpu_imbalance"]
    assert len(hot) == 1 and "GPU1 runs hotter" in hot[0].message


def test_run_stopped_without_final_step():
    rows = clean_rows()[:120]
    found = only(diagnose_metrics(as_csv(rows), expected_steps=2000), "run_stopped")[0]
    assert (found.from_step, found.to_step, found.severity) == (1200, 1200, "problem")
    assert "step 1200 of 2000" in found.message and "2025-10-12T22:59:30" in found.message
    for r in rows:
        r["total_steps"] = 2000  # the expected total can come from the log itself
    assert "run_stopped" in kinds(diagnose_metrics(as_csv(rows)))
    assert "run_stopped" not in kinds(diagnose_metrics(as_csv(clean_rows()), expected_steps=2000))


def test_step_gap_restart_and_logging_gap():
    rows = clean_rows()
    gap = rows[:100] + rows[130:]  # steps 1000 -> 1310
    found = only(diagnose_metrics(as_csv(gap)), "step_gap")[0]
    assert (found.from_step, found.to_step) == (1000, 1310)
    restarted = rows[:100] + [dict(r) for r in rows[80:]]
    found = only(diagnose_metrics(as_csv(restarted)), "run_restarted")[0]
    assert (found.from_step, found.to_step) == (810, 1000)  # in order, though the step went back
    stalled = clean_rows()
    for r in stalled[100:]:
        r["time"] = (datetime.fromisoformat(r["time"]) + timedelta(hours=2)).isoformat()
    found = only(diagnose_metrics(as_csv(stalled)), "logging_gap")[0]
    assert (found.from_step, found.to_step) == (1000, 1010) and "120 min" in found.message


def test_gradient_spike():
    rows = clean_rows()
    rows[90]["grad_norm"] = 40.0
    found = only(diagnose_metrics(as_jsonl(rows)), "grad_spike")
    assert [(f.from_step, f.to_step) for f in found] == [(910, 910)]


def test_jsonl_with_nested_keys_and_late_columns():
    rows = [{"step": i, "train": {"loss": 3.0 - i * 0.01}} for i in range(1, 50)]
    rows += [{"step": i, "train": {"loss": 2.5 - i * 0.001}, "gpu_util": 40.0} for i in range(50, 100)]
    series = read_metrics(as_jsonl(rows))
    assert series.roles["loss"] == "train/loss"
    util = series.column("util")
    assert util is not None and len(util) == 99 and math.isnan(util[0]) and util[-1] == 40.0


def test_fixture_files_parse(tmp_path):
    report = diagnose_metrics(DATA / "troubled-run.csv", expected_steps=3000)
    found = set(kinds(report))
    assert {"thermal_throttling", "throughput_drop", "utilisation_dip", "gpu_imbalance", "run_stopped"} <= found
    hot_dip = [f for f in report.findings if f.kind == "utilisation_dip" and f.message.startswith("GPU1")][-1]
    assert "throttling rather than the input pipeline" in hot_dip.message  # GPU1 was at 86 °C then
    assert diagnose_metrics(DATA / "clean-run.jsonl").findings == []


@pytest.mark.parametrize("content,reason", [
    (b"", "empty"),
    (b"step,epoch\n1,0\n2,0\n", "no metric columns"),
    (b"step,loss\n1,abc\n", "not a number"),
    (b'{"step": 1, "loss": 2.0}\n{"step": 2, "loss": \n', "not valid JSON"),
    (b'[{"step": 1, "loss": 2.0}]\n', "JSON array"),
    (b"step,loss\n", "no metric rows"),
    (b'{"step": 1}\n["x"]\n', "not a JSON object"),
    (b"step,loss\n1,2.0,9,9\n", "fields"),
    (b"step,time,loss\n1,yesterday,2.0\n", "neither ISO nor epoch"),
    (b"\x00\x01\x02\x00\x00\x00", "binary"),
])
def test_bad_metric_files_raise_input_error(content, reason):
    with pytest.raises(InputError) as err:
        diagnose_metrics(content)
    assert reason.lower() in str(err.value).lower()


def test_bad_expected_steps():
    with pytest.raises(InputError, match="positive"):
        diagnose_metrics(as_csv(clean_rows()), expected_steps=0)


@pytest.mark.parametrize("seed", range(10))
def test_a_noisy_loss_that_falls_10_percent_is_no_plateau(seed: int) -> None:
    """Issue 33: a plateau warning fired on a loss that fell 10 % (per-step noise of 5 %, as nanoGPT prints it)."""
    rng = random.Random(seed)
    n = 200
    text = "step,loss\n" + "".join(f"{i},{3.0 * (1 - 0.10 * i / n) * (1 + rng.gauss(0, 0.05)):.4f}\n" for i in range(n))
    assert "loss_plateau" not in kinds(diagnose_metrics(text.encode()))
