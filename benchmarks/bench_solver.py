"""Solver benchmark: solve times on the shipped, imported real and synthetic catalogs, greedy gap, brute force.

Run from the repository root:  python benchmarks/bench_solver.py            (about 2-4 minutes on 2 cores)
Quick smoke run:               python benchmarks/bench_solver.py --quick
Prints Markdown tables (paste them into docs/benchmarks-solver.md) and, for any missed target, the profiler's
hot spots. Times are wall-clock seconds of `recommend()` after the catalog is loaded (load time shown apart).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shlex
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Optional

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Judge, brute_force, table, combinations, greedy_best_gpu_first, hot_spots, time_runs  # noqa: E402

from planner.catalog.load import Catalog, load_catalog  # noqa: E402
from planner.catalog.importers import import_pcpp  # noqa: E402
from planner.request import Request  # noqa: E402
from planner.solver import recommend  # noqa: E402
from planner.catalog.synth import generate  # noqa: E402

DATASET = REPO.parent / "shared" / "datasets" / "pc-part-dataset"
BEST = dict(budget=Decimal(7000), currency="EUR")  # the example request, in EUR on every catalog
CHEAPEST = dict(mode="cheapest", min_vram_gb=24, currency="EUR")
TARGETS = {("shipped", "best"): 0.2, ("synthetic 10k", "best"): 1.0, ("synthetic 10k", "best, 5 alternatives"): 3.0}


def say(text: str = "") -> None:
    print(text, flush=True)


def load_catalogs(tmp: Path, quick: bool) -> dict[str, tuple[Catalog, float, str]]:
    """name -> (catalog, load seconds, how it was made)."""
    cats: dict[str, tuple[Catalog, float, str]] = {}
    t = time.perf_counter()
    cats["shipped"] = (load_catalog(REPO / "data"), time.perf_counter() - t, "data/ (EUR)")
    if DATASET.is_dir():
        t = time.perf_counter()
        report = import_pcpp(DATASET, tmp / "pcpp")
        t_imp = time.perf_counter() - t
        t = time.perf_counter()
        cats["imported real"] = (load_catalog(tmp / "pcpp"), time.perf_counter() - t,
                                 f"import-pcpp of the 2025-07-23 snapshot, all priced parts of the 8 categories "
                                 f"({report.total('priced')} priced rows read, {report.total('written')} kept; "
                                 f"import {t_imp:.1f} s; USD)")
    else:
        say(f"(skipping the real dataset: {DATASET} not found)")
    for n in (1000, 10000) if quick else (1000, 10000, 50000):
        name = f"synthetic {n // 1000}k"
        generate(tmp / name.replace(" ", "-"), n, seed=1)
        t = time.perf_counter()
        cats[name] = (load_catalog(tmp / name.replace(" ", "-")), time.perf_counter() - t,
                      f"planner.catalog.synth.generate({n}, seed=1) (EUR)")
    return cats


def solve_times(cats: dict[str, tuple[Catalog, float, str]], runs: int, quick: bool
                ) -> list[tuple[str, str, Any, Optional[float], Callable[[], Any]]]:
    """Rows (catalog, request, timing+answer, target, the call) for the main table."""
    cases = []
    for name, (cat, _, _) in cats.items():
        cases.append((name, "best", lambda cat=cat: recommend(cat, Request(**BEST))))
        if not quick or name == "synthetic 10k":
            cases.append((name, "cheapest, >= 24 GB VRAM", lambda cat=cat: recommend(cat, Request(**CHEAPEST))))
    for name in ("synthetic 10k", "imported real"):
        if name in cats:
            cat = cats[name][0]
            cases.append((name, "best, 5 alternatives",
                          lambda cat=cat: recommend(cat, Request(**BEST), alternatives=5)))
    out = []
    for name, request, call in cases:
        n = max(5, runs if "alternatives" not in request else 5)
        timing, rec = time_runs(call, n)
        out.append((name, request, (timing, rec), TARGETS.get((name, request)), call))
    return out


def report_solve(cats: dict, rows: list) -> list[tuple[str, str, Callable[[], Any]]]:
    say("## Solve time (wall seconds of recommend(), catalog already loaded)\n")
    say(table(["catalog", "parts loaded", "load s", "made by"],
              [[n, len(c.parts), f"{t:.2f}", how] for n, (c, t, how) in cats.items()]))
    say()
    body, missed = [], []
    for name, request, (timing, rec), target, call in rows:
        plans = len(rec.plans)
        verdict = "" if target is None else ("met" if timing.median <= target else "MISSED")
        if verdict == "MISSED":
            missed.append((name, request, call))
        head = rec.plans[0].headline() if rec.plans else (rec.why_not.conflicts[0] if rec.why_not else "-")
        body.append([name, request, len(timing.runs), f"{timing.median:.3f}", f"{timing.p90:.3f}",
                     f"{min(timing.runs):.3f}",
                     f"{rec.stats.get('candidates')} -> {rec.stats.get('after_pruning')}", rec.status, plans,
                     "" if target is None else f"<= {target:g} s: {verdict}", head])
    say(table(["catalog", "request", "runs", "median s", "p90 s", "min s", "parts before -> after pruning", "status",
               "plans", "target", "first plan"], body))
    say()
    return missed


def greedy_gap(cats: dict, n_budgets: int, seed: int) -> None:
    say(f"## Greedy 'best GPU first' vs CP-SAT ({n_budgets} random budgets of EUR 1 200-12 000 per catalog, "
        f"seed {seed})\n")
    say("Greedy: the fastest GPU the budget affords, then the cheapest compatible CPU, board, memory, storage, "
        "cooler, PSU and case in turn, under the same rules and requirements as the solver. 'Strict' stops when "
        "that path dead-ends (a category has no compatible part, or the total exceeds the budget); 'fallback' then "
        "moves on to the next-fastest GPU. Throughput = the solver's score of the GPU (speedup vs a GTX 1080 Ti).\n")
    rows = []
    for name in ("shipped", "imported real", "synthetic 1k"):
        if name not in cats:
            continue
        cat = cats[name][0]
        rnd = random.Random(seed)
        found = fails = 0
        losses, extra = [], []
        t_g = t_s = 0.0
        for _ in range(n_budgets):
            req = Request(budget=Decimal(rnd.randrange(1200, 12000, 50)), currency="EUR")
            t = time.perf_counter()
            rec = recommend(cat, req)
            t_s += time.perf_counter() - t
            judge = Judge(cat, req)
            t = time.perf_counter()
            strict = greedy_best_gpu_first(judge)
            t_g += time.perf_counter() - t
            pick = strict or greedy_best_gpu_first(judge, fallback=True)
            if not rec.plans:
                assert pick is None, f"greedy found a build where CP-SAT found none ({name}, {req.budget})"
                continue
            found += 1
            fails += strict is None
            best = rec.plans[0]
            if pick is None:
                losses.append(1.0)
                continue
            losses.append(1 - judge.score(pick) / judge.cands.score[best.gpu.id])
            extra.append(judge.price(pick) / best.total_cents_eur - 1)
        mean = sum(losses) / len(losses) if losses else 0.0
        rows.append([name, n_budgets, found, f"{fails} ({fails / found:.0%})" if found else "-",
                     sum(1 for x in losses if x > 1e-9), f"{mean:.1%}", f"{max(losses, default=0.0):.1%}",
                     f"{(sum(extra) / len(extra) if extra else 0):+.1%}", f"{t_g / n_budgets:.3f}",
                     f"{t_s / n_budgets:.3f}"])
    say(table(["catalog", "budgets", "CP-SAT found a build", "strict greedy dead-ends",
               "fallback greedy: slower build", "mean throughput lost", "worst throughput lost",
               "fallback price vs CP-SAT (mean)", "strict greedy s", "CP-SAT s"], rows))
    say()


def brute(cats: dict, seed: int, quick: bool) -> None:
    say("## Brute force vs CP-SAT on tiny synthetic catalogs (same rules and requirements)\n")
    say("Brute force tries every combination of one priced part per category, keeps those the checker and the "
        "requirements accept, and takes the best throughput, then the lowest price: the solver's objective.\n")
    rows = []
    sizes = ((24, (2500, 4000, 8000)), (32, (2500, 4000, 8000))) + (() if quick else ((40, (4000,)),))
    with tempfile.TemporaryDirectory() as tmp:
        for n, budgets in sizes:
            generate(Path(tmp) / str(n), n, seed=seed)
            cat = load_catalog(Path(tmp) / str(n))
            for budget in budgets:
                req = Request(budget=Decimal(budget), currency="EUR")
                judge = Judge(cat, req)
                t = time.perf_counter()
                best, tried = brute_force(judge)
                t_b = time.perf_counter() - t
                timing, rec = time_runs(lambda: recommend(cat, req), 5)
                cp = None if not rec.plans else (judge.cands.score[rec.plans[0].gpu.id], rec.plans[0].total_cents_eur)
                rows.append([len(cat.parts), budget, f"{tried:,}", f"{t_b:.2f}", f"{timing.median:.3f}",
                             f"{t_b / timing.median:.0f}x", "same" if best == cp else f"DIFFERENT {best} vs {cp}"])
    say(table(["parts", "budget EUR", "combinations", "brute force s", "CP-SAT median s", "brute / CP-SAT",
               "optimum (score, price)"], rows))
    say()
    for name in ("shipped", "imported real", "synthetic 10k"):
        if name in cats:
            judge = Judge(cats[name][0], Request(**BEST))
            say(f"- {name}: {combinations(judge):.3g} combinations of priced parts: brute force is out of reach.")
    say()


def profile(label: str, call: Callable[[], Any]) -> None:
    total, rows = hot_spots(call)
    say(f"### Profile: {label} ({total:.2f} s under cProfile; share of that time)\n")
    say(table(["function (file:line)", "self", "cumulative"], [[f, f"{s:.0%}", f"{c:.0%}"] for f, s, c in rows]))
    say()


def one_solve(sizes: list[int], runs: int) -> None:
    """Issue 11's targets: ONE solve (fixed GPU count, the expert objective) with dominance pruning, against the
    unpruned model in the same run; and the whole request (every GPU count and power limit) for reference."""
    from planner.solver import set_objective
    from planner.solver.engine import Engine, new_solver
    from planner.solver.model import build_model

    say("## One solve with the expert objective: pruned vs unpruned (same run)\n")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cats = [("shipped", load_catalog(REPO / "data"))]
        for n in sizes:
            cats.append((f"synthetic {n // 1000}k", load_catalog(generate(Path(tmp) / str(n), n, seed=1))))
        for name, cat in cats:
            req = Request(budget=Decimal(7000), currency="EUR", gpu_count=1)

            def pruned() -> Any:
                k = (1, req.power_fraction)
                return Engine(cat, req, [k], 60.0, 1).solve(k, req)

            def unpruned() -> Any:
                from planner.solver.currency import to_eur
                from planner.solver.model import build_candidates
                cands = build_candidates(cat, req, to_eur)
                m, terms, _ = build_model(cands.parts, cands, req, cat, with_assumptions=False)
                set_objective(m.model, terms, cands.parts, cands, req, "best")
                st = new_solver(60.0, 1).Solve(m.model)
                return st

            t_p = time_runs(pruned, runs)[0].median
            t_u = time_runs(unpruned, 1)[0].median if len(cat.parts) <= 20000 else None  # unpruned 100k: minutes
            timing_all, rec = time_runs(lambda: recommend(cat, Request(budget=Decimal(7000), currency="EUR"),
                                                     workers=1), max(1, runs // 2))
            t_all = timing_all.median
            target = {"shipped": 0.2, "synthetic 10k": 0.5, "synthetic 100k": 2.0}.get(name)
            rows.append([name, len(cat.parts), f"{t_p:.3f}", "-" if t_u is None else f"{t_u:.3f}",
                         "-" if t_u is None else f"{t_p / t_u:.2f}",
                         target if target is not None else "-", f"{t_all:.3f}", sum(1 for t in rec.stats.get("by_gpu_count", []) if not t["status"].startswith("no board"))])
    say(table(["catalog", "parts", "one solve, pruned (s)", "unpruned (s)", "ratio", "target (s)",
               "whole request (s)", "solves in request"], rows))
    say()


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="timed runs per case (>= 5)")
    ap.add_argument("--budgets", type=int, default=30, help="random budgets for the greedy comparison")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="fewer cases, no 50k catalog (smoke test)")
    ap.add_argument("--profile", action="append", default=[], metavar="CATALOG",
                    help="also profile 'best' on this catalog (repeatable), e.g. 'synthetic 50k'")
    ap.add_argument("--one-solve", action="store_true", help="only the issue-11 one-solve table (pruned vs unpruned)")
    ap.add_argument("--sizes", default="10000,100000", help="synthetic catalog sizes for --one-solve")
    args = ap.parse_args(argv)
    if args.one_solve:
        one_solve([int(x) for x in args.sizes.split(",") if x], 3)
        return 0
    start = time.perf_counter()
    cmd = "python benchmarks/bench_solver.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    say(f"# Solver benchmark\n\nCommand: `{cmd.strip()}` (from the repository root)  \n"
        f"Machine: {os.cpu_count()} CPUs, {platform.machine()}, Python {platform.python_version()}, "
        f"OR-Tools {__import__('ortools').__version__}, {time.strftime('%Y-%m-%d')}, load average at start "
        f"{os.getloadavg()[0]:.2f}\n")
    with tempfile.TemporaryDirectory() as tmp:
        cats = load_catalogs(Path(tmp), args.quick)
        rows = solve_times(cats, max(5, args.runs), args.quick)
        missed = report_solve(cats, rows)
        greedy_gap(cats, 5 if args.quick else args.budgets, args.seed)
        brute(cats, args.seed, args.quick)
        for name, request, call in missed:
            profile(f"{name}, {request} (target missed)", call)
        for name in args.profile:
            if name in cats:
                cat = cats[name][0]
                profile(f"{name}, best", lambda cat=cat: recommend(cat, Request(**BEST)))
    say(f"Whole run: {time.perf_counter() - start:.0f} s, load average at the end {os.getloadavg()[0]:.2f} "
        f"(other processes on the machine slow every figure). Reproduce: `{cmd.strip()}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
