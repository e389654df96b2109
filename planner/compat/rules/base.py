"""What a rule is: a named check on a Build and the matching CP-SAT encoding, sharing one attribute set."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Protocol

from planner.compat import power
from planner.catalog.models import AnyPart, Finding, GpuChip, Severity

if TYPE_CHECKING:  # pragma: no cover
    from ortools.sat.python import cp_model

CASE_FANS = 3  # fans assumed in a case besides the CPU cooler's (hardware-facts §1.5 ROP estimate)
DEFAULT_FRONT_RAD_LOSS_MM = 55  # estimate: 27 mm radiator + 25 mm fans + 3 mm margin
ASSUMED_RAD_MM = 27  # the radiator thickness inside DEFAULT_FRONT_RAD_LOSS_MM and case clearance figures
PERMISSIVE = 10**6  # stands for an unknown limit: the rule cannot refute it (reported as unverified)


@dataclass
class Build:
    """A (possibly partial) selection: one part per category, `gpu_count` identical GPUs."""

    parts: dict[str, AnyPart]
    chips: dict[str, GpuChip]
    gpu_count: int = 1
    power_fraction: float = 1.0  # GPU power limit as a fraction of stock board power
    workload: str = "transformer"
    precision: str = "amp"
    model_params: Optional[float] = None  # model size in parameters (None: the workload class's typical size)

    def get(self, category: str) -> Optional[AnyPart]:
        return self.parts.get(category)

    def has(self, *categories: str) -> bool:
        return all(c in self.parts for c in categories)

    def ids(self, *categories: str) -> list[str]:
        return [self.parts[c].id for c in categories if c in self.parts]


# ---- per-part attributes shared by check() and encode() ---------------------------------------

def gpu_chip(gpu: Any, chips: dict[str, GpuChip]) -> GpuChip:
    return chips[gpu.chip]


def gpu_power_w(gpu: Any, chips: dict[str, GpuChip], power_fraction: float = 1.0) -> int:
    """Configured board power of one card: partner TGP (or the chip's) times the power limit."""
    stock = gpu.tgp_w or chips[gpu.chip].tdp_w
    return int(round(stock * power_fraction))


def gpu_vendor_floor_w(gpu: Any, chips: dict[str, GpuChip]) -> int:
    return gpu.recommended_psu_w or chips[gpu.chip].recommended_psu_w or 0


def cooler_fans(cooler: Any) -> int:
    if cooler.fans is not None:
        return cooler.fans
    if cooler.type == "aio":
        return max(1, (cooler.radiator_mm or 120) // 120)
    return 1


def cooler_pumps(cooler: Any) -> int:
    return 1 if cooler.type == "aio" else 0


@dataclass(frozen=True)
class PowerTerms:
    gpu_w: int
    cpu_w: int
    rest_w: int

    @property
    def sustained_w(self) -> int:
        return self.gpu_w + self.cpu_w + self.rest_w

    @property
    def cpu_training_w(self) -> int:
        return power.training_cpu_w(self.cpu_w)

    @property
    def training_w(self) -> int:
        """The concurrent CPU+GPU training load the sustained PSU rule sizes for (power.TRAINING_CPU_FRACTION)."""
        return self.gpu_w + self.cpu_training_w + self.rest_w

    @property
    def other_w(self) -> int:
        return self.cpu_w + self.rest_w


def power_terms(b: Build) -> PowerTerms:
    """Sustained draw terms of a build; missing parts count as typical (2 DIMMs, 1 drive, air cooler)."""
    gpu = b.get("gpu")
    gpu_w = b.gpu_count * gpu_power_w(gpu, b.chips, b.power_fraction) if gpu else 0
    cpu = b.get("cpu")
    cpu_w = cpu.power_w if cpu else 0
    mem, cooler = b.get("memory"), b.get("cooler")
    rest = power.rest_of_platform_w(mem.modules if mem else 2, 1, CASE_FANS + (cooler_fans(cooler) if cooler else 1),
                                    cooler_pumps(cooler) if cooler else 0)
    return PowerTerms(gpu_w=gpu_w, cpu_w=cpu_w, rest_w=rest)


def psu_atx3_native(psu: Any) -> bool:
    """Does the unit carry the ATX 3.x 200 % excursion guarantee (>450 W with a native 16-pin)?"""
    return bool(psu.is_atx3) and psu.wattage_w > power.ATX3_MIN_W and (psu.connectors_12v2x6 or 0) >= 1


def psu_efficiency_permille(psu: Any) -> int:
    """Full-load 80 PLUS efficiency in per-mille: the conservative figure for the wall-circuit rule."""
    return int(round(power.EFFICIENCY_CURVES[psu.efficiency][2] * 1000))


def slots_needed(gpu: Any, count: int) -> int:
    """Expansion slots taken by `count` cards; open-air coolers need one free slot between cards."""
    width = gpu.slot_count or 0
    gap = 0 if gpu.cooling in ("blower", "passive") else 1
    return count * width + (count - 1) * gap


def gpu_radiator_mm(gpu: Any) -> Optional[int]:
    return gpu.radiator_mm if gpu is not None and gpu.cooling == "hybrid" else None


def build_radiator_mm(cooler: Any, gpu: Any = None) -> Optional[int]:
    """The build's liquid radiator: the CPU AIO's, or a hybrid card's (the planner fits one per case)."""
    if cooler is not None and cooler.type == "aio":
        return cooler.radiator_mm
    return gpu_radiator_mm(gpu)


def radiator_front_only(cooler: Any, case: Any, gpu: Any = None) -> Optional[bool]:
    """None: no radiator or it fits nowhere; False: fits an exhaust mount (top/rear); True: only an intake mount
    takes it (front, or bottom), where it sits in the air the GPUs breathe."""
    size = build_radiator_mm(cooler, gpu)
    if size is None:
        return None
    if size in case.radiator_top or size in case.radiator_rear:
        return False
    if size in case.radiator_front or size in case.radiator_bottom:
        return True
    return None


def intake_radiator_position(case: Any) -> str:
    """Where an intake radiator goes: the front where the case has front radiator mounts, else the bottom."""
    return "front" if case.radiator_front else "bottom"


def front_loss_mm(case: Any) -> int:
    return int(case.front_radiator_clearance_mm or DEFAULT_FRONT_RAD_LOSS_MM)


def radiator_extra_mm(cooler: Any) -> int:
    """Millimetres a CPU AIO's radiator is thicker than the 27 mm the case figures assume (38 mm -> 11)."""
    if cooler is None or cooler.type != "aio" or cooler.radiator_thickness_mm is None:
        return 0
    return max(0, int(round(cooler.radiator_thickness_mm)) - ASSUMED_RAD_MM)


def mm(value: Optional[float]) -> int:
    """Millimetres as integers for the solver (tenths kept: 357.6 mm -> 3576)."""
    return int(round(value * 10)) if value is not None else PERMISSIVE


def fmt_mm(tenths: int) -> str:
    return f"{tenths / 10:g} mm"


class Encoder(Protocol):
    """What the solver offers a rule: selection literals summed over attributes."""

    model: "cp_model.CpModel"
    gpu_count: int
    power_fraction: float
    chips: dict[str, GpuChip]
    workload: str
    precision: str
    model_params: Optional[float]

    pinned: frozenset[str]

    def attr(self, category: str, fn: Callable[[Any], Optional[float]], unknown: int = PERMISSIVE) -> Any: ...
    def strict(self, category: str, fn: Callable[[Any], Optional[float]], fail: int, passing: int = PERMISSIVE) -> Any: ...
    def has(self, category: str, pred: Callable[[Any], Optional[bool]], unknown: bool = True) -> Any: ...
    def bool_var(self, name: str) -> Any: ...
    def power(self) -> dict[str, Any]: ...


class Rule:
    """One compatibility rule: check() a build, encode() the same condition into CP-SAT."""

    name: ClassVar[str] = ""
    severity: ClassVar[Severity] = Severity.PROBLEM
    categories: ClassVar[tuple[str, ...]] = ()
    summary: ClassVar[str] = ""
    blocks: ClassVar[bool] = True  # a warning the solver avoids by default; False: advice only (a derate)
    strict_unknown: ClassVar[bool] = False  # unknown data rules the part out in the solver unless pinned

    def applies(self, b: Build) -> bool:
        return b.has(*self.categories)

    def check(self, b: Build) -> list[Finding]:  # pragma: no cover - abstract
        raise NotImplementedError

    def encode(self, m: Encoder) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def finding(self, message: str, parts: list[str], severity: Optional[Severity] = None) -> Finding:
        return Finding(rule=self.name, severity=severity or self.severity, message=message, parts=parts)

    def unverified(self, what: str, parts: list[str]) -> Finding:
        """A rule that lacked data; for strict rules `parts` names only the parts whose data is missing."""
        return Finding(rule=self.name, severity=Severity.UNVERIFIED,
                       message=f"{what} unknown: rule '{self.name}' could not be verified", parts=parts)


class ValueAccepted(Rule):
    """One part's value must be among those another part accepts (socket, memory type, form factor). Stated as
    attributes, so check() and encode() come from one definition and the model adds one constraint per value of
    `domain`. `both_ways`: each side has one value and they must be equal (the constraint holds in both directions).
    `unknown_what`: an acceptor that lists nothing is unknown data (unverified), not a refusal. `unknown_value`: a
    holder without a value is unknown data too (the model then puts no constraint on it: no value of `domain` is held).
    """

    holder: ClassVar[str] = ""
    acceptor: ClassVar[str] = ""
    domain: ClassVar[tuple[str, ...]] = ()
    both_ways: ClassVar[bool] = False
    unknown_what: ClassVar[Optional[str]] = None
    unknown_value: ClassVar[Optional[str]] = None

    def value(self, part: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def accepted(self, part: Any) -> tuple[Any, ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def message(self, holder: Any, acceptor: Any) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def check(self, b: Build) -> list[Finding]:
        holder, acceptor = b.parts[self.holder], b.parts[self.acceptor]
        if self.unknown_value and self.value(holder) is None:
            return [self.unverified(self.unknown_value, b.ids(*self.categories))]
        accepted = self.accepted(acceptor)
        if not accepted and self.unknown_what:
            return [self.unverified(self.unknown_what, b.ids(*self.categories))]
        if self.value(holder) in accepted:
            return []
        return [self.finding(self.message(holder, acceptor), b.ids(*self.categories))]

    def _accepts(self, part: Any, v: Any) -> Optional[bool]:
        accepted = self.accepted(part)
        return None if not accepted and self.unknown_what else v in accepted

    def encode(self, m: Encoder) -> None:
        for v in self.domain:
            held = m.has(self.holder, lambda p, v=v: self.value(p) == v)
            ok = m.has(self.acceptor, lambda p, v=v: self._accepts(p, v))
            m.model.Add(held == ok if self.both_ways else held <= ok)


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


__all__ = [
    "Build", "Rule", "ValueAccepted", "Encoder", "PowerTerms", "power_terms", "gpu_power_w", "gpu_chip", "gpu_vendor_floor_w",
    "psu_atx3_native", "psu_efficiency_permille", "slots_needed", "radiator_front_only", "front_loss_mm",
    "cooler_fans", "cooler_pumps", "mm", "fmt_mm", "PERMISSIVE", "CASE_FANS", "ceil_div", "math",
]
