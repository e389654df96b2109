"""Command-line interface: `planner <command>`; every command has --json and exits 2 on bad input.

Command modules are imported only when their command runs: `planner --help` and `--version` load
typer and this file, not OR-Tools or pandas (benchmarks/bench_cli_startup.py measures it).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any, Optional

import typer
from typer.core import TyperGroup

from planner import __version__

# command name -> (module under planner.cli that registers it, one-line help shown by `planner --help`).
# tests/test_cli_lazy.py checks each line against the help the loaded command really has.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "Check parts for compatibility: problems, warnings, power summary and total price."),
    "recommend": ("recommend", "Recommend the best compatible build for a budget, or the cheapest meeting a target."),
    "speedup": ("perf", "Training throughput of GPUs relative to a baseline (default GTX 1080 Ti at fp32), with a range."),
    "sweep": ("perf", "Hours per run, wall time for the whole sweep and energy, on a GPU (or N of them) or a recommended build."),
    "memfit": ("perf", "Training memory for a model, which GPUs fit it and the largest batch each allows."),
    "costs": ("costs", "Rent or buy: time and cost to finish a sweep on a build vs cloud GPUs, with break-even."),
    "catalog": ("catalog", "Browse and validate the component catalog."),
    "fx": ("costs", "ECB euro reference rates: show the rates in use, or fetch today's."),
    "prices": ("prices", "Live prices: extract, refresh, history."),
    "share": ("share", "Share a build: permalink, Markdown (PCPartPicker-style), CSV, JSON; import one back."),
    "doctor": ("doctor", "Diagnose an unstable training machine from its System log (Windows or Linux kernel), nvidia-smi output "
               "and training metrics; watch a run while it trains."),
}


class LazyGroup(TyperGroup):
    """A typer group whose commands are placeholders (name + help) until one is invoked."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        for name, (_, help_text) in COMMANDS.items():
            self.commands.setdefault(name, typer.core.TyperCommand(name=name, help=help_text))
        self._loaded: set[str] = set()

    def load(self, module_name: str) -> None:
        """Import planner.cli.<module_name> and put its real commands in place of the placeholders."""
        if module_name in self._loaded:
            return
        module = importlib.import_module(f"planner.cli.{module_name}")
        holder = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
        module.register(holder)
        group = typer.main.get_group(holder)
        self.commands.update(group.commands)
        self._loaded.add(module_name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and args[0] in COMMANDS:
            self.load(COMMANDS[args[0]][0])
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="planner",
    cls=LazyGroup,
    help="Plan an ML training workstation: catalog, compatibility check, best build for a budget, "
    "speed vs a GTX 1080 Ti, cloud vs buy, live prices, sharing and a doctor for unstable machines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"planner {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(None, "--version", callback=_version, is_eager=True,
                                           help="Print the version and exit."),
    debug: bool = typer.Option(False, "--debug", help="On an internal error, print the full traceback."),
) -> None:
    if debug:
        os.environ["PLANNER_DEBUG"] = "1"


def main() -> None:
    """Console-script entry point: bad input exits 2 with one line; an internal error (a bug) exits 1."""
    from planner.cli.common import run_guarded

    run_guarded(app)
