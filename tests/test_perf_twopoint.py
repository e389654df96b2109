"""Two-point calibration (issue 32 item 3): the share fit, the held-out error bands, and the re-anchored range."""

import math
from dataclasses import replace
from datetime import date

import pytest

from planner.perf.calibration import Measurement, Store, anchored_speedup
from planner.perf.model import REFERENCE_CHIP, load_perf_model
from planner.perf.twopoint import Prediction, _ratio, evaluate, fit_share, narrowest_band, with_share


@pytest.fixture(scope="module")
def model():
    return load_perf_model()


@pytest.mark.parametrize("share", [0.3, 0.55, 0.8])
def test_fit_share_recovers_the_share_that_made_the_measurement(model, share):
    p, chips = model.params, model.chips
    ref = chips[REFERENCE_CHIP]
    truth = with_share(p, "transformer", share)
    measured = _ratio(truth, chips["rtx-4090"], "amp", ref, "fp32", ref, "transformer", 15e6)
    got = fit_share(p, ref, "transformer", 15e6, ref, "fp32", chips["rtx-4090"], "amp", measured)
    assert got == pytest.approx(share, abs=1e-3)
    # out of reach: clipped to a bound, never an exception
    assert fit_share(p, ref, "transformer", 15e6, ref, "fp32", chips["rtx-4090"], "amp", 1e6) in (0.02, 0.98)


def test_narrowest_band_and_held_out_coverage():
    lo, hi = narrowest_band([math.log(x) for x in (0.9, 1.0, 1.0, 1.1, 3.0)], share=0.8)
    assert (lo, hi) == pytest.approx((0.9, 1.1))
    preds = [Prediction(s, "g", "a", c, 1.0, 1.0, r, 1.0) for s, rs in (("s1", (1.0, 1.05)), ("s2", (0.95, 1.0)),
                                                                      ("s3", (2.0, 1.0))) for c, r in zip("xy", rs)]
    e = evaluate(preds, "reanchored", share=0.8)
    assert e["predictions"] == 6 and 0 < e["coverage"] < 1  # s3's 2x miss lies outside the band the others give
    assert e["median_high_over_low"] >= 1


def _m(gpu, name, prec, value):
    return Measurement(gpu_id=gpu, gpu_name=name, precision=prec, unit="tokens/s", median=value, q25=value * 0.99,
                       q75=value * 1.01, points=50, warmup_dropped=5, column="tok/s", how="test", log_file="t.log",
                       recorded_on=date(2026, 12, 1))


def test_re_anchored_answers_take_the_held_out_band(model):
    store = Store(measurements=[_m("gtx-1080-ti", "GeForce GTX 1080 Ti", "fp32", 20000),
                                _m("rtx-4090", "GeForce RTX 4090", "amp", 120000)])
    banded = replace(model.params, meta={**model.params.meta, "two_point": {"range": [0.9, 1.2], "share": 0.85}})
    m2 = type(model)(model.chips, banded, model.calibrated_chips, model.power_variants)
    a = anchored_speedup(m2, "rtx-5090", store=store, model_params=15e6)
    assert a.basis == "re-anchored"
    assert a.estimate.low / a.estimate.value == pytest.approx(0.9 * 0.99 / 1.01, rel=1e-3)
    assert a.estimate.high / a.estimate.value == pytest.approx(1.2 * 1.01 / 0.99, rel=1e-3)
    plain = replace(model.params, meta={k: v for k, v in model.params.meta.items() if k != "two_point"})
    b = anchored_speedup(type(model)(model.chips, plain, model.calibrated_chips, model.power_variants), "rtx-5090",
                         store=store, model_params=15e6)
    assert b.estimate.value == pytest.approx(a.estimate.value)  # the band changes the range, not the estimate


def _synthetic(source: str, n: int, w: tuple[float, float], seed: int) -> list[Prediction]:
    import random

    rnd = random.Random(seed)
    out = []
    for i in range(n):
        unc = math.exp(rnd.uniform(-1, 1))
        r, t = rnd.uniform(-0.4, 0.4), rnd.uniform(-0.4, 0.4)
        measured = unc * math.exp(w[0] * r + w[1] * t + rnd.gauss(0, 0.01))
        out.append(Prediction(source, "g / amp", "b", f"c{i}", measured, unc, unc * math.exp(r), unc * math.exp(t)))
    return out


def test_blend_weights_recover_the_mix_and_never_see_the_held_out_source():
    from planner.perf.twopoint import blend_weights, blended

    preds = _synthetic("s1", 60, (0.6, 0.3), 1) + _synthetic("s2", 60, (0.6, 0.3), 2)
    assert blend_weights(preds) == pytest.approx([0.6, 0.3], abs=0.02)
    # a third source measured 3x off: its own blended answers are the same as if it had measured anything else
    s3 = _synthetic("s3", 20, (0.0, 0.0), 3)
    tripled = [replace(p, measured=3 * p.measured) for p in s3]
    a, wa = blended(preds + s3)
    b, wb = blended(preds + tripled)
    assert wa["s3"] == wb["s3"] and wa["s1"] != wb["s1"]  # s3 only moves the other folds' weights
    mine = lambda ps: [p.two_point for p in ps if p.source == "s3"]  # noqa: E731
    assert mine(a) == pytest.approx(mine(b), rel=1e-12)
