"""One solver engine (issue 35 item 2): one CP-SAT model per request, feasible or not, and honest solve statistics."""

from __future__ import annotations

from decimal import Decimal

import pytest
from ortools.sat.python import cp_model

import planner.solver.encoder as encoder
from planner.catalog.load import load_catalog
from planner.money import format_money
from planner.request import Request
from planner.solver import recommend


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


@pytest.fixture()
def counted(monkeypatch):
    """What CP-SAT really did, counted beside the solver's own statistics: solves, CpModel objects made and models
    encoded from scratch (a ModelEncoder not sharing another's model)."""
    counts = {"solves": 0, "cpmodels": 0, "encoded": 0}
    solve, init, enc = cp_model.CpSolver.solve, cp_model.CpModel.__init__, encoder.ModelEncoder.__init__

    def counting_solve(self, *a, **k):
        counts["solves"] += 1
        return solve(self, *a, **k)

    def counting_init(self, *a, **k):
        counts["cpmodels"] += 1
        return init(self, *a, **k)

    def counting_encoder(self, *a, **k):
        counts["encoded"] += k.get("share") is None
        return enc(self, *a, **k)

    monkeypatch.setattr(cp_model.CpSolver, "solve", counting_solve)
    monkeypatch.setattr(cp_model.CpModel, "__init__", counting_init)
    monkeypatch.setattr(encoder.ModelEncoder, "__init__", counting_encoder)
    return counts


def assert_honest(stats: dict, counts: dict) -> None:
    assert stats["models_built"] == counts["encoded"] == 1
    assert stats["solves"] == counts["solves"]
    assert stats["model_copies"] == counts["cpmodels"] - 1  # every CpModel but the one built is a why-not's copy


def test_a_feasible_request_builds_one_model_and_counts_its_solves(cat, counted) -> None:
    rec = recommend(cat, Request(budget=Decimal(7000)), alternatives=2, workers=2)
    assert rec.status == "optimal" and len(rec.plans) == 3
    assert_honest(rec.stats, counted)
    assert rec.stats["model_copies"] == 0  # a request with a build solves the one model itself
    assert rec.stats["solves"] >= len(rec.stats["by_gpu_count"])  # at least one solve per option tried


def test_a_request_with_no_build_explains_itself_on_the_same_one_model(cat, counted) -> None:
    """`recommend --budget 2500 --min-vram 32` built 9 models (the request's, then one per option for the why-not,
    one per relaxation) and solved 14 times; now every solve, the infeasible cores included, is on the one model."""
    req = Request(budget=Decimal(2500), min_vram_gb=32)
    rec = recommend(cat, req, workers=2)
    assert rec.status == "infeasible" and not rec.plans
    assert_honest(rec.stats, counted)
    assert rec.stats["model_copies"] <= 2 * len(rec.stats["by_gpu_count"])  # the core and the drop test per option
    conflicts = " ".join(rec.why_not.conflicts)
    assert "total at most EUR 2 500" in conflicts and "at least 32 GB of VRAM per GPU" in conflicts
    raise_by = next(s for s in rec.why_not.suggestions if "raise the budget by" in s)
    # the relaxation's answer is a real build: the cheapest 32 GB build the same engine finds when asked directly
    cheapest = recommend(cat, Request(mode="cheapest", min_vram_gb=32), workers=2).plans[0]
    assert f"costs {format_money(cheapest.total, 'EUR')}; raise the budget by " \
           f"{format_money(cheapest.total - 2500, 'EUR')}" in raise_by
    accept = next(s for s in rec.why_not.suggestions if "GB of VRAM, the most the budget buys" in s)
    most = float(accept.split("accept ")[1].split(" GB")[0])
    assert most < 32
    assert recommend(cat, Request(budget=Decimal(2500), min_vram_gb=most), workers=2).plans
    assert not recommend(cat, Request(budget=Decimal(2500), min_vram_gb=most + 1), workers=2).plans


def test_solving_leaves_the_one_model_as_built(cat) -> None:
    """A solve assumes its literals (AddAssumptions, cleared after), never edits the model's domains: after solves with a
    forbidden chip, a relaxed budget, trusted unknown data and a why-not's assumptions, every variable's domain and
    every constraint are what the build left (a floor the model lacked, such as the why-not's 'most VRAM the budget
    buys', is added as a literal of its own, off unless asked for)."""
    from planner.solver.engine import Engine
    from planner.solver.whynot import OptionWhyNot

    req = Request(budget=Decimal(2500), min_vram_gb=32)
    k = (1, req.power_fraction)
    engine = Engine(cat, req, [k], 30.0, 2)
    assert engine.solve(k, req) == ("infeasible", None)
    proto = engine.model.Proto()
    domains = [list(v.domain) for v in proto.variables]
    constraints = [str(c) for c in proto.constraints]
    status, chosen = engine.solve(k, req.model_copy(update={"budget": None, "mode": "cheapest"}))
    assert chosen is not None and chosen["gpu"].vram_gb >= 32
    engine.solve(k, req.model_copy(update={"budget": None}), forbid_chips=frozenset({chosen["gpu"].chip}), trust=True)
    why = OptionWhyNot(engine, k).explain()
    assert why.conflicts
    proto = engine.model.Proto()
    assert [str(c) for c in proto.constraints][:len(constraints)] == constraints
    assert not proto.assumptions  # each solve clears its assumptions; a why-not's live on its copy
    assert [list(v.domain) for v in proto.variables][:len(domains)] == domains
    assert engine.solve(k, req) == ("infeasible", None)  # nothing left fixed behind
