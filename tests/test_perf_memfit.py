"""Memory fit arithmetic, worked by hand, and the 1080 Ti limit flag."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.perf.memfit import GIB, ModelShape, estimate_memory
from planner.perf.model import load_perf_model


@pytest.fixture(scope="module")
def chips():
    m = load_perf_model()
    return [m.chips[c] for c in ("gtx-1080-ti", "rtx-4090", "rtx-5090")]


def small_lm(**kw) -> ModelShape:
    base = dict(params=15e6, optimizer="adamw", precision="amp", batch=64, seq_len=512, layers=6, hidden=384, vocab=32000)
    base.update(kw)
    return ModelShape(**base)


def test_static_memory_by_hand() -> None:
    est = estimate_memory(small_lm())
    # 15e6 params: fp32 weights 4 B, amp fp16 copies 2 B, fp32 grads 4 B, AdamW two fp32 moments 8 B
    assert est.breakdown_gib["weights"] * GIB == pytest.approx(60e6)
    assert est.breakdown_gib["amp_weight_copies"] * GIB == pytest.approx(30e6)
    assert est.breakdown_gib["gradients"] * GIB == pytest.approx(60e6)
    assert est.breakdown_gib["optimizer_states"] * GIB == pytest.approx(120e6)
    # fixed = 270e6 B x 1.10 allocator slack + 0.5 GiB context
    assert est.fixed_gib == pytest.approx(297e6 / GIB + 0.5)


def test_activations_by_hand() -> None:
    est = estimate_memory(small_lm())
    # per layer s*h*(34 + 5*a*s/h) = 512*384*(34 + 5*6*512/384) = 196608 * 74 = 14,548,992 B; 6 layers
    # + logits s*vocab*8 = 512*32000*8 = 131,072,000 B  -> 218,365,952 B per sample, x1.10 slack
    assert est.per_sample_gib * GIB == pytest.approx(218_365_952 * 1.1)
    assert est.breakdown_gib["activations"] * GIB == pytest.approx(218_365_952 * 64)
    assert est.total_gib == pytest.approx(est.fixed_gib + 64 * est.per_sample_gib)
    fp32 = estimate_memory(small_lm(precision="fp32"))
    assert fp32.per_sample_gib * GIB == pytest.approx((2 * 87_293_952 + 131_072_000) * 1.1)
    assert fp32.breakdown_gib["amp_weight_copies"] == 0


def test_optimizer_states() -> None:
    assert estimate_memory(small_lm(optimizer="sgd")).breakdown_gib["optimizer_states"] * GIB == pytest.approx(60e6)
    assert estimate_memory(small_lm(optimizer="sgd-plain")).breakdown_gib["optimizer_states"] == 0


def test_max_batch_per_chip(chips) -> None:
    est = estimate_memory(small_lm(), chips)
    by = {c.chip_id: c for c in est.chips}
    per = 218_365_952 * 1.1 / GIB
    fixed = 297e6 / GIB + 0.5
    assert by["gtx-1080-ti"].max_batch == int((11 - fixed) // per) == 45
    assert by["rtx-4090"].max_batch == int((24 - fixed) // per) == 103
    assert not by["gtx-1080-ti"].fits and by["rtx-4090"].fits


def test_flags_when_the_1080ti_was_the_limit(chips) -> None:
    limited = estimate_memory(small_lm(batch=64), chips)
    assert limited.baseline_limited()
    assert any("1080 Ti's 11 GB is the limit" in n for n in limited.notes)
    ok = estimate_memory(small_lm(batch=16), chips)
    assert not ok.baseline_limited() and all(c.fits for c in ok.chips)
    nowhere = estimate_memory(small_lm(batch=4096), chips)
    assert not nowhere.baseline_limited() and any("fits on none" in n for n in nowhere.notes)


def test_unknown_activations_are_said(chips) -> None:
    est = estimate_memory(ModelShape(params=15e6), chips)
    assert est.per_sample_gib is None and all(c.max_batch is None for c in est.chips)
    assert any("activations not counted" in n for n in est.notes)
    measured = estimate_memory(ModelShape(params=25e6, act_mb_per_sample=100, batch=10), chips)
    assert measured.breakdown_gib["activations"] * GIB == pytest.approx(10 * 100 * 1024**2)


@pytest.mark.parametrize("kw", [dict(params=0), dict(optimizer="lion"), dict(precision="fp8"), dict(batch=0),
                                dict(layers=0), dict(vocab=-1)])
def test_bad_inputs(kw) -> None:
    with pytest.raises(InputError):
        small_lm(**kw)


def test_only_a_parameter_count_gets_a_typical_shape_and_counted_activations(chips) -> None:
    """Issue 26 item 5: `--params 1.5e9` alone used to count no activations; now a typical shape (GPT-3 family row
    nearest in size) counts them at a stated batch and sequence length, and says so."""
    from planner.perf.memfit import TYPICAL_BATCH, TYPICAL_SEQ, assume_typical, typical_shape

    assert typical_shape(1.5e9) == (24, 2048) and typical_shape(125e6) == (12, 768)
    layers, hidden = typical_shape(15e6)
    assert 2 <= layers < 12 and 12 * layers * hidden**2 == pytest.approx(15e6, rel=0.5)
    shape, note = assume_typical(ModelShape(params=1.5e9, batch=TYPICAL_BATCH, seq_len=TYPICAL_SEQ))
    est = estimate_memory(shape, chips)
    assert est.breakdown_gib["activations"] > 0 and note and f"batch {TYPICAL_BATCH}" in note
    explicit = ModelShape(params=1.5e9, layers=48, hidden=1600)
    assert assume_typical(explicit) == (explicit, None)  # what the user says wins


def test_recommend_and_memfit_agree_on_a_size_only_model(cat) -> None:
    """Issue 26 item 5: `recommend --model-params 1.5e9` must not pick a card that `memfit --params 1.5e9` says is too
    small, and the plan says what shape, batch and sequence length it assumed."""
    import json
    from decimal import Decimal
    from typer.testing import CliRunner
    from planner.cli import app
    from planner.request import Request
    from planner.solver import recommend

    tight = recommend(cat, Request(budget=Decimal(7000), model_params=1.5e9))
    assert all(p.chip.vram_gb > 32 for p in tight.plans)  # before: a 32 GB card at EUR 7 000
    rec = recommend(cat, Request(budget=Decimal(15000), model_params=1.5e9))
    chip = rec.plans[0].chip
    res = CliRunner().invoke(app, ["memfit", "--params", "1.5e9", "--gpu", chip.id, "--json"])
    assert res.exit_code == 0, res.stderr
    fit = {c["chip_id"]: c for c in json.loads(res.stdout)["chips"]}
    assert fit[chip.id]["fits"], (chip.id, fit[chip.id])
    small = CliRunner().invoke(app, ["memfit", "--params", "1.5e9", "--gpu", "RTX 5090", "--json"])
    assert small.exit_code == 0, small.stderr
    assert {c["chip_id"]: c["fits"] for c in json.loads(small.stdout)["chips"]}["rtx-5090"] is False
    assert chip.vram_gb > 32
