"""How much two sources disagree on the same measurement (same two GPUs, benchmark, precision): the floor under any
model's cross-lab error, printed by `python -m planner.perf.fit --diagnose`."""

from __future__ import annotations

import pytest

from planner.catalog.load import load_chips
from planner.perf.sources import Row, all_rows
from planner.perf.validate import benchmark_of, reproducibility

CHIPS = load_chips()


def _row(chip: str, ratio: float, source: str, workload: str, precision: str = "amp", ref: str | None = None) -> Row:
    return Row(CHIPS[chip], precision, "cnn", ratio, ref_chip=CHIPS[ref] if ref else None,
               ref_precision=precision if ref else "fp32", source=source, workload=workload)


def test_two_sources_ratios_of_the_same_pair_are_compared_whatever_their_references() -> None:
    rows = [  # source A divides by the 1080 Ti at fp32, source B by an RTX 2080 Ti at amp
        _row("rtx-3090", 3.0, "a", "ResNet-50 training (TF tf_cnn_benchmarks)"),
        _row("a100-pcie-40gb", 4.5, "a", "ResNet-50 training (TF tf_cnn_benchmarks)"),
        _row("rtx-3090", 1.6, "b", "ResNet-50 v1.5 ImageNet training", ref="rtx-2080-ti"),
        _row("a100-pcie-40gb", 2.0, "b", "ResNet-50 v1.5 ImageNet training", ref="rtx-2080-ti"),
        _row("a100-pcie-40gb", 9.9, "c", "ResNet-50 on 32x32 synthetic images"),  # another input size: not compared
    ]
    pairs = reproducibility(rows)
    same = [d for d in pairs if d.gpus == ("a100-pcie-40gb", "rtx-3090")]
    assert len(same) == 1 and set(same[0].sources) == {"a", "b"}
    assert same[0].size == pytest.approx((4.5 / 3.0) / (2.0 / 1.6) - 1)  # 1.5 against 1.25: 20 % apart
    # B's reference is a run at the same precision, so it is a GPU of the comparison too; A's (fp32) is not
    assert not any(d.gpus == ("rtx-2080-ti", "rtx-3090") for d in pairs)  # only B ran the 2080 Ti
    assert all("c" not in d.sources for d in pairs)


def test_benchmark_names_are_matched_across_sources_and_other_inputs_are_not() -> None:
    assert benchmark_of("ResNet-50 (torchvision resnet50), synthetic 224x224") == "resnet-50"
    assert benchmark_of("ResNet-50 training (TF tf_cnn_benchmarks)") == "resnet-50"
    assert benchmark_of("ResNet-152 ImageNet training (torchvision resnet152)") == "resnet-152"
    assert benchmark_of("ResNet-50 on 32x32 synthetic images (GPU-Insights)") is None
    assert benchmark_of("nnU-Net Task002_Heart 2d") is None


def test_the_calibration_sets_amp_rows_disagree_more_than_fp32_rows() -> None:
    pairs = reproducibility(all_rows())
    by = {p: sorted(d.size for d in pairs if d.precision == p) for p in ("fp32", "amp")}
    assert len(by["fp32"]) >= 10 and len(by["amp"]) >= 10
    median = {p: v[len(v) // 2] for p, v in by.items()}
    assert median["amp"] > 2 * median["fp32"]  # mixed precision is where harnesses differ (docs/perf.md)
