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
