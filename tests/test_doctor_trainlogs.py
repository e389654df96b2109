"""`doctor metrics` and the burn-in read training logs through the reader `calibrate` uses (issue 32 item 4, issue 33,
issue 37 item 8): every real training log is read, the NaN log is the NaN finding, step times are throughput."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.doctor.burnin import read_training_metrics
from planner.doctor.diagnose import diagnose_metrics
from planner.doctor.metrics_io import ALIASES, read_metrics
from planner.perf import trainlog

REAL = Path(__file__).parent / "data" / "real" / "training"
LOGS = sorted(p.name for p in REAL.iterdir() if p.suffix in (".log", ".json"))


@pytest.mark.parametrize("name", LOGS)
def test_every_real_training_log_is_read_by_the_doctor(name: str) -> None:
    s = read_metrics(REAL / name)
    assert s.total_rows >= 5 and s.format.endswith(("stdout", "trainer_state"))
    assert "loss" in s.roles or "throughput" in s.roles


def test_the_nan_log_is_the_nan_finding_and_steps_read_in_order() -> None:
    report = diagnose_metrics(REAL / "nanogpt_issue215_V100_nan.log")
    nan = [f for f in report.findings if f.kind == "nan_loss"]
    assert nan and (nan[0].from_step, nan[0].to_step) == (3010, 3060)
    assert all(f.from_step <= f.to_step for f in report.findings)


def test_a_step_time_is_throughput_in_steps_per_second() -> None:
    s = read_metrics(REAL / "nanogpt_issue110_8xA100.log")
    tp = [v for v in s.values["throughput"] if v == v]
    assert s.roles["throughput"] == "step_time_ms (as steps/s)"
    assert sorted(tp)[len(tp) // 2] == pytest.approx(1000 / 562.66, rel=0.01)


def test_trainer_state_eval_entries_are_not_training_rows() -> None:
    s = read_metrics(REAL / "hf_trainer_state_lora_imdb_distilbert.json")
    assert s.total_rows == 18 and list(s.values["loss"])[0] == pytest.approx(0.6899)


def test_trainer_stdout_eval_dicts_are_not_training_rows() -> None:
    s = read_metrics(REAL / "hf_trainer_stdout_sentence_transformers_pr2449.log")
    assert s.format == "Hugging Face Trainer stdout" and s.total_rows == 10
    assert list(s.values["loss"])[-1] == pytest.approx(1.5126)


def test_one_vocabulary_every_calibrate_rate_is_doctor_throughput() -> None:
    for name, _unit, _kind in trainlog.RATE_NAMES:
        assert ALIASES.get(name) == "throughput", name


def test_the_burn_in_reads_the_logs_calibrate_reads(tmp_path) -> None:
    """Issue 37 item 8: the burn-in refused Lightning, step-time and TensorBoard logs that calibrate reads."""
    lightning = tmp_path / "metrics.csv"
    lightning.write_text("epoch,step,train_loss,throughput/tokens_per_sec\n"
                         + "".join(f"0,{i},{3 - i / 100},{20000 + i % 3}\n" for i in range(30)))
    steptime = tmp_path / "steps.csv"
    steptime.write_text("step,loss,step_time_ms\n" + "".join(f"{i},2.0,{250 + i % 3}\n" for i in range(30)))
    tb = tmp_path / "run-a-tag-train_step_time.csv"
    tb.write_text("Wall time,Step,Value\n" + "".join(f"{1.7e9 + 3 * i},{100 * i},0.25\n" for i in range(30)))
    for log, expect in ((lightning, 20000), (steptime, 4.0), (tb, 4.0)):
        s = read_training_metrics(log)
        tp = sorted(v for v in s.values["throughput"] if v == v)
        assert tp[len(tp) // 2] == pytest.approx(expect, rel=0.02), log.name
