"""What the solver answers: plans (parts, totals, speed, power, notes) and the recommendation around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

from planner.catalog.load import Catalog
from planner.compat.checker import CheckReport
from planner.catalog.models import CATEGORIES
from planner.money import format_money, from_cents
from planner.plan_view import FindingView, GpuSummary, PlanView, Power, PricedLine, Speed
from planner.solver.currency import convert
from planner.perf.sweep import Estimate

# Sweeps within 3 % of the fastest finish together as far as the speed model can tell (its stated range is far
# wider, docs/perf.md); among them the simpler machine wins: fewer GPUs, then stock power, then build quality.
SAME_SPEED = Fraction(97, 100)


def shown(hours: float) -> str:
    """Hours as the plan's sweep line shows them (its JSON keeps 2 decimals, the sentence 1), so both agree."""
    return f"{round(hours, 2):.1f}"


@dataclass
class Plan:
    """One build: the chosen part per category, its check report, speed and price in the user's currency."""

    parts: dict[str, Any]
    report: CheckReport
    speed: Estimate
    gpu_count: int
    total_cents_eur: int
    currency: str
    catalog: Catalog
    owned: frozenset[str] = frozenset()
    offers: dict[str, Any] = field(default_factory=dict)
    trade_offs: list[str] = field(default_factory=list)
    quality: int = 0  # build-quality points (planner.solver.quality)
    power_fraction: float = 1.0  # GPU power limit the plan runs at
    notes: list[str] = field(default_factory=list)

    @property
    def gpu(self) -> Any:
        return self.parts["gpu"]

    @property
    def chip(self) -> Any:
        return self.catalog.chips[self.gpu.chip]

    @property
    def gpu_name(self) -> str:
        """The GPU as the plan names it: the chip, or a low-power variant of it (catalog.models.Gpu.kind_name)."""
        return self.gpu.kind_name(self.chip)

    @cached_property
    def total(self) -> Decimal:
        """The sum of the lines as shown (each converted and rounded to the cent), so a table adds up; computed once
        (the parts, prices and currency of a plan do not change; outside EUR it prices every line)."""
        if self.currency == "EUR":
            return from_cents(self.total_cents_eur)
        return self.view().total

    def line(self, part: Any) -> PricedLine:
        """The part's priced line in the plan's currency; an owned part costs 0 and carries what it is worth."""
        owned, offer = part.id in self.owned, self.offers.get(part.id)
        if offer is None and owned:
            offer = self.catalog.offer_for(part.id)
        amount = None if offer is None else convert(offer.price, offer.currency, self.currency)
        return PricedLine.priced(part, self.gpu_count if part.category == "gpu" else 1, None if owned else offer,
                                 self.currency, owned=owned, amount=amount, verified=self.catalog.verified(part.id),
                                 unverified_what=self.catalog.unverified_what(part.id))

    def view(self) -> PlanView:
        """The typed answer front ends, files and links read (planner.plan_view), produced here once."""
        speed = self.speed
        return PlanView(
            currency=self.currency, parts=tuple(self.line(self.parts[c]) for c in CATEGORIES if c in self.parts),
            gpu=GpuSummary(chip=self.chip.id, name=self.gpu_name, count=self.gpu_count,
                           vram_gb=float(self.gpu.vram_gb)),
            speed=Speed(value=float(speed.value), low=float(min(speed.low, speed.value)),
                        high=float(max(speed.high, speed.value)), basis=speed.basis),
            power=Power.model_validate(self.report.power_json()),
            warnings=tuple(FindingView(rule=f.rule, message=f.message, parts=tuple(f.parts))
                           for f in self.report.warnings),
            unverified=tuple(FindingView(rule=f.rule, message=f.message, parts=tuple(f.parts))
                             for f in self.report.unverified),
            trade_offs=tuple(self.trade_offs), quality_points=int(self.quality),
            power_limit=float(self.power_fraction), notes=tuple(self.notes))

    def to_json(self) -> dict[str, Any]:
        return self.view().to_json()

    def headline(self) -> str:
        n = f"{self.gpu_count} x " if self.gpu_count > 1 else ""
        speed = f"{self.speed.value:.1f}x a GTX 1080 Ti"
        if self.gpu_count > 1:
            speed += f" per GPU ({self.speed.value * self.gpu_count:.1f}x sweep throughput)"
        return f"{n}{self.gpu_name} build, {format_money(self.total, self.currency)}, {speed}"


def trade_offs(first: Plan, other: Plan) -> list[str]:
    """What `other` gives up or gains against the first plan, in plain words with numbers."""
    out = []
    diff = other.total - first.total
    out.append((f"saves {format_money(-diff, other.currency)}" if diff < 0 else
                f"costs {format_money(diff, other.currency)} more") if diff else "same price")
    ratio = other.speed.value / first.speed.value if first.speed.value else 0
    out.append(f"{ratio:.0%} of the first plan's training speed ({other.speed.value:.1f}x vs "
               f"{first.speed.value:.1f}x a GTX 1080 Ti)")
    dv = other.gpu.vram_gb * other.gpu_count - first.gpu.vram_gb * first.gpu_count
    if dv:
        out.append(f"{abs(dv):g} GB {'more' if dv > 0 else 'less'} VRAM")
    if other.parts["cpu"].socket != first.parts["cpu"].socket:
        out.append(f"{other.parts['cpu'].socket} platform instead of {first.parts['cpu'].socket}")
    dw = (other.report.sizing.sustained_w if other.report.sizing else 0) - \
        (first.report.sizing.sustained_w if first.report.sizing else 0)
    if abs(dw) >= 20:
        out.append(f"{abs(dw)} W {'more' if dw > 0 else 'less'} sustained draw")
    return out


@dataclass
class WhyNot:
    conflicts: list[str]
    suggestions: list[str]

    def to_json(self) -> dict[str, list[str]]:
        return {"conflicts": list(self.conflicts), "suggestions": list(self.suggestions)}


@dataclass
class Recommendation:
    status: str  # optimal | feasible | infeasible | timeout (no solution within the time limit)
    plans: list[Plan]
    why_not: Optional[WhyNot]
    solve_seconds: float
    stats: dict[str, Any] = field(default_factory=dict)
    by_count: list[Plan] = field(default_factory=list)  # the best plan of each GPU count and power limit tried
    at_estimate: Optional[Plan] = None  # a deadline's best build meeting it only at the estimate (service.uncertainty)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "plans": [p.to_json() for p in self.plans],
            "why_not": None if self.why_not is None else self.why_not.to_json(),
            "solve_seconds": round(self.solve_seconds, 4),
            "stats": self.stats,
        }
