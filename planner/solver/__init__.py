"""CP-SAT build solver: the best build for a budget, the cheapest for a target, alternatives, why-not.

The public surface is `recommend()` and the types it returns; the work is split by role: `options` (which GPU counts
and power limits a request may take), `engine` (the one CP-SAT model per request and its solves), `answer` (the pick,
notes, alternatives and fallbacks), `whynot` (infeasible cores and the smallest change), `stats` (what it cost),
with `model`/`encoder`/`prune`/`objective` building the model and `notes`/`plan` shaping the answer.
"""

from __future__ import annotations

import time

from planner.catalog.load import Catalog
from planner.errors import InputError
from planner.request import Request
from planner.settings import MAX_ALTERNATIVES, SOLVER_TIME_LIMIT_S, SOLVER_WORKERS
from planner.solver import quality
from planner.solver.answer import answer
from planner.solver.engine import Engine
from planner.solver.objective import pick_across_counts, set_objective
from planner.solver.options import SUGGESTED_LIMITS, max_hostable_gpus, options, with_memfit_floor
from planner.solver.plan import SAME_SPEED, Plan, Recommendation, WhyNot


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
        raise InputError(f"alternatives must be between 0 and {MAX_ALTERNATIVES}, got {alternatives}")
    pinned: dict[str, str] = {}
    for pid in req.pinned:
        part = catalog.get(pid)
        if part.category in pinned and pinned[part.category] != part.id:
            raise InputError(f"two {part.category} parts pinned ({pinned[part.category]}, {part.id}); "
                             "a build takes one of each")
        pinned[part.category] = part.id
    req, _ = with_memfit_floor(req)  # the note is the pipeline's (planner.service): it holds with or without a plan
    hostable = max_hostable_gpus(catalog, req)
    opts, skipped = [], []
    for n, frac in options(req):
        if n > hostable and opts:  # the strict multi-GPU rule would refuse every board: skip the solve
            skipped.append({"gpus": n, "power_limit": frac, "status": "no board known to host this many GPUs",
                            "total_eur": None, "sweep_hours": None})
        else:
            opts.append((n, frac))
    return answer(Engine(catalog, req, opts, time_limit, workers), req, alternatives, start, skipped)


__all__ = ["recommend", "Recommendation", "Plan", "Request", "WhyNot", "options", "with_memfit_floor",
           "max_hostable_gpus", "pick_across_counts", "set_objective", "quality", "SAME_SPEED", "SUGGESTED_LIMITS"]
