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
from planner.money import format_money
from planner.request import Request
from planner.service import pipeline
from planner.service.pipeline import Planned


def print_recommendation(planned: Planned) -> None:
    rec = planned.recommendation
    for note in planned.notes:
        console.print(styled("[dim]Assumed: {}.[/]", note))
    if not rec.plans and rec.status == "timeout":
        console.print(styled("[red]No solution within the time limit[/] ({} s); raise --time-limit.",
                             f"{rec.solve_seconds:.2f}"))
        return
    if not rec.plans:
        console.print(styled("[red]No build fits[/] ({}, {} s).", rec.status, f"{rec.solve_seconds:.2f}"))
        if rec.why_not:
            console.print("Requirements that collide:")
            for c in rec.why_not.conflicts:
                console.print(f"  • {c}")
            for s in rec.why_not.suggestions:
                console.print(f"  → {s}")
        return
    for i, plan in enumerate(rec.plans):
        title = "Recommended" if i == 0 else f"Alternative {i}"
        table = Table(title=f"{title}: {plan.headline()}")
        for col in ("type", "item", "price", "date / source / retailer"):
            table.add_column(col)
        for part in plan.to_json()["parts"]:
            qty = f"{part['quantity']} x " if part["quantity"] > 1 else ""
            price = "owned" if part["owned"] else qty + format_money(
                Decimal(part["price"]["amount"]), part["price"]["currency"])
            if part.get("condition") in ("used", "refurbished"):
                price += f" ({part['condition']})"
            when = "" if part["owned"] else f"{part['price_observed_on']}, {part['price_source']}, {part['retailer']}"
            table.add_row(part["category"], part["name"], price, when)
        console.print(table)
        s = plan.report.sizing
        console.print(f"Speed: {plan.speed.value:.1f}x a GTX 1080 Ti (range {plan.speed.low:.1f}-{plan.speed.high:.1f}x, "
                      f"{plan.speed.basis}); power: {s.sustained_w} W sustained, PSU needed "
                      f"{max(s.required_atx3_w, s.vendor_floor_w or 0)} W (ATX 3.x)")
        rounds = -(-rec.stats.get("runs", 8) // plan.gpu_count)
        hours = rec.stats.get("baseline_hours", 7.0)
        console.print(f"Sweep: {rec.stats.get('runs', 8)} runs of {hours:g} h on the GTX 1080 Ti take about "
                      f"{rounds * hours / plan.speed.value:.1f} h (range {rounds * hours / plan.speed.high:.1f}-"
                      f"{rounds * hours / plan.speed.low:.1f} h) on this build")
        for f in plan.report.warnings:
            console.print(styled("  [yellow]! {}[/]: {}", f.rule, f.message))
        for f in plan.report.unverified:
            console.print(styled("  [dim]? {}: {}[/]", f.rule, f.message))
        for t in plan.trade_offs:
            console.print(f"  vs recommended: {t}")
        for n in plan.notes:
            console.print(styled("  [cyan]note[/]: {}", n))
    tried = rec.stats.get("by_gpu_count", [])
    if len(tried) > 1:
        console.print(Text("GPU counts tried: " + "; ".join(
            f"{t['gpus']} x" + (f" at {t['power_limit']:.0%}" if t.get("power_limit", 1.0) != 1.0 else "") + ": "
            + (f"EUR {t['total_eur']}, sweep {t['sweep_hours']} h" if t["total_eur"] else t["status"])
            for t in tried)))
    console.print(styled("[dim]{}[/]", f"{rec.status}, solved in {rec.solve_seconds:.2f} s over "
                         f"{rec.stats.get('after_pruning')} of {rec.stats.get('candidates')} parts after dominance pruning"))


def register(app: typer.Typer) -> None:
    @app.command("recommend")
    @handle_errors
    def recommend_cmd(
        budget: Optional[str] = typer.Option(None, "--budget", help="Budget in --currency (required for best mode)"),
        currency: str = typer.Option("EUR", "--currency", help="ISO currency of the budget and prices shown"),
        mode: str = typer.Option("best", "--mode", help="best: fastest build within budget; cheapest: lowest total meeting targets"),
        min_vram: Optional[float] = typer.Option(None, "--min-vram", help="Minimum VRAM per GPU, GB"),
        min_ram: Optional[int] = typer.Option(None, "--min-ram", help="Minimum system RAM, GB (default: 2x total VRAM, >= 32)"),
        min_storage: Optional[int] = typer.Option(None, "--min-storage", help="Minimum storage, GB (default 2000)"),
        min_speedup: Optional[float] = typer.Option(None, "--min-speedup", help="Minimum speedup vs a GTX 1080 Ti"),
        deadline: Optional[float] = typer.Option(None, "--deadline-hours", help="Sweep must finish within this many hours"),
        runs: int = typer.Option(8, "--runs", help="Runs in the sweep (for --deadline-hours)"),
        hours: float = typer.Option(7.0, "--hours", help="Hours per run on the GTX 1080 Ti"),
        workload: str = typer.Option("transformer", "--workload", help="transformer | cnn | generic"),
        precision: str = typer.Option("amp", "--precision", help="fp32 | tf32 | amp"),
        model_params: Optional[float] = typer.Option(None, "--model-params",
                                                     help="Model size in parameters, e.g. 15e6 (default: typical for the workload)"),
        gpus: Optional[int] = typer.Option(None, "--gpus", help="Fixed number of identical GPUs (1-4; default: decided)"),
        max_gpus: int = typer.Option(4, "--max-gpus", help="Most GPUs the solver may choose (1-4)"),
        goal: str = typer.Option("expert", "--goal",
                                 help="expert: after speed, spend the budget on build quality; minimum: the cheapest parts that pass"),
        power_limit: Optional[float] = typer.Option(None, "--power-limit",
                                                    help="GPU power limit as a fraction of stock (0.5-1.0; default: stock, "
                                                         "or 80/70 % for several GPUs where that fits a better build)"),
        owned: list[str] = typer.Option([], "--owned", help="Part you own (cost 0; repeat)"),
        pin: list[str] = typer.Option([], "--pin", help="Part that must be used (repeat)"),
        exclude: list[str] = typer.Option([], "--exclude", help="Part to leave out (repeat)"),
        exclude_brand: list[str] = typer.Option([], "--exclude-brand", help="Brand to leave out (repeat)"),
        cooler: Optional[str] = typer.Option(None, "--cooler", help="air | aio"),
        max_wall: Optional[int] = typer.Option(None, "--max-wall-w", help="Cap on sustained wall power, W"),
        used: str = typer.Option("gpu", "--used", help="Which parts may be bought used: none | gpu | all"),
        alternatives: int = typer.Option(0, "--alternatives", help="Also return N builds with other GPU chips"),
        catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
        time_limit: float = typer.Option(10.0, "--time-limit", help="Solver time limit, s"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Recommend the best compatible build for a budget, or the cheapest meeting a target."""
        cat = load_priced_catalog(catalog_dir, use_history=catalog_dir is None)
        for warning in cat.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False)
        extra = {} if min_storage is None else {"min_storage_gb": min_storage}
        req = Request.parse(
            budget=budget, currency=currency, mode=mode, goal=goal, min_vram_gb=min_vram, min_ram_gb=min_ram,
            max_gpus=max_gpus, **extra, min_speedup=min_speedup, deadline_hours=deadline, runs=runs,
            baseline_hours=hours, workload=workload, precision=precision, model_params=model_params, gpu_count=gpus,
            power_fraction=1.0 if power_limit is None else power_limit, suggest_power_limit=power_limit is None,
            owned=tuple(owned), pinned=tuple(pin), excluded=tuple(exclude),
            excluded_brands=tuple(exclude_brand), cooler_type=cooler, max_wall_w=max_wall,
            used=used, alternatives=alternatives,
        )
        planned = pipeline.plan(cat, req, time_limit=time_limit)
        if as_json:
            emit_json(planned.to_json())
        else:
            print_recommendation(planned)
