"""CP-SAT build solver: the best build for a budget, the cheapest for a target, alternatives, why-not."""

from __future__ import annotations

import math
import time
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.catalog.load import Catalog
from planner.compat.checker import check_parts
from planner.errors import PlannerError
from planner.money import format_money, from_cents
from planner.request import Request
from planner.compat.rules import RULES_BY_NAME
from planner.solver import quality
from planner.solver.currency import from_eur, to_eur
from planner.solver.model import Candidates, build_candidates, build_model, record
from planner.solver.notes import (
    channels_note, checklist_note, explain_tried, persist_limit_note, psu_load_note, next_step_note, power_limit_note,
    reuse_platform_note, stack_note, step_up_note, sweep_hours, unspent_note, used_parts_note,
)
from planner.solver.plan import SAME_SPEED, Plan, Recommendation, WhyNot, trade_offs
from planner.solver.prune import prune
from planner.perf.speed import score_units

DEFAULT_TIME_LIMIT_S = 10.0


def _solver(time_limit: float, workers: int, seed: int = 0) -> cp_model.CpSolver:
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = workers
    s.parameters.random_seed = seed
    return s


def _solve_assuming(solver: cp_model.CpSolver, model: cp_model.CpModel, literals: list[int]) -> int:
    """Solve with exactly these requirement literals (proto indices) assumed true; the others are free."""
    model.ClearAssumptions()
    model.AddAssumptions([model.GetBoolVarFromProtoIndex(i) for i in literals])
    return solver.Solve(model)


class _Session:
    """One request: candidates, pruned parts, and repeated solves over them."""

    def __init__(self, catalog: Catalog, req: Request, time_limit: float, workers: int):
        self.catalog, self.req = catalog, req
        self.time_limit, self.workers = time_limit, workers
        self.cands: Candidates = build_candidates(catalog, req, to_eur)
        self.parts = self.cands.parts
        self.stats: dict[str, Any] = {"candidates": sum(len(v) for v in self.parts.values()),
                                      "runs": req.runs, "baseline_hours": req.baseline_hours}
        if not self.cands.missing:
            rec = record(self.cands, req, catalog)
            keep = set(self.cands.owned) | {catalog.get(i).id for i in req.pinned}
            self.parts = prune(rec, {"gpu": lambda g: g.chip}, keep)
        self.stats["after_pruning"] = sum(len(v) for v in self.parts.values())
        self.budget_needed: Optional[Decimal] = None  # set by the why-not: the cheapest build without the budget

    def solve(self, req: Request, forbid_chips: set[str] = frozenset(), objective: str = "auto",
              trust_unknown: bool = False) -> tuple[str, Optional[dict[str, Any]]]:
        """Solve with every requirement enforced; returns (status, chosen parts or None)."""
        parts = dict(self.parts)
        if forbid_chips:
            parts["gpu"] = [g for g in parts["gpu"] if g.chip not in forbid_chips]
            if not parts["gpu"]:
                return "infeasible", None
        m, terms, _ = build_model(parts, self.cands, req, self.catalog, with_assumptions=False,
                                  trust_unknown=trust_unknown)
        unverified = None
        if trust_unknown:  # verified parts rank above unverified ones: fewer parts resting on unknown data first
            unverified = sum(m.has(c, lambda p: p.id in m.trusted, unknown=False) for c in parts)
        set_objective(m.model, terms, parts, self.cands, req, req.mode if objective == "auto" else objective,
                      unverified)
        solver = _solver(self.time_limit, self.workers)
        status = solver.Solve(m.model)
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return ("optimal" if status == cp_model.OPTIMAL else "feasible"), m.chosen(solver)
        if status == cp_model.INFEASIBLE:
            return "infeasible", None
        return "unknown", None

    def plan(self, chosen: dict[str, Any]) -> Plan:
        req = self.req
        report = check_parts(self.catalog, list(chosen.values()), gpu_count=req.gpu_count,
                             power_fraction=req.power_fraction, workload=req.workload,
                             precision=req.precision, model_params=req.model_params, owned=self.cands.owned,
                             used=req.used, currency="EUR")
        if report.problems:  # the solver and the checker share rules: this would be a bug
            raise PlannerError(f"internal error: solver chose an incompatible build ({report.problems[0].message})")
        total = sum(self.cands.price_cents[p.id] * (req.gpu_count if c == "gpu" else 1) for c, p in chosen.items())
        return Plan(parts=chosen, report=report, speed=self.cands.speed[chosen["gpu"].id],
                    quality=quality.points(report.build) if req.goal == "expert" else 0, power_fraction=req.power_fraction,
                    gpu_count=req.gpu_count, total_cents_eur=total, currency=req.currency,
                    catalog=self.catalog, owned=self.cands.owned, offers=self.cands.offers)

    def explain(self) -> WhyNot:
        if self.cands.missing:
            return WhyNot([f"no {c} in the catalog has a price (after exclusions)" for c in self.cands.missing],
                          ["add offers to data/offers/ or remove exclusions"])
        core = self.infeasible_core(self.parts)
        if core is None:
            return WhyNot(["the solver could not decide within the time limit"], ["retry with a longer --time-limit"])
        if not core:
            return self.explain_unknown() or self.explain_catalog()
        why = WhyNot(core, self.suggest(core))
        if all(c.endswith("(pinned)") for c in core):  # the pin alone fails: say which rules it cannot pass
            rules = [r for r in self.colliding_rules() if not r.endswith("(pinned)")]
            if rules:
                why.conflicts.append(f"for {self.what()}, the pinned part{'s' if len(core) > 1 else ''} cannot pass "
                                     "these together with any catalog parts: "
                                     + "; ".join(r.removeprefix("compatibility: ") for r in rules))
        return why

    def what(self) -> str:
        return f"{self.req.gpu_count} GPUs" if self.req.gpu_count > 1 else "this build"

    def colliding_rules(self) -> list[str]:
        """The infeasible core when each compatibility rule is a switch too, over every candidate part; empty when
        no rule is in it (then the catalog, not a rule, is at fault)."""
        core = self.infeasible_core(self.cands.parts, gate_problems=True) or []
        return core if any(s.startswith("compatibility: ") for s in core) else []

    def infeasible_core(self, parts: dict[str, list[Any]], gate_problems: bool = False) -> Optional[list[str]]:
        """The named requirements (and, with `gate_problems`, compatibility rules) in the solver's infeasible core;
        None when the solver does not prove the request infeasible within the time limit."""
        m, _, names = build_model(parts, self.cands, self.req, self.catalog, with_assumptions=True,
                                  gate_problems=gate_problems)
        solver = _solver(self.time_limit, 1)
        if solver.Solve(m.model) != cp_model.INFEASIBLE:
            return None
        core = [i for i in solver.SufficientAssumptionsForInfeasibility() if i in names]
        k = 0
        while k < len(core):  # CP-SAT's set is sufficient, not minimal: keep only members the failure needs
            trial = core[:k] + core[k + 1:]
            if _solve_assuming(solver, m.model, trial) == cp_model.INFEASIBLE:
                found = set(solver.SufficientAssumptionsForInfeasibility())
                core = [i for i in trial if i in found] if found else trial
            else:
                k += 1
        return [names[i] for i in core]

    def explain_catalog(self) -> WhyNot:
        """No combination of catalog parts passes the compatibility rules with the requirements: name the rules that
        collide (each rule a switch; the solver's infeasible core), over every candidate part, not the pruned set."""
        core = self.colliding_rules()
        if not core:
            return WhyNot(["the catalog holds no compatible combination of parts"],
                          ["check `planner catalog validate` and the owned/pinned parts"])
        return WhyNot([f"no parts in the catalog for {self.what()} pass these together: " + "; ".join(core)],
                      ["add parts that meet them to the catalog (data/*.csv and data/offers/), or relax a requirement"
                       " named above"])

    def explain_unknown(self) -> Optional[WhyNot]:
        """Is unknown safety/fit data the blocker? Re-solve trusting it; if a build appears, name its unverified parts."""
        m, _, _ = build_model(self.parts, self.cands, self.req, self.catalog, with_assumptions=False, trust_unknown=True)
        solver = _solver(self.time_limit, 1)
        if solver.Solve(m.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        chosen = m.chosen(solver)
        report = check_parts(self.catalog, list(chosen.values()), gpu_count=self.req.gpu_count,
                             power_fraction=self.req.power_fraction)
        ids = sorted({pid for f in report.unverified if RULES_BY_NAME[f.rule].strict_unknown for pid in f.parts})
        return WhyNot(["every build meeting the rest needs a part whose PSU cable, GPU connector or multi-GPU slot data "
                       "is unknown: unknown is not yes"],
                      [f"pin the part(s) to accept their unverified data, e.g. {' '.join('--pin ' + i for i in ids)}"])

    def suggest(self, core: list[str]) -> list[str]:
        """The smallest change per conflicting requirement, found by re-solving without it."""
        req, out = self.req, []
        sentences = {s.split(" ")[0] for s in core}
        if any(s.startswith("total at most") for s in core):
            relaxed = req.model_copy(update={"budget": None, "mode": "cheapest"})
            status, chosen = self.solve(relaxed, objective="cheapest")
            if chosen:
                cost = from_eur(from_cents(self.plan_cost(chosen, relaxed)), req.currency)
                extra = cost - req.budget  # type: ignore[operator]
                self.budget_needed = cost
                what = self.describe_targets(relaxed)
                out.append(f"the cheapest build{what} costs {format_money(cost, req.currency)}; raise the budget by "
                           f"{format_money(extra, req.currency)}")
        if any("GB of VRAM per GPU" in s for s in core):
            relaxed = req.model_copy(update={"min_vram_gb": None})
            best = self.max_vram(relaxed)
            within = "the budget buys" if req.budget is not None else "any compatible build offers"
            if best is not None:
                out.append(f"or accept {best:g} GB of VRAM, the most {within} with the other requirements")
            else:
                out.append("no GPU in the catalog meets the other requirements either; relax them first")
        droppable = [s for s in core if not (s.startswith("total at most") or "GB of VRAM per GPU" in s)]
        fixing = self.fixed_by_dropping(droppable)
        out.extend(f"or drop the requirement '{s}'" for s in droppable if s in fixing)
        if droppable and not fixing and not out:
            out.append("dropping any one of these alone still leaves no build; relax two or more together")
        _ = sentences
        return [s[3:] if i == 0 and s.startswith("or ") else s for i, s in enumerate(out)]

    def fixed_by_dropping(self, sentences: list[str]) -> set[str]:
        """The named requirements whose removal alone lets a build through (a core names a set that fails together;
        dropping one member need not be enough, so each is re-solved without it before it is suggested)."""
        if not sentences:
            return set()
        m, _, names = build_model(self.parts, self.cands, self.req, self.catalog, with_assumptions=True)
        solver = _solver(self.time_limit, 1)
        return {sentence for sentence in sentences
                if _solve_assuming(solver, m.model, [i for i, n in names.items() if n != sentence])
                in (cp_model.OPTIMAL, cp_model.FEASIBLE)}

    def plan_cost(self, chosen: dict[str, Any], req: Request) -> int:
        return sum(self.cands.price_cents[p.id] * (req.gpu_count if c == "gpu" else 1) for c, p in chosen.items())

    def describe_targets(self, req: Request) -> str:
        bits = []
        if req.min_vram_gb:
            bits.append(f">= {req.min_vram_gb:g} GB VRAM")
        need = req.required_speedup()
        if need:
            bits.append(f">= {need:.2g}x the GTX 1080 Ti")
        return f" with {' and '.join(bits)}" if bits else " meeting the other requirements"

    def max_vram(self, req: Request) -> Optional[float]:
        best = None
        for v in sorted({g.vram_gb for g in self.parts["gpu"]}, reverse=True):
            status, chosen = self.solve(req.model_copy(update={"min_vram_gb": v, "mode": "cheapest"}),
                                        objective="cheapest")
            if chosen:
                best = v
                break
        return best


def set_objective(model: cp_model.CpModel, terms: dict[str, Any], parts: dict[str, list[Any]], cands: Candidates,
                  req: Request, mode: str, unverified: Any = None) -> None:
    """Best: sweep speed, then quality points, then cost, as one integer lexicographic sum. Cheapest: cost, then
    quality points at that cost. With `unverified` (the count of parts resting on unknown data, when only such parts
    make a build), fewer of them comes right after speed (best) or cost (cheapest)."""
    big = sum(max((cands.price_cents[p.id] for p in ps), default=0) for ps in parts.values()) * (req.gpu_count or 1) + 1
    q_big = quality.max_points() + 1
    u_big = len(parts) + 1 if unverified is not None else 1
    verified = 0 if unverified is None else len(parts) - unverified
    if mode == "best":
        model.Maximize(terms["score"] * u_big * q_big * big + verified * q_big * big + terms["quality"] * big
                       - terms["price"])
    else:
        model.Minimize(terms["price"] * u_big * q_big - verified * q_big - terms["quality"])


def throughput(plan: Plan, runs: int) -> Fraction:
    """Sweep throughput in per-GPU speed units per round: speed / ceil(runs / GPUs) (runs go in parallel)."""
    per_gpu = score_units(plan.speed, 1)
    return Fraction(per_gpu, -(-runs // plan.gpu_count))


def rank_key(plan: Plan, req: Request) -> tuple:
    """Across GPU counts, the same order the model uses within one: the user's objective first."""
    if req.mode == "best":
        return (throughput(plan, req.runs), plan.quality, -plan.total_cents_eur, -plan.gpu_count, plan.power_fraction)
    return (-plan.total_cents_eur, plan.quality, -plan.gpu_count, plan.power_fraction)


def simpler_key(plan: Plan, req: Request) -> tuple:
    return (-plan.gpu_count, plan.power_fraction, plan.quality, throughput(plan, req.runs), -plan.total_cents_eur)


def pick_across_counts(plans: list[Plan], req: Request) -> tuple[Plan, Optional[str]]:
    """The plan to recommend among the GPU counts tried, and a note when a marginally faster one was passed over."""
    fastest = max(plans, key=lambda p: rank_key(p, req))
    if req.mode != "best":
        return fastest, None
    top = throughput(fastest, req.runs)
    pick = max((p for p in plans if throughput(p, req.runs) >= top * SAME_SPEED), key=lambda p: simpler_key(p, req))
    if pick is fastest:
        return pick, None
    gain = float(top / throughput(pick, req.runs) - 1) * 100
    sooner = f"{gain:.1f} % sooner" if gain >= 0.1 else "less than 0.1 % sooner"
    what = f"{fastest.gpu_count} x {fastest.chip.name}" + (
        f" at {fastest.power_fraction:.0%} power" if fastest.power_fraction < 1 else "")
    return pick, (f"{what} would finish the sweep {sooner}, well inside the speed model's error; this "
                  f"simpler machine ({pick.gpu_count} GPU{'s' if pick.gpu_count > 1 else ''}"
                  f"{'' if pick.power_fraction < 1 else ' at stock power'}) is recommended instead")


def recommend(
    catalog: Catalog,
    req: Request,
    *,
    alternatives: int = 0,
    time_limit: float = DEFAULT_TIME_LIMIT_S,
    workers: int = 2,
) -> Recommendation:
    """Solve a request on a catalog. Plans come ranked; alternatives use a different GPU chip each."""
    start = time.perf_counter()
    req.check_plannable()
    if alternatives < 0 or alternatives > 20:
        from planner.errors import InputError
        raise InputError(f"alternatives must be between 0 and 20, got {alternatives}")
    pinned: dict[str, str] = {}
    for pid in req.pinned:
        part = catalog.get(pid)
        if part.category in pinned and pinned[part.category] != part.id:
            from planner.errors import InputError
            raise InputError(f"two {part.category} parts pinned ({pinned[part.category]}, {part.id}); "
                             "a build takes one of each")
        pinned[part.category] = part.id
    req, _ = with_memfit_floor(req)  # the note is the pipeline's (planner.service): it holds with or without a plan
    tried: list[tuple[_Session, str, Optional[Plan]]] = []
    hostable = max_hostable_gpus(catalog, req)
    skipped: list[dict[str, Any]] = []
    for n, frac in options(req):
        if n > hostable and tried:  # the strict multi-GPU rule would refuse every board: skip the solve
            skipped.append({"gpus": n, "power_limit": frac, "status": "no board known to host this many GPUs",
                            "total_eur": None, "sweep_hours": None})
            continue  # GPU count (and a power limit for several): one exact solve each, best kept
        s = _Session(catalog, req.model_copy(update={"gpu_count": n, "power_fraction": frac}), time_limit, workers)
        if s.cands.missing:
            return Recommendation("infeasible", [], s.explain(), time.perf_counter() - start, s.stats)
        status, chosen = s.solve(s.req)
        tried.append((s, status, None if chosen is None else s.plan(chosen)))
    stats = dict(tried[0][0].stats)
    stats["by_gpu_count"] = [{"gpus": s.req.gpu_count, "power_limit": s.req.power_fraction, "status": st,
                              "total_eur": None if p is None else str(from_cents(p.total_cents_eur)),
                              "sweep_hours": None if p is None else round(sweep_hours(p, req), 2)}
                             for s, st, p in tried] + skipped
    found = [(s, st, p) for s, st, p in tried if p is not None]
    unverified_only = False
    if not found and not req.strict and not any(st == "unknown" for _, st, _ in tried):
        found = unverified_builds(tried)  # unknown is not yes, but a build the data cannot confirm is still an answer
        unverified_only = bool(found)
    if not found:
        if any(st == "unknown" for _, st, _ in tried):
            return Recommendation("timeout", [], WhyNot(["no solution within the time limit"], ["raise --time-limit"]),
                                  time.perf_counter() - start, stats)
        return Recommendation("infeasible", [], explain_tried([t[0] for t in tried]), time.perf_counter() - start,
                              stats)
    first, passed_over = pick_across_counts([p for _, _, p in found], req)
    s, status, _ = next(t for t in found if t[2] is first)
    if any(st == "unknown" for _, st, _ in tried):
        status = "feasible"  # a count that timed out might have held a better build
    stats.update({k: v for k, v in s.stats.items() if k in ("candidates", "after_pruning")})
    unspent = unspent_note(first, req, status)
    psu_note = psu_load_note(first, [p.wattage_w for p in catalog.by_category("psu")])

    def step_solve(r: Request) -> Recommendation:
        return recommend(catalog, r, time_limit=time_limit, workers=workers)

    first.notes.extend(n for n in (
        power_limit_note(first, s.req, req), persist_limit_note(first), used_parts_note(first), stack_note(first),
        unspent, passed_over, channels_note(first), psu_note,
        unspent and next_step_note(req, first, step_solve), unspent and step_up_note(req, first, step_solve),
        reuse_platform_note(req, first, step_solve)) if n)
    if unverified_only:
        first.notes.insert(0, checklist_note(first))
        stats["unverified_only"] = True
    plans = [first]
    forbid = {first.gpu.chip}
    for _ in range(alternatives):
        st, alt = s.solve(s.req, forbid_chips=forbid, trust_unknown=unverified_only)
        if alt is None:
            break
        plan = s.plan(alt)
        plan.trade_offs = trade_offs(plans[0], plan)
        plans.append(plan)
        forbid.add(alt["gpu"].chip)
    return Recommendation(status, plans, None, time.perf_counter() - start, stats)


def unverified_builds(tried: list[tuple[_Session, str, Optional[Plan]]]) -> list[tuple[_Session, str, Plan]]:
    """Every GPU count found nothing with known data: solve one GPU again trusting unknown safety/fit data (as if each
    part were pinned), so the user gets a build and the checks to make before ordering (`Request.strict` refuses
    instead). Several GPUs are not retried: unknown slot wiring is what refuses the X870E Carbon's x8/x4."""
    out = []
    for s, st, _ in tried:  # several GPUs stay strict: a board whose slot wiring is unknown is refused (issue 26)
        if st != "infeasible" or s.cands.missing or s.req.gpu_count > 1:
            continue
        status, chosen = s.solve(s.req, trust_unknown=True)
        if chosen is not None:
            out.append((s, status, s.plan(chosen)))
    return out


SUGGESTED_LIMITS = (0.8, 0.7)  # hardware-facts §4.2: 70-80 % of stock power keeps most of the throughput


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
        if n > 1 and req.allow_power_limit and req.suggest_power_limit and req.power_fraction == 1.0:
            out.extend((n, f) for f in SUGGESTED_LIMITS)
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


__all__ = ["recommend", "Recommendation", "Plan", "Request"]
