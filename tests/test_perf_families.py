"""Workload families (issue 14, round 4): every calibration row has one under its own class, a family without
rows answers with its parent class, its shares stay bounded, the prior pulls it to the parent, and the variant is
a candidate of the nested choice."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, strategies as st

from planner.perf.families import (
    FAMILIES, USER_FAMILY, family_of, parent_of, shifted_matmul_share, shifted_share,
)
from planner.perf.fit import diagnose, params_json
from planner.perf.fitting import (
    AVERAGE_MEMBERS, CANDIDATES, FAMILIES_VARIANT, FAMILY_NAMES, EXTRAS, Design, family_prior, fit, fit_vector, predict,
)
from planner.perf.model import REFERENCE_CHIP, PerfModel, PerfParams, compute_share, load_perf_model, matmul_share

SEG = "detection-segmentation"


@pytest.fixture(scope="module")
def small(rows):
    """Three small sources: classification, segmentation (nnU-Net, EMBL) and transformer rows, fast to fit."""
    return [r for r in rows if r.source in ("nvidia-dle", "embl-3dunet", "nnunet-dkfz", "gpu-insights-v2")]


def test_every_calibration_row_has_a_family_under_its_own_class(rows) -> None:
    for r in rows:
        assert parent_of(family_of(r.workload)) == r.wclass, r.workload
    seen = {family_of(r.workload) for r in rows}
    assert seen == set(FAMILIES)  # every family of the taxonomy is measured somewhere
    with pytest.raises(ValueError):
        family_of("Mamba-2 language model")  # an unknown benchmark is a data error, not a silent default


def test_user_classes_answer_with_a_named_family() -> None:
    assert USER_FAMILY["transformer"] == "transformer-lm"  # the user's small LM
    for cls, fam in USER_FAMILY.items():
        assert parent_of(fam) == cls


def test_families_is_a_candidate_and_average_keeps_its_members() -> None:
    assert FAMILIES_VARIANT in CANDIDATES
    assert FAMILIES_VARIANT not in AVERAGE_MEMBERS  # round 3b's average is unchanged: its five variants
    assert AVERAGE_MEMBERS == ("v3", "v3-w0.5", "matmul", "l2", "powercap")


@given(st.floats(0.02, 0.98), st.floats(0.5, 1.0), st.floats(-30.0, 30.0))
def test_family_shares_are_bounded_and_zero_offset_is_the_parent(share: float, f0: float, offset: float) -> None:
    assert 0.0 <= shifted_share(share, offset) <= 1.0
    assert 0.5 <= shifted_matmul_share(f0, offset) <= 1.0
    assert shifted_share(share, 0.0) == pytest.approx(share, abs=1e-9)
    assert shifted_matmul_share(f0, 0.0) == pytest.approx(f0, abs=1e-9)
    assert shifted_share(share, offset + 0.5) >= shifted_share(share, offset)  # monotone in the offset


def test_fitted_family_shares_are_bounded(small, chips) -> None:
    p = fit(small, chips[REFERENCE_CHIP], variant=FAMILIES_VARIANT)
    assert p.family_offsets  # the measured families do get numbers
    for fam, (a, b) in p.family_offsets.items():
        assert 0.0 < shifted_share(p.compute_share[parent_of(fam)], a) < 1.0
        assert 0.5 < shifted_matmul_share(p.tensor_matmul_share, b) < 1.0


@pytest.mark.slow
def test_family_without_rows_falls_back_to_its_parent(small, chips) -> None:
    """Leave-one-source-out when a family's only sources are held out: no offsets, the parent class predicts it,
    also when the fit is warm-started from one that had the family (the inner folds' path)."""
    ref = chips[REFERENCE_CHIP]
    x_all, p_all = fit_vector(small, ref, variant=FAMILIES_VARIANT)
    assert SEG in p_all.family_offsets and p_all.family_offsets[SEG] != (0.0, 0.0)
    train = [r for r in small if family_of(r.workload) != SEG]
    seg = [r for r in small if family_of(r.workload) == SEG]
    for x0 in (None, x_all):
        x, p = fit_vector(train, ref, variant=FAMILIES_VARIANT, x0=x0)
        assert SEG not in p.family_offsets
        j = len(x) - len(EXTRAS["families"]) + 2 * FAMILY_NAMES.index(SEG)
        assert list(x[j: j + 2]) == [0.0, 0.0]
        assert predict(seg, p, ref) == pytest.approx(predict(seg, replace(p, family_offsets={}), ref), rel=1e-12)
    # ... while a measured family does move away from its parent
    assert not np.allclose(predict(seg, p_all, ref), predict(seg, replace(p_all, family_offsets={}), ref), rtol=1e-3)


def test_prior_is_zero_at_the_parent_and_grows_with_the_offset(small, chips) -> None:
    ref = chips[REFERENCE_CHIP]
    p = fit(small, ref, variant="matmul")
    design = Design(small, ref, PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6))
    assert family_prior(design, p) == 0.0
    priors = [family_prior(design, replace(p, family_offsets={SEG: (d, d)})) for d in (0.0, 0.2, 0.5, 1.0)]
    assert priors[0] == pytest.approx(0.0, abs=1e-15) and all(b > a for a, b in zip(priors, priors[1:]))


def test_design_matches_the_reference_model_with_families(rows, chips) -> None:
    """The fast design and the row-by-row reference (which the held-out figures use) agree, each row with its own
    family's offsets."""
    ref = chips[REFERENCE_CHIP]
    p = replace(fit([r for r in rows if r.source == "nvidia-dle"], ref, variant="matmul"),
                family_offsets={f: (0.3 * (i - 3), -0.2 * (i - 3)) for i, f in enumerate(FAMILY_NAMES)},
                tensor_share_slope=0.05, model_size_slope=0.03)
    base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    assert np.allclose(Design(rows, ref, base).predict(p), predict(rows, p, ref), rtol=1e-9)


def test_product_answers_with_the_named_family(small, chips, rows, tmp_path) -> None:
    """Shipped as `families`, `transformer` answers with transformer-lm's shares and `generic` with the pooled ones;
    the offsets survive perf_params.json."""
    ref = chips[REFERENCE_CHIP]
    p = replace(fit(small, ref, variant=FAMILIES_VARIANT), family_offsets={"transformer-lm": (-0.8, -1.0)})
    assert compute_share(p, "transformer", 1e8) == pytest.approx(shifted_share(p.compute_share["transformer"], -0.8))
    assert matmul_share(p, 1e8, "transformer") == pytest.approx(shifted_matmul_share(p.tensor_matmul_share, -1.0))
    assert compute_share(p, "generic", 1e8) == pytest.approx(p.compute_share["generic"])
    p = replace(p, family_offsets={"transformer-lm": (0.0, -1.0)})  # fewer tensor-core ops: a smaller amp gain
    doc = {"params": params_json(p, rows), "ranges": {"seen_architecture": {"fp32": [0.7, 1.5], "tensor": [0.5, 2.4]}},
           "variant": FAMILIES_VARIANT, "calibration": {"chips": sorted({r.chip.id for r in rows})}}
    path = tmp_path / "perf_params.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    m = load_perf_model(params_path=path)
    assert m.params.family_offsets == {"transformer-lm": (0.0, -1.0)}
    parent = PerfModel(m.chips, replace(m.params, family_offsets={}), m.calibrated_chips, m.power_variants)
    assert m.speedup("rtx-4090", workload="transformer").value < parent.speedup("rtx-4090", workload="transformer").value
    assert m.speedup("rtx-4090", workload="generic").value == pytest.approx(parent.speedup("rtx-4090", workload="generic").value)


@pytest.mark.slow
def test_diagnosis_groups_the_residuals_by_family(small, chips) -> None:
    text = diagnose(small, chips[REFERENCE_CHIP], "v3")
    assert "in_sample" in text and "leave_one_source_out" in text
    for fam in {family_of(r.workload) for r in small}:
        assert f"{fam} / amp" in text or f"{fam} / fp32" in text or f"{fam} / tf32" in text
