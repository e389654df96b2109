"""Shared CLI plumbing: JSON output, one-line errors with exit code 2, rich console."""

from __future__ import annotations

import functools
import json
import sys
from datetime import date, datetime
from decimal import Decimal
from enum import Enum
from pathlib import Path
from typing import Any, Callable, TypeVar

import typer
from rich.console import Console

from planner.errors import InfeasibleError, PlannerError

console = Console()
err_console = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def _default(o: Any) -> Any:
    if isinstance(o, Decimal):
        return str(o)
    if isinstance(o, (date, datetime)):
        return o.isoformat()
    if isinstance(o, Enum):
        return o.value
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    if isinstance(o, Path):
        return str(o)
    if hasattr(o, "model_dump"):
        return o.model_dump(mode="json")
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def emit_json(obj: Any) -> None:
    """Print obj as JSON on stdout (Decimal as string, dates ISO)."""
    sys.stdout.write(json.dumps(obj, default=_default, ensure_ascii=False, indent=2) + "\n")


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Print a one-line error on stderr and exit with `code` (2 = bad input)."""
    line = " ".join(str(message).split())
    err_console.print(f"[bold red]error:[/] {line}", highlight=False, markup=True, soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(fn: F) -> F:
    """Turn PlannerError (and bad files) into a one-line message and exit code 2; "no build fits" exits 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InfeasibleError as exc:
            fail(str(exc), code=1)  # a result (nothing fits), not bad input
        except PlannerError as exc:
            fail(str(exc))
        except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
            fail(f"cannot read {getattr(exc, 'filename', None) or exc}: {exc.strerror or exc}")

    return wrapper  # type: ignore[return-value]
