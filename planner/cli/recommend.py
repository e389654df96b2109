"""`planner recommend`: the best build for a budget (or the cheapest meeting targets), alternatives, why-not."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.service.catalogs import load_priced_catalog
from planner.cli.common import console, emit_json, err_console, handle_errors, styled
from planner.errors import InputError
from planner.money import format_money
from planner.price_label import offer_note, price_label
from planner.request import DEFAULT_BASELINE_HOURS, DEFAULT_RUNS, Request
from planner.service import pipeline
from planner.service.owned import unused_sentence
from planner.service.sweep_report import finish_sentence, hours_text, model_phrase


def print_recommendation(planned: pipeline.Planned, data: dict, offers: Optional[dict] = None) -> None:
    rec, offers = planned.recommendation, offers or {}
    for note in planned.notes:
        console.print(styled("[dim]Assumed: {}.[/]", note))
    if not rec.plans and rec.status == "timeout":
        console.print(styled("[red]No solution within the time limit[/] ({} s); raise --time-limit.",
                             f"{rec.solve_seconds:.2f}"))
        return
    if not rec.plans:
        console.print(styled("[red]No build fits[/] ({}, {} s).", rec.status, f"{rec.solve_seconds:.2f}"))
        gaps = (data.get("why_not") or {}).get("catalog_gaps") or []
        for g in gaps:
            console.print(Text(f"  • {g}"))
        if rec.why_not and not gaps:
            console.print("Requirements that collide:")
            for c in rec.why_not.conflicts:
                console.print(Text(f"  • {c}"))
            for s in rec.why_not.suggestions:
                console.print(Text(f"  → {s}"))
        return
    for i, plan in enumerate(rec.plans):
        title = "Recommended" if i == 0 else f"Alternative {i}"
        table = Table(title=Text(f"{title}: {plan.headline()}"))
        for col in ("type", "item", "price", "price kind, date, retailer"):
            table.add_column(col)
        for part in plan.to_json()["parts"]:
            qty = f"{part['quantity']} x " if part["quantity"] > 1 else ""
            price = "owned" if part["owned"] else qty + format_money(
                Decimal(part["price"]["amount"]), part["price"]["currency"])
            if part.get("condition") in ("used", "refurbished"):
                price += f" ({part['condition']})"
            label = price_label(part["price_source"], part["price_observed_on"], owned=part["owned"],
                                note=offer_note(offers, part["id"], part["price_source"], part["price_observed_on"],
                                                part["retailer"]))
            when = "" if part["owned"] else ", ".join(
                x for x in (f"{label.kind} {label.when}" if label.seen_on else f"{label.kind}, {label.when}",
                            part["retailer"] if part["retailer"] != "market estimate" else None) if x)
            table.add_row(part["category"], Text(part["name"]), price, Text(when))
        console.print(table)
        s = plan.report.sizing
        console.print(Text(f"Speed: {plan.speed.value:.1f}x a GTX 1080 Ti per GPU for {model_phrase(data['model'])} "
                           f"(range {plan.speed.low:.1f}-{plan.speed.high:.1f}x, {plan.speed.basis}); power: "
                           f"{s.sustained_w} W sustained, PSU needed {max(s.required_atx3_w, s.vendor_floor_w or 0)} W "
                           "(ATX 3.x)"))
        sweep = data["plans"][i]["sweep"]
        console.print(Text(f"Sweep: {finish_sentence(sweep)}; {hours_text(sweep['hours_per_run']['value'])} per run "
                           f"instead of {sweep['baseline_hours_per_run']:g} h on the GTX 1080 Ti"))
        for f in plan.report.warnings:
            console.print(styled("  [yellow]! {}[/]: {}", f.rule, f.message))
        for f in plan.report.unverified:
            console.print(styled("  [dim]? {}: {}[/]", f.rule, f.message))
        for t in plan.trade_offs:
            console.print(Text(f"  vs recommended: {t}"))
        for n in plan.notes:
            console.print(styled("  [cyan]note[/]: {}", n))
    for entry in data.get("owned_not_used", []):
        console.print(styled("[yellow]{}[/]", unused_sentence(entry)))
    tried = rec.stats.get("by_gpu_count", [])
    if len(tried) > 1:
        console.print(Text("GPU counts tried: " + "; ".join(_tried_texts(tried))))
    console.print(styled("[dim]{}[/]", f"{rec.status}, solved in {rec.solve_seconds:.2f} s over "
                         f"{rec.stats.get('after_pruning')} of {rec.stats.get('candidates')} parts after dominance pruning"))


def _tried_texts(tried: list[dict]) -> list[str]:
    """One entry per GPU count and power limit solved; a count with no build at any limit is said once."""
    empty = {t["gpus"] for t in tried} - {t["gpus"] for t in tried if t["total_eur"]}
    out, said = [], set()
    for t in tried:
        n = t["gpus"]
        if n in empty:
            if n not in said:
                said.add(n)
                why = (f"no build within the budget and rules (--gpus {n} says why)" if t["status"] == "infeasible"
                       else t["status"])
                out.append(f"{n} x: {why}")
            continue
        limit = f" at {t['power_limit']:.0%}" if t.get("power_limit", 1.0) != 1.0 else ""
        out.append(f"{n} x{limit}: " + (f"EUR {t['total_eur']}, sweep {t['sweep_hours']} h" if t["total_eur"]
                                        else t["status"]))
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
        min_ram: Optional[int] = typer.Option(None, "--min-ram", help="Minimum system RAM, GB (default: 2x total VRAM, >= 32)"),
        min_storage: Optional[int] = typer.Option(None, "--min-storage", help="Minimum storage, GB (default 2000)"),
        min_speedup: Optional[float] = typer.Option(None, "--min-speedup", help="Minimum speedup vs a GTX 1080 Ti"),
        deadline: Optional[float] = typer.Option(None, "--deadline-hours", help="Sweep must finish within this many hours"),
        runs: int = typer.Option(DEFAULT_RUNS, "--runs", help="Runs in the sweep"),
        runs_left: Optional[int] = typer.Option(None, "--runs-left",
                                                help="Runs still to do (e.g. 6 of 8); the sweep time and --deadline-hours count these"),
        hours: float = typer.Option(DEFAULT_BASELINE_HOURS, "--hours", help="Hours per run on the GTX 1080 Ti"),
        workload: str = typer.Option("transformer", "--workload", help="transformer | cnn | generic"),
        precision: str = typer.Option("amp", "--precision", help="fp32 | tf32 | amp"),
        model_params: Optional[float] = typer.Option(None, "--model-params",
                                                     help="Model size in parameters, e.g. 15e6 (default: typical for the workload)"),
        gpus: Optional[int] = typer.Option(None, "--gpus", help="Fixed number of identical GPUs (1-4; default: decided)"),
        max_gpus: int = typer.Option(4, "--max-gpus", help="Most GPUs the solver may choose (1-4)"),
        goal: str = typer.Option("expert", "--goal",
                                 help="expert: after speed, spend the budget on build quality; minimum: the cheapest parts that pass"),
        power_limit: Optional[float] = typer.Option(None, "--power-limit",
                                                    help="GPU power limit as a fraction of stock (0.5-1.0; default: stock; "
                                                         "with --allow-power-limit also 80/70 % for several GPUs)"),
        allow_power_limit: bool = typer.Option(
            False, "--allow-power-limit", help="Let the solver size the PSU for GPUs held at an 80 or 70 % power limit "
            "(you keep the limit set across reboots: the plan says how); default: sized at stock board power"),
        owned: list[str] = typer.Option([], "--owned", help="Part you own (cost 0; repeat)"),
        pin: list[str] = typer.Option([], "--pin", help="Part that must be used (repeat)"),
        exclude: list[str] = typer.Option([], "--exclude", help="Part to leave out (repeat)"),
        exclude_brand: list[str] = typer.Option([], "--exclude-brand",
                                                help="Board maker to leave out, the brand on the box (repeat)"),
        exclude_chip_maker: list[str] = typer.Option([], "--exclude-chip-maker",
                                                     help="GPU chip maker to leave out: NVIDIA, AMD or Intel (repeat)"),
        cooler: Optional[str] = typer.Option(None, "--cooler", help="air | aio"),
        max_wall: Optional[int] = typer.Option(None, "--max-wall-w", help="Cap on sustained wall power, W"),
        accept_warning: list[str] = typer.Option([], "--accept-warning",
                                                 help="A warning the solver may break, by name (repeat), e.g. cpu_cores_per_gpu"),
        used: str = typer.Option("none", "--used", help="Which parts may be bought used: none (default: new, with warranty)"
                                " | gpu | all; a used plan says what warranty is lost and what to test on arrival"),
        alternatives: int = typer.Option(0, "--alternatives", help="Also return N builds with other GPU chips"),
        strict: bool = typer.Option(False, "--strict", help="Refuse builds that rest on unknown PSU-cable, connector or "
                                    "slot data (default: return the best such build with a checklist to verify)"),
        catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
        time_limit: float = typer.Option(10.0, "--time-limit", help="Solver time limit, s"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Recommend the best compatible build for a budget, or the cheapest meeting a target."""
        if budget_arg is not None and budget is not None and budget_arg != budget:
            raise InputError(f"two budgets given ({budget_arg!r} and --budget {budget!r}): give one")
        budget = budget if budget is not None else budget_arg
        cat = load_priced_catalog(catalog_dir, use_history=catalog_dir is None)
        for warning in cat.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False)
        extra = {} if min_storage is None else {"min_storage_gb": min_storage}
        req = Request.parse(
            budget=budget, currency=currency, mode=mode, goal=goal, min_vram_gb=min_vram, min_ram_gb=min_ram,
            max_gpus=max_gpus, **extra, min_speedup=min_speedup, deadline_hours=deadline, runs=runs,
            runs_left=runs_left, baseline_hours=hours, workload=workload, precision=precision,
            model_params=model_params, gpu_count=gpus, power_fraction=1.0 if power_limit is None else power_limit,
            suggest_power_limit=power_limit is None, allow_power_limit=allow_power_limit, owned=tuple(owned), pinned=tuple(pin), excluded=tuple(exclude),
            excluded_brands=tuple(exclude_brand), excluded_chip_makers=tuple(exclude_chip_maker), cooler_type=cooler,
            max_wall_w=max_wall, used=used, accepted_warnings=tuple(accept_warning), alternatives=alternatives,
            strict=strict,
        )
        planned = pipeline.plan(cat, req, time_limit=time_limit)
        data = pipeline.describe(cat, planned, time_limit=time_limit)
        if as_json:
            emit_json(data)
        else:
            print_recommendation(planned, data, cat.offers)
        if not planned.plans:
            raise typer.Exit(1)  # a result (no build fits, with the why-not above), not an input error
