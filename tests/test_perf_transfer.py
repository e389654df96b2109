"""The correction-transfer diagnostic (`planner.perf.validate.correction_transfer`, printed by `--diagnose`): a
multiplier per group learned from other labs helps a held-out lab only where the effect is shared, never where it is
the lab's own, and the held-out figure never sees the held-out lab's residuals."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.perf.fitting import fit, predict
from planner.perf.model import REFERENCE_CHIP
from planner.perf.validate import correction_transfer

SOURCES = ("gpu-insights-v1", "nvidia-dle", "csc-ml-benchmarks", "chenjianyun-resnet50", "lambda-blog")


@pytest.fixture(scope="module")
def clean(rows, chips):
    """Rows of five sources whose measurements are exactly what the model fitted on them predicts."""
    sub = [r for r in rows if r.source in SOURCES]
    p = fit(sub, chips[REFERENCE_CHIP], variant="v3")
    return [replace(r, ratio=float(v)) for r, v in zip(sub, predict(sub, p, chips[REFERENCE_CHIP]))]


@pytest.mark.slow
def test_a_labs_own_offset_is_not_fixed_by_multipliers_from_the_other_labs(clean, chips) -> None:
    warped = [replace(r, ratio=r.ratio * 1.6) if r.source == "gpu-insights-v1" else r for r in clean]
    t = correction_transfer(warped, chips[REFERENCE_CHIP], lambda r: (r.precision,), "v3")
    assert t["in_sample_corrected"] < t["in_sample"]  # in sample the group medians absorb part of it
    assert t["loso"] > 0.2 and t["loso_corrected"] == pytest.approx(t["loso"], rel=0.1)  # held out they cannot


@pytest.mark.slow
def test_an_effect_every_lab_shares_is_carried_to_the_held_out_lab(clean, chips) -> None:
    warped = [replace(r, ratio=r.ratio * 2.0) if r.precision == "tf32" else r for r in clean]
    t = correction_transfer(warped, chips[REFERENCE_CHIP], lambda r: (r.precision,), "v3")
    assert t["loso_corrected"] < t["loso"]
    no_held_out = correction_transfer(warped, chips[REFERENCE_CHIP], lambda r: (r.precision,), "v3", held_out=False)
    assert "loso" not in no_held_out and no_held_out["in_sample"] == pytest.approx(t["in_sample"])
