"""Command-line interface: `planner <command>`; every command has --json and exits 2 on bad input."""

from __future__ import annotations

import importlib
import sys

import typer

from planner.cli.common import err_console
from planner.errors import PlannerError

app = typer.Typer(
    name="planner",
    help="Plan an ML training workstation: catalog, compatibility check, best build for a budget, "
    "speed vs a GTX 1080 Ti, cloud vs buy, live prices, sharing and a doctor for unstable machines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Each command group lives in its own module exposing `register(app)`.
_GROUPS = ("catalog", "check", "recommend", "perf", "costs", "prices", "share", "doctor")


def _register_all() -> None:
    for name in _GROUPS:
        try:
            module = importlib.import_module(f"planner.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"planner.cli.{name}":
                continue  # group not built yet
            raise
        module.register(app)


_register_all()


def main() -> None:
    """Console-script entry point: no traceback ever reaches the user."""
    try:
        app()
    except PlannerError as exc:
        err_console.print(f"[bold red]error:[/] {' '.join(str(exc).split())}", highlight=False)
        raise SystemExit(2)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130)
