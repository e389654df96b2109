"""The pipeline every front end calls: plan, check and compare for one Request, so the same inputs give one answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence

from planner.catalog.load import Catalog
from planner.catalog.models import AnyPart
from planner.compat.checker import CheckReport, check_parts
from planner.errors import InputError
from planner.request import Request
if TYPE_CHECKING:  # the answer's pydantic models cost ~20-40 ms to define: only `describe` needs them
    from planner.service.answer import Answer, SideBySide
from planner.settings import SOLVER_TIME_LIMIT_S, SOLVER_WORKERS



# ---- the request as the solver and checker see it --------------------------------------------------------

def resolve_names(catalog: Catalog, request: Request) -> Request:
    """Owned, pinned and excluded parts as catalog ids (a person may type names; ids resolve to themselves), and
    the accepted warnings checked against the rules that can warn."""
    from planner.service.owned import warning_rules

    warnings = sorted(warning_rules())
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
    side_by_side: Optional[SideBySide] = None  # builds too close to call, and what would decide (uncertainty.py)

    @property
    def plans(self) -> list[Any]:
        return self.recommendation.plans


def plan(catalog: Catalog, request: Request, *, time_limit: float = SOLVER_TIME_LIMIT_S,
         workers: int = SOLVER_WORKERS, target: Optional[str] = None) -> Planned:
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
    from planner.service.upgrade import upgrade_first

    rec = upgrade_first(catalog, solved, rec, solve)  # an owned platform: its upgrade leads (issue 34 item 7)
    if rec.plans:
        from planner.service.rest import rest_note

        speedup, _ = speed_functions(catalog, solved)
        rest = rest_note(rec.plans[0], solved, chips=catalog.chips, speedup=lambda c: float(speedup(c).value))
        if rest:
            rec.plans[0].notes.append(rest)
    aim = None
    if target is not None:
        aimed, label = uncertainty.target_request(catalog, solved, target)
        aim = (next(iter(solve(aimed).plans), None), label)
    notes = ([floor_note] if floor_note else []) + brand_note(catalog, request.excluded_brands)
    return Planned(rec, request, notes, uncertainty.side_by_side(rec, solved, aim))


def cloud_offers(*, all_billing: bool = False, providers: Sequence[str] = (), gpus: Sequence[str] = ()) -> list[Any]:
    """The rentals to compare: each product's newest dated price (on-demand, marketplace and serverless; spot and
    commitment too with `all_billing`), narrowed to providers and GPUs whose names contain the given words."""
    from planner.costs.cloud import DEFAULT_BILLING, Billing, filter_offers, latest_offers, load_cloud_offers

    billing = set(Billing) if all_billing else DEFAULT_BILLING
    return filter_offers(latest_offers(load_cloud_offers(), billing=billing), providers=providers, gpus=gpus)


def recommend(catalog: Catalog, request: Request, **kw: Any) -> Any:
    """The solver's Recommendation for the request, through the same steps as every front end (names resolved,
    chip makers left out, the memory floor): what `planner.recommend` gives a script."""
    return plan(catalog, request, **kw).recommendation


def describe(catalog: Catalog, planned: Planned, *, time_limit: float = SOLVER_TIME_LIMIT_S,
             start: Any = None, profile: Optional[dict[str, Any]] = None,
             given_prices: Optional[list[dict[str, Any]]] = None) -> Answer:
    """The typed answer front ends show (planner.service.answer): each plan's view (made once here), sweep and
    headline, the model size assumed, the side-by-side builds, the GPU counts tried, try-before-you-buy rentals,
    the catalog's gaps when nothing fits, and why each owned part was left out (with the warning that would keep
    it). Every sweep figure counts the same runs (the runs left when the request says, else all)."""
    from planner.service.answer import Answer, PlannedBuild, SolveStats, TriedOption, WhyNotAnswer, summarize
    from planner.service.capacity import catalog_gaps
    from planner.service.owned import why_unused
    from planner.service.sweep_report import assumed_model, plan_report

    req, rec = planned.request, planned.recommendation
    plans = []
    for p in rec.plans:
        summary = summarize(p, req)
        plans.append(PlannedBuild(view=p.view(), sweep=plan_report(p, req, start=start, summary=summary),
                                  summary=summary))
    found = {(p.gpu_count, p.power_fraction): p for p in getattr(rec, "by_count", []) or []}
    tried = [TriedOption(gpus=t["gpus"], power_limit=t["power_limit"], status=t["status"],
                         build=None if (t["gpus"], t["power_limit"]) not in found
                         else summarize(found[t["gpus"], t["power_limit"]], req))
             for t in rec.stats.get("by_gpu_count", [])]
    stats = SolveStats(**{k: v for k, v in rec.stats.items() if k in SolveStats.model_fields and k != "by_gpu_count"},
                       by_gpu_count=tried)
    why = None
    if rec.why_not is not None:
        why = WhyNotAnswer(conflicts=list(rec.why_not.conflicts), suggestions=list(rec.why_not.suggestions),
                           catalog_gaps=None if rec.plans else catalog_gaps(catalog, req))
    side = planned.side_by_side
    rentals: list[Any] = []
    if plans:
        from planner.service.trials import name_rented_cards, trials

        rentals = trials(catalog, req, [b.summary for b in plans], list(side.builds) if side else [])
        side = name_rented_cards(side, rentals)  # "what would decide" names the same rentable cards
    unused: list[dict[str, Any]] = []
    if req.owned and plans:
        unused = why_unused(
            catalog, req, plans[0].view,
            lambda r: plan(catalog, r.model_copy(update={"alternatives": 0}), time_limit=time_limit).recommendation)
    return Answer(status=rec.status, request=req, model=assumed_model(req.workload, req.precision, req.model_params),
                  notes=list(planned.notes), plans=plans, side_by_side=side, try_before_you_buy=rentals, why_not=why,
                  owned_not_used=unused, solve_seconds=round(rec.solve_seconds, 4), stats=stats,
                  profile=None if profile is None else dict(profile), given_prices=list(given_prices or []))


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
    """The cost model's Purchase for checked parts (a solver Plan's `.report`, or `check()` of a hand-picked list),
    through the one plan-to-purchase step (planner.share.plan_file): owned parts excluded, every part priced. A
    list without a GPU or a PSU is refused: its electricity and its purchase would be wrong."""
    from planner.share.plan_file import purchase_from_plan

    missing = [c for c in ("gpu", "psu") if c not in report.build.parts]
    if missing:
        raise InputError(f"the build has no {' and no '.join(missing).upper()}: costs need a complete build "
                         "(add the part, or compare a recommended build)")
    sizing = report.sizing
    build, _ = purchase_from_plan(report.view(), rates, currency, owned=set(report.owned),
                                  draw_w=float(sizing.sustained_w) if sizing else 0.0,
                                  lookup={p.id: p for p in report.build.parts.values()}.get)
    return build


def speed_functions(catalog: Catalog, request: Request) -> tuple[Any, Any]:
    """The speed model's speedup per chip (for this request's workload, precision, model size) and the sweep: for a
    card named by `chip=` and `vram_gb=`, the planned sweep recommend ranks and shows (runs per GPU within VRAM,
    planner.perf.planned_sweep), else sweep_time's one run per GPU."""
    from planner.perf.planned_sweep import planned_sweep
    from planner.perf.speed import gpu_speed
    from planner.perf.sweep import sweep_time

    def speedup(chip: str) -> Any:
        if chip not in catalog.chips:
            raise InputError(f"unknown GPU chip {chip!r}")
        return gpu_speed(catalog.chips[chip], catalog.chips, request.workload, request.precision, 1.0,
                         request.model_params)

    def sweep(runs: int, baseline_hours: float, speed: Any, gpu_count: int = 1, *, chip: Optional[str] = None,
              vram_gb: Optional[float] = None, **kw: Any) -> Any:
        if chip is None or not vram_gb or chip not in catalog.chips:
            return sweep_time(runs, baseline_hours, speed, gpu_count, **kw)
        return planned_sweep(catalog.chips[chip], float(vram_gb), gpu_count, speed, runs=runs,
                             baseline_hours=baseline_hours, precision=request.precision,
                             model_params=request.model_params, run_vram_gib=request.run_vram_gb).sweep

    return speedup, sweep


def compare(catalog: Catalog, request: Request, build: Any = None, *, params: Any = None, rates: Any = None,
            offers: Optional[Iterable[Any]] = None, only_counts: Sequence[int] = (), speed: Any = None) -> Any:
    """Buy `build` (a solver Plan, a CheckReport, a costs.Build, or None) vs rent each cloud offer, for the
    request's sweep. `speed` = (speedup, sweep) functions replaces the speed model's for the request (tests)."""
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
                      precision=request.precision, workload=request.workload, model_params=request.model_params,
                      run_vram_gb=request.run_vram_gb)
    speedup, sweep = speed if speed is not None else speed_functions(catalog, request)
    return C.compare(work, params, rates, offers=latest_offers(load_cloud_offers()) if offers is None else offers,
                     build=build, speedup=speedup, sweep=sweep, only_counts=only_counts)
