"""The pipeline every front end calls: plan, check and compare for one Request, so the same inputs give one answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Iterable, Optional, Sequence

from planner.catalog.load import Catalog
from planner.catalog.models import AnyPart
from planner.compat.checker import CheckReport, check_parts
from planner.errors import InputError
from planner.request import Request

DEFAULT_TIME_LIMIT_S = 10.0


# ---- the request as the solver and checker see it --------------------------------------------------------

def resolve_names(catalog: Catalog, request: Request) -> Request:
    """Owned, pinned and excluded parts as catalog ids (a person may type names; ids resolve to themselves), and
    the accepted warnings checked against the rules that can warn."""
    from planner.catalog.models import Severity
    from planner.compat.rules import RULES_BY_NAME

    warnings = sorted(n for n, r in RULES_BY_NAME.items() if r.severity == Severity.WARNING)
    unknown = [w for w in request.accepted_warnings if w not in warnings]
    if unknown:
        raise InputError(f"{unknown[0]!r} is not a warning that can be accepted; choose from {', '.join(warnings)}")
    ids = lambda names: tuple(catalog.find(n).id for n in names)  # noqa: E731
    return request.model_copy(update={"owned": ids(request.owned), "pinned": ids(request.pinned),
                                      "excluded": ids(request.excluded)})


# ---- plan ------------------------------------------------------------------------------------------------

@dataclass
class Planned:
    """A recommendation with the request it answered (names resolved) and what was assumed."""

    recommendation: Any  # planner.solver.Recommendation
    request: Request
    notes: list[str] = field(default_factory=list)
    side_by_side: Optional[dict[str, Any]] = None  # builds too close to call, and what would decide (uncertainty.py)

    @property
    def plans(self) -> list[Any]:
        return self.recommendation.plans

    def to_json(self) -> dict[str, Any]:
        out = self.recommendation.to_json()
        out["request"] = self.request.model_dump(mode="json")
        out["notes"] = list(self.notes)
        if self.side_by_side is not None:
            out["side_by_side"] = self.side_by_side
        return out


def plan(catalog: Catalog, request: Request, *, time_limit: float = DEFAULT_TIME_LIMIT_S,
         workers: int = 2, target: Optional[str] = None) -> Planned:
    """The best (or cheapest) build for the request, alternatives and why-not, with typed names resolved (the
    solver applies the model's memory floor and says so in the plan's notes)."""
    from planner.solver import recommend

    if not time_limit > 0 or not math.isfinite(time_limit):
        raise InputError(f"the time limit must be a positive number of seconds (got {time_limit})")
    from planner.service.capacity import brand_note, with_chip_makers_excluded
    from planner.solver import with_memfit_floor

    request = resolve_names(catalog, request)
    _, floor_note = with_memfit_floor(request)
    solved = with_chip_makers_excluded(catalog, request, request.excluded_chip_makers)
    from planner.service import uncertainty

    solve = lambda r: recommend(catalog, r, alternatives=r.alternatives, time_limit=time_limit, workers=workers)  # noqa: E731
    rec = uncertainty.deadline_at_slow_end(solve(solved), solved, solve)
    aim = None
    if target is not None:
        aimed, label = uncertainty.target_request(catalog, solved, target)
        aim = (next(iter(solve(aimed).plans), None), label)
    notes = ([floor_note] if floor_note else []) + brand_note(catalog, request.excluded_brands)
    return Planned(rec, request, notes, uncertainty.side_by_side(rec, solved, aim))


def describe(catalog: Catalog, planned: Planned, *, time_limit: float = DEFAULT_TIME_LIMIT_S,
             start: Any = None) -> dict[str, Any]:
    """The answer as front ends show it: the plans' JSON with each sweep's hours and finish time, the model size
    assumed, the catalog's gaps when nothing fits, and why each owned part was left out (with the warning that
    would keep it)."""
    from planner.service.capacity import catalog_gaps
    from planner.service.owned import why_unused
    from planner.service.sweep_report import with_sweeps

    req = planned.request
    data = with_sweeps(planned.to_json(), runs=req.runs, runs_left=req.runs_left, baseline_hours=req.baseline_hours,
                       workload=req.workload, precision=req.precision, model_params=req.model_params, start=start)
    if planned.plans:
        from planner.service.trials import trials

        data["try_before_you_buy"] = trials(catalog, req, data)
    if not planned.plans and data.get("why_not") is not None:
        data["why_not"]["catalog_gaps"] = catalog_gaps(catalog, req)
    if req.owned and planned.plans:
        data["owned_not_used"] = why_unused(
            catalog, req, data["plans"][0],
            lambda r: plan(catalog, r.model_copy(update={"alternatives": 0}), time_limit=time_limit).to_json())
    return data


# ---- check -----------------------------------------------------------------------------------------------

def check(catalog: Catalog, parts: Sequence[str | AnyPart], request: Request) -> CheckReport:
    """The checker's verdict on hand-picked parts under the same request the solver would use."""
    chosen = [p if not isinstance(p, str) else catalog.find(p) for p in parts]
    request = resolve_names(catalog, request)
    return check_parts(catalog, chosen, gpu_count=request.gpu_count or 1, power_fraction=request.power_fraction,
                       workload=request.workload, precision=request.precision, model_params=request.model_params,
                       owned=request.owned, used=request.used, currency=request.currency)


# ---- compare (rent or buy) ------------------------------------------------------------------------------

def costs_build(report: CheckReport, currency: str, rates: Any) -> Any:
    """The cost model's Build for checked parts (a solver Plan's `.report`, or `check()` of a hand-picked list):
    prices converted exactly, owned parts excluded. A list without a GPU or a PSU is refused: its electricity
    and its purchase would be wrong."""
    from planner.costs import compare as C
    from planner.fx import convert_exact

    parts = report.build.parts
    missing = [c for c in ("gpu", "psu") if c not in parts]
    if missing:
        raise InputError(f"the build has no {' and no '.join(missing).upper()}: costs need a complete build "
                         "(add the part, or compare a recommended build)")
    gpu_count = report.build.gpu_count
    gpu_total = platform_total = owned_total = Decimal(0)
    dates: set[str] = set()
    retailers: set[str] = set()
    kinds: set[str] = set()
    unpriced: list[str] = []
    for category, part in parts.items():
        qty = gpu_count if category == "gpu" else 1
        offer = report.offers.get(part.id)
        if offer is None and part.id not in report.owned:
            unpriced.append(part.name)
        amount = Decimal(0) if offer is None else convert_exact(offer.price * qty, offer.currency, currency, rates)
        if part.id in report.owned:
            owned_total += amount
            continue
        if category == "gpu":
            gpu_total += amount
        else:
            platform_total += amount
        if offer is not None:
            dates.add(offer.observed_on.isoformat())
            retailers.add(offer.retailer)
            kinds.add(offer.source)
    if unpriced:
        raise InputError(f"no price for {', '.join(unpriced)}: costs need every part priced")
    gpu, psu, sizing = parts["gpu"], parts["psu"], report.sizing
    ordered = sorted(dates)
    date_text = (ordered[0] if len(ordered) == 1 else f"{ordered[0]}..{ordered[-1]}") if ordered else "no dated price"
    return C.Purchase(
        name=f"{gpu_count}x {gpu.name} build", chip=gpu.chip, gpu_count=gpu_count,
        gpu_price=gpu_total, platform_price=platform_total, currency=currency,
        dc_w=float(sizing.sustained_w) if sizing else 0.0, psu_w=psu.wattage_w,
        psu_efficiency=str(psu.efficiency or "bronze"), price_date=date_text,
        price_source=f"plan parts from {', '.join(sorted(retailers))} ({', '.join(sorted(kinds))} prices)",
        owned_value=owned_total, gpu_name=gpu.name)


def speed_functions(catalog: Catalog, request: Request) -> tuple[Any, Any]:
    """The speed model's speedup per chip (for this request's workload, precision, model size) and sweep_time."""
    from planner.perf.speed import gpu_speed
    from planner.perf.sweep import sweep_time

    def speedup(chip: str) -> Any:
        if chip not in catalog.chips:
            raise InputError(f"unknown GPU chip {chip!r}")
        return gpu_speed(catalog.chips[chip], catalog.chips, request.workload, request.precision, 1.0,
                         request.model_params)

    return speedup, sweep_time


def compare(catalog: Catalog, request: Request, build: Any = None, *, params: Any = None, rates: Any = None,
            offers: Optional[Iterable[Any]] = None, only_counts: Sequence[int] = ()) -> Any:
    """Buy `build` (a solver Plan, a CheckReport, a costs.Build, or None) vs rent each cloud offer, for the
    request's sweep."""
    from planner.costs import compare as C
    from planner.costs.cloud import latest_offers, load_cloud_offers
    from planner.fx import load_rates

    rates = rates if rates is not None else load_rates()
    params = params if params is not None else C.CostParams(currency=request.currency)
    if isinstance(build, CheckReport):
        build = costs_build(build, params.currency, rates)
    elif build is not None and not isinstance(build, C.Purchase):  # a solver Plan
        build = costs_build(build.report, params.currency, rates)
    work = C.Workload(runs=request.runs_left or request.runs, baseline_hours=request.baseline_hours,
                      precision=request.precision,
                      workload=request.workload, model_params=request.model_params)
    speedup, sweep = speed_functions(catalog, request)
    return C.compare(work, params, rates, offers=latest_offers(load_cloud_offers()) if offers is None else offers,
                     build=build, speedup=speedup, sweep=sweep, only_counts=only_counts)
