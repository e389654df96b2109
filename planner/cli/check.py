"""`planner check PART...`: PCPartPicker-style verdicts, PSU sizing and total for a hand-picked build."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from planner.catalog import load_catalog
from planner.checker import CheckReport, check_parts
from planner.cli.common import console, emit_json, handle_errors
from planner.errors import InputError
from planner.money import format_money


def print_report(report: CheckReport) -> None:
    table = Table(title="Build")
    for col in ("category", "part", "price", "price date / source"):
        table.add_column(col)
    for p in report.build.parts.values():
        o = report.offers.get(p.id)
        if p.id in report.owned:
            price, when = "owned", ""
        elif o is None:
            price, when = "—", "no price"
        else:
            qty = report.build.gpu_count if p.category == "gpu" else 1
            price = (f"{qty} x " if qty > 1 else "") + format_money(o.price, o.currency)
            when = f"{o.observed_on}, {o.source}, {o.retailer}"
        table.add_row(p.category, f"{p.name} [dim]({p.id})[/]", price, when)
    console.print(table)
    console.print(f"Total: [bold]{report.total}[/]")
    if report.sizing:
        s = report.sizing
        console.print(f"Power: sustained {s.sustained_w} W (GPU {s.gpu_w} + CPU {s.cpu_w} + rest {s.rest_w}); "
                      f"worst 100 µs transient {s.transient_w} W; PSU needed: {s.required_sustained_w} W for 80 % "
                      f"load, {s.required_atx3_w} W ATX 3.x / {s.required_atx2_w} W ATX 2.x with transients"
                      + (f", vendor floor {s.vendor_floor_w} W" if s.vendor_floor_w else "")
                      + f" → recommended {s.recommended_w} W ATX 3.1")
    if report.verdict == "compatible":
        verdict = "[green]compatible[/]"
    elif report.verdict == "partial":
        verdict = (f"[yellow]partial build[/]: no problem among the parts given, but missing "
                   f"{', '.join(report.missing)}; add them to check the whole build")
    else:
        verdict = f"[red]{len(report.problems)} problem(s)[/]"
        if report.missing:
            verdict += f" (and the list is partial: missing {', '.join(report.missing)})"
    console.print(f"Verdict: {verdict}")
    for f in report.problems:
        console.print(f"  [red]✗ {f.rule}[/]: {f.message}")
    for f in report.warnings:
        console.print(f"  [yellow]! {f.rule}[/]: {f.message}")
    for f in report.unverified:
        console.print(f"  [dim]? {f.rule}: {f.message}[/]")


def register(app: typer.Typer) -> None:
    @app.command("check")
    @handle_errors
    def check_cmd(
        parts: list[str] = typer.Argument(..., help="Part ids or unambiguous name fragments (quote multi-word ones)"),
        gpu_count: int = typer.Option(1, "--gpu-count", help="Number of identical GPUs"),
        power_limit: float = typer.Option(1.0, "--power-limit", help="GPU power limit as a fraction of stock (0.3-1.0)"),
        owned: list[str] = typer.Option([], "--owned", help="Part ids you already own (cost 0, still checked)"),
        workload: str = typer.Option("transformer", "--workload", help="transformer | cnn | generic"),
        precision: str = typer.Option("amp", "--precision", help="fp32 | tf32 | amp"),
        model_params: Optional[float] = typer.Option(None, "--model-params",
                                                     help="Model size in parameters, as for recommend (e.g. 15e6)"),
        catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Check parts for compatibility: problems, warnings, power summary and total price."""
        cat = load_catalog(catalog_dir, price_db=True)
        chosen = [cat.find(q) for q in parts]
        owned_ids = [cat.find(q).id for q in owned]
        if workload not in ("transformer", "cnn", "generic"):
            raise InputError(f"--workload must be transformer, cnn or generic (got {workload!r})")
        if precision not in ("fp32", "tf32", "amp"):
            raise InputError(f"--precision must be fp32, tf32 or amp (got {precision!r})")
        if model_params is not None and not (0 < model_params <= 1e13):
            raise InputError(f"--model-params must be a positive number of parameters up to 1e13 (got {model_params})")
        report = check_parts(cat, chosen, gpu_count=gpu_count, power_fraction=power_limit, owned=owned_ids,
                             workload=workload, precision=precision, model_params=model_params)
        if as_json:
            emit_json(report.to_json())
        else:
            print_report(report)
