"""`planner burnin`: the burn-in plan for a new build (what to run, how long, which logs, the pass criteria)."""

from __future__ import annotations

from typing import Optional

import typer
from rich.markup import escape

from planner.cli.common import emit_json, handle_errors
from planner.cli.common import markup_console as console
from planner.errors import InputError


def burnin_cmd(
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The build's GPU, e.g. 'RTX 5090' (shown in the plan)."),
    gpus: int = typer.Option(1, "--gpus", help="Number of GPUs in the build."),
    system: str = typer.Option("linux", "--system", help="linux or windows: which system log to keep."),
    hours: float = typer.Option(7.0, "--hours", help="Length of one run of your sweep: the burn-in runs that long "
                                "(the check needs at least one hour)."),
    plan_file: Optional[str] = typer.Option(None, "--plan", help="The planned build: a `planner recommend --json` "
                                            "file (its first plan); its GPUs replace --gpu and --gpus."),
    json_out: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
) -> None:
    """Burn-in plan for a new build: what to run, how long, which logs to keep, the pass criteria."""
    from pathlib import Path

    from planner.service import burnin_plan

    if plan_file:
        from planner.share.plan_file import read_plan

        cards = [p for p in read_plan(Path(plan_file))["parts"] if isinstance(p, dict) and p.get("category") == "gpu"]
        if not cards:
            raise InputError(f"{plan_file}: the plan has no GPU part")
        gpu = str(cards[0].get("name") or cards[0].get("id"))
        gpus = sum(int(p.get("quantity") or 1) for p in cards)
    build = f"{gpus} x {gpu}" if gpu else f"{gpus} GPU(s)"
    plan = burnin_plan(build=build, gpus=gpus, system=system.lower(), hours=hours)
    if json_out:
        emit_json(plan.to_json())
        return
    console.print(f"[bold]Burn-in for {escape(plan.build)}[/] ({plan.system})")
    for n, step in enumerate(plan.steps, 1):
        console.print(f"{n}. {escape(step)}", highlight=False)
    console.print("\n[bold]Logs to keep[/]")
    for name, how in plan.logs.items():
        console.print(f"- {name}: {escape(how)}", highlight=False, soft_wrap=True)
    console.print("\n[bold]Pass criteria[/]")
    for c in plan.criteria:
        console.print(f"- {escape(c)}", highlight=False)
    console.print(f"\n[bold]Check[/]: {escape(plan.check)}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("burnin")(handle_errors(burnin_cmd))
