"""What limits a model's training step on a card: the speed model's step split into tensor math, CUDA-core math,
memory traffic and fixed per-step overhead, and why a small model's speedup differs from the big-model figure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from planner.catalog.models import GpuChip
from planner.perf.model import REFERENCE_CHIP, PerfModel
from planner.perf.physics import (
    PerfParams, bandwidth_gbs, compute_share, compute_terms, compute_tflops, executed_precision, matmul_share,
    overhead_share, power_scale, tensor_generation_factor,
)

BIG_MODEL_PARAMS = 1e9  # the "big-model figure" a small model's speedup is compared with
UNDERFILLED = 0.9  # a card whose speedup at the user's size is below this share of its big-model speedup is underfilled

LABELS = {
    "tensor": "compute (tensor-core matrix math)",
    "cuda": "compute on the CUDA cores (normalisation, activations, optimizer, non-matmul math)",
    "memory": "memory bandwidth (memory-bound kernels)",
    "overhead": "fixed per-step overhead (kernel launches, Python, data loading)",
}
SHORT = {"tensor": "compute", "cuda": "CUDA-core math", "memory": "memory bandwidth", "overhead": "launch overhead"}


@dataclass(frozen=True)
class Limit:
    """The card's step split (shares summing to 1), the part that limits it, and the size effect on its speedup."""
    chip: str
    shares: dict[str, float]
    limit: str  # key of LABELS
    speedup: float  # at the user's size
    big_model_speedup: float  # at BIG_MODEL_PARAMS
    model_params: float

    @property
    def size_effect(self) -> float:
        """The user's speedup over the big-model speedup (1 = size makes no difference)."""
        return self.speedup / self.big_model_speedup if self.big_model_speedup else 1.0

    @property
    def underfilled(self) -> bool:
        return self.size_effect < UNDERFILLED

    def sentence(self) -> str:
        """One line: what limits the model on this card, and what would fill it (an estimate from the speed model)."""
        share = self.shares[self.limit]
        text = f"limited by {LABELS[self.limit]} ({share:.0%} of its step, estimated)"
        if self.model_params < BIG_MODEL_PARAMS and abs(self.size_effect - 1.0) >= 0.03:
            text += (f"; at {self.model_params / 1e6:.3g}M parameters it gains {self.speedup:.2f}x where a "
                     f"{BIG_MODEL_PARAMS / 1e9:g}B model gains {self.big_model_speedup:.2f}x")
        if self.underfilled:
            text += ("; more of a small model's step is work the card's tensor cores do not speed up, so a bigger batch "
                     "(more tokens per step) or several runs at once on it (`--runs-per-gpu auto`; measure the gain "
                     "with `planner calibrate --concurrent`) would use it better")
        return text

    def to_json(self) -> dict[str, object]:
        return {"limit": SHORT[self.limit], "limit_text": LABELS[self.limit],
                "step_shares": {SHORT[k]: round(v, 3) for k, v in self.shares.items()},
                "big_model_speedup": round(self.big_model_speedup, 2), "size_effect": round(self.size_effect, 3),
                "underfilled": self.underfilled, "limit_sentence": self.sentence()}


def step_shares(chip: GpuChip, precision: str, workload: str, p: PerfParams, ref: GpuChip,
                model_params: Optional[float] = None) -> dict[str, float]:
    """Shares of the card's step time (same formula as physics.relative_step_time): the compute part split between
    tensor and CUDA cores by the Amdahl mix, the memory part, the fixed overhead. An `average` model: its first member."""
    if p.members:
        p = next(iter(p.members.values()))
    prec = executed_precision(chip, precision)
    share = compute_share(p, workload, model_params)
    f = matmul_share(p, model_params, workload)
    t_compute = share * compute_tflops(ref, "fp32", p, f) / compute_tflops(chip, prec, p, f)
    t_memory = (1.0 - share) * bandwidth_gbs(ref, "fp32", p) / bandwidth_gbs(chip, prec, p)
    cuda, tensor = compute_terms(chip, prec, p)
    tc = tensor * p.tensor_efficiency * tensor_generation_factor(chip, p)
    tensor_part = f / tc / (f / tc + (1.0 - f) / cuda) if tc > cuda else 0.0  # time share of the compute part
    scale = (p.amd_software_factor if chip.vendor == "AMD" else 1.0) * power_scale(1.0)
    o = overhead_share(p, workload, model_params)
    parts = {"tensor": (1 - o) * t_compute * tensor_part / scale, "cuda": (1 - o) * t_compute * (1 - tensor_part) / scale,
             "memory": (1 - o) * t_memory / scale, "overhead": o}
    total = sum(parts.values())
    return {k: v / total for k, v in parts.items()}


def limit_of(model: PerfModel, chip_id: str, *, precision: str = "amp", workload: str = "transformer",
             model_params: Optional[float] = None, baseline: str = REFERENCE_CHIP) -> Limit:
    """What limits the user's model on this card (at their size, else the class's typical size), and its speedup
    against the big-model figure."""
    chip = model.resolve(chip_id)
    size, _ = model.model_size(workload, model_params)
    shares = step_shares(chip, precision, workload, model.params, model.chips[REFERENCE_CHIP], size)
    small = model.speedup(chip.id, baseline=baseline, workload=workload, precision=precision, model_params=size).value
    big = model.speedup(chip.id, baseline=baseline, workload=workload, precision=precision,
                        model_params=max(size, BIG_MODEL_PARAMS)).value
    return Limit(chip.id, shares, max(shares, key=lambda k: shares[k]), small, big, size)
