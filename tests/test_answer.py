"""The typed answer (issue 35 items 1, 2, 6): one BuildSummary in every list of builds, sweep hours counted one way
and labelled, the JSON of `recommend --json` pinned key by key (PLANNER_UPDATE_GOLDEN=1 rewrites the file)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.cli import app

GOLDEN = Path(__file__).parent / "data" / "golden" / "recommend_json_keys.txt"
OPAQUE = {"request"}  # the Request's own fields belong to planner/request.py; the answer pins that it is there


def recommend(*args: str) -> Any:
    r = CliRunner().invoke(app, ["recommend", *args])
    assert r.exit_code == 0, r.output[-1500:]
    return r


def key_paths(obj: Any, path: str = "") -> set[str]:
    """Every key path of a JSON value: 'plans[].summary.gpu.chip'; a list's items are merged under '[]'."""
    out = {path} if path else set()
    if isinstance(obj, dict) and path.rsplit(".", 1)[-1] not in OPAQUE:
        for k, v in obj.items():
            out |= key_paths(v, f"{path}.{k}" if path else k)
    elif isinstance(obj, list):
        for v in obj:
            out |= key_paths(v, f"{path}[]")
    return out


def test_recommend_json_keys_match_the_golden_file(home) -> None:
    data = json.loads(recommend("--budget", "7000", "--runs-left", "4", "--model-params", "15e6",
                                "--alternatives", "1", "--json").stdout)
    keys = sorted(key_paths(data))
    if os.environ.get("PLANNER_UPDATE_GOLDEN"):
        GOLDEN.write_text("\n".join(keys) + "\n", encoding="utf-8")
    want = GOLDEN.read_text(encoding="utf-8").split()
    missing, extra = sorted(set(want) - set(keys)), sorted(set(keys) - set(want))
    assert not missing and not extra, (f"recommend --json changed shape: missing {missing}, new {extra} "
                                       "(if intended: PLANNER_UPDATE_GOLDEN=1 pytest tests/test_answer.py)")


def _builds(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every BuildSummary of an answer's JSON, with the list it came from."""
    out = [("plans", p["summary"]) for p in data["plans"]]
    out += [("side_by_side", b) for b in (data.get("side_by_side") or {}).get("builds", [])]
    out += [("by_gpu_count", t["build"]) for t in data["stats"]["by_gpu_count"] if t["build"] is not None]
    out += [("try_before_you_buy", b) for t in data.get("try_before_you_buy") or [] for b in t["builds"]]
    return out


@pytest.mark.parametrize("args", [("--budget", "7000", "--runs-left", "4"),
                                  ("--budget", "7000", "--model-params", "15e6", "--alternatives", "1")])
def test_every_build_list_agrees_on_the_sweep_hours_of_a_build(home, args) -> None:
    data = json.loads(recommend(*args, "--json").stdout)
    seen: dict[tuple, dict[str, set]] = {}
    for where, b in _builds(data):
        key = (b["gpu"]["chip"], b["gpu"]["count"], b["power_limit"], b["total"]["amount"])
        seen.setdefault(key, {}).setdefault(where, set()).add((b["sweep_hours"], b["sweep_hours_high"],
                                                               b["sweep_runs"], b["sweep_counts"]))
    shared = {k: v for k, v in seen.items() if len(v) > 1}
    assert shared, "no build appears in two lists: the check would prove nothing"
    assert {w for v in seen.values() for w in v} >= {"plans", "by_gpu_count", "try_before_you_buy"}
    for key, by_list in seen.items():
        assert len(set().union(*by_list.values())) == 1, (key, by_list)
    runs_left = "--runs-left" in args
    for p in data["plans"]:  # the plan's sweep report counts the same runs as its headline
        assert p["sweep"]["wall_hours"]["value"] == p["summary"]["sweep_hours"]
        assert p["sweep"]["counts"] == p["summary"]["sweep_counts"] == ("runs left" if runs_left else "all runs")


@pytest.mark.parametrize("kw", [
    {"budget": "7000", "model_params": 15e6, "runs_left": 4},  # runs share a card; the runs left counted
    {"budget": "5000", "alternatives": 2},
    {"mode": "cheapest", "deadline_hours": 6.0, "model_params": 15e6},  # a build meeting it only at the estimate
])
def test_the_typed_answer_says_one_sweep_per_build_in_every_list(home, kw) -> None:
    """Issue 35 item 6, on the typed Answer in-process: the same build (chip, count, power limit, total) has the
    same sweep hours, slow end, runs and label in plans, side by side, the GPU counts tried and try before you
    buy, and that figure is the planned sweep (planner.perf.planned_sweep) the solver ranked it on."""
    from planner.perf.planned_sweep import plan_sweep
    from planner.request import Request
    from planner.service import describe, load_priced_catalog, plan

    cat = load_priced_catalog(None, use_history=False)
    planned = plan(cat, Request.parse(**kw), target="RTX 5090" if "mode" in kw else None)
    answer = describe(cat, planned)
    by_key: dict[tuple, set] = {}
    for b in answer.builds():
        by_key.setdefault(b.key, set()).add((b.sweep_hours, b.sweep_hours_low, b.sweep_hours_high, b.sweep_runs,
                                             b.sweep_counts, b.hours_per_run))
    assert len(answer.builds()) > len(by_key), "no build appears twice: the check would prove nothing"
    for key, figures in by_key.items():
        assert len(figures) == 1, (key, figures)
    want = "runs left" if kw.get("runs_left") else "all runs"
    for built, p in zip(answer.plans, planned.plans):
        wall = plan_sweep(p, planned.request).wall
        assert built.summary.sweep_hours == pytest.approx(wall.value, abs=0.005)
        assert built.sweep.wall_hours.value == built.summary.sweep_hours
        assert built.summary.sweep_counts == built.sweep.counts == want
    assert all(b.sweep_counts == want for b in answer.builds())


def test_one_screen_says_one_sweep_figure_per_build_with_its_runs(home) -> None:
    """Issue 35 item 2: '4 of 8 runs left: about 2.4 h' and '2 x: ..., sweep 4.85 h' for the same build."""
    flat = " ".join(recommend("--budget", "7000", "--runs-left", "4").stdout.split())
    tried = flat.split("GPU counts tried:")[1]
    figures = re.findall(r"sweep ([\d.]+) h \(([^)]*)\)", tried)
    assert figures and all(label == "4 runs left" for _, label in figures), tried
    first = re.search(r"Sweep: 4 of 8 runs left: about ([\d.]+) h", flat)
    assert first is not None
    assert first.group(1) in {h for h, _ in figures}  # the recommended build's figure is among the counts tried


def test_describe_returns_the_typed_answer_and_the_views_once(home, monkeypatch) -> None:
    from planner.request import Request
    from planner.service import Answer, describe, load_priced_catalog, plan
    from planner.solver.plan import Plan

    cat = load_priced_catalog(None, use_history=False)
    planned = plan(cat, Request.parse(budget="7000", alternatives=1))
    calls = [0]
    real = Plan.view

    def counted(self: Plan) -> Any:
        calls[0] += 1
        return real(self)

    monkeypatch.setattr(Plan, "view", counted)
    answer = describe(cat, planned)
    assert isinstance(answer, Answer) and calls[0] == len(answer.plans) == 2
    assert answer.plans[0].view.total == planned.plans[0].total
    assert answer.model_dump(mode="json")["plans"][0]["parts"]  # plan files read the same keys as before


def _counted_solves(monkeypatch) -> list[int]:
    from ortools.sat.python import cp_model

    calls = [0]
    real = cp_model.CpSolver.Solve

    def counted(self, *a, **k):
        calls[0] += 1
        return real(self, *a, **k)

    monkeypatch.setattr(cp_model.CpSolver, "Solve", counted)
    return calls


def test_the_stats_of_an_infeasible_request_count_every_solve_of_its_why_not(home, monkeypatch) -> None:
    """`recommend --budget 2500 --min-vram 32`: the why-not's models and solves are in the stats, not hidden."""
    from planner.request import Request
    from planner.service.catalogs import load_priced_catalog
    from planner.solver import recommend as solve

    cat = load_priced_catalog(None, use_history=False)
    calls = _counted_solves(monkeypatch)
    rec = solve(cat, Request.parse(budget="2500", min_vram_gb=32))
    assert not rec.plans and rec.why_not is not None and rec.why_not.suggestions
    assert rec.stats["solves"] == calls[0] and rec.stats["models_built"] >= 1


def test_an_infeasible_request_builds_one_model(home) -> None:
    from planner.request import Request
    from planner.service.catalogs import load_priced_catalog
    from planner.solver import recommend as solve

    rec = solve(load_priced_catalog(None, use_history=False), Request.parse(budget="2500", min_vram_gb=32))
    assert rec.stats["models_built"] == 1


def test_sweep_and_costs_plan_the_same_sweep_as_recommend(home) -> None:
    """Issue 35 item 4: `planner sweep` on the recommended card and `costs`' buy option give the sweep recommend
    shows for the build (runs per GPU within VRAM), not a path of their own."""
    d = json.loads(recommend("--budget", "7000", "--model-params", "15e6", "--json").stdout)
    head = d["plans"][0]
    g = head["gpu"]
    assert head["sweep"]["runs_sharing_each_gpu"], "a 15 M model shares the card: the check would prove nothing"
    r = CliRunner().invoke(app, ["sweep", f"{g['count']}x {g['name']}", "--model-params", "15e6", "--json"])
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)["results"][0]
    assert got["runs_per_gpu"] == head["sweep"]["runs_sharing_each_gpu"]["runs_per_gpu"]
    assert got["wall_hours"]["value"] == pytest.approx(head["summary"]["sweep_hours"], abs=0.01)
    c = CliRunner().invoke(app, ["costs", "--budget", "7000", "--model-params", "15e6", "--json"])
    assert c.exit_code == 0, c.output
    buy = next(o for o in json.loads(c.stdout)["options"] if o["kind"] == "buy")
    assert (buy["gpu"], buy["gpus"]) == (g["chip"], g["count"])
    assert buy["hours_to_finish"] == pytest.approx(head["summary"]["sweep_hours"], abs=0.01)
    assert buy["hours_per_run"] == pytest.approx(head["summary"]["hours_per_run"], abs=0.01)
