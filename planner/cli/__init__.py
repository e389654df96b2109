"""Command-line interface: `planner <command>`; every command has --json and exits 2 on bad input.

Command modules are imported only when their command runs: `planner --help` and `--version` load
typer and this file, not OR-Tools or pandas (benchmarks/bench_cli_startup.py measures it).
"""

from __future__ import annotations

import errno
import importlib
import os
import re
import sys
from typing import Any, NoReturn, Optional

import typer
from typer.core import TyperGroup

from planner import __version__
from planner.cli.argcheck import raw_args
from planner.cli.common import err_console, error_line, styled
from planner.errors import PlannerError

try:  # typer >= 0.2x carries its own copy of click; its exceptions are the ones raised
    from typer._click.exceptions import ClickException, UsageError
except ImportError:  # pragma: no cover - older typer on plain click
    # mypy sees the two branches bind different classes to one name: the fallback is for a typer without its own copy
    from click.exceptions import ClickException, UsageError  # type: ignore[assignment]

# command name -> (module under planner.cli that registers it, one-line help shown by `planner --help`).
# tests/test_cli_lazy.py checks each line against the help the loaded command really has.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("check", "Check parts for compatibility: problems, warnings, power summary and total price."),
    "recommend": ("recommend", "Recommend the best compatible build for a budget, or the cheapest meeting a target."),
    "speedup": ("perf", "Training throughput of GPUs relative to a baseline (default GTX 1080 Ti at fp32), with a range."),
    "sweep": ("perf", "Hours per run, wall time for the whole sweep and energy, on a GPU (or N of them) or a recommended build."),
    "calibrate": ("calibrate", "Measure, don't guess: store a GPU's throughput from your training log; speedup, sweep, "
                  "recommend and costs use it."),
    "profile": ("profile", "Your workload profile: model size, sequence and batch, precision, runs, hours per run, VRAM "
                "per run, owned parts; recommend, speedup, sweep, costs and the web UI use it unless a flag says "
                "otherwise."),
    "memfit": ("perf", "Training memory for a model, which GPUs fit it and the largest batch each allows."),
    "costs": ("costs", "Rent or buy: time and cost to finish a sweep on a build vs cloud GPUs, with break-even."),
    "catalog": ("catalog", "Browse and validate the component catalog."),
    "fx": ("costs", "ECB euro reference rates: show the rates in use, or fetch today's."),
    "prices": ("prices", "Live prices: extract, refresh, history."),
    "share": ("share", "Share a build: permalink, Markdown (PCPartPicker-style), CSV, JSON; import one back."),
    "doctor": ("doctor", "Diagnose an unstable training machine from its System log (Windows or Linux kernel), nvidia-smi output "
               "and training metrics; watch a run while it trains."),
    "burnin": ("burnin", "Burn-in plan for a build: what to run, how long, which logs to keep and what passes."),
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
    "speed vs a GTX 1080 Ti, cloud vs buy, live prices, sharing and a doctor for unstable machines. "
    "Add --debug anywhere to see the traceback of an internal error.",
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
) -> None:
    """Options before the command; `--debug` anywhere shows the traceback of an internal error."""


DEBUG_FLAG = "--debug"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point. Bad input: one line, exit 2. An internal error is a bug: one line and
    exit 1, or its traceback with --debug. No other traceback reaches the user."""
    args = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None:  # started with standard output closed (`planner ... >&-`): Python gives no stream at all
        if sys.stderr is not None:
            sys.stderr.write("planner: standard output is closed, so no answer can be printed; send it to a file "
                             "or to /dev/null instead\n")
        raise SystemExit(2)
    debug = DEBUG_FLAG in args
    args = [a for a in args if a != DEBUG_FLAG]
    token = raw_args.set(tuple(args))  # handle_errors tells an empty path from a "." the user typed
    try:
        code = app(args=args, prog_name="planner", standalone_mode=False)
    except UsageError as exc:  # an unknown option, a missing argument, "abc" for a number
        if exc.format_message():  # empty when the help was shown for a bare command group
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            if re.fullmatch(r"No such option: -\d[\d.,_eE+-]*", exc.format_message()):  # `prices add PART -5`
                hint = ("; a negative number reads as an option: to give it as a value, put -- before the values "
                        f"(`{exc.ctx.command_path if exc.ctx is not None else 'planner'} -- ...`)" + hint)
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
    except OSError as exc:
        if exc.errno not in _DEVICE_FULL or debug:
            _internal_error(exc, debug)
        # the output (or a file written without a name) hit a full or failing device: the machine, not a bug
        err_console.print(error_line(f"cannot write ({exc.strerror or exc}): free some space, or send the output "
                                     "elsewhere"), soft_wrap=True)
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit
        except (OSError, ValueError, AttributeError):
            pass
        raise SystemExit(2)
    except BaseException as exc:  # the boundary: anything else is our bug, said so in one line
        _internal_error(exc, debug)
    finally:
        raw_args.reset(token)
    if isinstance(code, int) and code:
        raise SystemExit(code)


_DEVICE_FULL = {errno.ENOSPC, errno.EIO, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


def _internal_error(exc: BaseException, debug: bool) -> NoReturn:
    """Our bug: one line and exit 1, or the traceback with --debug."""
    if debug:
        raise exc
    err_console.print(styled("[bold red]internal error (a bug in planner):[/] {}: {}; rerun with --debug "
                             "for the traceback", type(exc).__name__, " ".join(str(exc).split())[:300]),
                      soft_wrap=True)
    raise SystemExit(1)
