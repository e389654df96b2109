"""Power model: sustained DC draw, PSU sizing with transient headroom, vendor floor, wall power.

Formulas from ../shared/facts/hardware-facts.md §1.7 (sources there):
  P_rop = max(100, 50 + 5*DIMMs + 10*drives + 3*fans + 15*pumps)
  P_sus = sum(P_gpu) + P_cpu + P_rop                  (heat, wall power, legacy transient)
  P_train = sum(P_gpu) + f_train * P_cpu + P_rop      (the concurrent CPU+GPU training load)
  (A) sustained:  W >= P_train / 0.80
  (B) transient:  ATX 3.x, W > 450, native 12V-2x6:  W >= (3*sum(P_gpu) + P_cpu + P_rop) / 2
                  otherwise (ATX 2.x or no 16-pin):  W >= 1.47 * P_sus
  (C) vendor floor (single GPU): W >= NVIDIA recommended PSU
  (E) wall circuit: P_sus / efficiency <= 0.8 * V * I_breaker
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Optional

SUSTAINED_MAX_LOAD = 0.80  # (A)
ATX3_EXCURSION = 2.0  # PSU must carry 200 % of rating for 100 us (ATX 3.x, >450 W, 16-pin present)
GPU_EXCURSION = 3.0  # PCIe CEM 5.0: a card may draw 3x its sustained power for 100 us
ATX2_RATIO = 1.47  # Intel's ATX 2.x vs 3.0 sizing example: 1100 W / 750 W
ATX3_MIN_W = 450  # the 200 % excursion row only applies above 450 W
PCIE_8PIN_W = 150
NATIVE_16PIN_ABOVE_W = 450  # cards above this need a native 12V-2x6 cable (hardware-facts §1.3)
COMMERCIAL_SIZES_W = (450, 550, 650, 750, 850, 1000, 1200, 1300, 1500, 1600, 2000, 2200, 2800)
# Default household circuit: France, 230 V on a 16 A breaker, 80 % continuous-load rule.
CIRCUIT_VOLTS = 230
CIRCUIT_AMPS = 16
CONTINUOUS_FRACTION = 0.80
# 80 PLUS minimum efficiency at 20/50/100 % load (115 V internal, hardware-facts §1.5). Conservative
# for 230 V mains, where units run about 1-2 points better.
EFFICIENCY_CURVES: dict[str, tuple[float, float, float]] = {
    "none": (0.75, 0.78, 0.75),  # no certificate: an estimate, below the 80 PLUS floor
    "white": (0.80, 0.80, 0.80),
    "bronze": (0.82, 0.85, 0.82),
    "silver": (0.85, 0.88, 0.85),
    "gold": (0.87, 0.90, 0.87),
    "platinum": (0.90, 0.92, 0.89),
    "titanium": (0.92, 0.94, 0.90),
}


REST_FLOOR_W = 100  # the rest of the platform never draws less (hardware-facts §1.5)

# Share of the CPU's package power limit (PPT / PL2) drawn while the GPUs train: an ESTIMATE, basis in
# docs/rules.md ("The CPU during GPU training"). In a GPU-bound loop the CPU runs one launcher thread per GPU plus
# the input pipeline's worker processes (PyTorch DataLoader `num_workers`, typically 4-8 per GPU), not an all-core
# load; and a node-level measurement of an 8x H100 server training ResNet and Llama2-13b peaked at 8.4 kW, 18 %
# under the 10.2 kW sum of its parts' ratings with the GPUs near full use (Latif et al., "Empirical Measurements
# of AI Training Power Demand on a GPU-Accelerated Node", arXiv 2412.08602, 2024): the parts do not all sit at
# their limits at once. 0.6 keeps margin over that for heavy CPU-side augmentation. Only the sustained PSU rule
# (A) uses it; the transient rule (B), the wall circuit and the case heat keep full package power.
TRAINING_CPU_FRACTION = 0.6


def training_cpu_w(package_w: int) -> int:
    """CPU draw during GPU training: TRAINING_CPU_FRACTION of its package power, rounded up to a watt."""
    return math.ceil(package_w * TRAINING_CPU_FRACTION - 1e-9)


def rest_linear_w(dimms: Any, drives: Any, fans: Any, pumps: Any) -> Any:
    """Board, memory, drives, fans and pumps before the floor (hardware-facts §1.5 per-part estimates). Plain
    arithmetic, so the checker passes counts and the solver passes CP-SAT expressions through the same formula."""
    return 50 + 5 * dimms + 10 * drives + 3 * fans + 15 * pumps


def rest_of_platform_w(dimms: int = 2, drives: int = 1, fans: int = 3, pumps: int = 0) -> int:
    """Board, memory, drives, fans and pumps, at least REST_FLOOR_W."""
    return max(REST_FLOOR_W, rest_linear_w(dimms, drives, fans, pumps))


def required_sustained_w(sustained_w: float) -> int:
    """(A): the smallest rating that keeps the sustained load at or below 80 %."""
    return math.ceil(sustained_w / SUSTAINED_MAX_LOAD - 1e-9)


def required_transient_w(gpu_w: float, other_w: float, atx3_native: bool) -> int:
    """(B): rating needed for 100 us GPU excursions, by PSU class."""
    if atx3_native:
        return math.ceil((GPU_EXCURSION * gpu_w + other_w) / ATX3_EXCURSION - 1e-9)
    return math.ceil(ATX2_RATIO * (gpu_w + other_w) - 1e-9)


def round_to_commercial(watts: float) -> int:
    for size in COMMERCIAL_SIZES_W:
        if size >= watts:
            return size
    return math.ceil(watts / 100) * 100


@dataclass(frozen=True)
class PsuSizing:
    """Every term of the sizing, so a user can see why a number was chosen."""

    gpu_w: int
    cpu_w: int
    rest_w: int
    sustained_w: int  # every part at its limit: heat, wall power and the legacy transient branch
    cpu_training_w: int  # the CPU's share while the GPUs train (TRAINING_CPU_FRACTION of cpu_w)
    training_w: int  # GPU + CPU while training + rest: the load rule (A) sizes for
    required_sustained_w: int
    transient_w: int  # worst 100 us system draw: 3 x GPU + CPU + rest
    required_atx3_w: int
    required_atx2_w: int
    vendor_floor_w: Optional[int]
    recommended_w: int  # commercial size for an ATX 3.x unit with native 12V-2x6
    recommended_atx2_w: int  # same for a legacy unit

    def to_json(self) -> dict[str, Optional[int]]:
        return asdict(self)


def size_psu(
    gpu_tgp_w: list[int],
    cpu_power_w: int,
    *,
    dimms: int = 2,
    drives: int = 1,
    fans: int = 3,
    pumps: int = 0,
    vendor_floor_w: Optional[int] = None,
) -> PsuSizing:
    """Size a PSU for the given GPU board powers (after any power limit) and CPU package power."""
    gpu_w = int(sum(gpu_tgp_w))
    rest = rest_of_platform_w(dimms, drives, fans, pumps)
    other = cpu_power_w + rest
    sustained = gpu_w + other
    cpu_train = training_cpu_w(cpu_power_w)
    training = gpu_w + cpu_train + rest
    req_a = required_sustained_w(training)
    req_b3 = required_transient_w(gpu_w, other, atx3_native=True)
    req_b2 = required_transient_w(gpu_w, other, atx3_native=False)
    floor = vendor_floor_w if len(gpu_tgp_w) == 1 else None
    atx3 = max(req_a, req_b3, floor or 0)
    if atx3 <= ATX3_MIN_W:  # small units get no 200 % excursion guarantee: legacy branch applies
        atx3 = max(atx3, req_b2)
    atx2 = max(req_a, req_b2, floor or 0)
    return PsuSizing(
        gpu_w=gpu_w,
        cpu_w=cpu_power_w,
        rest_w=rest,
        sustained_w=sustained,
        cpu_training_w=cpu_train,
        training_w=training,
        required_sustained_w=req_a,
        transient_w=math.ceil(GPU_EXCURSION * gpu_w + other),
        required_atx3_w=max(req_a, req_b3),
        required_atx2_w=max(req_a, req_b2),
        vendor_floor_w=floor,
        recommended_w=round_to_commercial(atx3),
        recommended_atx2_w=round_to_commercial(atx2),
    )


def efficiency_at(load_fraction: float, level: str) -> float:
    """Efficiency at a load fraction, interpolated on the 80 PLUS 20/50/100 % points."""
    lo, mid, hi = EFFICIENCY_CURVES.get(level, EFFICIENCY_CURVES["none"])
    x = min(max(load_fraction, 0.0), 1.0)
    if x <= 0.2:
        return lo
    if x <= 0.5:
        return lo + (mid - lo) * (x - 0.2) / 0.3
    return mid + (hi - mid) * (x - 0.5) / 0.5


def wall_w(dc_w: float, efficiency: str, psu_w: int) -> float:
    """Power drawn at the wall for a sustained DC load on a PSU of the given rating and 80 PLUS level."""
    if dc_w <= 0:
        return 0.0
    return dc_w / efficiency_at(dc_w / psu_w, efficiency)


def circuit_limit_w(volts: int = CIRCUIT_VOLTS, amps: int = CIRCUIT_AMPS) -> int:
    """Continuous wall power a household circuit carries (80 % of the breaker rating)."""
    return int(CONTINUOUS_FRACTION * volts * amps)
