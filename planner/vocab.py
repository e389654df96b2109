"""Shared vocabulary, defined once: the baseline GPU, part categories, workload classes and training precisions."""

from __future__ import annotations

from typing import Literal, get_args

BASELINE_CHIP = "gtx-1080-ti"  # every speedup is relative to the user's GTX 1080 Ti (fp32: Pascal has no tensor cores)

# The part categories of a build, in the order tables list them.
Category = Literal["gpu", "cpu", "motherboard", "memory", "storage", "cooler", "psu", "case"]
CATEGORIES: tuple[str, ...] = get_args(Category)
# Each category's label in a build list (PCPartPicker's row labels, in its order): shares, the UI's part pickers.
TYPE_LABELS: dict[str, str] = {"cpu": "CPU", "cooler": "CPU Cooler", "motherboard": "Motherboard", "memory": "Memory",
                               "storage": "Storage", "gpu": "Video Card", "case": "Case", "psu": "Power Supply"}

# 80 PLUS levels of a power supply, worst first ("none": not certified or not known).
Efficiency = Literal["none", "white", "bronze", "silver", "gold", "platinum", "titanium"]
EFFICIENCIES: tuple[str, ...] = get_args(Efficiency)

Workload = Literal["transformer", "cnn", "generic"]
Precision = Literal["fp32", "tf32", "amp"]
WORKLOADS: tuple[str, ...] = get_args(Workload)
PRECISIONS: tuple[str, ...] = get_args(Precision)
