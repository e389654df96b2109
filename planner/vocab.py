"""Shared vocabulary, defined once: the baseline GPU, workload classes and training precisions."""

from __future__ import annotations

from typing import Literal, get_args

BASELINE_CHIP = "gtx-1080-ti"  # every speedup is relative to the user's GTX 1080 Ti (fp32: Pascal has no tensor cores)

Workload = Literal["transformer", "cnn", "generic"]
Precision = Literal["fp32", "tf32", "amp"]
WORKLOADS: tuple[str, ...] = get_args(Workload)
PRECISIONS: tuple[str, ...] = get_args(Precision)
