"""Whole-request benchmark: this tree against a baseline commit, in the same run, alternating, so load hits both.

Run from the repository root:
    python benchmarks/bench_request.py                      # baseline: 8153a78 (main before the typed Answer)
    python benchmarks/bench_request.py --baseline bff8f5f --runs 7 --budgets 3000,7000,15000

Three figures per budget, each the median of --runs alternating runs of the baseline and this tree:
- the solver's `recommend()` in-process on the shipped catalog (catalog loaded once; CP-SAT solves counted);
- the service's request walk in-process: `plan()` then `describe()` then the JSON (the baseline's describe gives a
  dict, this tree's a typed Answer dumped once with model_dump(mode="json"));
- the whole CLI request, `planner recommend --budget B --json`, in a fresh process (imports, catalog, solve, output).
Both trees run with an empty PLANNER_HOME (no calibration, profile or price history of the user's).
It checks that both trees recommend the same parts, and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
t = time.perf_counter()
rec = recommend(cat, Request(budget=budget))
dt = time.perf_counter() - t
from planner.service import pipeline
req = pipeline.resolve_names(cat, Request(budget=budget))
def walk():
    answer = pipeline.describe(cat, pipeline.plan(cat, req))
    data = answer.model_dump(mode="json") if hasattr(answer, "model_dump") else answer  # typed Answer, or the dict
    return json.dumps(data, default=str)
walk()  # warm
t = time.perf_counter()
walk()
walked = time.perf_counter() - t
print(json.dumps({"seconds": dt, "walk": walked, "solves": calls[0], "models": rec.stats.get("models_built", calls[0]),
                  "parts": sorted(p.id for p in rec.plans[0].parts.values()) if rec.plans else None}))
"""

CLI = "import sys; from planner.cli import main; sys.argv = ['planner', *sys.argv[1:]]; main()"


def run(tree: Path, code: str, *args: str) -> tuple[float, str]:
    home = Path(tempfile.gettempdir()) / f"bench-request-home-{os.getpid()}"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree), "PLANNER_HOME": str(home),
           "PLANNER_PRICE_DB": str(Path(tempfile.gettempdir()) / "none.sqlite")}
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if out.returncode not in (0, 1):
        raise SystemExit(f"{tree}: exit {out.returncode}: {out.stderr[-800:]}")
    return dt, out.stdout


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
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(a.baseline, Path(tmp))
        try:
            for b in budgets:
                solve = {"baseline": [], "this": []}
                walks = {"baseline": [], "this": []}
                whole = {"baseline": [], "this": []}
                info = {}
                for _ in range(a.runs):
                    for name, tree in (("baseline", base), ("this", REPO)):
                        _, out = run(tree, IN_PROCESS, str(b))
                        got = json.loads(out.strip().splitlines()[-1])
                        solve[name].append(got["seconds"])
                        walks[name].append(got["walk"])
                        info[name] = got
                        dt, _ = run(tree, CLI, "recommend", "--budget", str(b), "--json")
                        whole[name].append(dt)
                same = info["baseline"]["parts"] == info["this"]["parts"]
                ms = {k: statistics.median(v) for k, v in solve.items()}
                mw = {k: statistics.median(v) for k, v in whole.items()}
                mk = {k: statistics.median(v) for k, v in walks.items()}
                rows.append([f"EUR {b:,}".replace(",", " "), f"{ms['baseline']:.3f}", f"{ms['this']:.3f}",
                             f"{ms['this'] / ms['baseline']:.2f}",
                             f"{info['baseline']['solves']} in {info['baseline']['models']} models",
                             f"{info['this']['solves']} in {info['this']['models']} model(s)",
                             f"{mk['baseline']:.3f}", f"{mk['this']:.3f}", f"{mk['this'] / mk['baseline']:.2f}",
                             f"{mw['baseline']:.2f}",
                             f"{mw['this']:.2f}", f"{mw['this'] / mw['baseline']:.2f}", "yes" if same else "NO"])
                print(f"EUR {b}: recommend() {ms['baseline']:.3f} -> {ms['this']:.3f} s, plan+describe+JSON "
                      f"{mk['baseline']:.3f} -> {mk['this']:.3f} s, whole CLI request "
                      f"{mw['baseline']:.2f} -> {mw['this']:.2f} s, same parts: {same}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)], check=False)
    head = ["budget", "recommend() baseline, s", "this, s", "ratio", "solves baseline", "solves this",
            "plan+describe+JSON baseline, s", "this, s", "ratio", "whole CLI baseline, s", "this, s", "ratio",
            "same build"]
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join(" --- " for _ in head) + "|")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    print(f"\nmedians of {a.runs} alternating runs each; load average {os.getloadavg()[0]:.1f}; reproduce: "
          f"python benchmarks/bench_request.py {' '.join(shlex.quote(x) for x in sys.argv[1:])}")


if __name__ == "__main__":
    main()
