"""`planner recommend`: the best build for a budget (or the cheapest meeting targets), alternatives, why-not."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.service import Answer, BuildSummary, Hours, SideBySide, Trial, TriedOption, load_priced_catalog, plan
from planner.cli.common import console, emit_json, err_console, handle_errors, print_unverified, styled
from planner.errors import InputError
from planner.money import format_money
from planner.request import Request
from planner.plan_view import UNVERIFIED_MARK
from planner.settings import (CHIP_MAKERS, DEFAULT_ALTERNATIVES, DEFAULT_BASELINE_HOURS, DEFAULT_RUNS, MAX_GPUS,
                              POWER_FRACTION_MAX, POWER_FRACTION_MIN, SOLVER_TIME_LIMIT_S)
from planner.service import BurninPlan


def print_recommendation(answer: Answer, offers: Optional[dict] = None) -> None:
    """The answer as text: every figure read from the typed Answer (the JSON is the same object dumped)."""
    offers = offers or {}
    for note in answer.notes:
        console.print(styled("[dim]Assumed: {}.[/]", note))
    if not answer.plans and answer.status == "timeout":
        console.print(styled("[red]No solution within the time limit[/] ({} s); raise --time-limit.",
                             f"{answer.solve_seconds:.2f}"))
        return
    if not answer.plans:
        console.print(styled("[red]No build fits[/] ({}, {} s).", answer.status, f"{answer.solve_seconds:.2f}"))
        why = answer.why_not
        gaps = (why.catalog_gaps if why else None) or []
        for g in gaps:
            console.print(Text(f"  • {g}"))
        if why and not gaps:
            console.print("Requirements that collide:")
            for c in why.conflicts:
                console.print(Text(f"  • {c}"))
            for s in why.suggestions:
                console.print(Text(f"  → {s}"))
        return
    for i, built in enumerate(answer.plans):
        view, sweep = built.view, built.sweep
        title = "Recommended" if i == 0 else f"Alternative {i}"
        table = Table(title=Text(f"{title}: {built.headline()}"))
        for col in ("type", "item", "price", "price kind, date, retailer"):
            table.add_column(col)
        for ln in view.parts:
            qty = f"{ln.quantity} x " if ln.quantity > 1 else ""
            price = "owned" if ln.owned else "no price" if ln.unit_price is None else qty + format_money(
                ln.unit_price, ln.currency)
            if ln.used:
                price += f" ({ln.condition})"
            label = ln.label
            when = "" if ln.owned else ", ".join(
                x for x in (label.text(), ln.retailer if ln.retailer != "market estimate" else None) if x)
            table.add_row(ln.category, Text(ln.name + (f" {UNVERIFIED_MARK}" if ln.unverified else "")), price, Text(when))
        console.print(table)
        print_unverified(console, [(ln.name, ln.unverified_what) for ln in view.parts if ln.unverified])
        sp, power = view.speed, view.power
        console.print(Text(f"Speed: {sp.value:.1f}x a GTX 1080 Ti per GPU for {answer.model.phrase()} "  # type: ignore[union-attr]
                           f"(range {sp.low:.1f}-{sp.high:.1f}x, {sp.basis}); power: "  # type: ignore[union-attr]
                           f"{_w(power.sustained_w if power else None)} W sustained, PSU needed "
                           f"{_w(built.psu_needed_w)} W (ATX 3.x)"))
        console.print(Text(f"Sweep: {sweep.finish_sentence()}; {Hours.text(sweep.hours_per_run.value)} per run "
                           f"instead of {sweep.baseline_hours_per_run:g} h on the GTX 1080 Ti"))
        if sweep.runs_sharing_each_gpu:
            console.print(Text(f"  Several runs per GPU: {sweep.shared_sentence()}"))
        for f in view.warnings:
            console.print(styled("  [yellow]! {}[/]: {}", f.rule, f.message))
        for f in view.unverified:
            console.print(styled("  [dim]? {}: {}[/]", f.rule, f.message))
        for t in view.trade_offs:
            console.print(Text(f"  vs recommended: {t}"))
        for n in view.notes:
            console.print(styled("  [cyan]note[/]: {}", n))
    for entry in answer.owned_not_used:
        console.print(styled("[yellow]{}[/]", entry.sentence()))
    first = answer.plans[0].summary
    console.print(Text(BurninPlan.pointer(first.gpu.chip, first.gpu.count)))  # the recommended build's chip, by id
    print_side_by_side(answer.side_by_side)
    print_trials(answer.try_before_you_buy)
    tried = answer.stats.by_gpu_count
    if len(tried) > 1:
        console.print(Text("GPU counts tried: " + "; ".join(_tried_texts(tried))))
    console.print(styled("[dim]{}[/]", f"{answer.status}, solved in {answer.solve_seconds:.2f} s over "
                         f"{answer.stats.after_pruning} of {answer.stats.candidates} parts after dominance pruning"))


def _w(watts: Optional[float]) -> str:
    return "?" if watts is None else f"{watts:g}"


WIDE_SIDE_BY_SIDE = 120  # columns from which the side-by-side builds print as one table; narrower: one block each


def side_by_side_cells(b: BuildSummary) -> dict[str, str]:
    """One build of the side-by-side comparison as the cells both layouts print (one hours formatter for all)."""
    hours = Hours.text
    return {"role": b.role or "", "GPUs": f"{b.gpu.count} x {b.gpu.name}",
            "total": format_money(b.total.amount, b.total.currency),
            "sweep": f"{hours(b.sweep_hours)} ({hours(b.sweep_hours_low)} to {hours(b.sweep_hours_high)})",
            "per run": hours(b.hours_per_run), "VRAM/GPU": f"{b.gpu.vram_gb:g} GB", "speed from": b.speedup_basis}


def parts_sentence(b: BuildSummary) -> str:
    """'2 x NVIDIA GeForce RTX 5080 FE, AMD Ryzen 9 9900X, ...' (each part of a side-by-side build)."""
    return ", ".join((f"{p.quantity} x " if p.quantity > 1 else "") + p.name
                     + (f" {UNVERIFIED_MARK}" if p.verified is False else "") for p in b.parts or [])


def print_side_by_side(sbs: Optional[SideBySide]) -> None:
    """Builds whose sweep ranges overlap and what would decide between them: one table on a wide terminal, one
    block per build on a narrow one (an 80-column terminal cut the ranges and names of the table), each build with
    its parts; the sweep hours say which runs they count."""
    if not sbs:
        return
    title = "Too close to call: sweep ranges overlap" if sbs.too_close_to_call else "Side by side"
    rows = [side_by_side_cells(b) for b in sbs.builds]
    if console.width >= WIDE_SIDE_BY_SIDE:
        table = Table(title=Text(title))
        for col, head in (("role", ""), ("GPUs", "GPUs"), ("total", "total"), ("sweep", "sweep (fast to slow end)"),
                          ("per run", "per run"), ("VRAM/GPU", "VRAM/GPU"), ("speed from", "speed from")):
            table.add_column(head, no_wrap=col in ("total", "sweep", "per run"))
        for r in rows:
            table.add_row(*(Text(v) for v in r.values()))
        console.print(table)
    else:
        console.print(Text(title))
        for r in rows:
            console.print(Text(f"  {r['role']}: {r['GPUs']}, {r['total']}"))
            console.print(Text(f"    sweep {r['sweep']}; {r['per run']} per run; {r['VRAM/GPU']} VRAM per GPU; "
                               f"speed from {r['speed from']}"))
    if sbs.builds and sbs.builds[0].sweep_counts == "runs left":
        console.print(Text(f"  sweep hours count the {sbs.builds[0].sweep_runs} runs left"))
    for b in sbs.builds:
        if not (b.role or "").startswith("recommended") and b.parts:
            console.print(Text(f"  parts of the {b.role} build: {parts_sentence(b)}"))
    if sbs.target_missing:
        console.print(Text(f"  {sbs.target_missing}"))
    for line in sbs.what_would_decide:
        console.print(Text(f"  would decide: {line}"))


def print_trials(trials: list[Trial]) -> None:
    """Try before you buy: per candidate card, the cheapest rental and the steps to a calibration."""
    for t in trials:
        console.print(Text(f"For {' and '.join(t.for_gpus)}, " + t.sentence))
        console.print(Text(f"  price: {t.price_source}"))
        for i, step in enumerate(t.steps, 1):
            console.print(Text(f"  {i}. {step}"))


def _tried_texts(tried: list[TriedOption]) -> list[str]:
    """One entry per GPU count and power limit solved; a count with no build at any limit is said once. Sweep
    hours are the BuildSummary's, labelled with the runs they count, as everywhere in the answer."""
    empty = {t.gpus for t in tried} - {t.gpus for t in tried if t.build is not None}
    out, said = [], set()
    for t in tried:
        n = t.gpus
        if n in empty:
            if n not in said:
                said.add(n)
                why = (f"no build within the budget and rules (--gpus {n} says why)" if t.status == "infeasible"
                       else t.status)
                out.append(f"{n} x: {why}")
            continue
        limit = f" at {t.power_limit:.0%}" if t.power_limit != 1.0 else ""
        b = t.build
        out.append(f"{n} x{limit}: " + (f"{format_money(b.total.amount, b.total.currency)}, {b.sweep_text()}"
                                        if b is not None else t.status))
    return out


def register(app: typer.Typer) -> None:
    @app.command("recommend")
    @handle_errors
    def recommend_cmd(
        budget_arg: Optional[str] = typer.Argument(None, metavar="BUDGET", help="The budget, as with --budget: "
                                                   "planner recommend 7000"),
        budget: Optional[str] = typer.Option(
            None, "--budget", help="Budget as you write it: 7000, 7k, '7 000 €', 7000EUR, 7,5k (required for best mode)"),
        currency: Optional[str] = typer.Option(
            None, "--currency", help="ISO currency of the budget and prices shown (default: the one in --budget, else EUR)"),
        mode: str = typer.Option("best", "--mode", help="best: fastest build within budget; cheapest: lowest total meeting targets"),
        min_vram: Optional[float] = typer.Option(None, "--min-vram", help="Minimum VRAM per GPU, GB"),
        min_ram: Optional[int] = typer.Option(None, "--min-ram", help="Minimum system RAM, GB, e.g. a measured peak (default: sized from the workload, >= 32 GB)"),
        min_storage: Optional[int] = typer.Option(None, "--min-storage", help="Minimum storage, GB (default 2000)"),
        min_speedup: Optional[float] = typer.Option(None, "--min-speedup", help="Minimum speedup vs a GTX 1080 Ti"),
        deadline: Optional[float] = typer.Option(None, "--deadline-hours", help="Sweep must finish within this many hours"),
        runs: Optional[int] = typer.Option(None, "--runs", help=f"Runs in the sweep (default: your profile, else {DEFAULT_RUNS})"),
        runs_left: Optional[int] = typer.Option(None, "--runs-left",
                                                help="Runs still to do (e.g. 6 of 8); the sweep time and --deadline-hours count these"),
        hours: Optional[float] = typer.Option(None, "--hours", help="Hours per run on the GTX 1080 Ti (default: from "
                                              f"your calibrated 1080 Ti log, else {DEFAULT_BASELINE_HOURS:g})"),
        workload: Optional[str] = typer.Option(None, "--workload", help="transformer | cnn | generic (default: your profile, else transformer)"),
        precision: Optional[str] = typer.Option(None, "--precision", help="fp32 | tf32 | amp (default: your profile, else amp)"),
        model_params: Optional[float] = typer.Option(None, "--model-params",
                                                     help="Model size in parameters, e.g. 15e6 (default: your profile "
                                                          "(planner profile set), else typical for the workload)"),
        run_vram_gb: Optional[float] = typer.Option(None, "--run-vram-gb", help="VRAM one run takes, GiB (nvidia-smi; "
                                                    "default: your profile, else memfit): how many runs share a card"),
        gpus: Optional[int] = typer.Option(None, "--gpus", help=f"Fixed number of identical GPUs (1-{MAX_GPUS}; default: decided)"),
        max_gpus: int = typer.Option(MAX_GPUS, "--max-gpus", help=f"Most GPUs the solver may choose (1-{MAX_GPUS})"),
        goal: str = typer.Option("expert", "--goal",
                                 help="expert: after speed, spend the budget on build quality; minimum: the cheapest parts that pass"),
        power_limit: Optional[float] = typer.Option(None, "--power-limit",
                                                    help=f"GPU power limit as a fraction of stock ({POWER_FRACTION_MIN}-{POWER_FRACTION_MAX}; "
                                                         "default: stock; with --allow-power-limit also 80/70 % for several GPUs)"),
        allow_power_limit: bool = typer.Option(
            False, "--allow-power-limit", help="Let the solver size the PSU for GPUs held at an 80 or 70 % power limit "
            "(you keep the limit set across reboots: the plan says how); default: sized at stock board power"),
        owned: list[str] = typer.Option([], "--owned", help="Part you own (cost 0; repeat)"),
        pin: list[str] = typer.Option([], "--pin", help="Part that must be used (repeat)"),
        exclude: list[str] = typer.Option([], "--exclude", help="Part to leave out (repeat)"),
        exclude_brand: list[str] = typer.Option([], "--exclude-brand",
                                                help="Board maker to leave out, the brand on the box (repeat)"),
        exclude_chip_maker: list[str] = typer.Option([], "--exclude-chip-maker",
                                                     help=f"GPU chip maker to leave out: {', '.join(CHIP_MAKERS)} (repeat)"),
        cooler: Optional[str] = typer.Option(None, "--cooler", help="air | aio"),
        max_wall: Optional[int] = typer.Option(None, "--max-wall-w", help="Cap on sustained wall power, W"),
        accept_warning: list[str] = typer.Option([], "--accept-warning",
                                                 help="A warning the solver may break, by name (repeat), e.g. cpu_cores_per_gpu"),
        used: str = typer.Option("none", "--used", help="Which parts may be bought used: none (default: new, with warranty)"
                                " | gpu | all; a used plan says what warranty is lost and what to test on arrival"),
        alternatives: int = typer.Option(DEFAULT_ALTERNATIVES, "--alternatives", help="Also return N builds with other GPU chips"),
        strict: bool = typer.Option(False, "--strict", help="Refuse builds that rest on unknown PSU-cable, connector or "
                                    "slot data (default: return the best such build with a checklist to verify)"),
        target: Optional[str] = typer.Option(None, "--target", help="Your own target card, shown beside the "
                                             "recommendation: 'RTX 5090', '2x RTX 5080'"),
        catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
        time_limit: float = typer.Option(SOLVER_TIME_LIMIT_S, "--time-limit", help="Solver time limit, s"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Recommend the best compatible build for a budget, or the cheapest meeting a target."""
        if budget_arg is not None and budget is not None and budget_arg != budget:
            raise InputError(f"two budgets given ({budget_arg!r} and --budget {budget!r}): give one")
        budget = budget if budget is not None else budget_arg
        from planner.service import measurements

        from planner.service import profile_store

        prof = profile_store().apply(model_params=model_params, workload=workload, precision=precision, runs=runs,
                             baseline_hours=hours, run_vram_gb=run_vram_gb, owned=tuple(owned))
        v = prof.values
        hours, _ = measurements().baseline_hours(v["baseline_hours"])  # given, else your profile, else your calibrated 1080 Ti run, else 7 h
        cat = load_priced_catalog(catalog_dir, use_history=catalog_dir is None)
        for warning in cat.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False)
        extra = {} if min_storage is None else {"min_storage_gb": min_storage}
        req = Request.parse(
            budget=budget, currency=currency, mode=mode, goal=goal, min_vram_gb=min_vram, min_ram_gb=min_ram,
            max_gpus=max_gpus, **extra, min_speedup=min_speedup, deadline_hours=deadline, runs=DEFAULT_RUNS if v["runs"] is None else v["runs"],
            runs_left=runs_left, baseline_hours=hours, workload=v["workload"], precision=v["precision"],
            model_params=v["model_params"], run_vram_gb=v["run_vram_gb"], gpu_count=gpus, power_fraction=POWER_FRACTION_MAX if power_limit is None else power_limit,
            suggest_power_limit=power_limit is None, allow_power_limit=allow_power_limit, owned=tuple(v["owned"]), pinned=tuple(pin), excluded=tuple(exclude),
            excluded_brands=tuple(exclude_brand), excluded_chip_makers=tuple(exclude_chip_maker), cooler_type=cooler,
            max_wall_w=max_wall, used=used, accepted_warnings=tuple(accept_warning), alternatives=alternatives,
            strict=strict,
        )
        planned = plan(cat, req, time_limit=time_limit, target=target)
        from planner.service import describe

        # the profile says which workload the answer describes: the stored profile or the default
        answer = describe(cat, planned, time_limit=time_limit, profile=prof.to_json(), given_prices=cat.given_prices())
        if not as_json:
            console.print(Text(prof.note))
        if as_json:
            emit_json(answer.model_dump(mode="json"))  # the one place the answer becomes JSON
        else:
            used_ids = {ln.part_id for p in answer.plans for ln in p.view.parts}
            said = cat.given_prices_sentence(sorted(used_ids))
            if said:
                console.print(Text(said))
            print_recommendation(answer, cat.offers)
        if not planned.plans:
            raise typer.Exit(1)  # a result (no build fits, with the why-not above), not an input error
