"""Physics the speed model must keep: power-capped board variants, sustained clocks by segment, the per-step
overhead that caps a faster card's gain, wider ranges outside the calibrated sizes, and the sweep's size assumption."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

import pytest

from planner.errors import CatalogError
from planner.perf.model import (
    L2_FILE, POWER_VARIANTS_FILE, PerfModel, board_power_density, dram_bandwidth, l2_sizes, load_perf_model,
    load_power_variants, matmul_share, overhead_share, power_clock_factor, power_scale, relative_power_density,
    OLD_TENSOR_ARCHS, tensor_generation_factor,
)
from planner.perf.sources import INDEPENDENT_CSV

FORBIDDEN = ("lambdal/deeplearning-benchmark", "NikolasEnt", "u39kun", "zzc0721", "small-ablation")


@pytest.fixture(scope="module")
def model() -> PerfModel:
    return load_perf_model()


def with_params(model: PerfModel, **changes) -> PerfModel:
    """The model with some numbers changed (in every member too when the shipped variant is `average`)."""
    members = {n: replace(m, **changes) for n, m in model.params.members.items()}
    return PerfModel(model.chips, replace(model.params, members=members, **changes), model.calibrated_chips,
                     model.power_variants)


# ---------------------------------------------------------------- power-limited board variants
def test_max_q_is_slower_than_the_600_w_card_by_the_power_curve(model: PerfModel) -> None:
    assert model.power_variants["rtx-pro-6000-blackwell-maxq"] == pytest.approx(300 / 600)
    exact = with_params(model, overhead_ref=0.0)  # the fixed per-step overhead (if fitted > 0) compresses any ratio
    for prec in ("fp32", "amp"):
        full = model.speedup("rtx-pro-6000-blackwell", precision=prec).value
        maxq = model.speedup("RTX PRO 6000 Max-Q", precision=prec).value
        assert maxq < full
        assert maxq / full == pytest.approx(power_scale(0.5), rel=1e-3)
        ratio = exact.speedup("RTX PRO 6000 Max-Q", precision=prec).value / exact.speedup("rtx-pro-6000-blackwell", precision=prec).value
        assert ratio == pytest.approx(power_scale(0.5), rel=1e-6)


def test_pcie_a100_is_slower_than_sxm_with_the_same_datasheet(model: PerfModel) -> None:
    pcie, sxm = model.chips["a100-pcie-40gb"], model.chips["a100-sxm4-40gb"]
    assert (pcie.fp16_tensor_tflops_fp32acc, pcie.mem_bandwidth_gbs) == (sxm.fp16_tensor_tflops_fp32acc, sxm.mem_bandwidth_gbs)
    exact = with_params(model, overhead_ref=0.0)
    assert exact.speedup("a100-pcie-40gb", baseline="a100-sxm4-40gb").value == pytest.approx(power_scale(250 / 400))
    assert model.speedup("a100-pcie-40gb", baseline="a100-sxm4-40gb").value == pytest.approx(power_scale(250 / 400), rel=1e-3)


def test_user_power_limit_stacks_on_the_variant(model: PerfModel) -> None:
    alone = model.speedup("rtx-pro-6000-blackwell-maxq").value
    limited = model.speedup("rtx-pro-6000-blackwell-maxq", power_fraction=0.8).value
    assert limited == pytest.approx(alone * power_scale(0.8))


def test_power_variant_file_is_sourced_and_checked(model: PerfModel, tmp_path: Path) -> None:
    with POWER_VARIANTS_FILE.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["source"] and r["notes"].startswith("estimate") for r in rows)
    assert all(model.chips[r["chip"]].tdp_w == int(r["board_power_w"]) for r in rows)
    bad = tmp_path / "v.csv"
    bad.write_text("chip,full_power_chip,board_power_w,full_power_w,source,notes\n"
                   "rtx-4090,rtx-5090,100,600,x,estimate\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="power fraction"):
        load_power_variants(bad, model.chips)
    bad.write_text("chip,full_power_chip,board_power_w,full_power_w,source,notes\n"
                   "no-such-chip,rtx-5090,300,600,x,estimate\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="unknown chip"):
        load_power_variants(bad, model.chips)


# ---------------------------------------------------------------- sustained clocks: GeForce boost vs capped pro boards
def test_pro_clock_factor_separates_identical_datasheets(model: PerfModel) -> None:
    """Titan RTX (GeForce-class boost) and Quadro RTX 6000 share every datasheet number: only the segment differs."""
    a, b = model.chips["titan-rtx"], model.chips["quadro-rtx-6000"]
    assert (a.fp32_tflops, a.mem_bandwidth_gbs, a.fp16_tensor_tflops_fp32acc) == \
        (b.fp32_tflops, b.mem_bandwidth_gbs, b.fp16_tensor_tflops_fp32acc)
    capped = with_params(model, pro_clock_factor=0.85)
    assert capped.speedup("titan-rtx", baseline="quadro-rtx-6000", precision="fp32").value > 1.05  # capped = slower
    even = with_params(model, pro_clock_factor=1.0)
    assert even.speedup("titan-rtx", baseline="quadro-rtx-6000").value == pytest.approx(1.0)
    # the shipped factor is the fitted one and it is applied
    ratio = model.speedup("titan-rtx", baseline="quadro-rtx-6000", precision="fp32").value
    assert (ratio > 1) == (model.params.pro_clock_factor < 1) or ratio == pytest.approx(1.0, abs=1e-9)


# ---------------------------------------------------------------- power density: a 70 W board cannot hold its boost clock
def test_power_starved_board_is_slower_than_its_datasheet(model: PerfModel) -> None:
    """The T4 runs a TU104 at 70 W (an RTX 2080 runs the same silicon at 215 W): below the threshold its compute
    rate drops with (density / threshold)^a; boards at or above the threshold keep their datasheet clock."""
    t4 = model.chips["t4"]
    assert relative_power_density(t4) < 0.6 < relative_power_density(model.chips["rtx-2080"])
    off = with_params(model, power_density_threshold=0.0)  # round 3's `powercap`: the cap on every compute path
    on = with_params(model, power_density_threshold=0.8, power_density_exponent=1.0, power_cap_cuda_only=0.0)
    for prec in ("fp32", "amp"):
        assert on.speedup("t4", precision=prec).value < off.speedup("t4", precision=prec).value
        for cid in ("rtx-2080", "rtx-2080-ti", "a100-sxm4-80gb", "h100-sxm5-80gb"):  # dense boards: untouched
            assert relative_power_density(model.chips[cid]) >= 0.8
            assert on.speedup(cid, precision=prec).value == pytest.approx(off.speedup(cid, precision=prec).value)
    # only the compute term slows down: a fully memory-bound step would not notice the clock
    mem = with_params(on, compute_share={k: 0.02 for k in model.params.compute_share}, model_size_slope=0.0)
    mem_off = with_params(mem, power_density_threshold=0.0)
    assert mem.speedup("t4", precision="fp32").value / mem_off.speedup("t4", precision="fp32").value > 0.98


def test_less_board_power_never_makes_a_card_faster(model: PerfModel) -> None:
    on = replace(model.params, power_density_threshold=0.8, power_density_exponent=0.5, power_cap_cuda_only=0.0)
    base = model.chips["rtx-a4000"]
    speeds = []
    for tdp in (140, 100, 70, 50):
        chip = base.model_copy(update={"tdp_w": tdp})
        chips = {**model.chips, chip.id: chip}
        speeds.append(PerfModel(chips, on, model.calibrated_chips, model.power_variants).speedup(chip.id).value)
    assert speeds == sorted(speeds, reverse=True) and speeds[-1] < speeds[0]


def test_power_clock_factor_follows_the_dvfs_prior(model: PerfModel) -> None:
    p = replace(model.params, power_density_threshold=0.8, power_density_exponent=1.0 / 3.0)
    assert power_clock_factor(0.8, p) == 1.0 and power_clock_factor(1.5, p) == 1.0
    assert power_clock_factor(0.4, p) == pytest.approx(0.5 ** (1.0 / 3.0))  # clock ~ power^(1/3) on the DVFS curve
    assert power_clock_factor(0.4, replace(p, power_density_exponent=1.0)) == pytest.approx(0.5)  # voltage floor
    assert power_clock_factor(0.1, replace(p, power_density_threshold=0.0)) == 1.0  # threshold 0 = term off


def test_power_variant_counts_its_full_power_board_once(model: PerfModel) -> None:
    """The Max-Q's 300 W limit is applied by the power curve; its density is the 600 W card's, so the two terms never
    charge the same watts twice."""
    maxq, full = model.chips["rtx-pro-6000-blackwell-maxq"], model.chips["rtx-pro-6000-blackwell"]
    assert board_power_density(maxq) == pytest.approx(board_power_density(full))
    on = with_params(model, power_density_threshold=0.9, power_density_exponent=1.0, overhead_ref=0.0)
    assert on.speedup(maxq.id).value / on.speedup(full.id).value == pytest.approx(power_scale(0.5))


def test_shipped_power_cap_matches_the_stored_variant(model: PerfModel) -> None:
    """Either the nested choice kept the power-density term (then the T4 is capped) or the term is off."""
    t = model.params.power_density_threshold
    if model.params.meta.get("variant") in ("powercap", "fp32cap"):
        assert 0.3 <= t <= 1.0 and 1.0 / 3.0 - 1e-9 <= model.params.power_density_exponent <= 1.0 + 1e-9
        assert power_clock_factor(relative_power_density(model.chips["t4"]), model.params) < 1.0
        assert model.params.power_cap_cuda_only == (1.0 if model.params.meta["variant"] == "fp32cap" else 0.0)
    else:
        assert t == 0.0 and model.params.power_cap_cuda_only == 0.0


# ---------------------------------------------------------------- round 9: the cap binds on CUDA-core math (`fp32cap`)
def _fp32cap(model: PerfModel, on: bool = True, **changes) -> PerfModel:
    return with_params(model, power_density_threshold=0.8 if on else 0.0, power_density_exponent=1.0,
                       power_cap_cuda_only=1.0, overhead_ref=0.0, **changes)


def test_a_70_w_board_is_slower_for_its_spec_sheet_than_the_same_silicon_at_215_w(model: PerfModel) -> None:
    """Compute-bound fp32 step: the T4 (TU104 at 70 W) reaches less of its datasheet FP32 rate than the RTX 2080
    (TU104 at 215 W) once the cap is on; without it both reach the same share (same architecture, no segment factor)."""
    compute_bound = {"compute_share": {k: 0.98 for k in model.params.compute_share}, "model_size_slope": 0.0,
                     "pro_clock_factor": 1.0}
    t4, g80 = model.chips["t4"], model.chips["rtx-2080"]
    for on, expect_lower in ((False, False), (True, True)):
        m = _fp32cap(model, on, **compute_bound)
        per_tflops = [m.speedup(c.id, precision="fp32").value / c.fp32_tflops for c in (t4, g80)]
        assert (per_tflops[0] < 0.95 * per_tflops[1]) == expect_lower
        if not on:
            assert per_tflops[0] == pytest.approx(per_tflops[1], rel=0.02)


def test_fp32cap_slows_cuda_core_math_and_leaves_the_tensor_path_alone(model: PerfModel) -> None:
    """A tensor-core FLOP costs ~1/8 the energy of an FP32 FMA on the same board (V100: 15.7 vs 125 TFLOPS, T4: 8.1 vs
    65 TFLOPS, each at one power limit), so the cap binds on fp32 steps only: the T4 at fp32 and a tf32 request on
    Turing (no TF32: it runs as fp32) slow down; its amp step, the A10's / L4's tf32 and amp steps (tensor path), and
    every board at or above the threshold stay where they were."""
    off, on = _fp32cap(model, False), _fp32cap(model)
    for prec in ("fp32", "tf32"):
        assert on.speedup("t4", precision=prec).value < 0.97 * off.speedup("t4", precision=prec).value
    for cid in ("a10", "l4"):
        assert on.speedup(cid, precision="fp32").value < off.speedup(cid, precision="fp32").value
    for cid in ("t4", "a10", "l4", "rtx-6000-ada"):
        assert on.speedup(cid, precision="amp").value == pytest.approx(off.speedup(cid, precision="amp").value, rel=1e-12)
    for cid in ("a10", "l4"):
        assert on.speedup(cid, precision="tf32").value == pytest.approx(off.speedup(cid, precision="tf32").value, rel=1e-12)
    for cid in ("rtx-2080", "v100-sxm2-16gb", "a100-sxm4-80gb", "gtx-1080-ti", "rx-7900-xtx"):
        for prec in ("fp32", "amp"):
            assert on.speedup(cid, precision=prec).value == pytest.approx(off.speedup(cid, precision=prec).value, rel=1e-12)


def test_fp32cap_is_monotone_in_board_power_and_in_both_datasheet_rates(model: PerfModel) -> None:
    """Less board power never speeds a card up; more FP32 or tensor TFLOPS never slows it down, also where the capped
    CUDA path and the tensor path cross (a tf32 request on an Ampere card whose CUDA rate is raised past its tensor
    rate takes the faster of the two, it does not fall onto the capped path)."""
    on = _fp32cap(model)
    base = model.chips["rtx-a4000"]
    for prec in ("fp32", "amp"):
        speeds = []
        for tdp in (140, 100, 70, 50):
            chip = base.model_copy(update={"tdp_w": tdp})
            speeds.append(PerfModel({**model.chips, chip.id: chip}, on.params, model.calibrated_chips,
                                    model.power_variants).speedup(chip.id, precision=prec).value)
        assert speeds == sorted(speeds, reverse=True)
        assert (speeds[-1] < speeds[0]) == (prec == "fp32")
    g = model.chips["rtx-3090"]
    for scale in (1.0, 1.2, 1.5, 2.0, 3.0):
        for field in ("fp32_tflops", "fp16_tensor_tflops_fp32acc"):
            chip = g.model_copy(update={field: getattr(g, field) * scale})
            m = PerfModel({**model.chips, chip.id: chip}, on.params, model.calibrated_chips, model.power_variants)
            v = m.speedup(chip.id, precision="tf32").value
            assert v >= on.speedup(g.id, precision="tf32").value * (1 - 1e-12), (field, scale)


def test_a_power_starved_board_gains_more_from_amp_under_fp32cap(model: PerfModel) -> None:
    """Against its own fp32 run, a capped board's amp gain grows (its fp32 clock drops, its tensor path keeps it),
    while the round-3 cap on every path would leave the compute part of that gain unchanged."""
    def amp_gain(m: PerfModel) -> float:
        return m.speedup("t4", precision="amp").value / m.speedup("t4", precision="fp32").value
    assert amp_gain(_fp32cap(model)) > 1.05 * amp_gain(_fp32cap(model, False))
    every_path = with_params(model, power_density_threshold=0.8, power_density_exponent=1.0, power_cap_cuda_only=0.0,
                             overhead_ref=0.0)
    assert amp_gain(every_path) < amp_gain(_fp32cap(model))


# ---------------------------------------------------------------- round 7: tensor-core generation (variant `tcgen`)
OLD_TC = ("titan-v", "v100-sxm2-16gb", "v100-pcie-16gb", "rtx-2080-ti", "titan-rtx", "quadro-rtx-8000", "t4")
NEW_TC = ("rtx-3090", "a100-sxm4-80gb", "rtx-4090", "l4", "h100-sxm5-80gb", "rtx-5090", "rtx-pro-6000-blackwell")


def test_old_tensor_generations_are_volta_and_turing_from_the_chip_table(model: PerfModel) -> None:
    """The list is the `architecture` column: every Volta/Turing row gets the factor, no other chip does."""
    assert OLD_TENSOR_ARCHS == {"volta", "turing"}
    p = replace(model.params, tensor_gen_efficiency=0.6)
    for chip in model.chips.values():
        old = chip.vendor == "NVIDIA" and chip.architecture in ("volta", "turing")
        assert tensor_generation_factor(chip, p) == (0.6 if old else 1.0), chip.id
        assert not old or chip.has_tensor_cores, chip.id
    assert {c for c in OLD_TC} <= {c.id for c in model.chips.values() if c.architecture in OLD_TENSOR_ARCHS}


def test_older_tensor_generation_slows_only_the_tensor_path_of_volta_and_turing(model: PerfModel) -> None:
    """With eta_old < 1 a Volta/Turing card's amp speedup falls; Ampere-or-later amp, every fp32 speedup, Pascal, AMD
    and a Volta/Turing tf32 request (no TF32 there: it runs as fp32) stay exactly where they were."""
    off = with_params(model, tensor_gen_efficiency=1.0)
    on = with_params(model, tensor_gen_efficiency=0.6)
    for cid in OLD_TC:
        assert on.speedup(cid, precision="amp", model_params=15e6).value < off.speedup(cid, precision="amp", model_params=15e6).value
        assert on.speedup(cid, precision="tf32").value == pytest.approx(off.speedup(cid, precision="tf32").value, rel=1e-12)
    for cid in NEW_TC + ("gtx-1080-ti", "titan-xp", "rx-7900-xtx"):
        for prec in ("amp", "tf32"):
            assert on.speedup(cid, precision=prec).value == pytest.approx(off.speedup(cid, precision=prec).value, rel=1e-12)
    for cid in model.chips:
        assert on.speedup(cid, precision="fp32").value == pytest.approx(off.speedup(cid, precision="fp32").value, rel=1e-12)


def test_a_slower_old_generation_baseline_makes_newer_cards_look_faster(model: PerfModel) -> None:
    """Against an RTX 2080 Ti baseline at amp (both sides run amp), the slower Turing tensor path raises the speedup of
    an Ampere card, and the ratio of two Ampere-or-later cards does not move."""
    off = with_params(model, tensor_gen_efficiency=1.0)
    on = with_params(model, tensor_gen_efficiency=0.6)
    assert on.speedup("rtx-3090", baseline="rtx-2080-ti", precision="amp").value > \
        off.speedup("rtx-3090", baseline="rtx-2080-ti", precision="amp").value
    assert on.speedup("rtx-4090", baseline="rtx-3090", precision="amp").value == \
        pytest.approx(off.speedup("rtx-4090", baseline="rtx-3090", precision="amp").value, rel=1e-12)


def test_shipped_generation_factor_matches_the_stored_variant(model: PerfModel) -> None:
    """Either the nested choice kept `tcgen` (then the factor lies in (0.3, 1]) or the factor is exactly 1 (off)."""
    eta = model.params.tensor_gen_efficiency
    if model.params.meta.get("variant") == "tcgen":
        assert 0.3 < eta <= 1.0
    else:
        assert eta == 1.0


# ---------------------------------------------------------------- small-model overhead caps the gain
def test_overhead_caps_every_card_and_shrinks_with_model_size(model: PerfModel) -> None:
    m = with_params(model, overhead_ref=0.01)
    o_small, o_big = m.overhead_share("transformer", 15e6), m.overhead_share("transformer", 1e9)
    assert o_small == pytest.approx(0.01 * 1e8 / 15e6) and o_big < o_small
    for cid in ("rtx-4090", "rtx-5090", "h100-sxm5-80gb", "b200-180gb"):
        assert m.speedup(cid, model_params=15e6).value <= 1.0 / o_small + 1e-9


def test_overhead_compresses_the_gap_between_fast_cards(model: PerfModel) -> None:
    """A fixed per-step cost eats a larger share of the faster card's step: 5090/4090 and H100/A100 shrink."""
    base = with_params(model, overhead_ref=0.0)
    capped = with_params(model, overhead_ref=0.02)
    for fast, slow in (("rtx-5090", "rtx-4090"), ("h100-sxm5-80gb", "a100-sxm4-80gb")):
        free = base.speedup(fast, baseline=slow, model_params=15e6).value
        limited = capped.speedup(fast, baseline=slow, model_params=15e6).value
        assert 1.0 < limited < free


def test_overhead_is_bounded(model: PerfModel) -> None:
    p = replace(model.params, overhead_ref=0.2)
    assert overhead_share(p, "transformer", 1e3) == 0.5  # OVERHEAD_MAX: the formula never eats the whole step


# ---------------------------------------------------------------- the matmul share: elementwise work stays on CUDA cores
def test_matmul_share_caps_the_tensor_core_gain_and_leaves_fp32_alone(model: PerfModel) -> None:
    full = with_params(model, tensor_matmul_share=1.0, tensor_share_slope=0.0)
    part = with_params(model, tensor_matmul_share=0.8, tensor_share_slope=0.0)
    for cid in ("rtx-4090", "a100-sxm4-80gb", "rtx-2080-ti"):
        assert part.speedup(cid, precision="amp").value < full.speedup(cid, precision="amp").value
        assert part.speedup(cid, precision="fp32").value == pytest.approx(full.speedup(cid, precision="fp32").value)
    # a chip without tensor cores runs amp on its CUDA cores: nothing to cap
    assert part.speedup("titan-xp", precision="amp").value == pytest.approx(full.speedup("titan-xp", precision="amp").value)


def test_small_models_gain_less_from_tensor_cores_when_the_slope_is_positive(model: PerfModel) -> None:
    m = with_params(model, tensor_matmul_share=0.9, tensor_share_slope=0.1, overhead_ref=0.0)
    assert matmul_share(m.params, 15e6) < matmul_share(m.params, 3e8) <= 1.0
    assert matmul_share(m.params, 1e3) == 0.5  # clipped: never below half the compute time
    small = m.speedup("rtx-4090", baseline="rtx-3090", precision="amp", model_params=15e6).value
    big = m.speedup("rtx-4090", baseline="rtx-3090", precision="amp", model_params=3e8).value
    assert small != pytest.approx(big)


# ---------------------------------------------------------------- L2 cache: effective bandwidth
def test_l2_term_off_means_dram_bandwidth(model: PerfModel) -> None:
    off = replace(model.params, l2_bw_per_tflops=0.0)
    for chip in model.chips.values():
        assert dram_bandwidth(chip, off) == chip.mem_bandwidth_gbs


def test_l2_term_mixes_dram_and_l2_bandwidth(model: PerfModel) -> None:
    """Harmonic mix: the effective bandwidth lies between DRAM and L2 bandwidth, and a large L2 pulls it to L2's."""
    p = replace(model.params, l2_bw_per_tflops=200.0, l2_working_set_mb=32.0)
    for cid in ("rtx-3090", "rtx-4090", "rtx-5090", "a100-sxm4-80gb"):
        chip = model.chips[cid]
        l2_bw = 200.0 * (chip.fp32_tflops / (1 if cid.startswith("a100") else 2))
        b = dram_bandwidth(chip, p)
        assert min(chip.mem_bandwidth_gbs, l2_bw) <= b <= max(chip.mem_bandwidth_gbs, l2_bw)
    # 3090 (6 MB L2) stays near its DRAM bandwidth; 4090 (72 MB) moves most of the way to its L2 bandwidth
    r3090 = dram_bandwidth(model.chips["rtx-3090"], p) / model.chips["rtx-3090"].mem_bandwidth_gbs
    r4090 = dram_bandwidth(model.chips["rtx-4090"], p) / model.chips["rtx-4090"].mem_bandwidth_gbs
    assert abs(r3090 - 1) < abs(r4090 - 1)


def test_l2_sizes_cover_every_chip_with_a_source(model: PerfModel) -> None:
    sizes = l2_sizes()
    assert set(sizes) == set(model.chips)
    with L2_FILE.open(newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            assert r["source"].strip() and r["notes"].strip(), r["chip"]
            assert 1 <= float(r["l2_mb"]) <= 256
    assert sizes["rtx-4090"] > 10 * sizes["rtx-3090"]  # Ada's large L2, the reason the term exists


# ---------------------------------------------------------------- ranges
def test_range_is_wider_outside_the_calibrated_sizes(model: PerfModel) -> None:
    lo, hi = model.params.meta["calibration"]["model_params_range"]
    inside = model.speedup("rtx-4090", model_params=(lo * hi) ** 0.5)
    tiny = model.speedup("rtx-4090", model_params=lo / 100)
    assert tiny.high / tiny.value > inside.high / inside.value
    assert tiny.low / tiny.value < inside.low / inside.value


def test_fp32_range_is_narrower_than_tensor_range(model: PerfModel) -> None:
    fp32 = model.speedup("rtx-2080-ti", precision="fp32")
    amp = model.speedup("rtx-2080-ti", precision="amp")
    assert fp32.high / fp32.low < amp.high / amp.low


# ---------------------------------------------------------------- the sweep states the size it used
def test_sweep_uses_the_users_size_and_says_so(model: PerfModel) -> None:
    given = model.sweep("rtx-5090", 8, 7.0, model_params=15e6)
    assert given.model_params == 15e6 and given.model_params_source == "given"
    assert given.speedup == model.speedup("rtx-5090", model_params=15e6)
    assumed = model.sweep("rtx-5090", 8, 7.0)
    assert assumed.model_params == model.typical_params("transformer")
    assert assumed.model_params_source.startswith("assumed")
    assert f"{model.typical_params('transformer') / 1e6:.0f}M" in assumed.model_params_source  # the size it used
    js = assumed.to_json()
    assert js["model_params"] == assumed.model_params and js["model_params_source"] == assumed.model_params_source
    assert js["wall_hours"]["value"] == pytest.approx(8 * 7.0 / model.speedup("rtx-5090").value, rel=1e-2)


# ---------------------------------------------------------------- the independent calibration rows
def test_independent_rows_carry_their_provenance() -> None:
    with INDEPENDENT_CSV.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len({r["lab"] for r in rows}) >= 4
    for r in rows:
        for col in ("source", "lab", "url", "date", "software", "workload", "precision", "batch_size", "chip",
                    "throughput", "unit", "reference", "model_params_source"):
            assert r[col].strip(), (col, r["gpu"], r["workload"])
        assert r["url"].startswith("https://")
        assert not any(f.lower() in r["url"].lower() for f in FORBIDDEN), r["url"]  # held back for judging
        assert r["use_in_fit"] == "true" or r["excluded_because"], r
