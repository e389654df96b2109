"""Solver-engine benchmark: recommend() on feasible and infeasible requests, this tree against a baseline commit.

Run from the repository root:
    python benchmarks/bench_engine.py                       # baseline: 8153a78 (two engines: _Problem and _Session)
    python benchmarks/bench_engine.py --baseline HEAD~3 --runs 7

Both trees run in fresh processes, alternating, in the same run (so machine load hits both). The baseline is a
`git archive` of the commit unpacked in a temporary directory (no worktree is registered). Per request it prints the
median wall seconds of `recommend()` on the shipped catalog (catalog loaded once, one warm-up call first), the ratio,
the CP-SAT models built (a ModelEncoder that encodes the rules from scratch), the CpModel objects made (model copies
included) and the CP-SAT solves, and whether both trees give the same answer (the parts, or the why-not text).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from _markdown import table  # noqa: E402 - the script's own folder is on sys.path

REPO = Path(__file__).resolve().parents[1]

REQUESTS = {  # label -> Request fields
    "EUR 3 000": {"budget": 3000},
    "EUR 7 000": {"budget": 7000},
    "EUR 7 000, 3 alternatives": {"budget": 7000, "_alternatives": 3},
    "EUR 2 500, >= 32 GB VRAM": {"budget": 2500, "min_vram_gb": 32},
    "EUR 1 200, sweep <= 20 h": {"budget": 1200, "deadline_hours": 20},
}

IN_PROCESS = r"""
import json, sys, time
from ortools.sat.python import cp_model
import planner.solver.encoder as E
counts = {"solves": 0, "cpmodels": 0, "encoded": 0}
_solve, _init, _enc = cp_model.CpSolver.solve, cp_model.CpModel.__init__, E.ModelEncoder.__init__
def solve(self, *a, **k):
    counts["solves"] += 1
    return _solve(self, *a, **k)
def init(self, *a, **k):
    counts["cpmodels"] += 1
    return _init(self, *a, **k)
def enc(self, *a, **k):
    counts["encoded"] += k.get("share") is None
    return _enc(self, *a, **k)
cp_model.CpSolver.solve, cp_model.CpModel.__init__, E.ModelEncoder.__init__ = solve, init, enc
from planner.service.catalogs import load_priced_catalog
from planner.solver import recommend
from planner.request import Request
if len(sys.argv) > 3:
    from planner.catalog.load import load_catalog
    cat = load_catalog(sys.argv[3])
else:
    cat = load_priced_catalog(None, use_history=False)
fields = json.loads(sys.argv[1])
alternatives = fields.pop("_alternatives", 0)
recommend(cat, Request(**fields), alternatives=alternatives)  # warm: first-call imports and caches
out = []
for _ in range(int(sys.argv[2])):
    for k in counts:
        counts[k] = 0
    t = time.perf_counter()
    rec = recommend(cat, Request(**fields), alternatives=alternatives)
    out.append(time.perf_counter() - t)
answer = ([sorted(p.id for p in plan.parts.values()) for plan in rec.plans] if rec.plans
          else [rec.why_not.conflicts, rec.why_not.suggestions] if rec.why_not else None)
print(json.dumps({"seconds": out, **counts, "answer": answer, "status": rec.status}))
"""


def run(tree: Path, fields: dict, reps: int, catalog: str = "") -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "PLANNER_PRICE_DB": str(Path(tempfile.gettempdir()) / "none.sqlite")}
    out = subprocess.run([sys.executable, "-c", IN_PROCESS, json.dumps(fields), str(reps), *([catalog] if catalog else [])],
                         cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: exit {out.returncode}: {out.stderr[-1200:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def baseline_tree(rev: str, where: Path) -> Path:
    tree = where / "baseline"
    tree.mkdir()
    blob = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", rev, "planner", "data"],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(tree, filter="data")
    if not (tree / "planner" / "data").exists():
        (tree / "planner" / "data").symlink_to(tree / "data")  # data/ installs as planner.data
    return tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="8153a78", help="commit to compare against (default: before one engine)")
    ap.add_argument("--runs", type=int, default=5, help="alternating process pairs per request")
    ap.add_argument("--reps", type=int, default=3, help="timed recommend() calls per process")
    ap.add_argument("--synthetic", type=int, default=0, metavar="N",
                    help="solve on planner.catalog.synth.generate(N, seed=1) instead of the shipped catalog")
    ap.add_argument("--only", default="", help="run only the requests whose label contains this text")
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = baseline_tree(a.baseline, Path(tmp))
        catalog = ""
        if a.synthetic:
            sys.path.insert(0, str(REPO))
            from planner.catalog.synth import generate
            catalog = str(generate(Path(tmp) / "synthetic", a.synthetic, seed=1))
        for label, fields in REQUESTS.items():
            if a.only not in label:
                continue
            secs: dict[str, list[float]] = {"baseline": [], "this": []}
            info = {}
            for _ in range(a.runs):
                for name, tree in (("baseline", base), ("this", REPO)):
                    got = run(tree, dict(fields), a.reps, catalog)
                    secs[name].extend(got["seconds"])
                    info[name] = got
            med = {k: statistics.median(v) for k, v in secs.items()}
            b, t = info["baseline"], info["this"]
            same = b["answer"] == t["answer"]
            rows.append([label, b["status"], f"{med['baseline']:.3f}", f"{med['this']:.3f}",
                         f"{med['this'] / med['baseline']:.2f}",
                         f"{b['encoded']} / {b['cpmodels']} / {b['solves']}",
                         f"{t['encoded']} / {t['cpmodels']} / {t['solves']}", "yes" if same else "NO"])
            print(f"{label}: {med['baseline']:.3f} -> {med['this']:.3f} s (x{med['this'] / med['baseline']:.2f}), "
                  f"models built {b['encoded']} -> {t['encoded']}, solves {b['solves']} -> {t['solves']}, "
                  f"same answer: {same}", flush=True)
            if not same:
                print(f"  baseline: {b['answer']}\n  this:     {t['answer']}", flush=True)
    head = ["request", "status", "baseline s", "this s", "ratio", "baseline: built / CpModels / solves",
            "this: built / CpModels / solves", "same answer"]
    print()
    print(table(head, rows))
    where = f"synthetic catalog of {a.synthetic} parts" if a.synthetic else "shipped catalog"
    print(f"\n{where}; medians of {a.runs} x {a.reps} recommend() calls per tree, alternating processes; load average "
          f"{os.getloadavg()[0]:.1f}; reproduce: python benchmarks/bench_engine.py --baseline {a.baseline} "
          f"--runs {a.runs} --reps {a.reps}" + (f" --synthetic {a.synthetic}" if a.synthetic else ""))


if __name__ == "__main__":
    main()
