"""3- and 4-GPU workstations from the shipped catalog: Threadripper (PRO) platforms, registered memory, blower cards."""

from __future__ import annotations

from typing import Any

import pytest

from planner.compat.checker import check_parts
from planner.compat.rules import RULES_BY_NAME
from planner.compat.rules.platform import memory_channels
from planner.request import Request
from planner.solver import recommend

pytestmark = pytest.mark.usefixtures("no_price_history")


def solve(cat, **kw: Any):
    return recommend(cat, Request.parse(**kw), workers=2)


def assert_sound(cat, plan, budget: int) -> None:
    """Every rule passes (no problem, no warning the solver avoids), the board takes the CPU's series, the RAM meets
    the default RAM requirement and the cards can stack at the board's slot pitch."""
    parts = plan.parts
    report = check_parts(cat, list(parts.values()), gpu_count=plan.gpu_count, power_fraction=plan.power_fraction)
    assert report.problems == [], [f.message for f in report.problems]
    blocking = [f for f in report.warnings if RULES_BY_NAME[f.rule].blocks]
    assert blocking == [], [f.message for f in blocking]
    cpu, mb, gpu = parts["cpu"], parts["motherboard"], parts["gpu"]
    assert cpu.socket == mb.socket == "sTR5"
    assert cpu.cpu_platform in mb.accepted_platforms
    assert (mb.gpu_slots_x8 or 0) >= plan.gpu_count
    need = RULES_BY_NAME["ram_for_workload"].need_gb(gpu, cat.chips, plan.gpu_count, "amp", None)
    assert parts["memory"].capacity_gb >= max(gpu.vram_gb, need)  # ram_vs_vram and ram_for_workload, both avoided
    assert parts["memory"].modules == memory_channels(mb)  # one DIMM in each channel (issue 34 item 4)
    assert gpu.cooling in ("blower", "passive")  # only those stack at a 2-slot pitch
    assert plan.total <= budget


def best_plan(cat, budget: int, gpus: int):
    """The recommended build for `gpus` GPUs at `budget`, asserted optimal and sound."""
    rec = solve(cat, budget=budget, gpu_count=gpus)
    assert rec.status == "optimal" and rec.plans, rec.why_not
    plan = rec.plans[0]
    assert plan.gpu_count == gpus
    assert_sound(cat, plan, budget)
    return plan


@pytest.fixture(scope="module")
def four_gpus(cat):
    """The EUR 40 000 four-GPU build, solved once for the tests that read it."""
    return best_plan(cat, 40000, 4)


def test_four_gpus_get_a_threadripper_pro_wrx90_workstation(four_gpus) -> None:
    plan = four_gpus
    # only a WRX90 board hosts four cards, and WRX90 takes Threadripper PRO only
    assert plan.parts["motherboard"].accepted_platforms == ("threadripper-pro",)
    assert plan.parts["cpu"].cpu_platform == "threadripper-pro"


def test_three_gpus_get_a_threadripper_workstation(cat) -> None:
    plan = best_plan(cat, 30000, 3)
    cpu, board = plan.parts["cpu"], plan.parts["motherboard"]
    assert cpu.socket == board.socket == "sTR5"  # a Threadripper workstation, what the name promises
    assert cpu.cpu_platform in ("threadripper", "threadripper-pro") and cpu.cpu_platform in board.accepted_platforms
    assert (board.gpu_slots_x8 or 1) >= 3


def _sTR5(cat, category: str) -> list:
    return [p for p in cat.by_category(category) if p.socket == "sTR5" and cat.offer_for(p.id)]


def test_the_solver_never_pairs_a_threadripper_with_a_wrx90_board(cat, four_gpus) -> None:
    plain = [c for c in _sTR5(cat, "cpu") if c.cpu_platform == "threadripper"]
    wrx90 = [b for b in _sTR5(cat, "motherboard") if "threadripper" not in b.accepted_platforms]
    assert plain and wrx90, "the catalog has both a non-PRO Threadripper and a PRO-only board"
    # pinned together: no build, the two pins named as what collides
    rec = solve(cat, budget=60000, gpu_count=3, pinned=(plain[0].id, wrx90[0].id))
    assert rec.status == "infeasible"
    text = " | ".join(rec.why_not.conflicts)
    assert plain[0].name in text and wrx90[0].name in text, text
    # the same swap in a 4-GPU plan: check names the cpu_platform rule
    plan = four_gpus
    swapped = {**plan.parts, "cpu": plain[0], "motherboard": wrx90[0]}
    report = check_parts(cat, list(swapped.values()), gpu_count=4)
    assert [f.rule for f in report.problems if f.rule == "cpu_platform"] == ["cpu_platform"], report.problems
    # a non-PRO Threadripper pinned: the 3-GPU build sits on a board that takes it (not the WRX90 one)
    for cpu in plain:
        rec = solve(cat, budget=60000, gpu_count=3, pinned=(cpu.id,))
        assert rec.status == "optimal", rec.why_not
        assert cpu.cpu_platform in rec.plans[0].parts["motherboard"].accepted_platforms
    # and no 4-GPU build exists for it: the only 4-slot board is PRO-only
    assert solve(cat, budget=60000, gpu_count=4, pinned=(plain[0].id,)).status == "infeasible"


def test_a_threadripper_pro_on_trx50_is_a_valid_build(cat) -> None:
    pro = [c for c in _sTR5(cat, "cpu") if c.cpu_platform == "threadripper-pro"]
    trx50 = [b for b in _sTR5(cat, "motherboard") if "threadripper" in b.accepted_platforms]
    assert pro and trx50
    rec = solve(cat, budget=60000, gpu_count=3, pinned=(pro[0].id, trx50[0].id))
    assert rec.status == "optimal", rec.why_not
    assert_sound(cat, rec.plans[0], 60000)


def test_a_workstation_kit_fills_every_memory_channel_when_the_budget_allows(cat, four_gpus) -> None:
    from planner.solver import quality
    tight = four_gpus
    board, kit = tight.parts["motherboard"], tight.parts["memory"]
    channels = quality.memory_channels(board)
    assert channels == 8, "a WRX90 board has eight DDR5 channels"
    full_kits = [k for k in cat.by_category("memory") if k.memory_type == kit.memory_type and k.modules >= channels
                 and k.capacity_gb >= kit.capacity_gb]
    assert full_kits, "the catalog has an 8-module registered kit at least as large"
    if kit.modules < channels:  # the budget ran out before a full set: the plan says so
        assert any("channels" in n for n in tight.notes), tight.notes
    roomy = solve(cat, budget=int(tight.total) + 5000, gpu_count=4).plans[0]
    assert roomy.parts["memory"].modules >= channels, roomy.parts["memory"].id
    assert not any("channels" in n for n in roomy.notes)


def test_filled_channels_score_one_quality_point(cat, four_gpus) -> None:
    from dataclasses import replace
    from planner.solver import quality
    plan = four_gpus
    kits = {k.modules: k for k in cat.by_category("memory") if k.memory_type == plan.parts["memory"].memory_type}
    full = quality.memory_channels(plan.parts["motherboard"])
    assert min(kits) < full and full in kits
    score = {n: quality.points(replace(plan.report.build, parts={**plan.parts, "memory": kits[n]}))
             for n in (min(kits), full)}
    assert score[full] - score[min(kits)] == quality.CHANNELS_FILLED_POINTS
