"""Why an owned part is not in the plan: what it breaks in this build, and what the best build keeping it gives up."""

from __future__ import annotations

from typing import Any, Callable

from planner.catalog.load import Catalog
from planner.compat.checker import CheckReport, check_parts
from planner.plan_view import PlanView
from planner.request import Request

Solve = Callable[[Request], Any]  # a request -> planner.solver.Recommendation (typed plans and why-not)


rule_summary = CheckReport.rule_summary  # the rules' words and the warnings a user may accept: defined by the checker
warning_rules = CheckReport.warning_rules


def _swap_findings(cat: Catalog, plan: PlanView, part_id: str, req: Request) -> list[str]:
    """Problems and warnings the checker finds when the owned part replaces the plan's part of its category."""
    part = cat.parts[part_id]
    ids = [ln.part_id for ln in plan.parts if ln.category != part.category] + [part_id]
    report = check_parts(cat, [cat.parts[i] for i in ids], gpu_count=plan.gpu_count,
                         power_fraction=req.power_fraction, workload=req.workload, precision=req.precision,
                         model_params=req.model_params, owned=req.owned, used=req.used)
    return [f.message for f in report.problems] + [f"warning: {f.message}" for f in report.warnings]


def why_unused(cat: Catalog, req: Request, plan: PlanView, solve: Solve) -> list[dict[str, Any]]:
    """One entry per owned part the plan does not use: {id, name, reason, accept} where `accept` names the
    warnings that, once accepted, let the solver keep the part (empty when accepting would not help)."""
    in_plan = set(plan.part_ids())
    out = []
    for pid in req.owned:
        if pid in in_plan or pid not in cat.parts:
            continue
        name = cat.parts[pid].name
        swap = _swap_findings(cat, plan, pid, req)
        keep = req.model_copy(update={"pinned": tuple(dict.fromkeys((*req.pinned, pid))), "avoid_warnings": False})
        with_it = solve(keep)
        reason: list[str] = []
        accept: list[str] = []
        if swap:
            reason.append(f"in this build it would break: {'; '.join(swap[:2])}")
        if not with_it.plans:
            conflicts = with_it.why_not.conflicts if with_it.why_not is not None else []
            why = [c for c in conflicts if "(pinned)" not in c]
            reason.append("no build meeting the request can use it, even with every warning accepted" + (f" ({'; '.join(why[:2])})" if why else ""))
        else:
            best = with_it.plans[0].view()
            accept = [w.rule for w in best.warnings if w.rule not in req.accepted_warnings]
            if accept:
                reason.append("the best build that keeps it has warnings the solver avoids: "
                              + "; ".join(rule_summary(r) for r in accept))
            speed, mine = best.speed.value, plan.speed.value  # type: ignore[union-attr]
            if speed < mine - 1e-6:
                reason.append(f"the best build that keeps it reaches {speed:.1f}x a GTX 1080 Ti instead of {mine:.1f}x")
            elif not accept:
                reason.append(f"the best build that keeps it is no faster ({speed:.1f}x) and the solver found this one "
                              "at least as good")
        out.append({"id": pid, "name": name, "reason": "; ".join(reason) or "the solver preferred another part",
                    "accept": accept})
    return out

