"""Check a build PCPartPicker-style: run every rule, size the PSU, total the prices."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Optional

from planner.compat import power
from planner.catalog.load import Catalog, used_allowed
from planner.errors import InputError
from planner.catalog.models import CATEGORIES, AnyPart, Finding, Memory, Offer, Severity
from planner.fx import convert_money
from planner.money import Money
from planner.plan_view import PlanView, Power, PricedLine
from planner.settings import POWER_FRACTION_MAX, POWER_FRACTION_MIN
from planner.compat.rules import ALL_RULES, Build
from planner.compat.rules.base import cooler_fans, cooler_pumps, gpu_power_w, gpu_vendor_floor_w, power_terms


@dataclass
class CheckReport:
    """Verdicts on a build: problems block it, warnings advise, unverified rules lacked data."""

    build: Build
    findings: list[Finding]
    sizing: Optional[power.PsuSizing]
    total: Money
    offers: dict[str, Optional[Offer]] = field(default_factory=dict)
    owned: frozenset[str] = frozenset()
    verified: dict[str, Optional[bool]] = field(default_factory=dict)  # part id -> its row re-read (register)
    # part id -> the fact still to check on an unverified row (the register's `unsettled`, or "never read")
    unverified_what: dict[str, Optional[str]] = field(default_factory=dict)

    @staticmethod
    def rule_summary(name: str) -> str:
        """The plain-words sentence of a rule ('enough CPU cores to feed the GPUs ...'), or the name if unknown."""
        from planner.compat.rules import RULES_BY_NAME

        rule = RULES_BY_NAME.get(name)
        return rule.summary if rule is not None else name.replace("_", " ")

    @staticmethod
    def warning_rules() -> list[str]:
        """Names of the rules whose findings are warnings (the ones a user may accept)."""
        return [r.name for r in ALL_RULES if r.severity == Severity.WARNING]

    def by(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity == severity]

    @property
    def problems(self) -> list[Finding]:
        return self.by(Severity.PROBLEM)

    @property
    def warnings(self) -> list[Finding]:
        return self.by(Severity.WARNING)

    @property
    def unverified(self) -> list[Finding]:
        return self.by(Severity.UNVERIFIED)

    @property
    def missing(self) -> list[str]:
        """Categories a complete build still lacks (in catalog order)."""
        return [c for c in CATEGORIES if c not in self.build.parts]

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def compatible(self) -> bool:
        """No problem found, every category present and every rule verified: a partial list, or one resting on a
        fact nobody checked (a board's second-slot wiring), is never called compatible."""
        return self.verdict == "compatible"

    @property
    def verdict(self) -> str:
        """'incompatible' (a problem), 'partial' (no problem yet, categories missing), 'unconfirmed' (complete and no
        problem found, but a rule lacked the data to decide: a rule whose data is missing is not a pass) or
        'compatible'."""
        if self.problems:
            return "incompatible"
        if not self.complete:
            return "partial"
        return "unconfirmed" if self.unverified else "compatible"

    @property
    def cannot_confirm(self) -> list[str]:
        """The unknown facts behind an 'unconfirmed' verdict, one sentence each, without repeats."""
        return list(dict.fromkeys(f.message for f in self.unverified))

    def power_json(self) -> dict[str, Any]:
        s = self.sizing
        if s is None:
            return {"sustained_w": None, "transient_w": None, "recommended_psu_w": None}
        return {"sustained_w": s.sustained_w, "transient_w": s.transient_w, "recommended_psu_w": s.recommended_w,
                "breakdown": s.to_json()}

    def to_json(self) -> dict[str, Any]:
        return {
            "compatible": self.compatible,
            "complete": self.complete,
            "missing": self.missing,
            "verdict": self.verdict,
            "cannot_confirm": self.cannot_confirm,
            "problems": [f.to_json() for f in self.problems],
            "warnings": [f.to_json() for f in self.warnings],
            "unverified": [f.to_json() for f in self.unverified],
            "power": self.power_json(),
            "total": self.total.to_json(),
            "parts": [ln.to_json() for ln in self.lines()],
        }

    def lines(self) -> list[PricedLine]:
        """Each part's priced line in the report's currency (owned parts at 0), as a plan writes them."""
        cur, mine = self.total.currency, self.owned
        out = []
        for p in self.build.parts.values():
            offer = self.offers.get(p.id)
            amount = None if offer is None else convert_money(offer.price, offer.currency, cur)
            out.append(PricedLine.priced(p, self.build.gpu_count if p.category == "gpu" else 1,
                                         None if p.id in mine else offer, cur, owned=p.id in mine, amount=amount,
                                         verified=self.verified.get(p.id),
                                         unverified_what=self.unverified_what.get(p.id)))
        return out

    def view(self) -> PlanView:
        """The checked parts as a PlanView (lines and power), for what reads plans: costs, exports."""
        return PlanView(currency=self.total.currency, parts=tuple(self.lines()), power=Power(**self.power_json()))


def sizing_for(build: Build) -> Optional[power.PsuSizing]:
    gpu, cpu = build.get("gpu"), build.get("cpu")
    if gpu is None and cpu is None:
        return None
    mem, cooler = build.get("memory"), build.get("cooler")
    terms = power_terms(build)
    sizing = power.size_psu(
        [gpu_power_w(gpu, build.chips, build.power_fraction)] * build.gpu_count if gpu else [],
        terms.cpu_w,
        dimms=mem.modules if isinstance(mem, Memory) else 2,
        drives=1,
        fans=3 + (cooler_fans(cooler) if cooler else 1),
        pumps=cooler_pumps(cooler) if cooler else 0,
        vendor_floor_w=(gpu_vendor_floor_w(gpu, build.chips) or None) if gpu else None,
    )
    assert sizing.sustained_w == terms.sustained_w, "power model and rules disagree"
    return sizing


def check_build(build: Build, rules: Iterable = ALL_RULES) -> list[Finding]:
    """Every applicable rule's findings, problems first."""
    out: list[Finding] = []
    for rule in rules:
        if rule.applies(build):
            out.extend(rule.check(build))
    order = {Severity.PROBLEM: 0, Severity.WARNING: 1, Severity.UNVERIFIED: 2}
    return sorted(out, key=lambda f: order[f.severity])


def check_parts(
    catalog: Catalog,
    parts: list[AnyPart],
    *,
    gpu_count: int = 1,
    power_fraction: float = 1.0,
    workload: str = "transformer",
    precision: str = "amp",
    model_params: Optional[float] = None,
    owned: Iterable[str] = (),
    used: str = "gpu",
    currency: str = "EUR",
) -> CheckReport:
    """Check a list of catalog parts (at most one per category)."""
    by_cat: dict[str, AnyPart] = {}
    repeats = 1
    for p in parts:
        if p.category in by_cat and by_cat[p.category].id == p.id:
            if p.category == "gpu":  # as in a PCPartPicker list: the same card twice is two cards
                repeats += 1
                continue
            raise InputError(f"{p.id} is given twice; a build takes one {p.category}")
        if p.category in by_cat and by_cat[p.category].id != p.id:
            raise InputError(f"two {p.category} parts given ({by_cat[p.category].id}, {p.id}); "
                             "a build takes one of each (use --gpu-count for several identical GPUs)")
        by_cat[p.category] = p
    if repeats > 1:
        if gpu_count not in (1, repeats):
            raise InputError(f"{by_cat['gpu'].id} is given {repeats} times (that many GPUs) but the GPU count is "
                             f"{gpu_count}; give the card once with --gpus {gpu_count}, or drop --gpus")
        gpu_count = repeats
    if not 1 <= gpu_count <= 8:
        raise InputError(f"gpu count {gpu_count} out of range 1..8")
    if not POWER_FRACTION_MIN <= power_fraction <= POWER_FRACTION_MAX:
        raise InputError(f"power limit {power_fraction} out of range {POWER_FRACTION_MIN}..{POWER_FRACTION_MAX} "
                         "(a fraction of stock board power)")
    build = Build(parts=by_cat, chips=catalog.chips, gpu_count=gpu_count, power_fraction=power_fraction,
                  workload=workload, precision=precision, model_params=model_params)
    owned_set = frozenset(owned)
    offers = {p.id: catalog.offer_for(p.id, allow_used=used_allowed(used, p.category)) for p in by_cat.values()}
    total = Decimal(0)
    for p in by_cat.values():
        if p.id in owned_set:
            continue
        offer = offers[p.id]
        if offer is not None:
            qty = gpu_count if p.category == "gpu" else 1
            total += convert_money(offer.price, offer.currency, currency) * qty  # never add mixed currencies
    return CheckReport(build=build, findings=check_build(build), sizing=sizing_for(build),
                       total=Money(amount=total, currency=currency), offers=offers, owned=owned_set,
                       verified={p.id: catalog.verified(p.id) for p in by_cat.values()},
                       unverified_what={p.id: catalog.unverified_what(p.id) for p in by_cat.values()})
