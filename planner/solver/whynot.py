"""Why no build fits: the infeasible core of named requirements, the smallest change per conflict, on the one model."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional

from ortools.sat.python import cp_model

from planner.compat.checker import check_parts
from planner.compat.rules import RULES_BY_NAME
from planner.money import format_money, from_cents
from planner.request import Request
from planner.solver.currency import from_eur
from planner.solver.engine import Engine, Option
from planner.solver.model import build_model
from planner.solver.plan import WhyNot

FOUND = (cp_model.OPTIMAL, cp_model.FEASIBLE)


class OptionWhyNot:
    """The why-not of one option (GPU count, power limit) of a request, asked of the request's engine: its named
    requirements are assumptions on a copy of the one model with the option fixed, its relaxations solves of the
    model itself."""

    def __init__(self, engine: Engine, k: Option):
        self.engine, self.k = engine, k
        self.req: Request = engine.reqs[k]
        self.cands = engine.cands[k]
        self.budget_needed: Optional[Decimal] = None  # set by explain(): the cheapest build without the budget

    def explain(self) -> WhyNot:
        if self.cands.missing:
            return WhyNot([f"no {c} in the catalog has a price (after exclusions)" for c in self.cands.missing],
                          ["add offers to data/offers/ or remove exclusions"])
        core = self.infeasible_core()
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

    def infeasible_core(self) -> Optional[list[str]]:
        """The named requirements in the solver's infeasible core (made minimal by re-solving without each member);
        None when the solver does not prove the request infeasible within the time limit."""
        model, names = self.engine.assuming(self.k)
        status, solver = self.engine.solve_assuming(model, list(names))
        if status != cp_model.INFEASIBLE:
            return None
        core = [i for i in solver.SufficientAssumptionsForInfeasibility() if i in names]
        k = 0
        while k < len(core):  # CP-SAT's set is sufficient, not minimal: keep only members the failure needs
            trial = core[:k] + core[k + 1:]
            status, solver = self.engine.solve_assuming(model, trial)
            if status == cp_model.INFEASIBLE:
                found = set(solver.SufficientAssumptionsForInfeasibility())
                core = [i for i in trial if i in found] if found else trial
            else:
                k += 1
        return [names[i] for i in core]

    def colliding_rules(self) -> list[str]:
        """The infeasible core when each compatibility rule is a switch too, over every candidate part (not the
        pruned set); empty when no rule is in it (then the catalog, not a rule, is at fault). The one path that
        builds a second model: only for a request whose catalog holds no compatible combination at all."""
        m, _, names = build_model(self.cands.parts, self.cands, self.req, self.engine.catalog, with_assumptions=True,
                                  gate_problems=True)
        self.engine.counts.models_built += 1
        status, solver = self.engine.solve_assuming(m.model, list(names))
        if status != cp_model.INFEASIBLE:
            return []
        core = [i for i in solver.SufficientAssumptionsForInfeasibility() if i in names]
        k = 0
        while k < len(core):
            trial = core[:k] + core[k + 1:]
            status, solver = self.engine.solve_assuming(m.model, trial)
            if status == cp_model.INFEASIBLE:
                found = set(solver.SufficientAssumptionsForInfeasibility())
                core = [i for i in trial if i in found] if found else trial
            else:
                k += 1
        out = [names[i] for i in core]
        return out if any(s.startswith("compatibility: ") for s in out) else []

    def explain_catalog(self) -> WhyNot:
        """No combination of catalog parts passes the compatibility rules with the requirements: name the rules that
        collide (each rule a switch; the solver's infeasible core)."""
        core = self.colliding_rules()
        if not core:
            return WhyNot(["the catalog holds no compatible combination of parts"],
                          ["check `planner catalog validate` and the owned/pinned parts"])
        return WhyNot([f"no parts in the catalog for {self.what()} pass these together: " + "; ".join(core)],
                      ["add parts that meet them to the catalog (data/*.csv and data/offers/), or relax a requirement"
                       " named above"])

    def explain_unknown(self) -> Optional[WhyNot]:
        """Is unknown safety/fit data the blocker? Solve trusting it; if a build appears, name its unverified parts."""
        _, chosen = self.engine.solve(self.k, self.req, trust=True)
        if chosen is None:
            return None
        report = check_parts(self.engine.catalog, list(chosen.values()), gpu_count=self.req.gpu_count,
                             power_fraction=self.req.power_fraction)
        ids = sorted({pid for f in report.unverified if RULES_BY_NAME[f.rule].strict_unknown for pid in f.parts})
        return WhyNot(["every build meeting the rest needs a part whose PSU cable, GPU connector or multi-GPU slot data "
                       "is unknown: unknown is not yes"],
                      [f"pin the part(s) to accept their unverified data, e.g. {' '.join('--pin ' + i for i in ids)}"])

    def suggest(self, core: list[str]) -> list[str]:
        """The smallest change per conflicting requirement, found by re-solving without it."""
        req, out = self.req, []
        if any(s.startswith("total at most") for s in core):
            relaxed = req.model_copy(update={"budget": None, "mode": "cheapest"})
            _, chosen = self.engine.solve(self.k, relaxed)
            if chosen:
                cost = from_eur(from_cents(self.plan_cost(chosen)), req.currency)
                extra = cost - req.budget  # type: ignore[operator]
                self.budget_needed = cost
                out.append(f"the cheapest build{self.describe_targets(relaxed)} costs {format_money(cost, req.currency)};"
                           f" raise the budget by {format_money(extra, req.currency)}")
        if any("GB of VRAM per GPU" in s for s in core):
            best = self.max_vram(req.model_copy(update={"min_vram_gb": None}))
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
        return [s[3:] if i == 0 and s.startswith("or ") else s for i, s in enumerate(out)]

    def fixed_by_dropping(self, sentences: list[str]) -> set[str]:
        """The named requirements whose removal alone lets a build through (a core names a set that fails together;
        dropping one member need not be enough, so each is re-solved without it before it is suggested)."""
        if not sentences:
            return set()
        model, names = self.engine.assuming(self.k)
        return {sentence for sentence in sentences
                if self.engine.solve_assuming(model, [i for i, n in names.items() if n != sentence])[0] in FOUND}

    def plan_cost(self, chosen: dict[str, Any]) -> int:
        return sum(self.cands.price_cents[p.id] * (self.req.gpu_count if c == "gpu" else 1) for c, p in chosen.items())

    @staticmethod
    def describe_targets(req: Request) -> str:
        bits = []
        if req.min_vram_gb:
            bits.append(f">= {req.min_vram_gb:g} GB VRAM")
        if req.min_speedup:
            bits.append(f">= {req.min_speedup:.2g}x the GTX 1080 Ti")
        if req.deadline_hours:
            bits.append(f"the sweep within {req.deadline_hours:g} h")
        return f" with {' and '.join(bits)}" if bits else " meeting the other requirements"

    def max_vram(self, req: Request) -> Optional[float]:
        """The most VRAM per GPU a build meeting `req`'s other requirements offers (cheapest solves, highest first)."""
        for v in sorted({g.vram_gb for g in self.engine.parts["gpu"]}, reverse=True):
            _, chosen = self.engine.solve(self.k, req.model_copy(update={"min_vram_gb": v, "mode": "cheapest"}))
            if chosen:
                return v
        return None
