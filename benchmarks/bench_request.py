"""Whole-request benchmark: this tree against a baseline commit, in the same run, alternating, so load hits both.

Run from the repository root:
    python benchmarks/bench_request.py                      # baseline: 8153a78 (main before the typed Answer)
    python benchmarks/bench_request.py --baseline bff8f5f --runs 7 --budgets 3000,7000,15000

Three figures per budget, each the median of --runs alternating runs of the baseline and this tree:
- the solver's `recommend()` in-process on the shipped catalog (catalog loaded once; CP-SAT solves counted);
- the service's request walk in-process: `plan()` then `describe()` then the JSON (the baseline's describe gives a
  dict, this tree's a typed Answer dumped once with model_dump(mode="json"));
- the whole CLI request, `planner recommend --budget B --json`, in a fresh process (imports, catalog, solve, output);
- `describe()` and the JSON alone on one plan, the least of 15 calls (the part the typed Answer changed, without
  the solver's run-to-run spread).
Wall and CPU seconds both: on a shared machine the wall clock moves with other work; the CPU time less so.
Both trees run with an empty PLANNER_HOME (no calibration, profile or price history of the user's).
It checks that both trees recommend the same parts, and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _markdown import table  # noqa: E402 - the script's own folder is on sys.path

REPO = Path(__file__).resolve().parents[1]

IN_PROCESS = r"""
import json, sys, time
from ortools.sat.python import cp_model
calls = [0]
_solve = cp_model.CpSolver.solve
def counted(self, *a, **k):
    calls[0] += 1
    return _solve(self, *a, **k)
cp_model.CpSolver.solve = counted  # every CP-SAT solve, whichever tree's code asks for it
from planner.service.catalogs import load_priced_catalog
from planner.solver import recommend
from planner.request import Request
cat = load_priced_catalog(None, use_history=False)
budget = int(sys.argv[1])
recommend(cat, Request(budget=budget))  # warm: first-call imports and caches
calls[0] = 0
t, c = time.perf_counter(), time.process_time()
rec = recommend(cat, Request(budget=budget))
dt, cpu = time.perf_counter() - t, time.process_time() - c
from planner.service import pipeline
req = pipeline.resolve_names(cat, Request(budget=budget))
def walk():
    answer = pipeline.describe(cat, pipeline.plan(cat, req))
    data = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer  # typed Answer, or the dict
    return json.dumps(data, default=str)
walk()  # warm
t, c = time.perf_counter(), time.process_time()
walk()
walked, walk_cpu = time.perf_counter() - t, time.process_time() - c
planned = pipeline.plan(cat, req)
def told():
    t = time.perf_counter()
    answer = pipeline.describe(cat, planned)
    json.dumps(answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer, default=str)
    return time.perf_counter() - t
told_s = min(told() for _ in range(15))  # the least of 15: what the code costs, with the least interference
print(json.dumps({"seconds": dt, "cpu": cpu, "walk": walked, "walk_cpu": walk_cpu, "describe": told_s, "solves": calls[0], "models": rec.stats.get("models_built", calls[0]),
                  "parts": sorted(p.id for p in rec.plans[0].parts.values()) if rec.plans else None}))
"""

CLI = "import sys; from planner.cli import main; sys.argv = ['planner', *sys.argv[1:]]; main()"


def run(tree: Path, code: str, *args: str) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the child: less swayed by other work on the machine) and stdout."""
    home = Path(tempfile.gettempdir()) / f"bench-request-home-{os.getpid()}"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "PLANNER_HOME": str(home),
           "PLANNER_PRICE_DB": str(Path(tempfile.gettempdir()) / "none.sqlite")}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if out.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {out.returncode}: {out.stderr[-800:]}")
    return dt, cpu, out.stdout


def baseline_tree(rev: str, where: Path) -> Path:
    tree = where / "baseline"
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
    (tree / "planner" / "data").symlink_to(tree / "data")  # data/ installs as planner.data; a checkout needs the link
    return tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="8153a78", help="commit to compare against (default: main before the typed "
                    "Answer of issue 35)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--budgets", default="3000,7000,15000")
    a = ap.parse_args()
    budgets = [int(b) for b in a.budgets.split(",")]
    rows = []
    figures = ("recommend()", "plan+describe+JSON", "whole CLI", "describe+JSON (min of 15)")
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(a.baseline, Path(tmp))
        try:
            for b in budgets:
                got_: dict[tuple[str, str, str], list[float]] = {}  # (figure, wall|cpu, tree) -> seconds
                info = {}
                for i in range(a.runs):
                    trees = [("baseline", base), ("this", REPO)]
                    for name, tree in (trees if i % 2 == 0 else trees[::-1]):  # alternate who goes first
                        _, _, out = run(tree, IN_PROCESS, str(b))
                        got = json.loads(out.strip().splitlines()[-1])
                        info[name] = got
                        dt, cpu, _ = run(tree, CLI, "recommend", "--budget", str(b), "--json")
                        for fig, wall, c in ((figures[0], got["seconds"], got["cpu"]),
                                             (figures[1], got["walk"], got["walk_cpu"]), (figures[2], dt, cpu),
                                             (figures[3], got["describe"], got["describe"])):
                            got_.setdefault((fig, "wall", name), []).append(wall)
                            got_.setdefault((fig, "cpu", name), []).append(c)
                med = {k: statistics.median(v) for k, v in got_.items()}
                same = info["baseline"]["parts"] == info["this"]["parts"]
                row = [f"EUR {b:,}".replace(",", " ")]
                for fig in figures:
                    for kind in (("wall", "cpu") if fig != figures[3] else ("wall",)):
                        x, y = med[fig, kind, "baseline"], med[fig, kind, "this"]
                        row.append(f"{x:.3f} -> {y:.3f} ({y / x:.2f})")
                row += [f"{info['this']['solves']} in {info['this']['models']} model(s)", "yes" if same else "NO"]
                rows.append(row)
                print(" | ".join(row), flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
    head = ["budget"] + [f"{fig} {kind} s (ratio)" for fig in figures
                         for kind in (("wall", "CPU") if fig != figures[3] else ("wall",))] + [
        "solves this", "same build"]
    print()
    print(table(head, rows))
    print(f"\nbaseline {a.baseline} -> this tree; medians of {a.runs} runs each, the two trees alternating (and "
          f"which goes first); load average {os.getloadavg()[0]:.1f}; reproduce: "
          f"python benchmarks/bench_request.py {' '.join(shlex.quote(x) for x in sys.argv[1:])}")


if __name__ == "__main__":
    main()
