"""CP-SAT build solver: the best build for a budget, the cheapest for a target, alternatives, why-not."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from decimal import Decimal
from fractions import Fraction
from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.catalog.load import Catalog
from planner.compat.checker import check_parts
from planner.errors import PlannerError
from planner.money import format_money, from_cents
from planner.request import Request
from planner.settings import (MAX_ALTERNATIVES, POWER_FRACTION_MAX, SOLVER_TIME_LIMIT_S, SOLVER_WORKERS,
                              SUGGESTED_POWER_LIMITS)
from planner.compat.rules import RULES_BY_NAME
from planner.solver import quality
from planner.solver.currency import from_eur, to_eur
from planner.solver.model import (BUDGET, OTHER, SPEED_FLOOR, Candidates, Gate, build_candidates, build_model, encode_all,
                                  pinned_ids, record)
from planner.solver.encoder import ModelEncoder
from planner.solver.notes import (
    channels_note, checklist_note, explain_tried, persist_limit_note, psu_load_note, next_step_note, power_limit_note,
    reuse_platform_note, stack_note, step_up_note, unspent_note, used_parts_note,
)
from planner.solver.plan import SAME_SPEED, Plan, Recommendation, WhyNot, trade_offs
from planner.solver.prune import prune
from planner.solver.objective import pick_across_counts, rank_key, set_objective, simpler_key, throughput
from planner.perf.speed import score_units



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

    def __init__(self, catalog: Catalog, req: Request, time_limit: float, workers: int,
                 counts: Optional[dict[str, Any]] = None):
        self.catalog, self.req = catalog, req
        # models built and CP-SAT solves, added to the request's stats (the why-not's cost is said, not hidden)
        self.counts = counts if counts is not None else {"models_built": 0, "solves": 0}
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

    def _build_model(self, *args: Any, **kw: Any) -> Any:
        self.counts["models_built"] = self.counts.get("models_built", 0) + 1
        return build_model(*args, **kw)

    def _solve(self, solver: cp_model.CpSolver, model: cp_model.CpModel, literals: Optional[list[int]] = None) -> int:
        self.counts["solves"] = self.counts.get("solves", 0) + 1
        return solver.Solve(model) if literals is None else _solve_assuming(solver, model, literals)

    def solve(self, req: Request, forbid_chips: set[str] = frozenset(), objective: str = "auto",
              trust_unknown: bool = False) -> tuple[str, Optional[dict[str, Any]]]:
        """Solve with every requirement enforced; returns (status, chosen parts or None)."""
        parts = dict(self.parts)
        if forbid_chips:
            parts["gpu"] = [g for g in parts["gpu"] if g.chip not in forbid_chips]
            if not parts["gpu"]:
                return "infeasible", None
        m, terms, _ = self._build_model(parts, self.cands, req, self.catalog, with_assumptions=False,
                                  trust_unknown=trust_unknown)
        unverified = None
        if trust_unknown:  # verified parts rank above unverified ones: fewer parts resting on unknown data first
            unverified = sum(m.has(c, lambda p: p.id in m.trusted, unknown=False) for c in parts)
        set_objective(m.model, terms, parts, self.cands, req, req.mode if objective == "auto" else objective,
                      unverified)
        solver = _solver(self.time_limit, self.workers)
        status = self._solve(solver, m.model)
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
        m, _, names = self._build_model(parts, self.cands, self.req, self.catalog, with_assumptions=True,
                                  gate_problems=gate_problems)
        solver = _solver(self.time_limit, 1)
        if self._solve(solver, m.model) != cp_model.INFEASIBLE:
            return None
        core = [i for i in solver.SufficientAssumptionsForInfeasibility() if i in names]
        k = 0
        while k < len(core):  # CP-SAT's set is sufficient, not minimal: keep only members the failure needs
            trial = core[:k] + core[k + 1:]
            if self._solve(solver, m.model, trial) == cp_model.INFEASIBLE:
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
        m, _, _ = self._build_model(self.parts, self.cands, self.req, self.catalog, with_assumptions=False, trust_unknown=True)
        solver = _solver(self.time_limit, 1)
        if self._solve(solver, m.model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
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
        m, _, names = self._build_model(self.parts, self.cands, self.req, self.catalog, with_assumptions=True)
        solver = _solver(self.time_limit, 1)
        return {sentence for sentence in sentences
                if self._solve(solver, m.model, [i for i, n in names.items() if n != sentence])
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


class _Problem:
    """One request's candidates, pruning and CP-SAT model, built once over every (GPU count, power limit) option the
    request may take: each option's rules and requirements are enforced only when its literal is chosen, and each
    solve fixes which option (and which requirements) hold by setting variable domains, so one model serves the
    per-option solves, the next-step question and the alternatives (issue 28: one model per request, not 20)."""

    def __init__(self, catalog: Catalog, req: Request, opts: list[tuple[int, float]], time_limit: float, workers: int):
        self.catalog, self.req, self.opts = catalog, req, opts
        self.time_limit, self.workers = time_limit, workers
        self.reqs = {k: req.model_copy(update={"gpu_count": k[0], "power_fraction": k[1]}) for k in opts}
        by_frac: dict[float, Candidates] = {}
        for n, f in opts:  # candidates and speeds once per power limit; the score once per option
            if f not in by_frac:
                by_frac[f] = build_candidates(catalog, self.reqs[(n, f)], to_eur)
        self.cands = {k: replace(by_frac[k[1]], score={g: score_units(sp, k[0]) for g, sp in by_frac[k[1]].speed.items()})
                      for k in opts}
        first = self.cands[opts[0]]
        self.missing = first.missing
        self.parts = first.parts
        self.stats: dict[str, Any] = {"candidates": sum(len(v) for v in self.parts.values()),
                                      "runs": req.runs, "baseline_hours": req.baseline_hours}
        if not self.missing:
            rec = record(first, self.reqs[opts[0]], catalog, [(self.cands[k], self.reqs[k]) for k in opts[1:]])
            keep = set(first.owned) | {catalog.get(i).id for i in req.pinned}
            self.parts = prune(rec, {"gpu": lambda g: g.chip}, keep)
        self.stats["after_pruning"] = sum(len(v) for v in self.parts.values())
        self.stats["models_built"] = 0
        self.stats["solves"] = 0
        self._built = False

    # ---- the one model -----------------------------------------------------------------------------------------
    def _build(self) -> None:
        pins = pinned_ids(self.req, self.catalog)
        self.lits: dict[str, Any] = {}  # the option literals and the shared requirement literals (budget, speed floor)
        self.terms: dict[tuple[int, float], dict[str, Any]] = {}
        self.encoders: dict[tuple[int, float], ModelEncoder] = {}
        base: Optional[ModelEncoder] = None
        for k in self.opts:
            r = self.reqs[k]
            m = ModelEncoder(self.parts, self.catalog.chips, k[0], k[1], r.workload, r.precision, r.model_params, pins,
                             share=base)
            if base is None:
                base, self.model = m, m.model
            lit = self.model.NewBoolVar(f"option {k[0]} GPU(s) at {k[1]:.0%}")
            m.model = Gate(self.model, lit)  # this option's rules and requirements hold only when it is chosen
            self.terms[k] = encode_all(m, r, self.cands[k], self._switch, self.catalog)
            m.model = self.model
            self.encoders[k] = m
            self.lits[f"option {k}"] = lit
        self.model.AddExactlyOne([self.lits[f"option {k}"] for k in self.opts])
        self.floors: dict[tuple, Any] = {self._floor_key(self.req): self.lits.get(SPEED_FLOOR)}
        self.vram_floors: dict[int, Any] = {}
        self._built = True
        self.stats["models_built"] += 1

    def _switch(self, sentence: str, kind: str) -> Any:
        """One literal per kind of requirement a later solve may lift (the budget, the speed floor), shared by every
        option; the rules and the other requirements always hold (within their option)."""
        if kind == OTHER:
            return None
        if kind not in self.lits:
            self.lits[kind] = self.model.NewBoolVar(sentence)
        return self.lits[kind]

    def _floor_key(self, req: Request) -> tuple:
        return tuple(req.required_speedup(n) for n, _ in self.opts)

    def _floor_literal(self, req: Request) -> Any:
        """The literal enforcing `req`'s speed floor (deadline, minimum speedup) on every option; added on demand
        for a floor the model was not built with (the next-step question asks for a faster sweep)."""
        key = self._floor_key(req)
        if key not in self.floors:
            lit = self.model.NewBoolVar(f"speed floor {key}")
            for k in self.opts:
                need = req.required_speedup(k[0])
                if need:
                    self.model.Add(self.terms[k]["score"] >= int(round(need * 1000)) * k[0]).OnlyEnforceIf(
                        [lit, self.lits[f"option {k}"]])
            self.floors[key] = lit
        return self.floors[key]

    # ---- solving -----------------------------------------------------------------------------------------------
    def solve(self, k: tuple[int, float], req: Request, forbid_chips: frozenset[str] = frozenset(),
              vram_floor: Optional[float] = None) -> tuple[str, Optional[dict[str, Any]]]:
        """Option k's best (or cheapest) build under `req`'s budget and speed floor (the request itself, or the
        next-step question), the chips in `forbid_chips` left out. Returns (status, chosen parts or None).

        Each solve fixes its option: letting the model pick the power limit or the GPU count (a free option literal)
        gave the same builds but solved 3-30x slower here, the enforced-only-if constraints relaxing poorly."""
        if not self._built:
            self._build()
        if forbid_chips and not any(g.chip not in forbid_chips for g in self.parts["gpu"]):
            return "infeasible", None
        set_objective(self.model, self.terms[k], self.parts, self.cands[k], self.reqs[k], req.mode)
        status, solver = self._run(self._fixed(req, [k], forbid_chips, vram_floor))
        if solver is None:
            return ("infeasible" if status == cp_model.INFEASIBLE else "unknown"), None
        return ("optimal" if status == cp_model.OPTIMAL else "feasible"), self.encoders[k].chosen(solver)

    VARIANT_FIELDS = frozenset({"budget", "mode", "deadline_hours", "min_speedup", "gpu_count", "min_vram_gb"})

    def variant(self, r: Request) -> Recommendation:
        """The notes' questions (the next faster build, the steps up) answered on the same model when they differ
        from the request only in budget, mode, speed floor, GPU count or a higher VRAM floor; any other question
        (owned parts, say) is a request of its own."""
        base, other = self.req.model_dump(), r.model_dump()
        changed = {f for f in base if base[f] != other[f]}
        wanted = set(options(r))
        if (changed - self.VARIANT_FIELDS or (r.min_vram_gb or 0) < (self.req.min_vram_gb or 0) or self.missing
                or not wanted <= set(self.opts)):  # e.g. a GPU more than the request's fixed count: not in this model
            return recommend(self.catalog, r, time_limit=self.time_limit, workers=self.workers)
        plans = []
        for k in self.opts:
            if k in wanted:
                _, chosen = self.solve(k, r, vram_floor=r.min_vram_gb)
                if chosen is not None:
                    plans.append(self.plan(k, chosen))
        if not plans:
            return Recommendation("infeasible", [], None, 0.0, {})
        return Recommendation("optimal", [pick_across_counts(plans, r)[0]], None, 0.0, {})

    def _vram_literal(self, floor: Optional[float]) -> Any:
        """The literal enforcing a VRAM floor per GPU (added on demand: a step up asks for twice the VRAM)."""
        if not floor:
            return None
        key = int(round(floor * 10))
        if key not in self.vram_floors:
            lit = self.model.NewBoolVar(f"at least {floor:g} GB of VRAM per GPU")
            enc = self.encoders[self.opts[0]]  # the GPU choice is shared by every option
            self.model.Add(enc.attr("gpu", lambda g: int(round(g.vram_gb * 10))) >= key).OnlyEnforceIf(lit)
            self.vram_floors[key] = lit
        return self.vram_floors[key]

    def _fixed(self, req: Request, allowed: list[tuple[int, float]], forbid_chips: frozenset[str],
               vram_floor: Optional[float] = None) -> dict[int, int]:
        """The literals a solve fixes: options outside `allowed` off (the one allowed option on), the budget, the
        speed floor and a VRAM floor as asked, and the forbidden chips' cards off."""
        fixed: dict[int, int] = {self.lits[f"option {o}"].Index(): 0 for o in self.opts if o not in allowed}
        if len(allowed) == 1:
            fixed[self.lits[f"option {allowed[0]}"].Index()] = 1
        if BUDGET in self.lits:
            fixed[self.lits[BUDGET].Index()] = int(req.budget is not None)
        floor = self._floor_literal(req)
        for lit in self.floors.values():
            if lit is not None:
                fixed[lit.Index()] = int(lit is floor)
        vram = self._vram_literal(vram_floor)
        for lit in self.vram_floors.values():
            fixed[lit.Index()] = int(lit is vram)
        for g, lit in zip(self.parts["gpu"], self.encoders[self.opts[0]].x["gpu"]):  # every option shares them
            if g.chip in forbid_chips:
                fixed[lit.Index()] = 0
        return fixed

    def _run(self, fixed: dict[int, int]) -> tuple[int, Optional[cp_model.CpSolver]]:
        """Solve with `fixed` literals' domains set for this solve only; the solver when it found a build."""
        proto = self.model.Proto()  # Booleans' domains are [lo, hi]: set both, then restore them
        saved = {i: (proto.variables[i].domain[0], proto.variables[i].domain[1]) for i in fixed}
        for i, v in fixed.items():
            proto.variables[i].domain[0] = proto.variables[i].domain[1] = v
        try:
            solver = _solver(self.time_limit, self.workers)
            status = solver.Solve(self.model)
            self.stats["solves"] += 1
        finally:
            for i, (lo, hi) in saved.items():
                proto.variables[i].domain[0], proto.variables[i].domain[1] = lo, hi
        return status, (solver if status in (cp_model.OPTIMAL, cp_model.FEASIBLE) else None)

    def plan(self, k: tuple[int, float], chosen: dict[str, Any]) -> Plan:
        req, cands = self.reqs[k], self.cands[k]
        report = check_parts(self.catalog, list(chosen.values()), gpu_count=req.gpu_count,
                             power_fraction=req.power_fraction, workload=req.workload,
                             precision=req.precision, model_params=req.model_params, owned=cands.owned,
                             used=req.used, currency="EUR")
        if report.problems:  # the solver and the checker share rules: this would be a bug
            raise PlannerError(f"internal error: solver chose an incompatible build ({report.problems[0].message})")
        total = sum(cands.price_cents[p.id] * (req.gpu_count if c == "gpu" else 1) for c, p in chosen.items())
        return Plan(parts=chosen, report=report, speed=cands.speed[chosen["gpu"].id],
                    quality=quality.points(report.build) if req.goal == "expert" else 0, power_fraction=req.power_fraction,
                    gpu_count=req.gpu_count, total_cents_eur=total, currency=req.currency,
                    catalog=self.catalog, owned=cands.owned, offers=cands.offers)

    def session(self, k: tuple[int, float]) -> "_Session":
        """The why-not machinery for option k (its own models with named requirements): only when nothing fits."""
        return _Session(self.catalog, self.reqs[k], self.time_limit, self.workers, counts=self.stats)

    # ---- the answer ----------------------------------------------------------------------------------------------
    def answer(self, req: Request, alternatives: int, start: float, skipped: list[dict[str, Any]]) -> Recommendation:
        """Every option's best build, the pick across GPU counts and power limits (the simplest machine within the
        speed model's margin of the fastest), its notes and alternatives."""
        if self.missing:
            return Recommendation("infeasible", [], self.session(self.opts[0]).explain(), time.perf_counter() - start,
                                  dict(self.stats))
        tried: list[tuple[tuple[int, float], str, Optional[Plan]]] = []
        for k in self.opts:
            status, chosen = self.solve(k, req)
            tried.append((k, status, None if chosen is None else self.plan(k, chosen)))
        stats = dict(self.stats)
        # each option's status; its build's headline (total, sweep over the runs the answer counts) is the
        # service's BuildSummary of `Recommendation.by_count`, so every list of builds says one thing
        stats["by_gpu_count"] = [{"gpus": k[0], "power_limit": k[1], "status": st} for k, st, _ in tried] + skipped
        found = [(k, st, p) for k, st, p in tried if p is not None]
        fallback: Optional[_Session] = None  # only unverified parts make a build: its session solves the alternatives
        if not found and not req.strict and not any(st == "unknown" for _, st, _ in tried):
            unverified = unverified_builds([(self.session(k), st) for k, st, _ in tried])
            found = [((s.req.gpu_count, s.req.power_fraction), st, p) for s, st, p in unverified]
            fallback = unverified[0][0] if unverified else None
        if not found:
            if any(st == "unknown" for _, st, _ in tried):
                return Recommendation("timeout", [], WhyNot(["no solution within the time limit"],
                                                            ["raise --time-limit"]), time.perf_counter() - start, stats)
            why = explain_tried([self.session(k) for k, _, _ in tried])  # its models and solves are counted too
            stats.update({"models_built": self.stats["models_built"], "solves": self.stats["solves"]})
            return Recommendation("infeasible", [], why, time.perf_counter() - start, stats)
        first, passed_over = pick_across_counts([p for _, _, p in found], req)
        k, status, _ = next(t for t in found if t[2] is first)
        if any(st == "unknown" for _, st, _ in tried):
            status = "feasible"  # a count that timed out might have held a better build
        unspent = unspent_note(first, req, status)
        psu_note = psu_load_note(first, [p.wattage_w for p in self.catalog.by_category("psu")])
        step = self.variant if fallback is None else (lambda r: recommend(self.catalog, r, time_limit=self.time_limit,
                                                                          workers=self.workers))
        first.notes.extend(n for n in (
            power_limit_note(first, self.reqs[k], req), persist_limit_note(first), used_parts_note(first),
            stack_note(first), unspent, passed_over, channels_note(first), psu_note,
            unspent and next_step_note(req, first, step), unspent and step_up_note(req, first, step),
            reuse_platform_note(req, first, step)) if n)
        if fallback is not None:
            first.notes.insert(0, checklist_note(first))
            stats["unverified_only"] = True
        plans = [first]
        forbid = {first.gpu.chip}
        for _ in range(alternatives):
            if fallback is None:
                _, alt = self.solve(k, req, forbid_chips=frozenset(forbid))
            else:
                _, alt = fallback.solve(fallback.req, forbid_chips=forbid, trust_unknown=True)
            if alt is None:
                break
            plan = self.plan(k, alt) if fallback is None else fallback.plan(alt)
            plan.trade_offs = trade_offs(plans[0], plan)
            plans.append(plan)
            forbid.add(alt["gpu"].chip)
        stats.update({"models_built": self.stats["models_built"], "solves": self.stats["solves"]})
        return Recommendation(status, plans, None, time.perf_counter() - start, stats, [p for _, _, p in found])


def recommend(
    catalog: Catalog,
    req: Request,
    *,
    alternatives: int = 0,
    time_limit: float = SOLVER_TIME_LIMIT_S,
    workers: int = SOLVER_WORKERS,
) -> Recommendation:
    """Solve a request on a catalog. Plans come ranked; alternatives use a different GPU chip each."""
    start = time.perf_counter()
    req.check_plannable()
    if not 0 <= alternatives <= MAX_ALTERNATIVES:
        from planner.errors import InputError
        raise InputError(f"alternatives must be between 0 and {MAX_ALTERNATIVES}, got {alternatives}")
    pinned: dict[str, str] = {}
    for pid in req.pinned:
        part = catalog.get(pid)
        if part.category in pinned and pinned[part.category] != part.id:
            from planner.errors import InputError
            raise InputError(f"two {part.category} parts pinned ({pinned[part.category]}, {part.id}); "
                             "a build takes one of each")
        pinned[part.category] = part.id
    req, _ = with_memfit_floor(req)  # the note is the pipeline's (planner.service): it holds with or without a plan
    hostable = max_hostable_gpus(catalog, req)
    opts, skipped = [], []
    for n, frac in options(req):
        if n > hostable and opts:  # the strict multi-GPU rule would refuse every board: skip the solve
            skipped.append({"gpus": n, "power_limit": frac, "status": "no board known to host this many GPUs"})
        else:
            opts.append((n, frac))
    problem = _Problem(catalog, req, opts, time_limit, workers)
    return problem.answer(req, alternatives, start, skipped)


def unverified_builds(sessions: list[tuple["_Session", str]]) -> list[tuple["_Session", str, Plan]]:
    """Every GPU count found nothing with known data: solve one GPU again trusting unknown safety/fit data (as if each
    part were pinned), so the user gets a build and the checks to make before ordering (`Request.strict` refuses
    instead). Several GPUs are not retried: unknown slot wiring is what refuses the X870E Carbon's x8/x4."""
    out = []
    for s, st in sessions:  # several GPUs stay strict: a board whose slot wiring is unknown is refused (issue 26)
        if st != "infeasible" or s.cands.missing or s.req.gpu_count > 1:
            continue
        status, chosen = s.solve(s.req, trust_unknown=True)
        if chosen is not None:
            out.append((s, status, s.plan(chosen)))
    return out


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


__all__ = ["recommend", "Recommendation", "Plan", "Request"]
