"""Invariants of the speed model: baseline = 1, monotone in specs, precision rules, power-limit curve, ranges."""

from __future__ import annotations

import pytest

from planner.errors import InputError
from planner.perf.model import PerfModel, load_perf_model, power_scale

PRECISIONS = ("fp32", "tf32", "amp")
WORKLOADS = ("transformer", "cnn", "generic")


@pytest.fixture(scope="module")
def model() -> PerfModel:
    return load_perf_model()


def perturbed(m: PerfModel, chip_id: str, **update: float) -> PerfModel:
    chips = dict(m.chips)
    chips[chip_id] = chips[chip_id].model_copy(update=update)
    return PerfModel(chips, m.params, m.calibrated_chips)


def test_baseline_is_exactly_one(model: PerfModel) -> None:
    for w in WORKLOADS:
        assert model.speedup("gtx-1080-ti", workload=w, precision="fp32").value == pytest.approx(1.0)
        for chip in model.chips.values():
            for p in PRECISIONS:
                if chip.has_tensor_cores or p == "fp32":
                    e = model.speedup(chip.id, baseline=chip.id, workload=w, precision=p)
                    assert (e.value, e.low, e.high) == (1.0, 1.0, 1.0), (chip.id, p)


def test_pascal_amp_is_fp32_ish(model: PerfModel) -> None:
    # No tensor cores: amp only saves memory traffic, never tensor speed. Measured amp/fp32 on Pascal: Lambda 0.93-1.36x
    # (median 1.24x, 1080 Ti), GPU-Insights 1.13x (Titan Xp); the round-3 multi-lab fit (amp memory factor 0.48,
    # set by tensor-core cards) gives up to ~1.41x on the GTX 1080, above them: a known over-prediction of Pascal amp
    # (docs/perf.md, Pascal bias). Tensor speed leaking into Pascal would give > 2x, which this bound still catches.
    for cid in ("gtx-1080-ti", "gtx-1080", "gtx-1070", "titan-xp"):
        for w in WORKLOADS:
            fp32 = model.speedup(cid, workload=w, precision="fp32").value
            amp = model.speedup(cid, workload=w, precision="amp").value
            assert 1.0 <= amp / fp32 <= 1.5, (cid, w, amp / fp32)
            assert model.speedup(cid, workload=w, precision="tf32").value == pytest.approx(fp32)


def test_baseline_without_tensor_cores_stays_fp32(model: PerfModel) -> None:
    # The 4090's amp speedup is measured against the 1080 Ti's fp32 run, so it exceeds the fp32-vs-fp32 figure.
    amp = model.speedup("rtx-4090", precision="amp").value
    fp32 = model.speedup("rtx-4090", precision="fp32").value
    assert amp > 1.5 * fp32
    # A tensor-core baseline runs the same precision: amp and fp32 ratios against a 3090 stay close.
    vs = [model.speedup("rtx-4090", baseline="rtx-3090", precision=p).value for p in PRECISIONS]
    assert max(vs) / min(vs) < 1.6


@pytest.mark.parametrize("workload", WORKLOADS)
def test_amp_at_least_fp32_on_tensor_core_gpus(model: PerfModel, workload: str) -> None:
    for chip in model.chips.values():
        if not chip.has_tensor_cores:
            continue
        fp32 = model.speedup(chip.id, workload=workload, precision="fp32").value
        tf32 = model.speedup(chip.id, workload=workload, precision="tf32").value
        amp = model.speedup(chip.id, workload=workload, precision="amp").value
        assert amp >= tf32 >= fp32 * 0.999, chip.id
        assert amp > 1.2 * fp32, chip.id  # fp16 tensor math plus halved activation traffic


def test_tf32_only_from_ampere(model: PerfModel) -> None:
    for cid in ("rtx-2080-ti", "titan-v", "v100-sxm2-32gb", "t4"):
        assert model.speedup(cid, precision="tf32").value == pytest.approx(model.speedup(cid, precision="fp32").value)
    assert model.speedup("a100-sxm4-80gb", precision="tf32").value > 1.5 * model.speedup("a100-sxm4-80gb", precision="fp32").value


@pytest.mark.parametrize("chip_id", ["rtx-3090", "rtx-4090", "a100-sxm4-80gb", "h100-sxm5-80gb", "rtx-2080-ti", "rx-7900-xtx"])
@pytest.mark.parametrize("precision", PRECISIONS)
def test_monotone_in_bandwidth_and_compute(model: PerfModel, chip_id: str, precision: str, monkeypatch) -> None:
    chip = model.chips[chip_id]
    for w in WORKLOADS:
        base = model.speedup(chip_id, workload=w, precision=precision).value
        more_bw = perturbed(model, chip_id, mem_bandwidth_gbs=chip.mem_bandwidth_gbs * 1.2)
        assert more_bw.speedup(chip_id, workload=w, precision=precision).value > base
        more_fp32 = perturbed(model, chip_id, fp32_tflops=chip.fp32_tflops * 1.2)
        assert more_fp32.speedup(chip_id, workload=w, precision=precision).value >= base
        if chip.fp16_tensor_tflops_fp32acc:
            more_tc = perturbed(model, chip_id, fp16_tensor_tflops_fp32acc=chip.fp16_tensor_tflops_fp32acc * 1.2)
            assert more_tc.speedup(chip_id, workload=w, precision=precision).value >= base
    if precision == "fp32":  # the fp32 path is compute-sensitive everywhere (at the same board power the fp32 cap of
        # `fp32cap` takes back part of the gain, never all of it while its exponent is below 1)
        more_fp32 = perturbed(model, chip_id, fp32_tflops=chip.fp32_tflops * 1.2)
        base_t = model.speedup(chip_id, workload="transformer", precision="fp32").value
        assert more_fp32.speedup(chip_id, workload="transformer", precision="fp32").value > base_t * 0.999
    if precision == "amp" and chip.has_tensor_cores:
        from planner.perf import physics
        measured = physics.achieved_matmul()
        before = model.speedup(chip_id, precision="amp").value
        if chip_id in measured:  # a measured achieved rate replaces the datasheet one (issue 39): faster measurement, faster
            monkeypatch.setattr(physics, "achieved_matmul", lambda: {**measured, chip_id: measured[chip_id] * 1.5})
            assert model.speedup(chip_id, precision="amp").value > before
        else:
            more_tc = perturbed(model, chip_id, fp16_tensor_tflops_fp32acc=chip.fp16_tensor_tflops_fp32acc * 1.5)
            assert more_tc.speedup(chip_id, precision="amp").value > before


def test_faster_generations_rank_sensibly(model: PerfModel) -> None:
    s = {c: model.speedup(c).value for c in ("rtx-3090", "rtx-4090", "rtx-5090", "a100-sxm4-80gb", "h100-sxm5-80gb", "b200-180gb")}
    assert s["rtx-3090"] < s["rtx-4090"] < s["rtx-5090"]
    assert s["a100-sxm4-80gb"] < s["h100-sxm5-80gb"] < s["b200-180gb"]


def test_ranges_bracket_the_value(model: PerfModel) -> None:
    for chip in model.chips.values():
        e = model.speedup(chip.id)
        assert 0 < e.low < e.value < e.high
    # AMD has no calibration row: its range is wider than an NVIDIA chip of a calibrated architecture.
    amd, nv = model.speedup("rx-7900-xtx"), model.speedup("rtx-3090")
    assert amd.high / amd.low > nv.high / nv.low


def test_baseline_swap_is_a_ratio(model: PerfModel) -> None:
    a = model.speedup("h100-sxm5-80gb", precision="amp").value
    b = model.speedup("a100-sxm4-80gb", precision="amp").value
    assert model.speedup("h100-sxm5-80gb", baseline="a100-sxm4-80gb", precision="amp").value == pytest.approx(a / b)


def test_power_curve_matches_hardware_facts() -> None:
    assert power_scale(1.0) == 1.0
    assert power_scale(0.8) == pytest.approx(0.95)
    assert power_scale(0.7) == pytest.approx(0.90)
    assert power_scale(0.6) == pytest.approx(0.82)
    xs = [0.4 + i * 0.01 for i in range(61)]
    ys = [power_scale(x) for x in xs]
    assert all(b >= a for a, b in zip(ys, ys[1:]))
    for bad in (0.0, 0.2, 1.2, -1):
        with pytest.raises(InputError):
            power_scale(bad)


def test_power_limit_scales_speedup(model: PerfModel) -> None:
    assert model.power_scale(0.8) == pytest.approx(0.95)
    full = model.speedup("rtx-3090")
    limited = model.speedup("rtx-3090", power_fraction=0.8)
    assert limited.value == pytest.approx(full.value * 0.95)
    assert limited.low == pytest.approx(full.low * 0.95)


def test_bad_workload_and_precision(model: PerfModel) -> None:
    with pytest.raises(InputError):
        model.speedup("rtx-4090", workload="diffusion")
    with pytest.raises(InputError):
        model.speedup("rtx-4090", precision="fp8")


def test_model_is_cached() -> None:
    assert load_perf_model() is load_perf_model()
