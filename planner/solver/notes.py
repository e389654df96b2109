"""What a plan says besides its parts (unspent money, the next step's price, power limit, memory channels) and why
nothing fits over several power limits, in words a user reads."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Optional, Sequence

from planner.compat.power import size_psu
from planner.compat.rules.base import gpu_power_w, power_terms
from planner.money import format_money
from planner.perf.planned_sweep import plan_sweep
from planner.request import Request
from planner.solver import quality
from planner.solver.plan import SAME_SPEED, Plan, WhyNot, shown


def unspent_note(plan: Plan, req: Request, status: str) -> Optional[str]:
    if req.mode != "best" or req.budget is None:
        return None
    left = req.budget - plan.total
    if plan.currency == req.currency and left >= max(Decimal(50), req.budget * Decimal("0.02")):
        how = "" if status == "optimal" else " found within the time limit"
        what = "sweep speed or build quality" if req.goal == "expert" else "sweep speed (goal: minimum)"
        return (f"{format_money(left, req.currency)} of the budget left unspent: no other choice{how} within it buys "
                f"more {what}")
    return None


def adapter_note(plan: Plan) -> Optional[str]:
    """Cards fed through the 8-pin-to-16-pin adapter at a draw the gpu_adapter warning lets pass (up to 300 W, the
    feed workstation cards ship with): say so, so the builder plugs the adapter and not a missing native cable."""
    from planner.compat.rules.power_rules import GpuAdapter, adapter_8pins, cards_on_adapters

    psu, gpu, n = plan.parts["psu"], plan.parts["gpu"], plan.gpu_count
    k = cards_on_adapters(psu, gpu, n)
    if not k or GpuAdapter.wanted(gpu, plan.report.build.chips):  # none, or the warning already says it
        return None
    plugs = adapter_8pins(gpu)
    return (f"{k} of the {n} card(s) take the 8-pin-to-16-pin adapter that ships with the card ({plugs} separate PCIe "
            f"8-pin cable(s) each): the {psu.name} has {psu.connectors_12v2x6} native 12V-2x6 cable(s); at this "
            "card's draw the adapter is a rated feed, seat every plug fully")


def channels_note(plan: Plan) -> Optional[str]:
    """A workstation kit that leaves memory channels empty (the budget did not reach a full set): say so."""
    board, kit = plan.parts["motherboard"], plan.parts["memory"]
    channels = quality.memory_channels(board)
    if kit.modules >= channels:
        return None
    return (f"the memory fills {kit.modules} of the {board.chipset} board's {channels} channels: "
            f"{'an' if channels == 8 else 'a'} {channels}-module kit "
            "would give the CPU its full memory bandwidth (data loading); the budget went to the GPUs first")


def psu_load_note(plan: Plan, psu_ratings: Sequence[int]) -> Optional[str]:
    """A PSU run above the 60 % load a builder aims for: say how hard it works, and why not a larger one (the
    budget went to speed first, or the catalog, given as its PSU ratings, has none that large)."""
    psu, load = plan.parts["psu"], power_terms(plan.report.build).training_w
    if quality.psu_load_ok(psu.wattage_w, load):
        return None
    light = -(-load * quality.PSU_HEADROOM[0] // quality.PSU_HEADROOM[1])
    why = ("the budget went to the GPUs first" if any(w >= light for w in psu_ratings)
           else "no PSU in the catalog is that large")
    return (f"the PSU carries {load} W while training, {load / psu.wattage_w:.0%} of its {psu.wattage_w} W "
            f"(within the 80% rule); a unit of {light} W or more would run it at 60% or less, cooler and quieter "
            f"for months of 24/7 load; {why}")


def sweep_hours(plan: Plan, req: Request, runs: Optional[int] = None) -> float:
    """Hours for `runs` runs (default: the whole sweep) as planned: runs per GPU within VRAM, waves
    (planner.perf.planned_sweep, the figure the solver ranks on)."""
    return plan_sweep(plan, req, runs or req.runs).sweep.wall_hours


def rounds_hours(plan: Plan, req: Request) -> float:
    """Hours for the runs still to do (all of them unless --runs-left), as the deadline requirement counts them."""
    return sweep_hours(plan, req, req.runs_left or req.runs)


def next_step_note(req: Request, plan: Plan, solve: Callable[[Request], Any]) -> Optional[str]:
    """Money was left because nothing faster fits: say what the cheapest build finishing the sweep sooner costs (at
    least 3 % sooner, the margin under which two sweeps count as equal), so the user can weigh the step."""
    hours = rounds_hours(plan, req)
    target = hours * float(SAME_SPEED)
    if req.deadline_hours is not None:
        target = min(target, req.deadline_hours)
    step = req.model_copy(update={"budget": None, "mode": "cheapest", "deadline_hours": target})
    rec = solve(step)  # planner.solver.recommend on the same catalog (passed in: this module sits below it)
    if not rec.plans:
        return "no build in the catalog finishes this sweep sooner (within the other requirements)"
    nxt = rec.plans[0]
    if nxt.currency != req.currency or nxt.total <= req.budget:  # type: ignore[operator]
        return None  # (a faster build within the budget would have been chosen: only a time-limited solve gets here)
    limit = f" at a {nxt.power_fraction:.0%} power limit" if nxt.power_fraction < 1 else ""
    return (f"the next faster build costs {format_money(nxt.total, req.currency)}, "
            f"{format_money(nxt.total - req.budget, req.currency)} over the budget: "  # type: ignore[operator]
            f"{nxt.gpu_count} x {nxt.gpu_name}{limit}, the sweep in {shown(rounds_hours(nxt, req))} h instead of "
            f"{shown(hours)} h")


def undercut(free: Request, step: Plan, hours: float, solve: Callable[[Request], Any]) -> Optional[Plan]:
    """A build with no more GPUs than the step, at least its VRAM per GPU, that sweeps as soon for less: the step is
    then not worth offering (a builder would not pay more for older cards that finish later)."""
    for k in range(1, step.gpu_count + 1):
        rec = solve(free.model_copy(update={"gpu_count": k, "min_vram_gb": float(step.gpu.vram_gb),
                                            "deadline_hours": hours}))
        if rec.plans and rec.plans[0].currency == step.currency and rec.plans[0].total < step.total:
            return rec.plans[0]
    return None


def step_up_note(req: Request, plan: Plan, solve: Callable[[Request], Any]) -> Optional[str]:
    """Money was left: what the next steps up buy and cost, so the user can choose (issue 26 item 11): one more GPU
    (a platform that hosts it), twice the VRAM per GPU, the same count of the fastest card. Each is the cheapest build
    with that property, without the budget; steps within the budget are not shown (the solver would have taken them)."""
    hours = rounds_hours(plan, req)
    free = req.model_copy(update={"budget": None, "mode": "cheapest", "deadline_hours": None, "min_speedup": None})
    steps = []
    if plan.gpu_count < req.max_gpus:
        steps.append((f"a GPU more ({plan.gpu_count + 1} x)", free.model_copy(update={
            "gpu_count": plan.gpu_count + 1, "deadline_hours": hours * float(SAME_SPEED)})))
    vram = plan.gpu.vram_gb
    steps.append((f"at least {2 * vram:g} GB per GPU", free.model_copy(update={
        "gpu_count": plan.gpu_count, "min_vram_gb": float(2 * vram), "deadline_hours": hours})))
    if plan.gpu_count > 1:
        steps.append((f"{plan.gpu_count} faster cards", free.model_copy(update={
            "gpu_count": plan.gpu_count, "deadline_hours": hours * float(SAME_SPEED)})))
    found: dict[tuple, list[str]] = {}
    for label, step in steps:
        rec = solve(step)
        if not rec.plans:
            continue
        nxt = rec.plans[0]
        if nxt.currency != req.currency or nxt.total <= req.budget:  # type: ignore[operator]
            continue
        found.setdefault((nxt.gpu_count, nxt.gpu.id, nxt.parts["motherboard"].id, nxt.total), [[], nxt])[0].append(label)
    lines = []
    for labels, nxt in found.values():  # one line per distinct build, its labels joined
        label = " or ".join(labels)
        better = undercut(free, nxt, rounds_hours(nxt, req), solve)
        if better is not None:  # issue 34 item 4: 3 x RTX A6000 (2020) offered beside 2 x RTX 6000 Ada, dearer and slower
            cards = f"{nxt.gpu_count} cards cost" if nxt.gpu_count > 1 else "1 card costs"
            lines.append(f"{label}: {cards} more than {better.gpu_count} x {better.gpu_name} ({better.gpu.vram_gb:g} GB, "
                         f"{format_money(better.total, req.currency)}, sweep {shown(rounds_hours(better, req))} h), "
                         "which sweeps at least as soon")
            continue
        lines.append(f"{label}: {nxt.gpu_count} x {nxt.gpu_name} ({nxt.gpu.vram_gb:g} GB) on "
                     f"{nxt.parts['motherboard'].name}, {format_money(nxt.total, req.currency)} "
                     f"(+{format_money(nxt.total - req.budget, req.currency)}), sweep "  # type: ignore[operator]
                     f"{shown(rounds_hours(nxt, req))} h")
    if not lines:
        return None
    return ("steps up from here, each the cheapest build that has it (or, where a cheaper build sweeps as soon, that "
            "build): " + "; ".join(lines))


# The user story's old machine (../shared/facts/user-story.md): the platform a home ML builder most often still has.
OLD_PLATFORM = ("cpu-amd-ryzen5-5600g", "mb-msi-mpg-x570-gaming-edge-wifi")
TIGHT_PLATFORM_SHARE = Decimal("0.3")  # the platform takes 30 % or more of the total: the budget is tight


def reuse_platform_note(req: Request, plan: Plan, solve: Callable[[Request], Any]) -> Optional[str]:
    """Owned parts unknown and the budget tight: say that reusing an old platform would buy a faster GPU, and show
    the build it buys with the user story's Ryzen 5 5600G / X570 board as owned (issue 26 item 8)."""
    if req.owned or req.budget is None or req.mode != "best" or plan.currency != req.currency:
        return None
    platform = sum((plan.offers[p.id].price for c, p in plan.parts.items()
                    if c in ("cpu", "motherboard", "memory") and p.id in plan.offers), Decimal(0))
    if platform < TIGHT_PLATFORM_SHARE * plan.total or not all(i in plan.catalog.parts for i in OLD_PLATFORM):
        return None
    rec = solve(req.model_copy(update={"owned": OLD_PLATFORM}))
    if not rec.plans:
        return None
    other = rec.plans[0]
    now, then = rounds_hours(plan, req), rounds_hours(other, req)
    if then >= now * float(SAME_SPEED):
        return None
    names = " and ".join(plan.catalog.get(i).name for i in OLD_PLATFORM)
    return (f"the platform (CPU, board, memory) takes {format_money(platform, req.currency)} of this budget; if you "
            f"still have an old one, say so: reusing one such as the {names} (--owned {' --owned '.join(OLD_PLATFORM)}) buys "
            f"{other.gpu_count} x {other.gpu_name} for {format_money(other.total, req.currency)}, the sweep in "
            f"{shown(then)} h instead of {shown(now)} h")


STACK_WHY = {
    "blower": "blower cards push their heat out of the bracket, so they can sit side by side",
    "passive": "passive cards take the case's airflow, so they can sit side by side",
    "open-air": "an open-air cooler draws its air from the gap below it",
    "flow-through": "a flow-through cooler blows its exhaust up through the card above",
    "hybrid": "liquid-cooled cards move their heat to a radiator",
}


def stack_note(plan: Plan) -> Optional[str]:
    """Several GPUs: why the cards, their spacing, the CPU cooler and the case go together (issue 26 item 6)."""
    if plan.gpu_count < 2:
        return None
    from planner.compat.rules.multigpu import card_width, free_slots_needed
    from planner.compat.rules.sustain import case_cooling, case_heat_w

    gpu, board, cooler, case = (plan.parts[c] for c in ("gpu", "motherboard", "cooler", "case"))
    if gpu.slots is None or board.gpu_slot_pitch is None:
        return (f"{plan.gpu_count} cards: the card width or the board's slot spacing is unknown, so the gap between "
                "the cards cannot be checked (see what to verify)")
    free = board.gpu_slot_pitch - (card_width(gpu) or 0)
    need = free_slots_needed(gpu)
    cap, _cfm, why = case_cooling(plan.report.build)
    drawn, out, heat = case_heat_w(plan.report.build)
    blown = f" ({drawn} W drawn, {out} W blown out of the back by the cards)" if out else ""
    air = f"; the {case.name}{why} moves about {cap} W of the {heat} W left in the case{blown}" if cap else ""
    cpu = (f"the CPU on a liquid cooler ({cooler.name}), away from the cards' exhaust" if cooler.type == "aio"
           else f"the CPU on an air cooler ({cooler.name})")
    return (f"{plan.gpu_count} {gpu.cooling or 'unknown-design'} cards ({gpu.slots:g} slots each) {board.gpu_slot_pitch} "
            f"positions apart on the {board.name}: {free} free slot{'s' if free != 1 else ''} between them, "
            f"{need} needed because {STACK_WHY.get(gpu.cooling or '', 'the design is unknown')}; {cpu}{air}")


def checklist_note(plan: Plan) -> str:
    """The checks a build rests on that its catalog data cannot confirm, one line each, to tick before ordering."""
    from planner.compat.rules import RULES_BY_NAME

    lines = []
    for f in plan.report.unverified:
        names = ", ".join(plan.catalog.get(i).name for i in f.parts)
        what = f.message.split(" unknown:")[0]
        lines.append(f"[ ] {names}: {what} ({RULES_BY_NAME[f.rule].summary})")
    return ("no build in this catalog passes every safety and fit check on known data; this one passes if the data "
            "below holds. Verify before ordering (or run with --strict to refuse such builds):\n"
            + "\n".join(dict.fromkeys(lines)))


def power_limit_note(plan: Plan, used: Request, asked: Request) -> Optional[str]:
    if used.power_fraction == asked.power_fraction:
        return None
    watts = gpu_power_w(plan.gpu, plan.catalog.chips, used.power_fraction)
    stock = plan.report.build.parts["gpu"].tgp_w or plan.chip.tdp_w
    s = plan.report.sizing
    at_stock = size_psu([stock] * plan.gpu_count, s.cpu_w) if s else None
    why = f"; at stock power these cards need about a {at_stock.recommended_w} W PSU" if at_stock else ""
    which = "is cheaper than" if asked.mode == "cheapest" else "sweeps faster than"
    return (f"set a {used.power_fraction:.0%} power limit on each GPU (nvidia-smi -pl {watts}){why}; with the limit "
            f"this build {which} any stock-power build with {plan.gpu_count} GPUs that fits the budget and rules "
            "(speed shown is at the limit)")


def persist_limit_note(plan: Plan) -> Optional[str]:
    """A plan that relies on a GPU power limit says how to keep it: `nvidia-smi -pl` lasts until the next reboot."""
    if plan.power_fraction >= 1.0:
        return None
    watts = gpu_power_w(plan.gpu, plan.catalog.chips, plan.power_fraction)
    return (f"the {watts} W limit resets at every reboot and the PSU is sized for it: make it persist before the first "
            f"long run. Linux: a systemd unit (Type=oneshot, After=nvidia-persistenced.service) running "
            f"`nvidia-smi -pm 1` and `nvidia-smi -pl {watts}`, enabled with `systemctl enable`; Windows: a Task "
            f"Scheduler task at log-on, run with highest privileges, calling `nvidia-smi.exe -pl {watts}`, or the "
            "card vendor's tuning tool (MSI Afterburner and the like) with its power target applied at start-up. "
            "Check after a reboot with `nvidia-smi -q -d POWER` (Current Power Limit)")


USED_TESTS = {  # what to run in the return window, per category (hardware-facts: the user's problem is crashes)
    "gpu": ("a GPU burn-in at stock power for 2-4 h (gpu-burn) watching `nvidia-smi -q -d "
            "TEMPERATURE,PERFORMANCE` for throttle reasons and `dmesg`/Event Viewer for Xid or TDR errors, then one of "
            "your own training runs; look at the power connector for browning and at fan noise"),
    "cpu": "a 1 h all-core stress test (Prime95 small FFT or OCCT) with no WHEA errors",
    "motherboard": "POST with the full memory kit, every x16 slot and M.2 slot seen, BIOS updated",
    "memory": "MemTest86 for two full passes with no error",
    "storage": "the SMART log (power-on hours, media errors, percentage used) and a full-surface read",
    "psu": "the GPU burn-in above at full power without a shutdown, every cable accounted for",
    "cooler": "the CPU stress test above without thermal throttling",
    "case": "fans spinning and no bent expansion brackets",
}


def used_parts_note(plan: Plan) -> Optional[str]:
    """A plan with used parts says what warranty the user gives up and what to test before the return window ends."""
    used = [(c, p) for c, p in plan.parts.items()
            if p.id not in plan.owned and getattr(plan.offers.get(p.id), "condition", "new") != "new"]
    if not used:
        return None
    names = ", ".join(p.name for _, p in used)
    tests = "; ".join(f"{c}: {USED_TESTS[c]}" for c, _ in used if c in USED_TESTS)
    return (f"bought used: {names}. Used parts usually lose the maker's warranty (2-3 years new, often not "
            "transferable) and a private sale has no legal guarantee of conformity; a marketplace or refurbisher gives "
            f"a return window of 14-30 days at best. Test on arrival, inside that window: {tests}. Leave --used out "
            "for new parts with warranty")


def explain_tried(sessions: list[Any]) -> WhyNot:
    """Why nothing fits, for the first GPU count tried, over every power limit tried with it: a collision seen at
    stock power alone (say case airflow) must not hide what no power limit fixes (say the budget). `sessions` are
    each option's why-not (planner.solver.whynot.OptionWhyNot: `req`, `explain()`, `budget_needed`)."""
    count = sessions[0].req.gpu_count
    mine = [s for s in sessions if s.req.gpu_count == count]
    whys = [(s.req.power_fraction, s.explain()) for s in mine]
    if len({(tuple(w.conflicts), tuple(w.suggestions)) for _, w in whys}) == 1:
        return whys[0][1]
    needs = [s.budget_needed for s in mine if s.budget_needed is not None]
    for s, (_, why) in zip(mine, whys):  # one "raise the budget": the smallest raise that works, at its limit
        if s.budget_needed is not None and s.budget_needed != min(needs):
            why.suggestions = [x for x in why.suggestions if "raise the budget" not in x]
    everywhere = [f for f, _ in whys]

    def labelled(pick) -> list[str]:
        seen: dict[str, list[float]] = {}
        for frac, why in whys:
            for line in pick(why):
                seen.setdefault(line[3:] if line.startswith("or ") else line, []).append(frac)
        return [f"{power_label(fracs, everywhere)}: {line}" for line, fracs in seen.items()]

    suggestions = labelled(lambda w: w.suggestions)
    suggestions.sort(key=lambda line: "raise the budget" not in line)  # the one change that works, first
    return WhyNot(labelled(lambda w: w.conflicts), suggestions)


def power_label(fractions: list[float], everywhere: list[float]) -> str:
    """Which of the power limits tried a line holds for: 'at stock power', 'at an 80% power limit', ..."""
    if sorted(fractions) == sorted(everywhere):
        return "at any power limit tried"
    limits = [f"{f:.0%}" for f in fractions if f < 1.0]
    parts = ["stock power"] if 1.0 in fractions else []
    if len(limits) == 1:
        parts.append(f"{'an' if limits[0].startswith('8') else 'a'} {limits[0]} power limit")
    elif limits:
        parts.append(" or ".join(limits) + " power limits")
    return "at " + " or ".join(parts)
