"""Training memory estimate (weights, grads, optimizer, activations, overhead) and which GPUs fit it at what batch."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from planner.errors import InputError
from planner.catalog.models import GpuChip
from planner.perf.physics import MAX_MODEL_PARAMS
from planner.settings import TYPICAL_BATCH, TYPICAL_SEQ
from planner.vocab import BASELINE_CHIP, PRECISIONS

GIB = 1024**3
OPTIMIZER_STATE_BYTES = {"adamw": 8, "adam": 8, "sgd": 4, "sgd-plain": 0}  # fp32 moments / momentum buffer per parameter
CONTEXT_GIB = 0.5  # estimate: CUDA context + cuBLAS/cuDNN workspaces
FRAGMENTATION = 0.10  # estimate: caching-allocator slack on top of what tensors need
LOGIT_BYTES = 8  # fp32 logits + their gradient per token and vocabulary entry (the loss runs in fp32 under autocast)


@dataclass(frozen=True)
class ModelShape:
    """What the memory depends on. Without layers+hidden (or an activation override) activations are not counted."""

    params: float
    optimizer: str = "adamw"
    precision: str = "amp"
    batch: int = 32
    seq_len: int = 512
    layers: Optional[int] = None
    hidden: Optional[int] = None
    heads: Optional[int] = None
    vocab: int = 0
    act_mb_per_sample: Optional[float] = None  # measured activations per sample, for non-transformer models

    def __post_init__(self) -> None:
        if not (0 < self.params <= MAX_MODEL_PARAMS and math.isfinite(self.params)):
            raise InputError(f"parameter count must be positive and at most {MAX_MODEL_PARAMS:g} (got {self.params:g})")
        if self.optimizer not in OPTIMIZER_STATE_BYTES:
            raise InputError(f"unknown optimizer {self.optimizer!r}; expected one of {', '.join(OPTIMIZER_STATE_BYTES)}")
        if self.precision not in PRECISIONS:
            raise InputError(f"unknown precision {self.precision!r}; expected one of {', '.join(PRECISIONS)}")
        for name in ("batch", "seq_len"):
            if getattr(self, name) < 1:
                raise InputError(f"{name.replace('_', ' ')} must be >= 1 (got {getattr(self, name)})")
        for name in ("layers", "hidden", "heads"):
            v = getattr(self, name)
            if v is not None and v < 1:
                raise InputError(f"{name} must be >= 1 (got {v})")
        if self.vocab < 0:
            raise InputError(f"vocab must be >= 0 (got {self.vocab})")
        if self.act_mb_per_sample is not None and not 1e-3 <= self.act_mb_per_sample <= 1e7:  # 1 kB .. 10 TB
            raise InputError(f"activation size must be between 0.001 and 10 000 000 MB per sample "
                             f"(got {self.act_mb_per_sample:g})")


# When only the parameter count is known (issue 26): the GPT-3 family's shapes (Brown et al. 2020, arXiv:2005.14165,
# Table 2.1: parameters, layers, d_model), the nearest row in log size; below 125M, 12 layers scaled by the cube root
# of the size and d_model from params ~ 12 x layers x d_model^2. A GPT-2 BPE vocabulary (50 257) counts the logits.
# Activations at a stated micro-batch and sequence length: what one GPU holds per step before gradient accumulation.
GPT3_SHAPES = ((125e6, 12, 768), (350e6, 24, 1024), (760e6, 24, 1536), (1.3e9, 24, 2048), (2.7e9, 32, 2560),
               (6.7e9, 32, 4096), (13e9, 40, 5140), (175e9, 96, 12288))
TYPICAL_VOCAB = 50257  # GPT-2's vocabulary (the batch and sequence: planner.settings)


def typical_shape(params: float) -> tuple[int, int]:
    """(layers, d_model) of a typical transformer of this size."""
    if params < GPT3_SHAPES[0][0]:
        layers = max(2, round(12 * (params / GPT3_SHAPES[0][0]) ** (1 / 3)))
        hidden = max(64, 64 * round(math.sqrt(params / (12 * layers)) / 64))
        return layers, hidden
    _, layers, hidden = min(GPT3_SHAPES, key=lambda r: abs(math.log(r[0] / params)))
    return layers, hidden


def assume_typical(shape: ModelShape) -> tuple[ModelShape, Optional[str]]:
    """A shape with only the parameter count gets a typical transformer's layers, width and vocabulary, so activations
    are counted; the sentence says what was assumed. A shape that says more is returned as it is."""
    if shape.layers is not None or shape.hidden is not None or shape.act_mb_per_sample is not None:
        return shape, None
    layers, hidden = typical_shape(shape.params)
    vocab = shape.vocab or TYPICAL_VOCAB
    from dataclasses import replace

    typical = replace(shape, layers=layers, hidden=hidden, vocab=vocab)
    return typical, (f"typical shape assumed for {shape.params:.3g} parameters: {layers} layers, d_model {hidden}, "
                     f"{vocab} tokens of vocabulary (GPT-3 family, Brown et al. 2020 Table 2.1), activations at batch "
                     f"{shape.batch} and sequence length {shape.seq_len}; give --layers/--hidden (or "
                     "--act-mb-per-sample), --batch and --seq for your model")


def training_floor_gib(params: float, precision: str) -> tuple[float, str]:
    """The VRAM one GPU needs to train a model known only by its size: the typical shape at the typical micro-batch
    and sequence length (the same estimate `planner memfit --params N` prints by default)."""
    shape, note = assume_typical(ModelShape(params=params, precision=precision, batch=TYPICAL_BATCH,
                                            seq_len=TYPICAL_SEQ))
    return estimate_memory(shape).total_gib, note or ""


@dataclass(frozen=True)
class ChipFit:
    chip_id: str
    name: str
    vram_gb: float
    fits: bool  # the requested batch fits
    max_batch: Optional[int]  # None when activations are unknown; 0 when not even the model fits


@dataclass(frozen=True)
class MemoryEstimate:
    shape: ModelShape
    breakdown_gib: dict[str, float]  # at the requested batch
    fixed_gib: float  # everything that does not grow with the batch (incl. overhead)
    per_sample_gib: Optional[float]
    total_gib: float
    chips: list[ChipFit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def baseline(self) -> Optional[ChipFit]:
        return next((c for c in self.chips if c.chip_id == BASELINE_CHIP), None)

    def baseline_limited(self) -> bool:
        """True when the 1080 Ti's 11 GB cannot run the requested batch but a bigger card can."""
        b = self.baseline()
        return b is not None and not b.fits and any(c.fits for c in self.chips)

    def to_json(self) -> dict[str, Any]:
        b = self.baseline()
        return {
            "inputs": self.shape.__dict__, "breakdown_gib": {k: round(v, 3) for k, v in self.breakdown_gib.items()},
            "fixed_gib": round(self.fixed_gib, 3),
            "per_sample_gib": None if self.per_sample_gib is None else round(self.per_sample_gib, 4),
            "total_gib": round(self.total_gib, 3),
            "baseline_limited": self.baseline_limited(),
            "baseline_max_batch": None if b is None else b.max_batch,
            "chips": [c.__dict__ for c in self.chips], "notes": self.notes,
        }


def activation_bytes_per_sample(shape: ModelShape) -> Optional[float]:
    """Transformer activations kept for backward, per sample (Korthikanti et al. 2022, arXiv:2205.05198, eq. 1).

    Per layer: s*h*(34 + 5*a*s/h) bytes in 16-bit; fp32/tf32 store 4-byte activations, so the 16-bit figure is doubled.
    Plus logits and their gradient when a vocabulary is given. A measured per-sample figure overrides the formula.
    """
    if shape.act_mb_per_sample is not None:
        return shape.act_mb_per_sample * 1024**2
    if shape.layers is None or shape.hidden is None:
        return None
    s, h, L = shape.seq_len, shape.hidden, shape.layers
    a = shape.heads or max(1, h // 64)
    per_layer = s * h * (34 + 5 * a * s / h)
    act = L * per_layer * (1.0 if shape.precision == "amp" else 2.0)
    return act + s * shape.vocab * LOGIT_BYTES


def estimate_memory(shape: ModelShape, chips: Iterable[GpuChip] = ()) -> MemoryEstimate:
    """Bytes = weights + grads + optimizer states (+ amp weight copies) + batch x activations, + overhead."""
    P = shape.params
    parts = {
        "weights": 4 * P / GIB,  # fp32 master weights (autocast keeps parameters in fp32)
        "amp_weight_copies": (2 * P / GIB) if shape.precision == "amp" else 0.0,  # fp16 casts cached in the forward
        "gradients": 4 * P / GIB,
        "optimizer_states": OPTIMIZER_STATE_BYTES[shape.optimizer] * P / GIB,
    }
    act = activation_bytes_per_sample(shape)
    per_sample = None if act is None else act * (1 + FRAGMENTATION) / GIB
    static = sum(parts.values())
    fixed = static * (1 + FRAGMENTATION) + CONTEXT_GIB
    parts["activations"] = 0.0 if act is None else act * shape.batch / GIB
    parts["overhead"] = CONTEXT_GIB + FRAGMENTATION * (static + parts["activations"])
    total = fixed + (per_sample or 0.0) * shape.batch
    notes = ["estimate: overhead = 0.5 GiB CUDA context/workspaces + 10 % allocator slack; VRAM taken as GiB"]
    if act is None:
        notes.append("activations not counted: give --layers and --hidden (transformer) or --act-mb-per-sample")
    elif shape.vocab == 0 and shape.act_mb_per_sample is None:
        notes.append("logits not counted: give --vocab for a language model (s x vocab x 8 bytes per sample)")
    fits = []
    for chip in chips:
        room = chip.vram_gb - fixed
        if per_sample is None:
            max_batch = None
            ok = total <= chip.vram_gb
        else:
            max_batch = max(0, math.floor(room / per_sample)) if room > 0 else 0
            ok = max_batch >= shape.batch
        fits.append(ChipFit(chip.id, chip.name, chip.vram_gb, ok, max_batch))
    est = MemoryEstimate(shape, parts, fixed, per_sample, total, fits, notes)
    b = est.baseline()
    if b is not None and not b.fits:
        limit = "the model itself does not fit" if (b.max_batch == 0 or fixed > b.vram_gb) else f"max batch {b.max_batch}"
        bigger = [c.name for c in fits if c.fits]
        if bigger:
            notes.append(f"the GTX 1080 Ti's 11 GB is the limit here: {limit} (asked batch {shape.batch}); "
                         f"fits on {len(bigger)} of the listed GPUs")
        else:
            notes.append(f"batch {shape.batch} fits on none of the listed GPUs (GTX 1080 Ti: {limit}); "
                         "lower the batch, use activation checkpointing or gradient accumulation")
    return est


# System RAM a training box needs (issue 34 item 4), all estimates: the OS, desktop and tools; per training process
# the Python interpreter, CUDA context, four data-loader workers and pinned staging buffers; and per process a CPU copy
# of the weights and optimizer state while a checkpoint is written (fp32 weights + two Adam moments + gradients).
RAM_OS_GB = 16
RAM_PER_PROCESS_GB = 6
RAM_CHECKPOINT_BYTES_PER_PARAM = 16
RAM_FLOOR_GB = 32  # the smallest kit a builder orders for a training box (2 x 16 GB)


def system_ram_need_gb(processes: int, params: Optional[float]) -> int:
    """GB of system RAM the workload needs: OS + per training process (runtime, loaders, pinned buffers, checkpoint
    copy of weights and optimizer state), at least RAM_FLOOR_GB. An estimate; a measured peak RSS beats it."""
    per_process = RAM_PER_PROCESS_GB + (params or 0.0) * RAM_CHECKPOINT_BYTES_PER_PARAM / 1e9
    return max(RAM_FLOOR_GB, math.ceil(RAM_OS_GB + max(1, processes) * per_process))

