"""Turn a catalog and Request into a CP-SAT model: candidates, rules, requirement literals, objective."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Callable, Optional, Sequence

from ortools.sat.python import cp_model

from planner.catalog.load import Catalog, used_allowed
from planner.catalog.models import CATEGORIES, Severity
from planner.money import to_cents
from planner.request import Request
from planner.compat.rules import ALL_RULES
from planner.compat.rules.base import psu_efficiency_permille
from planner.solver import quality
from planner.solver.encoder import BaseEncoder, ModelEncoder, RecordingEncoder, Rel, Term
from planner.perf.model import MIN_POWER_FRACTION
from planner.perf.speed import gpu_speed, score_units
from planner.perf.sweep import Estimate
from planner.perf.planned_sweep import deadline_units, planned_sweep, sweep_units, sweep_units_high


@dataclass
class Candidates:
    """Buyable (or owned) parts per category with their price in cents and, for GPUs, their speed."""

    parts: dict[str, list[Any]]
    price_cents: dict[str, int]
    speed: dict[str, Estimate]  # by gpu part id (a power-limited variant such as a Max-Q is slower than its chip)
    score: dict[str, int]  # by gpu part id
    sweep: dict[str, int] = field(default_factory=dict)  # by gpu part id: the planned sweep's units (lower: sooner)
    sweep_high: dict[str, int] = field(default_factory=dict)  # the same at the slow end of the speed range
    owned: frozenset[str] = frozenset()
    offers: dict[str, Any] = field(default_factory=dict)  # the offer each price came from
    missing: list[str] = field(default_factory=list)  # categories with nothing to choose from


def build_candidates(catalog: Catalog, req: Request, to_eur: Callable[[Decimal, str], Decimal]) -> Candidates:
    owned = frozenset(catalog.get(i).id for i in req.owned)
    excluded = {catalog.get(i).id for i in req.excluded}
    brands = {b.lower() for b in req.excluded_brands}
    parts: dict[str, list[Any]] = {}
    pinned = pinned_ids(req, catalog)
    prices: dict[str, int] = {}
    offers: dict[str, Any] = {}
    for cat in CATEGORIES:
        chosen = []
        for p in catalog.by_category(cat):
            if p.id in excluded or (p.brand.lower() in brands and p.id not in req.pinned):
                continue
            if p.id in owned:
                prices[p.id] = 0
            else:
                # a pinned part may be bought used even without --used: the user named that very part
                offer = catalog.offer_for(p.id, allow_used=used_allowed(req.used, cat) or p.id in pinned)
                if offer is None:
                    continue
                prices[p.id] = to_cents(offer.price if offer.currency == "EUR" else to_eur(offer.price, offer.currency))
                offers[p.id] = offer
            chosen.append(p)
        parts[cat] = chosen
    speed: dict[str, Estimate] = {}
    score: dict[str, int] = {}
    for g in parts["gpu"]:
        speed[g.id] = gpu_speed(catalog.chips[g.chip], catalog.chips, req.workload, req.precision,
                                card_power_fraction(g, catalog.chips, req.power_fraction), req.model_params)
        score[g.id] = score_units(speed[g.id], req.gpu_count or 1)
    return Candidates(parts=parts, price_cents=prices, speed=speed, score=score, owned=owned, offers=offers,
                      missing=[c for c in CATEGORIES if not parts[c]],
                      sweep=sweep_by_gpu(parts["gpu"], speed, catalog.chips, req, req.gpu_count or 1),
                      sweep_high=sweep_by_gpu(parts["gpu"], speed, catalog.chips, req, req.gpu_count or 1, slow=True))


def sweep_by_gpu(gpus: Sequence[Any], speed: dict[str, Estimate], chips: dict[str, Any], req: Request,
                 gpu_count: int, slow: bool = False) -> dict[str, int]:
    """Each card's planned sweep on `gpu_count` of them, in the solver's integer units (planner.perf.planned_sweep:
    runs per GPU within its VRAM, their gain, waves): a constant per card once the GPU count is fixed, so the
    objective stays linear."""
    units = sweep_units_high if slow else sweep_units
    return {g.id: units(planned_sweep(chips[g.chip], float(g.vram_gb), gpu_count, speed[g.id],
                                            runs=req.runs_left or req.runs, baseline_hours=req.baseline_hours,
                                            precision=req.precision, model_params=req.model_params,
                                            run_vram_gib=req.run_vram_gb))
            for g in gpus}


def card_power_fraction(gpu: Any, chips: dict[str, Any], power_fraction: float) -> float:
    """The user's power limit times the card's own: a 300 W Max-Q of a 600 W chip runs at 50 % of the chip's power,
    and the speed model's power-limit curve prices that (no card counts as faster than its chip)."""
    own = min(1.0, gpu.tgp_w / chips[gpu.chip].tdp_w) if gpu.tgp_w else 1.0
    return max(MIN_POWER_FRACTION, round(power_fraction * own, 3))


class Gate:
    """A CpModel proxy that adds an enforcement literal to every constraint (a switchable requirement)."""

    def __init__(self, model: Any, lit: Any):
        self._model, self._lit = model, lit

    def Add(self, ct: Any) -> Any:  # noqa: N802 - mirrors cp_model
        c = self._model.Add(ct)
        if self._lit is not None and not isinstance(c, Rel):
            c.OnlyEnforceIf(self._lit)
        return c

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


Switch = Callable[[str, str], Any]  # (sentence, kind) -> enforcement literal (None: always on)
BUDGET, SPEED_FLOOR, VRAM, OTHER = "budget", "speed floor", "vram floor", "other"  # the kinds a request's requirement can be of


def encode_all(m: BaseEncoder, req: Request, cands: Candidates, switch: Switch, catalog: Catalog,
               gate_problems: bool = False) -> dict[str, Any]:
    """Rules (problems always, or each as a switch when `gate_problems`, to explain a catalog with no compatible
    build; warnings as a switchable requirement each) and the user's requirements. Returns the objective terms."""
    base_model = m.model
    for rule in ALL_RULES:
        if rule.severity == Severity.PROBLEM:
            if gate_problems:
                m.model = Gate(base_model, switch(f"compatibility: {rule.summary}", OTHER))
            rule.encode(m)
            m.model = base_model
        elif req.avoid_warnings and rule.blocks and not req.accepts(rule.name):
            m.model = Gate(base_model, switch(f"avoid warning: {rule.summary}", OTHER))
            rule.encode(m)
            m.model = base_model
    n = req.gpu_count
    price = m.attr("gpu", lambda g: n * cands.price_cents[g.id])
    for cat in CATEGORIES[1:]:
        price = price + m.attr(cat, lambda p: cands.price_cents[p.id])
    score = m.attr("gpu", lambda g: cands.score[g.id])
    sweep = m.attr("gpu", lambda g: cands.sweep[g.id])
    sweep_high = m.attr("gpu", lambda g: cands.sweep_high[g.id])
    quality_pts = quality.encode(m) if req.goal == "expert" else 0
    model = m.model

    def gated(sentence: str, *constraints: Callable[[], Any], kind: str = OTHER) -> None:
        lit = switch(sentence, kind)
        for make in constraints:
            c = model.Add(make())
            if lit is not None and not isinstance(c, Rel):
                c.OnlyEnforceIf(lit)

    if req.budget is not None:
        budget_eur = cands_budget_cents(req, catalog)
        gated(f"total at most {req.currency} {req.budget:,.0f}".replace(",", " "), lambda: price <= budget_eur, kind=BUDGET)
    if req.min_vram_gb:
        v = int(round(req.min_vram_gb * 10))
        gated(f"at least {req.min_vram_gb:g} GB of VRAM per GPU",
              lambda: m.attr("gpu", lambda g: int(round(g.vram_gb * 10))) >= v, kind=VRAM)
    if req.min_ram_gb is not None:  # the user's figure (a measured peak RSS) replaces the ram_for_workload estimate
        gated(f"at least {req.min_ram_gb} GB of system RAM",
              lambda: m.attr("memory", lambda p: p.capacity_gb) >= req.min_ram_gb)
    if req.min_storage_gb:
        gated(f"at least {req.min_storage_gb:,} GB of storage".replace(",", " "),
              lambda: m.attr("storage", lambda d: d.capacity_gb) >= req.min_storage_gb)
    if req.require_nvme:
        gated("an NVMe drive (fast data loading)", lambda: m.has("storage", lambda d: d.interface == "NVMe") == 1)
    if req.cooler_type:
        kind = "an air cooler" if req.cooler_type == "air" else "an AIO liquid cooler"
        gated(f"{kind} (your preference)", lambda: m.has("cooler", lambda c: c.type == req.cooler_type) == 1)
    if req.max_wall_w:
        gated(f"at most {req.max_wall_w} W sustained at the wall",
              lambda: 1000 * m.power()["sustained_w"] <= req.max_wall_w * m.attr("psu", psu_efficiency_permille))
    for why, make in speed_floors(req, score, sweep_high if req.deadline_at == "slow end" else sweep, n):
        gated(why, make, kind=SPEED_FLOOR)
    for pid in req.pinned:
        part = catalog.get(pid)
        gated(f"use {part.name} (pinned)", lambda part=part: m.has(part.category, lambda p: p.id == part.id) == 1)
    return {"price": price, "score": score, "sweep": sweep, "sweep_high": sweep_high, "quality": quality_pts}


def speed_floors(req: Request, score: Any, sweep: Any, n: int) -> list[tuple[str, Callable[[], Any]]]:
    """The request's speed requirements as constraints: --min-speedup on each GPU's speed, --deadline-hours on the
    planned sweep (runs per GPU and waves counted, the same figure the answer shows, whatever the GPU count);
    `sweep` is the estimate's or the slow end's units, as the request's deadline_at says."""
    out: list[tuple[str, Callable[[], Any]]] = []
    if req.min_speedup:
        units = int(round(req.min_speedup * 1000)) * n
        out.append((f"at least {req.min_speedup:g}x the GTX 1080 Ti", lambda: score >= units))
    if req.deadline_hours:
        limit = deadline_units(req.deadline_hours, req.baseline_hours)
        at = " at the slow end of the speed range" if req.deadline_at == "slow end" else ""
        out.append((f"sweep done within {req.deadline_hours:g} h{at}", lambda: sweep <= limit))
    return out


def pinned_ids(req: Request, catalog: Catalog) -> frozenset[str]:
    return frozenset(catalog.get(i).id for i in req.pinned)


def cands_budget_cents(req: Request, catalog: Catalog) -> int:
    from planner.solver.currency import to_eur
    return to_cents(to_eur(req.budget, req.currency))  # type: ignore[arg-type]


def record(cands: Candidates, req: Request, catalog: Catalog,
           more: Sequence[tuple[Candidates, Request]] = ()) -> RecordingEncoder:
    """How each attribute is used, for dominance pruning: by the request, and by each of `more` (the other GPU counts
    and power limits the same model holds). A part dominated under every one of them is dominated in the model."""
    rec = RecordingEncoder(cands.parts, catalog.chips, req.gpu_count, req.power_fraction, req.workload, req.precision,
                           req.model_params, pinned_ids(req, catalog))
    for c, r in [(cands, req), *more]:
        rec.gpu_count, rec.power_fraction, rec._power = r.gpu_count, r.power_fraction, None
        terms = encode_all(rec, r, c, lambda s, kind: None, catalog)
        rec.model.note(Rel(Term.of(terms["price"]), eq=False))  # cheaper is better
        rec.model.note(Rel(-Term.of(terms["score"]), eq=False))  # faster is better
        rec.model.note(Rel(Term.of(terms["sweep"]), eq=False))  # a sooner sweep is better
        rec.model.note(Rel(Term.of(terms["sweep_high"]), eq=False))  # at the slow end too
        rec.model.note(Rel(-Term.of(terms["quality"]), eq=False))  # more quality points are better
    return rec


def build_model(parts: dict[str, list[Any]], cands: Candidates, req: Request, catalog: Catalog,
                with_assumptions: bool, trust_unknown: bool = False, gate_problems: bool = False
                ) -> tuple[ModelEncoder, dict[str, Any], dict[int, str]]:
    """A fresh model over `parts`. With assumptions, each requirement gets a named literal (and each compatibility
    rule too with `gate_problems`). `trust_unknown` treats every part as pinned (unknown data passes strict rules):
    the relaxation that explains a 'no build'."""
    pins = frozenset(p.id for ps in parts.values() for p in ps) if trust_unknown else pinned_ids(req, catalog)
    m = ModelEncoder(parts, catalog.chips, req.gpu_count, req.power_fraction, req.workload, req.precision,
                     req.model_params, pins)
    names: dict[int, str] = {}

    def switch(sentence: str, kind: str = OTHER) -> Optional[cp_model.IntVar]:
        if not with_assumptions:
            return None
        lit = m.model.NewBoolVar(sentence)
        names[lit.Index()] = sentence
        return lit

    terms = encode_all(m, req, cands, switch, catalog, gate_problems=gate_problems)
    if with_assumptions:
        m.model.AddAssumptions([m.model.GetBoolVarFromProtoIndex(i) for i in names])
    return m, terms, names
