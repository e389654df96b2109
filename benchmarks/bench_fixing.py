"""How a solve fixes its option and requirements on the one model: assumptions vs domain edits vs a fixed copy.

Run from the repository root:  python benchmarks/bench_fixing.py [--budget 7000] [--rounds 9] [--workers 2]

Records every solve of one `recommend()` on the shipped catalog (the model and the literals the solve assumes), then,
in this one process and alternating, solves each again four ways: with the literals as CP-SAT assumptions (what
planner.solver.engine does), with the literals' domains written into a copy's proto (what the solver did before
issue 35), with a copy fixed by one AddBoolAnd, and with a copy fixed by one linear equality per literal. Prints the
median of the summed wall seconds per way and checks that every way gives the same status and objective.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ortools.sat.python import cp_model  # noqa: E402

import planner.solver.engine as engine  # noqa: E402
from planner.request import Request  # noqa: E402
from planner.service.catalogs import load_priced_catalog  # noqa: E402
from planner.solver import recommend  # noqa: E402


def recorded(budget: int) -> list[tuple[str, list[int]]]:
    """(model as text, assumed literal indices) of every solve of one request."""
    seen: list[tuple[str, list[int]]] = []
    run = engine.Engine.run

    def spy(self, assumed, workers=None, model=None):
        m = self.model if model is None else model
        seen.append((str(m.Proto()), [lit.Index() for lit in assumed]))
        return run(self, assumed, workers, model)

    engine.Engine.run = spy
    try:
        recommend(load_priced_catalog(None, use_history=False), Request(budget=budget))
    finally:
        engine.Engine.run = run
    return seen


def ways(text: str, lits: list[int]) -> dict[str, cp_model.CpModel]:
    def fresh() -> cp_model.CpModel:
        m = cp_model.CpModel()
        m.Proto().parse_text_format(text)
        return m

    def var(m: cp_model.CpModel, i: int):
        return m.GetBoolVarFromProtoIndex(i) if i >= 0 else m.GetBoolVarFromProtoIndex(-i - 1).Not()

    out = {}
    m = fresh()
    m.AddAssumptions([var(m, i) for i in lits])
    out["assumptions"] = m
    m = fresh()
    for i in lits:
        j, v = (i, 1) if i >= 0 else (-i - 1, 0)
        m.Proto().variables[j].domain[0] = m.Proto().variables[j].domain[1] = v
    out["domain edits"] = m
    m = fresh()
    m.AddBoolAnd([var(m, i) for i in lits])
    out["copy + BoolAnd"] = m
    m = fresh()
    for i in lits:
        j, v = (i, 1) if i >= 0 else (-i - 1, 0)
        m.Add(m.GetBoolVarFromProtoIndex(j) == v)
    out["copy + equalities"] = m
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=7000)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    models = [ways(text, lits) for text, lits in recorded(a.budget)]
    names = list(models[0])
    secs: dict[str, list[float]] = {n: [] for n in names}
    answers: dict[str, list] = {n: [] for n in names}
    for r in range(a.rounds):
        for n in names:
            total = 0.0
            for i, m in enumerate(models):
                s = cp_model.CpSolver()
                s.parameters.num_workers = a.workers
                s.parameters.max_time_in_seconds = 30
                t = time.perf_counter()
                st = s.Solve(m[n])
                total += time.perf_counter() - t
                if r == 0:
                    answers[n].append((s.StatusName(st), s.ObjectiveValue() if st in (cp_model.OPTIMAL,
                                                                                     cp_model.FEASIBLE) else None))
            secs[n].append(total)
    same = all(answers[n] == answers[names[0]] for n in names)
    print(f"EUR {a.budget}: {len(models)} solves, {a.workers} workers, medians of {a.rounds} alternating rounds")
    for n in names:
        print(f"  {n:18s} {statistics.median(secs[n]):.3f} s  (x{statistics.median(secs[n]) / statistics.median(secs[names[0]]):.2f})")
    print(f"  same status and objective every way: {same}")


if __name__ == "__main__":
    main()
