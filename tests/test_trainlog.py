"""The one training-log reader: real public logs of six trainers read within 5 % of the figure worked out by hand
(tests/data/real/training/PROVENANCE.md), the Trainer's evaluation time kept out, odd figures warned about or
refused with the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.errors import InputError
from planner.perf import trainlog as tl
from planner.perf.calibration_log import read_log

REAL = Path(__file__).parent / "data" / "real" / "training"

# file -> (trainer, unit, hand figure from PROVENANCE.md, extra reader input)
HAND = {
    "nanogpt_issue110_8xA100.log": ("nanoGPT", "steps/s", 1.7773, {}),
    "nanogpt_issue178_A100_mfu.log": ("nanoGPT", "steps/s", 1.1180, {}),
    "nanogpt_issue215_V100_nan.log": ("nanoGPT", "steps/s", 0.9116, {}),
    "nanogpt_issue466_2xTITANXp.log": ("nanoGPT", "tokens/s", 7771.0, {"tokens_per_step": 262144}),
    "llama2c_issue461_mps.log": ("llama2.c", "steps/s", 0.11334, {}),
    "mlx_issue557_mixtral_lora.log": ("MLX", "tokens/s", 84.166, {}),
    "mlx_issue210_lora_slow.log": ("MLX", "tokens/s", 1.382, {}),
    "mlxlm_pr330_A100_cuda.log": ("MLX", "tokens/s", 7514.985, {}),
    "megatron_issue756_mixtral_16xH100.log": ("Megatron-LM", "samples/s", 22.675, {}),
    "modded_nanogpt_011625_Sub3Min_8xH100.log": ("modded-nanogpt", "steps/s", 8.146, {}),
}


def test_provenance_lists_every_real_log() -> None:
    text = (REAL / "PROVENANCE.md").read_text()
    files = sorted(p.name for p in REAL.iterdir() if p.name != "PROVENANCE.md")
    assert len(files) >= 8 and all(f in text for f in files)
    assert len({trainer for trainer, *_ in HAND.values()}) >= 5


@pytest.mark.parametrize("name", sorted(HAND))
def test_real_log_read_within_5_percent_of_the_hand_figure(name: str) -> None:
    trainer, unit, hand, extra = HAND[name]
    r = read_log(REAL / name, **extra)
    assert r.format == f"{trainer} stdout"
    assert r.unit == unit
    assert r.median == pytest.approx(hand, rel=0.05)


def test_megatron_samples_become_tokens_with_the_sequence_length() -> None:
    r = read_log(REAL / "megatron_issue756_mixtral_16xH100.log", seq_len=4096)
    assert r.unit == "tokens/s" and r.median == pytest.approx(22.675 * 4096, rel=0.05)


def test_nanogpt_mfu_with_the_model_size_gives_tokens_per_second(tmp_path) -> None:
    # only mfu logged (no time): tokens/s = mfu x 312 TFLOPS / (6 N); 16.6 % of 312e12 / (6 x 124e6) = 69,600
    p = tmp_path / "mfu.jsonl"
    p.write_text("".join(json.dumps({"iter": i, "mfu": 16.6}) + "\n" for i in range(12)))
    with pytest.raises(InputError, match="--model-params"):
        read_log(p)
    r = read_log(p, model_params=124e6)
    assert r.unit == "tokens/s" and r.median == pytest.approx(0.166 * 312e12 / (6 * 124e6), rel=1e-6)


@pytest.mark.parametrize("name", ["hf_trainer_state_lora_imdb_distilbert.json",
                                  "hf_trainer_stdout_sentence_transformers_pr2449.log"])
def test_trainer_logs_without_a_runtime_are_refused_in_one_line(name: str) -> None:
    with pytest.raises(InputError) as exc:
        read_log(REAL / name)
    assert "no throughput" in str(exc.value) and "Hugging Face Trainer" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_trainer_state_summary_leaves_evaluation_time_out(tmp_path) -> None:
    """trainer_state.json's train_samples_per_second counts evaluation; the reader takes steps over training time."""
    history = [{"loss": 2.0 - i / 100, "step": 10 * i, "epoch": i / 10} for i in range(1, 11)]
    history += [{"eval_loss": 1.5, "eval_runtime": 900.0, "step": 100}]
    history += [{"train_runtime": 1000.0, "train_samples_per_second": 0.8, "train_steps_per_second": 0.1,
                 "step": 100, "train_loss": 1.6}]
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps({"global_step": 100, "train_batch_size": 8, "log_history": history}, indent=2))
    r = read_log(p)
    # 100 steps over 1000 - 900 = 100 s of training: 1 step/s x 8 samples = 8 samples/s (10x the Trainer's 0.8)
    assert r.unit == "samples/s" and r.median == pytest.approx(8.0) and r.points == 1
    assert "evaluation" in r.how
    assert read_log(p, seq_len=512).median == pytest.approx(8.0 * 512)


def test_trainer_stdout_dicts_strings_and_eval_lines(tmp_path) -> None:
    lines = [f"{{'loss': '{2 - i / 50:.3f}', 'grad_norm': '0.5', 'learning_rate': '1e-4', 'epoch': '{i / 10}'}}"
             for i in range(1, 11)]
    lines.insert(5, "{'eval_loss': 1.2, 'eval_runtime': 30.0, 'eval_samples_per_second': 5.0, 'epoch': 0.5}")
    lines.append("100%|#####| 100/100 [02:00<00:00,  1.2s/it]")
    lines.append("{'train_runtime': 130.0, 'train_samples_per_second': 6.15, 'train_steps_per_second': 0.769, "
                 "'train_loss': 1.8, 'epoch': 1.0}")
    p = tmp_path / "trainer.log"
    p.write_text("\n".join(lines) + "\n")
    r = read_log(p, tokens_per_step=4096)
    steps = 130.0 * 0.769
    assert r.format == "Hugging Face Trainer stdout"
    assert r.median == pytest.approx(steps / 100.0 * 4096, rel=1e-6)  # 130 s less 30 s of evaluation


def test_an_epoch_time_named_as_step_time_is_refused(tmp_path) -> None:
    """Issue 32: the --column hint on an epoch-time column stored a value 14 000x too low without a word."""
    p = tmp_path / "epochs.csv"
    p.write_text("epoch,step,time,epoch_time\n" + "".join(
        f"{i},{(i + 1) * 1400},{1.7e9 + (i + 1) * 700.0},{700.0}\n" for i in range(10)))
    with pytest.raises(InputError, match="not one step's figure"):
        read_log(p, column="epoch_time", unit="s/step")
    long = tmp_path / "long.csv"
    long.write_text("step,step_time\n" + "".join(f"{i},{5000.0}\n" for i in range(10)))
    with pytest.raises(InputError, match="over an hour"):
        read_log(long)


def test_a_rate_100x_off_the_others_is_warned_about(tmp_path) -> None:
    p = tmp_path / "two.csv"  # a per-device and a global rate, 100x apart
    p.write_text("step,tokens_per_sec,samples_per_sec\n" + "".join(f"{i},{50000 + i},{400}\n" for i in range(12)))
    r = read_log(p, seq_len=1.25)  # samples/s x 1.25 tokens = 500 tokens/s against 50,000
    assert any("100x off" in w for w in r.warnings)
    glitch = tmp_path / "glitch.csv"
    glitch.write_text("step,tokens_per_sec\n" + "".join(f"{i},{1e7 if i == 7 else 50000}\n" for i in range(12)))
    r = read_log(glitch)
    assert r.median == pytest.approx(50000) and any("left out" in w for w in r.warnings)


def test_one_vocabulary_names_every_stdout_column() -> None:
    for line in ("iter 100: loss 4.21, time 120.5ms, mfu 31.2%", "Iter 10: Train loss 2.3, It/sec 1.0, Tokens/sec 88",
                 " iteration 10/ 100 | elapsed time per iteration (ms): 100.0 | global batch size: 8 | lm loss: 2.0 |",
                 "step:5/100 train_time:500ms step_avg:100ms", "490 | loss 5.75 | lr 4.9e-05 | 8060.78ms | mfu 0.21%"):
        trainer, row = tl.parse_stdout_line(line)
        keys = {k for k in row if k not in ("step", "eval")}
        assert keys and all(tl.rate_of(k) or k in tl.LOSS_NAMES or k in tl.MFU_NAMES or k in tl.TIME_NAMES
                            or k in ("samples_per_step", "tflops_per_gpu") for k in keys), (trainer, keys)


def test_stdout_after_a_long_banner_is_read(tmp_path) -> None:
    """A modded-nanogpt record starts with the training script itself; the log lines come after it."""
    banner = "".join(f"    x{i} = {i}  # code, not a log line\n" for i in range(60))
    lines = "".join(f"step:{s}/100 train_time:{100 * s}ms step_avg:100.00ms\n" for s in range(1, 30))
    p = tmp_path / "record.txt"
    p.write_text(banner + lines)
    r = read_log(p)
    assert r.format == "modded-nanogpt stdout" and r.median == pytest.approx(10.0)


def test_a_file_of_no_known_format_is_one_line_naming_the_formats(tmp_path) -> None:
    p = tmp_path / "notes.txt"
    p.write_text("just some words\nand more words\n")
    with pytest.raises(InputError, match="nanoGPT, llama2.c") as exc:
        read_log(p)
    assert "\n" not in str(exc.value)
