"""The headline is the build the answer itself shows sweeping soonest (fastest) or costing least (cheapest), at the
budgets of the issue, with the user's 15 M model and with the typical size (issue 32, item 2; issue 34, item 6)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from planner.catalog.load import SHIPPED_DATA_DIR, load_catalog
from planner.perf.planned_sweep import plan_sweep
from planner.request import Request
from planner.service import headline
from planner.service.pipeline import plan


@pytest.fixture(scope="module")
def catalog():
    return load_catalog(SHIPPED_DATA_DIR)


@pytest.mark.parametrize("budget", [5000, 7000, 10000, 25000])
@pytest.mark.parametrize("params", [15e6, None])
def test_fastest_headline_sweeps_soonest_of_every_build_shown(catalog, budget, params) -> None:
    req = Request.parse(budget=budget, model_params=params, alternatives=2)
    planned = plan(catalog, req)
    rec, head = planned.recommendation, planned.plans[0]
    shown = headline.shown_plans(rec)
    assert shown, "the answer shows other builds (the GPU counts tried) to compare against"
    assert headline.violations(rec, planned.request, shown) == []
    mine = plan_sweep(head, planned.request).wall.value
    # the side-by-side table shows the same figure the headline was ranked on
    sbs = planned.side_by_side
    if sbs:
        assert sbs.builds[0].sweep_hours == pytest.approx(mine, abs=0.01)
    for p in shown:
        if p.total <= Decimal(budget):
            assert plan_sweep(p, planned.request).wall.value >= mine * 0.97


def test_the_7000_plan_of_the_issue_is_one_rtx_5090_holding_two_runs(catalog) -> None:
    """The issue's contradiction: 2 x RTX 5080 headlined while the same page said one RTX 5090 sweeps sooner."""
    planned = plan(catalog, Request.parse(budget=7000, model_params=15e6))
    head = planned.plans[0]
    ps = plan_sweep(head, planned.request)
    assert (head.gpu_count, head.chip.id) == (1, "rtx-5090")
    assert ps.sharing is not None and ps.sharing.runs_per_gpu == 2 and ps.estimated_gain
    decide = " ".join(planned.side_by_side.what_would_decide)
    assert "rests on an estimated gain" in decide and "--concurrent 2" in decide


@pytest.mark.parametrize("deadline", [6.0, 12.0])
def test_cheapest_headline_costs_least_of_the_builds_meeting_the_targets(catalog, deadline) -> None:
    req = Request.parse(mode="cheapest", deadline_hours=deadline, model_params=15e6)
    planned = plan(catalog, req)
    assert planned.plans
    assert headline.violations(planned.recommendation, planned.request,
                               headline.shown_plans(planned.recommendation)) == []


def test_the_rule_catches_a_faster_build_shown_beside_the_headline(catalog) -> None:
    """The check is not vacuous: swap the headline for a slower build and it names the faster one."""
    planned = plan(catalog, Request.parse(budget=7000, model_params=15e6))
    rec = planned.recommendation
    slower = max(headline.shown_plans(rec), key=lambda p: plan_sweep(p, planned.request).wall.value)
    fake = type(rec)(rec.status, [slower], None, 0.0, {}, [rec.plans[0]])
    broken = headline.violations(fake, planned.request, headline.shown_plans(fake))
    assert broken and "sooner than the headline" in broken[0]
