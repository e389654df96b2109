"""The one CP-SAT model per request: candidates, pruning, every option and named requirement, and its solves."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.catalog.load import Catalog
from planner.compat.checker import check_parts
from planner.errors import PlannerError
from planner.perf.speed import score_units
from planner.request import Request
from planner.solver import quality
from planner.solver.currency import to_eur
from planner.solver.encoder import ModelEncoder
from planner.solver.model import (BUDGET, SPEED_FLOOR, VRAM, Candidates, Gate, build_candidates, encode_all,
                                  pinned_ids, record, speed_floors, sweep_by_gpu)
from planner.solver.objective import set_objective
from planner.solver.plan import Plan
from planner.solver.prune import prune
from planner.solver.stats import Counts

Option = tuple[int, float]  # (GPU count, power limit)


def new_solver(time_limit: float, workers: int, seed: int = 0) -> cp_model.CpSolver:
    s = cp_model.CpSolver()
    s.parameters.max_time_in_seconds = time_limit
    s.parameters.num_workers = workers
    s.parameters.random_seed = seed
    return s


class Engine:
    """One request's candidates, pruning and CP-SAT model, built once over every (GPU count, power limit) option the
    request may take. Each option's rules and requirements hold only when its literal is chosen; each requirement is
    a named literal (shared by the options that state it), and one more literal lets unknown safety/fit data pass.
    A solve assumes (`AddAssumptions`) its option and which requirements hold, and clears the assumptions after; a
    why-not assumes the option's requirement literals on a copy with the option fixed, so the infeasible core names
    them. One model thus serves the per-option solves, the notes' questions, the alternatives, the unverified
    fallback and the why-not (issue 35: it used to take 9 models for a request with no build)."""

    def __init__(self, catalog: Catalog, req: Request, opts: list[Option], time_limit: float, workers: int):
        self.catalog, self.req, self.opts = catalog, req, opts
        self.time_limit, self.workers = time_limit, workers
        self.reqs = {k: req.model_copy(update={"gpu_count": k[0], "power_fraction": k[1]}) for k in opts}
        by_frac: dict[float, Candidates] = {}
        for n, f in opts:  # candidates and speeds once per power limit; the score once per option
            if f not in by_frac:
                by_frac[f] = build_candidates(catalog, self.reqs[(n, f)], to_eur)
        self.cands = {k: replace(by_frac[k[1]], score={g: score_units(sp, k[0]) for g, sp in by_frac[k[1]].speed.items()},
                                 sweep=sweep_by_gpu(by_frac[k[1]].parts["gpu"], by_frac[k[1]].speed, catalog.chips,
                                                    self.reqs[k], k[0]),
                                 sweep_high=sweep_by_gpu(by_frac[k[1]].parts["gpu"], by_frac[k[1]].speed,
                                                         catalog.chips, self.reqs[k], k[0], slow=True))
                      for k in opts}
        first = self.cands[opts[0]]
        self.missing = first.missing
        self.parts = first.parts
        self.counts = Counts()
        self.stats: dict[str, Any] = {"candidates": sum(len(v) for v in self.parts.values()),
                                      "runs": req.runs, "baseline_hours": req.baseline_hours}
        if not self.missing:
            rec = record(first, self.reqs[opts[0]], catalog, [(self.cands[k], self.reqs[k]) for k in opts[1:]])
            keep = set(first.owned) | {catalog.get(i).id for i in req.pinned}
            self.parts = prune(rec, {"gpu": lambda g: g.chip}, keep)
        self.stats["after_pruning"] = sum(len(v) for v in self.parts.values())
        self._built = False

    # ---- the one model -----------------------------------------------------------------------------------------
    def _build(self) -> None:
        pins = pinned_ids(self.req, self.catalog)
        self.option_lits: dict[Option, Any] = {}
        self.named: dict[str, tuple[Any, str]] = {}  # requirement sentence -> (literal, kind)
        self.stated: dict[Option, list[str]] = {}  # the sentences each option states, in order
        self.terms: dict[Option, dict[str, Any]] = {}
        self.encoders: dict[Option, ModelEncoder] = {}
        base: Optional[ModelEncoder] = None
        for k in self.opts:
            r = self.reqs[k]
            m = ModelEncoder(self.parts, self.catalog.chips, k[0], k[1], r.workload, r.precision, r.model_params, pins,
                             share=base)
            if base is None:
                base, self.model = m, m.model
                self.trust = self.model.NewBoolVar("trust unknown safety/fit data")
            m.trust = self.trust
            lit = self.model.NewBoolVar(f"option {k[0]} GPU(s) at {k[1]:.0%}")
            m.model = Gate(self.model, lit)  # this option's rules and requirements hold only when it is chosen
            self.stated[k] = []
            self.terms[k] = encode_all(m, r, self.cands[k], lambda s, kind, k=k: self._switch(k, s, kind), self.catalog)
            m.model = self.model
            self.encoders[k] = m
            self.option_lits[k] = lit
        self.model.AddExactlyOne(list(self.option_lits.values()))
        self.floors: dict[tuple, list[Any]] = {  # speed floor -> its literals (the request's are named requirements)
            self._floor_key(self.req): [lit for lit, kind in self.named.values() if kind == SPEED_FLOOR]}
        self.vram_floors: dict[int, Any] = {}
        self._built = True
        self.counts.models_built += 1

    def _switch(self, k: Option, sentence: str, kind: str) -> Any:
        """The literal of one named requirement (shared by every option that states the same sentence)."""
        if sentence not in self.named:
            self.named[sentence] = (self.model.NewBoolVar(sentence), kind)
        if sentence not in self.stated[k]:
            self.stated[k].append(sentence)
        return self.named[sentence][0]

    @staticmethod
    def _floor_key(req: Request) -> tuple:
        return (req.min_speedup or None, req.deadline_hours, req.deadline_at)

    def _floor_literals(self, req: Request) -> list[Any]:
        """The literals enforcing `req`'s speed floor (deadline, minimum speedup) on every option; one added on demand
        for a floor the model was not built with (the next-step question asks for a faster sweep)."""
        key = self._floor_key(req)
        if key not in self.floors:
            lit = self.model.NewBoolVar(f"speed floor {key}")
            for k in self.opts:
                sweep = self.terms[k]["sweep_high" if req.deadline_at == "slow end" else "sweep"]
                for _, make in speed_floors(req, self.terms[k]["score"], sweep, k[0]):
                    self.model.Add(make()).OnlyEnforceIf([lit, self.option_lits[k]])
            self.floors[key] = [lit]
        return self.floors[key]

    def _vram_literal(self, floor: Optional[float]) -> Any:
        """The literal enforcing a VRAM floor per GPU other than the request's (a step up asks for twice the VRAM,
        the why-not for the most VRAM the rest allows)."""
        if not floor:
            return None
        key = int(round(floor * 10))
        if key not in self.vram_floors:
            lit = self.model.NewBoolVar(f"at least {floor:g} GB of VRAM per GPU")
            enc = self.encoders[self.opts[0]]  # the GPU choice is shared by every option
            self.model.Add(enc.attr("gpu", lambda g: int(round(g.vram_gb * 10))) >= key).OnlyEnforceIf(lit)
            self.vram_floors[key] = lit
        return self.vram_floors[key]

    def _fixed(self, k: Option, req: Request, forbid_chips: frozenset[str] = frozenset(), trust: bool = False,
               free: frozenset[str] = frozenset()) -> list[Any]:
        """The literals a solve asserts: option k on and the others off; each named requirement (except the `free`
        sentences, which a why-not assumes instead) on as `req` states it - the budget when it has one, the request's
        VRAM and speed floors when `req` keeps them, another floor by its own literal; the forbidden chips' cards off;
        unknown data trusted or not."""
        out = [lit if o == k else lit.Not() for o, lit in self.option_lits.items()]
        own_vram = req.min_vram_gb or None
        same_vram = own_vram == (self.req.min_vram_gb or None)
        for sentence, (lit, kind) in self.named.items():
            if sentence in free or kind == SPEED_FLOOR:
                continue
            on = req.budget is not None if kind == BUDGET else same_vram if kind == VRAM else True
            out.append(lit if on else lit.Not())
        floor = self._floor_literals(req)
        unset = {self.named[s][0].Index() for s in free}
        out.extend(lit if lits is floor else lit.Not() for lits in self.floors.values() for lit in lits
                   if lit.Index() not in unset)
        vram = None if same_vram else self._vram_literal(own_vram)
        out.extend(lit if lit is vram else lit.Not() for lit in self.vram_floors.values())
        for g, lit in zip(self.parts["gpu"], self.encoders[self.opts[0]].x["gpu"]):  # every option shares them
            if g.chip in forbid_chips:
                out.append(lit.Not())
        out.append(self.trust if trust else self.trust.Not())
        return out

    def run(self, assumed: list[Any], workers: Optional[int] = None, model: Optional[cp_model.CpModel] = None
            ) -> tuple[int, cp_model.CpSolver]:
        """Solve with `assumed` literals as CP-SAT assumptions, cleared again after: the model stays as built."""
        model = self.model if model is None else model
        model.ClearAssumptions()
        model.AddAssumptions(assumed)
        try:
            solver = new_solver(self.time_limit, self.workers if workers is None else workers)
            status = solver.Solve(model)
        finally:
            model.ClearAssumptions()
        self.counts.solves += 1
        return status, solver

    # ---- solving -----------------------------------------------------------------------------------------------
    def solve(self, k: Option, req: Request, forbid_chips: frozenset[str] = frozenset(),
              trust: bool = False) -> tuple[str, Optional[dict[str, Any]]]:
        """Option k's best (or cheapest, as `req.mode` says) build under `req`'s budget, VRAM and speed floors (the
        request itself, a note's question or a why-not's relaxation), the chips in `forbid_chips` left out; with
        `trust`, unknown safety/fit data passes and fewer parts resting on it rank first. Returns (status, parts).

        Each solve fixes its option: letting the model pick the power limit or the GPU count (a free option literal)
        gave the same builds but solved 3-30x slower, the enforced-only-if constraints relaxing poorly."""
        if not self._built:
            self._build()
        if forbid_chips and not any(g.chip not in forbid_chips for g in self.parts["gpu"]):
            return "infeasible", None
        enc = self.encoders[k]
        unverified = None
        if trust:  # verified parts rank above unverified ones: fewer parts resting on unknown data first
            doubtful = enc.unverifiable | enc.trusted
            unverified = sum(enc.has(c, lambda p: p.id in doubtful, unknown=False) for c in self.parts)
        set_objective(self.model, self.terms[k], self.parts, self.cands[k], self.reqs[k], req.mode, unverified)
        status, solver = self.run(self._fixed(k, req, forbid_chips, trust))
        if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return ("optimal" if status == cp_model.OPTIMAL else "feasible"), enc.chosen(solver)
        return ("infeasible" if status == cp_model.INFEASIBLE else "unknown"), None

    def assuming(self, k: Option) -> tuple[cp_model.CpModel, dict[int, str]]:
        """Option k's model for a why-not: a copy of the one model (`CpModel.clone`, no re-encoding) with the option
        and everything but its stated requirements fixed by one BoolAnd and no objective, so presolve drops the
        other options' constraints (their cores solved 3x slower on the whole model under assumptions); returns it
        and the requirement literals it leaves to be assumed (proto indices -> sentences)."""
        if not self._built:
            self._build()
        model = self.model.clone()
        model.ClearObjective()
        model.AddBoolAnd(self._fixed(k, self.req, free=frozenset(self.stated[k])))
        self.counts.copies += 1
        return model, {self.named[s][0].Index(): s for s in self.stated[k]}

    def solve_assuming(self, model: cp_model.CpModel, literals: list[int]) -> tuple[int, cp_model.CpSolver]:
        """Solve `model` on one worker with these requirement literals (proto indices) assumed true; the other
        requirements are free."""
        return self.run([model.GetBoolVarFromProtoIndex(i) for i in literals], workers=1, model=model)

    def plan(self, k: Option, chosen: dict[str, Any]) -> Plan:
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
