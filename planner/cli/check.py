"""`planner check PART...`: PCPartPicker-style verdicts, PSU sizing and total for a hand-picked build."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.service import CheckReport, check, load_priced_catalog, priced_fixes
from planner.plan_view import UNVERIFIED_MARK
from planner.cli.common import console, emit_json, err_console, handle_errors, print_unverified, styled
from planner.money import format_money
from planner.request import Request
from planner.settings import POWER_FRACTION_MAX, POWER_FRACTION_MIN


def print_report(report: CheckReport, fixes: Optional[dict[str, str]] = None) -> None:
    fixes = fixes or {}
    table = Table(title="Build")
    for col in ("category", "part", "price", "price date / source"):
        table.add_column(col, overflow="fold")  # a narrow terminal wraps a long part id, never cuts it (issue 34 item 9)
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
        mark = f" {UNVERIFIED_MARK}" if report.verified.get(p.id) is False else ""
        table.add_row(p.category, styled("{}{} [dim]({})[/]", p.name, mark, p.id), price, when)
    console.print(table)
    console.print(styled("Total: [bold]{}[/]", report.total))
    if report.sizing:
        s = report.sizing
        console.print(f"Power: sustained {s.sustained_w} W (GPU {s.gpu_w} + CPU {s.cpu_w} + rest {s.rest_w}); "
                      f"training {s.training_w} W (CPU at {s.cpu_training_w} W); worst 100 µs transient "
                      f"{s.transient_w} W; PSU needed: {s.required_sustained_w} W for 80 % training "
                      f"load, {s.required_atx3_w} W ATX 3.x / {s.required_atx2_w} W ATX 2.x with transients"
                      + (f", vendor floor {s.vendor_floor_w} W" if s.vendor_floor_w else "")
                      + f" → recommended {s.recommended_w} W ATX 3.1")
    if report.verdict == "compatible" and report.warnings:
        verdict = styled("[yellow]compatible, with {} warning(s)[/] worth a look before ordering (below, each with "
                         "its fix where one swap clears it)", len(report.warnings))
    elif report.verdict == "compatible" and any(v is False for v in report.verified.values()):
        verdict = styled("[green]compatible[/]: no rule found a problem or a warning, but {} part row(s) are not yet "
                         "re-read against a maker's page (marked {}, what to check below)",
                         sum(v is False for v in report.verified.values()), UNVERIFIED_MARK)
    elif report.verdict == "compatible":
        verdict = styled("[green]compatible[/]: every rule verified, no warning")
    elif report.verdict == "unconfirmed":
        verdict = styled("[yellow]cannot confirm[/]: no rule found a problem, but {} fact(s) that decide whether this "
                         "build works are unknown (listed with ?); check them on the maker's pages before ordering",
                         len(report.cannot_confirm))
    elif report.verdict == "partial":
        verdict = styled("[yellow]partial build[/]: no problem among the parts given, but missing {}; add them to "
                         "check the whole build", ", ".join(report.missing))
    elif report.missing:
        verdict = styled("[red]{} problem(s)[/] (and the list is partial: missing {})", len(report.problems),
                         ", ".join(report.missing))
    else:
        verdict = styled("[red]{} problem(s)[/]", len(report.problems))
    console.print(Text("Verdict: ") + verdict)
    for f in report.problems:
        console.print(styled("  [red]✗ {}[/]: {}", f.rule, f.message))
        if f.rule in fixes:
            console.print(Text(f"    fix: {fixes[f.rule]}"))
    for f in report.warnings:
        console.print(styled("  [yellow]! {}[/]: {}", f.rule, f.message))
        if f.rule in fixes:
            console.print(Text(f"    fix: {fixes[f.rule]}"))
    print_unverified(console, [(p.name, report.unverified_what.get(p.id)) for p in report.build.parts.values()
                               if report.verified.get(p.id) is False])
    for f in report.unverified:
        console.print(styled("  [dim]? {}: {}[/]", f.rule, f.message))


def register(app: typer.Typer) -> None:
    @app.command("check")
    @handle_errors
    def check_cmd(
        parts: list[str] = typer.Argument(..., help="Part ids or unambiguous name fragments (quote multi-word ones); "
                                           "a GPU given twice is two GPUs"),
        gpu_count: int = typer.Option(1, "--gpus", "--gpu-count", help="Number of identical GPUs (1-4)"),
        power_limit: float = typer.Option(POWER_FRACTION_MAX, "--power-limit",
                                          help=f"GPU power limit as a fraction of stock ({POWER_FRACTION_MIN}-{POWER_FRACTION_MAX})"),
        owned: list[str] = typer.Option([], "--owned", help="Parts you already own (cost 0, still checked)"),
        workload: str = typer.Option("transformer", "--workload", help="transformer | cnn | generic"),
        precision: str = typer.Option("amp", "--precision", help="fp32 | tf32 | amp"),
        model_params: Optional[float] = typer.Option(None, "--model-params",
                                                     help="Model size in parameters, e.g. 15e6 (sets the VRAM floor)"),
        used: str = typer.Option("none", "--used", help="Which parts may be priced used: none (default, as recommend: "
                                                   "new, with warranty) | gpu | all"),
        currency: str = typer.Option("EUR", "--currency", help="ISO currency of the prices shown"),
        catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Check parts for compatibility: problems, warnings, power summary and total price.

        Exit code 0: compatible; 1: the build has problems; 2: bad input; 3: no problem found but a deciding fact is
        unknown (cannot confirm). The same GPU id given N times means N GPUs."""
        cat = load_priced_catalog(catalog_dir)
        for warning in cat.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False)
        req = Request.parse(gpu_count=gpu_count, power_fraction=power_limit, owned=tuple(owned), workload=workload,
                            precision=precision, model_params=model_params, used=used, currency=currency)
        report = check(cat, parts, req)
        fixes = (priced_fixes(cat, [p.id for p in report.build.parts.values()],
                              req.model_copy(update={"gpu_count": report.build.gpu_count}))
                 if report.problems or report.warnings else {})
        if as_json:
            emit_json({**report.to_json(), "fixes": fixes})
        else:
            print_report(report, fixes)
        if report.problems:  # a script can tell a build with problems from a compatible one
            raise typer.Exit(1)
        if report.verdict == "unconfirmed":  # ... and one resting on an unknown fact from both
            raise typer.Exit(3)
