"""Command-line interface: `planner <command>`; every command has --json and exits 2 on bad input."""

from __future__ import annotations

import importlib
import os
import sys

import typer

try:  # typer >= 0.2x carries its own copy of click; its exceptions are the ones raised
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older typer on plain click
    from click.exceptions import ClickException, UsageError

from planner.cli.common import err_console, error_line, styled
from planner.errors import PlannerError

app = typer.Typer(
    name="planner",
    help="Plan an ML training workstation: catalog, compatibility check, best build for a budget, "
    "speed vs a GTX 1080 Ti, cloud vs buy, live prices, sharing and a doctor for unstable machines. "
    "Add --debug anywhere to see the traceback of an internal error.",
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


DEBUG_FLAG = "--debug"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Bad input: one line, exit 2. An internal error is a bug: one line and
    exit 1, or its traceback with --debug. No other traceback reaches the user."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in args
    args = [a for a in args if a != DEBUG_FLAG]
    try:
        code = app(args=args, prog_name="planner", standalone_mode=False)
    except UsageError as exc:  # an unknown option, a missing argument, "abc" for a number
        if exc.format_message():  # empty when the help was shown for a bare command group
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            err_console.print(error_line(exc.format_message() + hint), soft_wrap=True)
        raise SystemExit(2)
    except ClickException as exc:
        err_console.print(error_line(exc.format_message()), soft_wrap=True)
        raise SystemExit(exc.exit_code)
    except typer.Abort:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130)
    except PlannerError as exc:
        err_console.print(error_line(exc), soft_wrap=True)
        raise SystemExit(2)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        raise SystemExit(130)
    except SystemExit:
        raise
    except BrokenPipeError:  # the reader went away (`planner catalog list | head`): nothing to report
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        except (OSError, ValueError):
            pass
        raise SystemExit(141)  # 128 + SIGPIPE, as a shell reports it
    except BaseException as exc:  # the boundary: anything else is our bug, said so in one line
        if debug:
            raise
        err_console.print(styled("[bold red]internal error (a bug in planner):[/] {}: {}; rerun with --debug "
                                 "for the traceback", type(exc).__name__, " ".join(str(exc).split())[:300]),
                          soft_wrap=True)
        raise SystemExit(1)
    if isinstance(code, int) and code:
        raise SystemExit(code)
