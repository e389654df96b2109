"""A calibrated log fills the workload profile (issue 32 item 1): what the log states (tokens per step, sequence
length, batch, model size, peak memory) is offered by `planner calibrate`, filled into the profile's unset fields
with `--save-profile`, never over a stored value; the reading itself uses a stated tokens per step. Real logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.perf.calibration_log import read_log
from planner.perf.trainlog import note_settings
from planner.service import profile as P

runner = CliRunner()
REAL = Path(__file__).parent / "data" / "real" / "training"


def run(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("line, expected", [
    ("tokens per iteration will be: 491,520", {"tokens_per_step": 491520.0}),
    ("> tokens per iteration will be: 262,144", {"tokens_per_step": 262144.0}),
    ("breaks down as: 4 grad accum steps * 2 processes * 32 batch size * 256 max seq len",
     {"accumulation": 4.0, "processes": 2.0, "batch": 32.0, "seq_len": 256.0}),
    ("number of parameters: 10.65M", {"model_params": 10.65e6}),
    ("> 2023-03-22 09:20:01 number of parameters: 123.59M", {"model_params": 123.59e6}),
    (" > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 1917599744", {}),  # one rank's share
    ("Trainable parameters: 0.041% (1.311M/3212.750M)", {"trainable_params": 1.311e6, "model_params": 3212.75e6}),
    ("  seq_length ...................................... 4096", {"seq_len": 4096.0}),
    ("  micro_batch_size ................................ 2", {"batch": 2.0}),
    ("iter 10: loss 3.2202, time 893.76ms, mfu 16.68%", {}),  # a training line states no setting
    ("number of parameters: 0M", {}),  # not positive: ignored
])
def test_settings_lines(line, expected) -> None:
    got: dict[str, float] = {}
    note_settings(line, got)
    assert got == pytest.approx(expected)


def test_peak_memory_is_the_largest_stated() -> None:
    got: dict[str, float] = {}
    for gb in ("9.707", "10.588", "10.1"):
        note_settings(f"Iter 10: Train loss 2.6, Tokens/sec 161.3, Peak mem {gb} GB", got)
    assert got["peak_mem_gib"] == pytest.approx(10.588e9 / 2**30)


def test_real_logs_state_what_they_print() -> None:
    mlx = read_log(REAL / "mlxlm_pr330_A100_cuda.log")
    assert mlx.stated["model_params"] == pytest.approx(3212.75e6) and mlx.stated["trainable_params"] == 1.311e6
    assert mlx.stated["peak_mem_gib"] == pytest.approx(10.588e9 / 2**30)
    assert mlx.unit == "tokens/s" and "stated" not in mlx.how  # read from its own tokens/s column
    assert read_log(REAL / "megatron_issue756_mixtral_16xH100.log").stated == {"global_batch": 128.0}
    assert read_log(REAL / "nanogpt_issue110_8xA100.log").stated == {}


def test_a_stated_tokens_per_step_turns_step_time_into_tokens_per_second() -> None:
    """nanoGPT issue 466: 262,144 tokens per iteration stated, 0.02964 steps/s by hand -> 7,771 tokens/s."""
    r = read_log(REAL / "nanogpt_issue466_2xTITANXp_stats.log")
    assert r.unit == "tokens/s" and r.median == pytest.approx(0.02964 * 262144, rel=0.05)
    assert "stated in the log" in r.how
    plain = read_log(REAL / "nanogpt_issue466_2xTITANXp.log")  # the same lines without the settings line
    assert plain.unit == "steps/s" and r.median == pytest.approx(plain.median * 262144, rel=1e-9)
    flag = read_log(REAL / "nanogpt_issue466_2xTITANXp_stats.log", tokens_per_step=131072)  # a flag wins
    assert flag.median == pytest.approx(r.median / 2) and "stated" not in flag.how


def test_calibrate_offers_then_fills_only_unset_fields(home) -> None:
    log = str(REAL / "mlxlm_pr330_A100_cuda.log")
    r = run("calibrate", log, "--gpu", "A100 SXM4 80GB", "--json")
    assert r.exit_code == 0, r.output
    offer = json.loads(r.stdout)["profile"]
    assert offer["saved"] is False and offer["stated"]["model_params"] == pytest.approx(3212.75e6)
    assert any("1.31 M" in n for n in offer["notes"])  # LoRA: the trained share is said, the size is the model's
    assert not (home / "profile.json").exists()  # offered, not written
    assert run("profile", "set", "--model-params", "15e6", "--runs", "8").exit_code == 0
    r = run("calibrate", log, "--gpu", "A100 SXM4 80GB", "--save-profile", "--json")
    assert r.exit_code == 0, r.output
    block = json.loads(r.stdout)["profile"]
    assert block["saved"] is True and block["filled"] == {"run_vram_gb": pytest.approx(9.86, abs=0.01)}
    assert block["kept"]["model_params"] == {"profile": 15e6, "log": pytest.approx(3212.75e6)}
    stored = json.loads((home / "profile.json").read_text())
    assert stored["model_params"] == 15e6 and stored["runs"] == 8  # the user's values stand
    assert stored["run_vram_gb"] == pytest.approx(9.86, abs=0.01)
    assert stored["run_vram_source"] == "measured: peak memory stated in mlxlm_pr330_A100_cuda.log"
    text = run("calibrate", log, "--gpu", "A100 SXM4 80GB", "--save-profile")
    assert "kept your model_params" in text.stdout and "nothing to fill" in text.stdout


def test_save_profile_with_the_flags_given_and_a_multi_gpu_batch(home) -> None:
    r = run("calibrate", str(REAL / "nanogpt_issue466_2xTITANXp_stats.log"), "--gpu", "Titan Xp", "--seq-len", "512",
            "--save-profile", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["profile"]["filled"] == {"seq_len": 512, "tokens_per_step": 262144}
    shown = json.loads(run("profile", "show", "--json").stdout)["profile"]
    assert shown["seq_len"] == 512 and shown["tokens_per_step"] == 262144
    # Megatron's global batch is over 16 GPUs: said, not stored as the user's batch
    r = run("calibrate", str(REAL / "megatron_issue756_mixtral_16xH100.log"), "--gpu", "H100 SXM", "--save-profile")
    assert r.exit_code == 0, r.output
    assert "global batch of 128" in r.stdout and "profile is unchanged" in r.stdout
    assert "batch" not in json.loads(run("profile", "show", "--json").stdout)["profile"]


def test_offer_splits_tokens_over_the_stated_processes() -> None:
    offer = P.offer_from_log({"tokens_per_step": 491520.0, "processes": 8.0, "peak_mem_gib": 30.0}, "x.log")
    assert offer.values == {"tokens_per_step": 61440}  # per GPU; a peak memory of 8 processes is not one run's
    assert any("8 processes" in n for n in offer.notes)
    prof, filled, kept = P.fill_from_log(None, P.offer_from_log({"seq_len": 256.0, "batch": 32.0}, "x.log"))
    assert filled == {"seq_len": 256, "batch": 32, "tokens_per_step": 8192} and not kept
    assert prof.tokens_per_step == 8192
