"""Benchmark helpers: timing statistics, a greedy baseline picker, a brute-force optimum, profiler hot spots."""

from __future__ import annotations

from _markdown import table  # noqa: F401 - re-exported for the benchmarks that import it from here

import cProfile
import itertools
import math
import pstats
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

from planner.catalog.load import Catalog
from planner.compat.checker import check_build
from planner.catalog.models import CATEGORIES, Severity
from planner.request import Request
from planner.compat.rules import Build
from planner.solver.model import Candidates, build_candidates, cands_budget_cents
from planner.solver.currency import to_eur

REPO = Path(__file__).resolve().parents[1]
BLOCKING = (Severity.PROBLEM, Severity.WARNING)  # the solver avoids warnings too (Request.avoid_warnings)
GREEDY_ORDER = ("cpu", "motherboard", "memory", "storage", "cooler", "psu", "case")


@dataclass
class Timing:
    runs: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def p90(self) -> float:
        """Nearest-rank 90th percentile (with under 10 runs this is the slowest run)."""
        ordered = sorted(self.runs)
        return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def time_runs(fn: Callable[[], Any], runs: int) -> tuple[Timing, Any]:
    out, last = [], None
    for _ in range(runs):
        t = time.perf_counter()
        last = fn()
        out.append(time.perf_counter() - t)
    return Timing(out), last


# ---- feasibility outside the solver: the checker's rules plus the requirements the solver gates ----------

class Judge:
    """Decides whether a (partial) build is acceptable the way the solver must: no problem, no warning,
    and the default requirements (budget, RAM tied to VRAM, storage size, NVMe, cooler preference)."""

    def __init__(self, catalog: Catalog, req: Request):
        self.catalog, self.req = catalog, req
        self.cands: Candidates = build_candidates(catalog, req, to_eur)
        self.budget = cands_budget_cents(req, catalog) if req.budget is not None else None

    def price(self, parts: dict[str, Any]) -> int:
        return sum(self.cands.price_cents[p.id] * (self.req.gpu_count if c == "gpu" else 1) for c, p in parts.items())

    def score(self, parts: dict[str, Any]) -> int:
        return self.cands.score[parts["gpu"].id]

    def part_ok(self, category: str, part: Any, parts: dict[str, Any]) -> bool:
        req = self.req
        if category == "gpu" and req.min_vram_gb and part.vram_gb < req.min_vram_gb:
            return False
        if category == "memory":
            gpu = parts.get("gpu")
            need = req.effective_min_ram_gb(gpu.vram_gb * req.gpu_count) if gpu else req.min_ram_gb or 0
            if part.capacity_gb < need:
                return False
        if category == "storage":
            if part.capacity_gb < req.min_storage_gb or (req.require_nvme and part.interface != "NVMe"):
                return False
        if category == "cooler" and req.cooler_type and part.type != req.cooler_type:
            return False
        return True

    def rules_ok(self, parts: dict[str, Any]) -> bool:
        build = Build(parts=dict(parts), chips=self.catalog.chips, gpu_count=self.req.gpu_count,
                      power_fraction=self.req.power_fraction, workload=self.req.workload,
                      precision=self.req.precision)
        return not any(f.severity in BLOCKING for f in check_build(build))

    def feasible(self, parts: dict[str, Any]) -> bool:
        if self.budget is not None and self.price(parts) > self.budget:
            return False
        return all(self.part_ok(c, p, parts) for c, p in parts.items()) and self.rules_ok(parts)


def _complete(judge: Judge, gpu: Any, budget: float) -> Optional[dict[str, Any]]:
    c = judge.cands
    parts: dict[str, Any] = {"gpu": gpu}
    for cat in GREEDY_ORDER:
        pick = next((p for p in sorted(c.parts[cat], key=lambda p: c.price_cents[p.id])
                     if judge.part_ok(cat, p, parts) and judge.rules_ok({**parts, cat: p})), None)
        if pick is None:
            return None
        parts[cat] = pick
    return parts if judge.price(parts) <= budget else None


def greedy_best_gpu_first(judge: Judge, fallback: bool = False) -> Optional[dict[str, Any]]:
    """The common hand-made heuristic: the fastest GPU the budget affords, then the cheapest compatible
    part of each other category in turn. None when that path dead-ends (no part fits, or over budget);
    with `fallback`, a dead end moves on to the next-fastest affordable GPU instead."""
    c = judge.cands
    gpus = sorted(c.parts["gpu"], key=lambda g: (-c.score[g.id], c.price_cents[g.id]))
    budget = judge.budget if judge.budget is not None else math.inf
    for gpu in gpus:
        if c.price_cents[gpu.id] * judge.req.gpu_count > budget or not (
                judge.part_ok("gpu", gpu, {}) and judge.rules_ok({"gpu": gpu})):
            continue
        parts = _complete(judge, gpu, budget)
        if parts is not None or not fallback:
            return parts
    return None


def brute_force(judge: Judge) -> tuple[Optional[tuple[int, int]], int]:
    """Exhaustive optimum (best score, then lowest price) over every combination; also the count tried."""
    pools = [judge.cands.parts[cat] for cat in CATEGORIES]
    best: Optional[tuple[int, int]] = None
    tried = 0
    for combo in itertools.product(*pools):
        tried += 1
        parts = dict(zip(CATEGORIES, combo))
        if not judge.feasible(parts):
            continue
        key = (judge.score(parts), -judge.price(parts))
        if best is None or key > best:
            best = key
    return (None if best is None else (best[0], -best[1])), tried


def combinations(judge: Judge) -> int:
    return math.prod(len(judge.cands.parts[c]) for c in CATEGORIES)


# ---- profiler ---------------------------------------------------------------------------------

def hot_spots(fn: Callable[[], Any], top: int = 12) -> tuple[float, list[tuple[str, float, float]]]:
    """Run fn under cProfile; (total seconds, [(file:line(function), self share, cumulative share)])."""
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.runcall(fn)
    total = time.perf_counter() - t
    stats = pstats.Stats(prof)
    rows = []
    for (file, line, func), (_cc, _nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = file
        for anchor in (str(REPO) + "/", "site-packages/"):
            if anchor in file:
                where = file.split(anchor, 1)[1]
        rows.append((f"{where}:{line}({func})", tt / total, ct / total))
    rows.sort(key=lambda r: r[1], reverse=True)
    return total, rows[:top]
