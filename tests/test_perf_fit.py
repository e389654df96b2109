"""Calibration: normalised data reproducible from ../shared, fitted parameters reproducible, held-out error bounds
(leave one source out: the headline; leave one GPU / architecture out)."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest

from planner.perf.model import PARAMS_FILE, REFERENCE_CHIP, PerfModel, PerfParams, load_perf_model
from planner.catalog.match import ChipNames, chip_key
from planner.perf.model import power_clock_factor, relative_power_density
from dataclasses import replace

from planner.perf.fit import params_json
from planner.perf.fitting import (
    AVERAGE, AVERAGE_MEMBERS, CANDIDATES, DEFAULT_VARIANT, TCGEN_PRIOR_WEIGHT, VARIANTS, Design, _loss, average_of,
    fit, fit_vector, params_from_vector, predict, tcgen_prior,
)
from planner.perf.sources import CALIBRATION_CSV, COLUMNS, all_rows, load_rows, normalise
from planner.perf.validate import (
    _nested_fold, average_held, choose_variant, cross_validate, inner_loso, median_error, nested_coverage, summarise,
)

# Issue 14 targets, leave-one-source-out: median <= 12 %, no GPU biased by more than 25 %, >= 90 % of held-out rows
# inside the stated range. Measured (docs/perf.md, round 11, 18 sources, 485 rows, shipped variant matmul, every fit the
# lowest training loss of its starts): nested 15.8 % (round 10: 16.2 %; plain LOSO of the shipped variant 14.4 %,
# in-sample 11.7 %), beyond 25 % nested: RTX 3070 +29 %, A40 +29 %, V100 SXM2 16GB +29 % and single-row GPUs (H100 NVL
# +82 %, B200 +27 %); 93.6 % nested coverage (93.8 % plain).
# The missed targets are strict xfails (they turn into failures the day they are met, so they get promoted);
# the regression bounds below guard what was reached.
REGRESSION_BOUND = 0.18
LOSO_BOUND = 0.17
TARGET = 0.12
MAX_BIAS = 0.25
COVERAGE = 0.80  # issue 25: ranges that cover 80-90 % of unseen sources, as narrow as that allows (was 0.90 with the
# 1/99 quantiles, median high/low 4.1)
WIDTH = 2.0  # issue 25: median high/low of the stated range on unseen sources


@pytest.fixture(scope="module")
def variant() -> str:
    """The shipped model variant (chosen by `python -m planner.perf.fit --nested --write`)."""
    return json.loads(PARAMS_FILE.read_text(encoding="utf-8"))["variant"]


@pytest.fixture(scope="module")
def cv(request, rows, chips, variant):
    """Leave-one-source/GPU/architecture-out summaries (about 45 s of fits), cached while the fit inputs stay the same."""
    from conftest import cached_fit

    def compute() -> dict:
        ref = chips[REFERENCE_CHIP]
        loso = cross_validate(rows, ref, lambda r: r.source, variant=variant)
        return json.loads(json.dumps(
            {"loso": {**summarise(loso), "coverage_nested": nested_coverage(loso)},
             "logo": summarise(cross_validate(rows, ref, lambda r: r.chip.id, variant=variant)),
             "loao": summarise(cross_validate(rows, ref, lambda r: r.chip.architecture, variant=variant))}))
    return cached_fit(request, f"cv-{variant}", compute)


def test_normalised_csv_is_reproducible(shared_dir: Path, chips) -> None:
    index = ChipNames(chips).index
    fresh = normalise(shared_dir / "facts" / "gpu-training-benchmarks-calibration.csv", lambda n: chips[index[chip_key(n)]])
    with CALIBRATION_CSV.open(newline="", encoding="utf-8") as fh:
        stored = list(csv.DictReader(fh))
    assert list(stored[0]) == COLUMNS
    assert stored == fresh


def test_normalisation_rules(chips) -> None:
    with CALIBRATION_CSV.open(newline="", encoding="utf-8") as fh:
        data = list(csv.DictReader(fh))
    by = {(r["gpu"], r["workload"], r["precision_reported"]): r for r in data}
    rn50 = "ResNet-50 ImageNet-shape training (NVIDIA DeepLearningExamples)"
    # fp16 ratios are re-based on the 1080 Ti at fp32: 2080 Ti 526 img/s amp / 1080 Ti 196 img/s fp32
    assert float(by[("GeForce RTX 2080 Ti", rn50, "fp16")]["ratio_vs_1080ti_fp32"]) == pytest.approx(526 / 196, abs=1e-4)
    assert by[("GeForce RTX 3090", rn50, "fp32")]["precision"] == "tf32"  # Ampere 'fp32' ran TF32
    assert by[("GeForce RTX 2080 Ti", rn50, "fp32")]["precision"] == "fp32"
    assert by[("GeForce GTX 1080 Ti", rn50, "fp32")]["use_in_fit"] == "false"
    assert "implausible" in by[("RTX A4000", "WaveGlow vocoder training (NVIDIA DLE)", "fp16")]["excluded_because"]
    assert all(r["source"] and r["chip"] in chips for r in data)


def test_design_matches_reference_model(rows, chips) -> None:
    ref = chips[REFERENCE_CHIP]
    p = fit(rows, ref)
    for q in (p, replace(p, tensor_matmul_share=0.8, tensor_share_slope=0.05, l2_bw_per_tflops=200.0,
                         l2_working_set_mb=30.0, model_size_slope=0.05, overhead_ref=0.01,
                         power_density_threshold=0.8, power_density_exponent=0.6, tensor_gen_efficiency=0.7),
              replace(p, power_density_threshold=0.8, power_density_exponent=0.6, power_cap_cuda_only=1.0,
                      tensor_matmul_share=0.8)):
        base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
        assert np.allclose(Design(rows, ref, base).predict(q), predict(rows, q, ref), rtol=1e-9)


def test_stored_params_match_a_fresh_fit(rows, chips, variant) -> None:
    stored_doc = json.loads(PARAMS_FILE.read_text(encoding="utf-8"))
    fresh = fit(rows, chips[REFERENCE_CHIP], variant=variant)
    assert stored_doc["command"] and stored_doc["fitted_on"]
    if variant == AVERAGE:  # every member's numbers are stored
        assert list(stored_doc["params"]["members"]) == list(fresh.members) == list(AVERAGE_MEMBERS)
        pairs = [(stored_doc["params"]["members"][n], q) for n, q in fresh.members.items()]
    else:
        pairs = [(stored_doc["params"], fresh)]
    for stored, p in pairs:
        for k, v in p.compute_share.items():
            assert stored["compute_share"][k] == pytest.approx(v, abs=0.01)
        assert stored["tensor_efficiency"] == pytest.approx(p.tensor_efficiency, abs=0.01)
        assert stored["amp_memory_factor"] == pytest.approx(p.amp_memory_factor, abs=0.01)
        assert stored["pascal_compute_efficiency"] == pytest.approx(p.pascal_compute_efficiency, abs=0.01)
        assert stored["model_size_slope"] == pytest.approx(p.model_size_slope, abs=0.01)
        assert stored["pro_clock_factor"] == pytest.approx(p.pro_clock_factor, abs=0.01)
        assert stored["overhead_ref"] == pytest.approx(p.overhead_ref, abs=0.005)
        assert stored["tensor_matmul_share"] == pytest.approx(p.tensor_matmul_share, abs=0.01)
        assert stored["tensor_share_slope"] == pytest.approx(p.tensor_share_slope, abs=0.01)
        assert (stored["l2_bw_per_tflops"] > 0) == (p.l2_bw_per_tflops > 0)
        assert stored.get("power_density_threshold", 0.0) == pytest.approx(p.power_density_threshold, abs=0.02)
        assert stored.get("tensor_gen_efficiency", 1.0) == pytest.approx(p.tensor_gen_efficiency, abs=0.01)


def test_size_slope_has_the_physical_sign(chips) -> None:
    """Bigger models are more compute-bound: within the Lambda harness (published model sizes) k is positive, and it
    stays so without the smallest model; across labs weighted equally it is clipped at 0, never negative."""
    ref = chips[REFERENCE_CHIP]
    lam = load_rows(chips=chips)
    assert fit(lam, ref, variant="v3").model_size_slope > 0.02
    small = {r.model_params for r in lam if r.model_params < 30e6 and r.wclass == "rnn"}  # Tacotron2
    assert fit([r for r in lam if r.model_params not in small], ref, variant="v3").model_size_slope > 0.02
    assert fit(all_rows(chips), ref, variant="v3").model_size_slope >= 0.0


def test_every_fitted_row_has_a_model_size_with_source() -> None:
    with CALIBRATION_CSV.open(newline="", encoding="utf-8") as fh:
        data = [r for r in csv.DictReader(fh) if r["use_in_fit"] == "true"]
    for r in data:
        assert 1e6 < float(r["model_params"]) < 1e9, r["workload"]
        assert r["model_params_source"], r["workload"]
    bert = next(r for r in data if r["workload"].startswith("BERT-base"))
    assert float(bert["model_params"]) == 110e6 and "Devlin" in bert["model_params_source"]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["logo", "loao"])
def test_cross_validated_error_bound(cv, scheme: str) -> None:
    s = cv[scheme]
    assert s["rows"] > 390
    assert s["median_abs_error"] <= REGRESSION_BOUND
    for arch, a in s["per_architecture"].items():
        if a["rows"] >= 5:  # Ada and Hopper have 2-4 rows each: their median is one or two measurements
            assert abs(a["bias"]) <= MAX_BIAS, (scheme, arch, a)


@pytest.mark.slow
def test_leave_one_source_out_regression_bound_and_coverage(cv) -> None:
    s = cv["loso"]
    assert len(s["per_source"]) >= 6 and s["rows"] > 390  # several labs and harnesses, not one
    assert s["median_abs_error"] <= LOSO_BOUND
    assert s["coverage_nested"] >= COVERAGE  # each source's rows against a range built without that source


@pytest.mark.slow
def test_ranges_are_narrow_and_still_cover_unseen_sources(rows, chips, variant) -> None:
    """Issue 25: the narrowest band holding 90 % of the other sources' held-out errors covers >= 80 % of each unseen
    source's rows at a median high/low <= 2; the old 1/99 quantiles were twice as wide."""
    from planner.perf.validate import equal_tails, range_check

    loso = cross_validate(rows, chips[REFERENCE_CHIP], lambda r: r.source, variant=variant)
    now, old = range_check(loso), range_check(loso, equal_tails)
    assert now["coverage"] >= COVERAGE and now["median_high_over_low"] <= WIDTH
    assert old["median_high_over_low"] > 2 * WIDTH  # what the 1/99 construction stated
    stored = json.loads(PARAMS_FILE.read_text(encoding="utf-8"))
    assert stored["range_validation"]["after"]["median_high_over_low"] == pytest.approx(now["median_high_over_low"], abs=0.01)
    # The band stated to users is built from all 18 sources, Lambda's PyTorch set (198 rows, +21 % bias held out)
    # included, so it is wider than the per-fold bands above: tensor 2.38x, fp32 1.53x (1/99 quantiles: 4.14x, 2.48x).
    seen = stored["ranges"]["seen_architecture"]
    assert seen["tensor"][1] / seen["tensor"][0] <= 2.5 and seen["fp32"][1] / seen["fp32"][0] <= WIDTH


def test_shortest_interval_is_narrower_than_equal_tails_on_skewed_errors() -> None:
    from planner.perf.validate import equal_tails, shortest_interval

    skewed = [1.0] * 50 + [1.02 ** i for i in range(40)] + [0.5, 0.4, 3.0, 0.6, 0.45, 0.55, 0.7, 2.5, 0.65, 0.35]
    lo, hi = shortest_interval(skewed, 0.9)
    assert sum(lo <= r <= hi for r in skewed) >= 90
    elo, ehi = equal_tails(skewed, (0.05, 0.95))
    assert hi / lo < ehi / elo


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="issue 14 target not met: LOSO median 14.4 %, nested 15.8 % (docs/perf.md, round 11)")
def test_leave_one_source_out_meets_issue_target(cv) -> None:
    assert cv["loso"]["median_abs_error"] <= TARGET


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="issue 14 target not met: plain LOSO V100 SXM2 16GB +29 %, RTX 3070 +29 %, A40 +28 %, one-row H100 NVL +88 %, RTX 6000 Ada +33 %, B200 +29 % (round 11)")
def test_no_gpu_biased_beyond_target(cv) -> None:
    assert all(abs(g["bias"]) <= MAX_BIAS for g in cv["loso"]["per_gpu"].values())


@pytest.mark.slow
def test_stored_report_matches_cross_validation(cv) -> None:
    stored = json.loads(PARAMS_FILE.read_text(encoding="utf-8"))["error"]
    assert stored["leave_one_source_out"]["median_abs_error"] == pytest.approx(cv["loso"]["median_abs_error"], abs=0.005)
    assert stored["leave_one_source_out"]["coverage_nested"] == pytest.approx(cv["loso"]["coverage_nested"], abs=0.01)
    assert stored["leave_one_gpu_out"]["median_abs_error"] == pytest.approx(cv["logo"]["median_abs_error"], abs=0.005)
    assert stored["leave_one_architecture_out"]["median_abs_error"] == pytest.approx(cv["loao"]["median_abs_error"], abs=0.005)


# ---------------------------------------------------------------- the variant choice never sees the held-out source
SMALL = ("gpu-insights-v1", "nvidia-dle", "embl-3dunet", "csc-ml-benchmarks")


@pytest.mark.slow
def test_nested_choice_is_blind_to_the_held_out_source(rows, chips) -> None:
    """Scaling the held-out source's measurements changes neither the variant chosen nor the fitted model."""
    ref = chips[REFERENCE_CHIP]
    sub = [r for r in rows if r.source in SMALL]
    warped = [replace(r, ratio=r.ratio * 3.0) if r.source == "embl-3dunet" else r for r in sub]
    variants = CANDIDATES  # `average` included: its inner error comes from the same blind member fits
    a = _nested_fold((sub, ref, "embl-3dunet", variants))
    b = _nested_fold((warped, ref, "embl-3dunet", variants))
    assert a[1] == b[1] and a[2] == b[2]  # same choice, same inner errors
    assert [h.predicted for h in a[3]] == pytest.approx([h.predicted for h in b[3]], rel=1e-9)
    assert [h.row.ratio for h in b[3]] == pytest.approx([3.0 * h.row.ratio for h in a[3]])


@pytest.mark.slow
def test_a_warm_start_fitted_on_a_held_out_source_cannot_hold_the_fit_in_a_worse_basin(rows, chips) -> None:
    """The inner folds pass a fit that saw the held-out source as a start: it is one more starting point, kept only
    where its training loss is lower, so the fold's fit never ends worse than from the standard starts alone."""
    ref = chips[REFERENCE_CHIP]
    train = [r for r in rows if r.source != "embl-3dunet"]
    poisoned = [replace(r, ratio=r.ratio * 3.0) if r.source == "embl-3dunet" else r for r in rows]
    base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    design = Design(train, ref, base, weight_power=VARIANTS["matmul"][1])
    cold = fit_vector(train, ref, variant="matmul")[0]
    for start in (fit_vector(rows, ref, variant="matmul")[0], fit_vector(poisoned, ref, variant="matmul")[0]):
        warm = fit_vector(train, ref, variant="matmul", x0=start)[0]
        assert _loss(design, params_from_vector(warm, base, "matmul")) <= (
            _loss(design, params_from_vector(cold, base, "matmul")) + 1e-12)


@pytest.mark.slow
def test_choose_variant_takes_the_lowest_inner_error(rows, chips) -> None:
    sub = [r for r in rows if r.source in SMALL]
    chosen, errors = choose_variant(sub, chips[REFERENCE_CHIP], ("v3", "v3-w0.5"))
    assert set(errors) == {"v3", "v3-w0.5"} and errors[chosen] == min(errors.values())


# ---------------------------------------------------------------- round 3b: the `average` candidate
def test_average_of_identical_members_is_the_member(rows, chips) -> None:
    ref = chips[REFERENCE_CHIP]
    p = fit([r for r in rows if r.source in SMALL], ref, variant="v3")
    avg = average_of({"a": p, "b": p, "c": p})
    assert predict(rows, avg, ref) == pytest.approx(predict(rows, p, ref), rel=1e-12)


@pytest.mark.slow
def test_average_is_the_geometric_mean_and_lies_between_its_members(rows, chips) -> None:
    ref = chips[REFERENCE_CHIP]
    sub = [r for r in rows if r.source in SMALL]
    avg = fit(sub, ref, variant=AVERAGE)
    assert list(avg.members) == list(AVERAGE_MEMBERS)  # every member, each fitted on the same rows
    each = np.array([predict(rows, fit(sub, ref, variant=m), ref) for m in AVERAGE_MEMBERS])
    assert each == pytest.approx(np.array([predict(rows, m, ref) for m in avg.members.values()]), rel=1e-9)
    got = predict(rows, avg, ref)
    assert got == pytest.approx(np.exp(np.log(each).mean(axis=0)), rel=1e-12)
    assert np.all(got >= each.min(axis=0) * (1 - 1e-12)) and np.all(got <= each.max(axis=0) * (1 + 1e-12))
    assert np.ptp(each, axis=0).max() > 0.01  # the members do differ, so "between" is not trivially met


@pytest.mark.slow
def test_average_inner_error_reuses_the_members_inner_predictions(rows, chips) -> None:
    """The average's inner held-out rows are the geometric mean of its members' inner held-out rows (no fit of its own)."""
    ref = chips[REFERENCE_CHIP]
    sub = [r for r in rows if r.source in SMALL]
    held = {m: inner_loso(sub, ref, m, fit_vector(sub, ref, variant=m)[0]) for m in AVERAGE_MEMBERS}
    chosen, errors = choose_variant(sub, ref, CANDIDATES)
    assert list(errors) == list(CANDIDATES) and errors[chosen] == min(errors.values())
    for m in AVERAGE_MEMBERS:
        assert errors[m] == pytest.approx(median_error(held[m]), abs=1e-4)
    avg = average_held([held[m] for m in AVERAGE_MEMBERS])
    assert errors[AVERAGE] == pytest.approx(median_error(avg), abs=1e-4)
    h0 = [h.predicted for h in avg]
    assert h0 == pytest.approx([math.prod(held[m][i].predicted for m in AVERAGE_MEMBERS) ** (1 / len(AVERAGE_MEMBERS))
                                for i in range(len(avg))], rel=1e-12)
    with pytest.raises(ValueError):  # members held out on different rows cannot be averaged
        average_held([held["v3"], held["v3"][1:]])


@pytest.mark.slow
def test_average_params_round_trip_through_the_shipped_loader(rows, chips, tmp_path) -> None:
    """An `average` written to perf_params.json loads with every member and predicts their geometric mean."""
    ref = chips[REFERENCE_CHIP]
    avg = fit([r for r in rows if r.source in SMALL], ref, variant=AVERAGE)
    doc = {"params": params_json(avg, rows), "ranges": {"seen_architecture": {"fp32": [0.7, 1.5], "tensor": [0.5, 2.4]}},
           "variant": AVERAGE, "calibration": {"chips": sorted({r.chip.id for r in rows}), "model_params_range": [2e7, 3e8]}}
    path = tmp_path / "perf_params.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    m = load_perf_model(params_path=path)
    assert set(m.params.members) == set(AVERAGE_MEMBERS)
    singles = [PerfModel(m.chips, q, m.calibrated_chips, m.power_variants) for q in m.params.members.values()]
    for gpu, prec in (("rtx-4090", "amp"), ("t4", "fp32"), ("a100-sxm4-80gb", "tf32"), ("RTX PRO 6000 Max-Q", "amp")):
        got = m.speedup(gpu, precision=prec, model_params=15e6)
        each = [s.speedup(gpu, precision=prec, model_params=15e6).value for s in singles]
        assert got.value == pytest.approx(math.prod(each) ** (1 / len(each)), rel=1e-3)  # json rounds to 4 digits
        assert min(each) * (1 - 1e-9) <= got.value <= max(each) * (1 + 1e-9)
        assert got.low < got.value < got.high  # ranges as for any variant
    assert predict(rows, m.params, ref) == pytest.approx(predict(rows, avg, ref), rel=1e-3)


def test_shipped_model_predicts_with_the_stored_variant(rows, chips, variant) -> None:
    """The CLI's model predicts with what the procedure picked: the geometric mean of every member for `average`,
    the one fitted variant otherwise."""
    m = load_perf_model()
    if variant == AVERAGE:
        assert set(m.params.members) == set(AVERAGE_MEMBERS)
        singles = [PerfModel(m.chips, q, m.calibrated_chips, m.power_variants) for q in m.params.members.values()]
    else:
        assert not m.params.members
        singles = [m]
    for gpu in ("rtx-4090", "rtx-5090", "h100-sxm5-80gb", "t4"):
        each = [s.speedup(gpu, model_params=15e6).value for s in singles]
        assert m.speedup(gpu, model_params=15e6).value == pytest.approx(math.prod(each) ** (1 / len(each)), rel=1e-9)
    fresh = fit(rows, chips[REFERENCE_CHIP], variant=variant)
    assert predict(rows, m.params, chips[REFERENCE_CHIP]) == pytest.approx(predict(rows, fresh, chips[REFERENCE_CHIP]), rel=0.02)


def test_stored_variant_and_nested_report(chips) -> None:
    doc = json.loads(PARAMS_FILE.read_text(encoding="utf-8"))
    assert doc["variant"] in CANDIDATES
    sel = doc["variant_selection"]
    errs = sel["loso_median_error_per_variant"]
    assert sel["chosen_on_all_sources"] == doc["variant"] == min(errs, key=errs.__getitem__) == DEFAULT_VARIANT
    assert list(errs) == list(CANDIDATES)  # the stored run chose among every candidate (round 7: `tcgen` too)
    assert all(list(f["inner_median_error"]) == list(CANDIDATES) for f in sel["per_held_out_source"].values())
    nested = doc["error"]["nested_leave_one_source_out"]
    assert set(sel["per_held_out_source"]) == set(nested["per_source"])
    assert nested["rows"] == doc["error"]["leave_one_source_out"]["rows"]
    assert nested["coverage_nested"] >= COVERAGE  # the stored ranges come from these nested held-out rows


# ---------------------------------------------------------------- round 7: the `tcgen` candidate
def test_tcgen_is_a_candidate_built_on_matmul_outside_the_average() -> None:
    assert "tcgen" in CANDIDATES and "tcgen" not in AVERAGE_MEMBERS  # decided before its nested run
    assert VARIANTS["tcgen"] == (("matmul", "tcgen"), 1.0)
    base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    x = [0.0] * 12
    for v in (-40.0, -3.0, 0.0, 3.0, 40.0):  # the squeeze keeps eta_old inside (0.3, 1] whatever the optimiser tries
        assert 0.3 <= params_from_vector(x + [v], base, "tcgen").tensor_gen_efficiency <= 1.0
    assert params_from_vector(x, base, "matmul").tensor_gen_efficiency == 1.0  # other variants never carry it


def test_fp32cap_is_a_candidate_built_on_matmul_outside_the_average() -> None:
    """Round 9: `matmul` plus the power-density cap on CUDA-core math only; bounds as `powercap`; not in `average`."""
    assert "fp32cap" in CANDIDATES and "fp32cap" not in AVERAGE_MEMBERS  # decided before its nested run
    assert VARIANTS["fp32cap"] == (("matmul", "fp32cap"), 1.0)
    base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    x = [0.0] * 12
    for a in (-40.0, 0.0, 40.0):
        for b in (-40.0, 0.0, 40.0):
            q = params_from_vector(x + [a, b], base, "fp32cap")
            assert 0.3 <= q.power_density_threshold <= 1.0 and 1 / 3 - 1e-9 <= q.power_density_exponent <= 1 + 1e-9
            assert q.power_cap_cuda_only == 1.0
    assert params_from_vector(x + [0.0, 0.0], base, "powercap").power_cap_cuda_only == 0.0  # round 3: every path


@pytest.mark.slow
def test_fp32cap_fit_recovers_a_known_cap_from_rows_generated_with_it(rows, chips) -> None:
    """Rows generated by the model with the cap (d_c = 0.8, a = 1) on CUDA-core math: the fit finds a cap that gives
    the T4 about the same fp32 clock factor, and leaves every tensor-path row's prediction where the truth has it."""
    ref = chips[REFERENCE_CHIP]
    truth = replace(fit(rows, ref, variant="matmul"), power_density_threshold=0.8, power_density_exponent=1.0,
                    power_cap_cuda_only=1.0)
    synthetic = [replace(r, ratio=float(v)) for r, v in zip(rows, predict(rows, truth, ref))]
    got = fit(synthetic, ref, variant="fp32cap")
    t4 = relative_power_density(chips["t4"])
    assert power_clock_factor(t4, got) == pytest.approx(power_clock_factor(t4, truth), abs=0.05)
    assert power_clock_factor(t4, truth) < 0.7


def test_tcgen_prior_pulls_toward_no_generation_gap(chips) -> None:
    base = PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    values = [tcgen_prior(replace(base, tensor_gen_efficiency=e)) for e in (1.0, 0.95, 0.8, 0.5)]
    assert values[0] == 0.0 and values == sorted(values)
    assert values[-1] == pytest.approx(TCGEN_PRIOR_WEIGHT * 0.1 * (abs(math.log(0.5)) - 0.05))  # Huber, delta 0.1


@pytest.mark.slow
def test_fitted_generation_factor_is_within_bounds_and_recovers_a_known_gap(rows, chips, monkeypatch) -> None:
    """On the real rows the factor stays in (0.3, 1]. On rows generated by the model with eta_old = 0.6, the fit
    without its prior finds the gap (the data identify it); with the prior it lands between the truth and 1, since
    the global tensor efficiency can absorb part of the gap at no prior cost."""
    ref = chips[REFERENCE_CHIP]
    p = fit(rows, ref, variant="tcgen")
    assert 0.3 < p.tensor_gen_efficiency <= 1.0
    truth = replace(p, tensor_gen_efficiency=0.6)
    synthetic = [replace(r, ratio=float(v)) for r, v in zip(rows, predict(rows, truth, ref))]
    with_prior = fit(synthetic, ref, variant="tcgen").tensor_gen_efficiency
    assert 0.6 - 0.02 <= with_prior < 1.0
    import planner.perf.fitting as fitting
    monkeypatch.setattr(fitting, "TCGEN_PRIOR_WEIGHT", 0.0)
    assert fit(synthetic, ref, variant="tcgen").tensor_gen_efficiency == pytest.approx(0.6, abs=0.03)
    assert any(r.chip.architecture in ("volta", "turing") and r.precision == "amp" for r in rows)
