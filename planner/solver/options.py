"""The (GPU count, power limit) options a request may take, the boards' GPU ceiling and the model-size VRAM floor."""

from __future__ import annotations

import math
from typing import Optional

from planner.catalog.load import Catalog
from planner.request import Request
from planner.settings import POWER_FRACTION_MAX, SUGGESTED_POWER_LIMITS

SUGGESTED_LIMITS = SUGGESTED_POWER_LIMITS  # the name older callers import (hardware-facts §4.2: 70-80 % of stock power)


def max_hostable_gpus(catalog: Catalog, req: Request) -> int:
    """Most GPUs any candidate board is known to host (CPU-wired x8 slots); a pinned board counts as any."""
    pinned = {catalog.get(i).id for i in req.pinned}
    excluded = {catalog.get(i).id for i in req.excluded}
    best = 1
    for b in catalog.by_category("motherboard"):
        if b.id in excluded:
            continue
        best = max(best, 4 if b.id in pinned else (b.gpu_slots_x8 or 1))
    return best


def options(req: Request) -> list[tuple[int, float]]:
    """(GPU count, power limit) pairs to solve: the user's limit, or for several GPUs at stock also the suggested
    limits, which can save a PSU class, case airflow or the wall circuit, when the user allows a limit
    (`allow_power_limit`: a limit resets at reboot unless made to persist, so sizing holds at stock otherwise)."""
    out = []
    for n in req.gpu_counts():
        out.append((n, req.power_fraction))
        if n > 1 and req.allow_power_limit and req.suggest_power_limit and req.power_fraction == POWER_FRACTION_MAX:
            out.extend((n, f) for f in SUGGESTED_POWER_LIMITS)
    return out


def with_memfit_floor(req: Request) -> tuple[Request, Optional[str]]:
    """A model size sets a VRAM floor per GPU (weights, gradients, AdamW states, overhead: planner.perf.memfit), the same
    floor on every path; the user's own --min-vram wins when higher."""
    if req.model_params is None:
        return req, None
    from planner.perf.memfit import training_floor_gib

    need, assumed = training_floor_gib(req.model_params, req.precision)
    floor = float(math.ceil(need))
    if floor <= (req.min_vram_gb or 0):
        return req, None
    return (req.model_copy(update={"min_vram_gb": floor}),
            f"VRAM floor {floor:g} GB per GPU: a {req.model_params:.3g}-parameter model needs about {need:.1f} GiB for "
            f"weights, gradients, AdamW states, activations and overhead (planner memfit --params "
            f"{req.model_params:g}); {assumed}")
