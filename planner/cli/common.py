"""Shared CLI plumbing: JSON output, one-line errors with exit code 2, Rich consoles that never parse user text."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Iterator
from typing import Any, Callable, NoReturn, Optional, TypeVar

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from planner.cli.argcheck import (check_blank_arguments, check_empty_paths, check_numbers, check_text,
                                  os_error_message, said_as_typed)
from planner.errors import InfeasibleError, PlannerError
from planner.textsafe import json_text, one_line, rich_escape, terminal_text

class SafeConsole(Console):
    """A Rich console that prints only text: every string it lays out and every segment it writes goes through
    terminal_text, so escape sequences and bidi controls from logs, pages, lists or catalogs show escaped.
    Its own styles are added after this (from Segment.style), so colours still work."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(terminal_text(text), **kwargs)

    def render(self, renderable: RenderableType, options: Optional[ConsoleOptions] = None) -> Iterator[Segment]:
        for seg in super().render(renderable, options):
            if seg.control is None and seg.text and terminal_text(seg.text) != seg.text:
                yield Segment(terminal_text(seg.text), seg.style)
            else:
                yield seg


# Markup is off: a part name, a page title or an argument holding `[/]` or `[link=...]` prints as itself.
# Styled lines go through styled(), which escapes every value it is given.
console = SafeConsole(markup=False, highlight=False)
err_console = SafeConsole(stderr=True, markup=False, highlight=False)
# Markup on, for a module that escapes every value it prints itself (the doctor's report).
markup_console = SafeConsole(highlight=False)
F = TypeVar("F", bound=Callable[..., Any])


def _default(o: Any) -> Any:
    """pydantic's JSON mode for what json cannot write (Decimal as its string, dates ISO, enums, sets, paths, models,
    dataclasses): one encoder for the CLI's --json and the models' own model_dump(mode="json")."""
    from pydantic_core import PydanticSerializationError, to_jsonable_python

    try:
        return to_jsonable_python(o)
    except PydanticSerializationError:  # a bug, not the user's input: exit 1 at the boundary
        raise TypeError(f"not JSON serialisable: {type(o).__name__}") from None


def emit_json(obj: Any, *, indent: Optional[int] = 2) -> None:
    """Print obj as JSON on stdout (Decimal as string, dates ISO); control and bidi characters as \\u escapes.
    NaN and infinities are not JSON: refused (nothing printed) in one line naming where, never written."""
    try:
        text = json.dumps(obj, default=_default, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:
        where = _nonfinite_path(obj) or "a value"
        raise PlannerError(f"internal: {where} is not a finite number; no JSON printed (please report this with "
                           "the command)") from None
    sys.stdout.write(json_text(text) + "\n")


def _nonfinite_path(obj: Any, path: str = "$") -> Optional[str]:
    """Where the first NaN or infinity sits in a JSON-able object ("$.results[2].speedup"), if anywhere."""
    if isinstance(obj, float):
        return None if obj == obj and obj not in (float("inf"), float("-inf")) else path
    if isinstance(obj, dict):
        items: Any = ((f"{path}.{k}", v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(obj))
    else:
        return None
    for where, v in items:
        hit = _nonfinite_path(v, where)
        if hit:
            return hit
    return None


def emit_text(text: str) -> None:
    """Print plain text (a Markdown or CSV export, a report) on stdout with control characters shown escaped."""
    sys.stdout.write(terminal_text(text))


def styled(template: str, *values: object) -> Text:
    """A Rich Text from a markup template of our own whose `{}` slots take user values, escaped."""
    return Text.from_markup(template.format(*(rich_escape(v) for v in values)))


def print_unverified(console: Console, rows: list[tuple[str, Optional[str]]]) -> None:
    """The "(unverified)" legend under a parts table and, per unverified row, the fact still open (check, recommend)."""
    from planner.plan_view import UNVERIFIED_MARK, UNVERIFIED_NOTE

    if not rows:
        return
    console.print(Text(f"  {UNVERIFIED_MARK}: {UNVERIFIED_NOTE}"))
    for name, what in rows:  # data/verified_rows.csv `unsettled`
        if what:
            console.print(Text(f"    {name}: still to check: {what}"))


LONG_WORD = 200  # characters: a run without spaces longer than this in an error is an echo of pasted input


def _shortened(text: str) -> str:
    """Each run of LONG_WORD+ characters without a space cut to its start and its length: a 10 000-character argument
    echoed by 'unknown GPU ...' would fill the terminal and bury the one line."""
    def cut(m: re.Match[str]) -> str:
        word = m.group()
        tail = re.search(r"[\'\")\];:,.]*$", word).group()  # type: ignore[union-attr]  # always matches
        return f"{word[:60]}... ({len(word)} characters){tail}"

    return re.sub(r"\S{%d,}" % (LONG_WORD + 1), cut, text)


def error_line(message: object) -> Text:
    return styled("[bold red]error:[/] {}", _shortened(one_line(message)))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-line error on stderr and exit with `code` (2 = bad input)."""
    err_console.print(error_line(message), soft_wrap=True)
    raise typer.Exit(code)


def handle_errors(fn: F) -> F:
    """Turn PlannerError (and bad files) into a one-line message and exit code 2; "no build fits" exits 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            check_numbers(fn, kwargs)
            check_text(fn, kwargs)
            check_blank_arguments(fn, kwargs)
            check_empty_paths(fn, kwargs)
            return fn(*args, **kwargs)
        except InfeasibleError as exc:
            fail(str(exc), code=1)  # a result (nothing fits), not bad input
        except PlannerError as exc:
            fail(said_as_typed(fn, exc))
        except OSError as exc:
            if exc.filename not in (None, ""):
                fail(os_error_message(fn, kwargs, exc))
            if isinstance(exc, (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError)):
                fail(f"a file could not be opened: {exc.strerror or exc}")
            raise  # no file involved (a network error...): the boundary reports it

    return wrapper  # type: ignore[return-value]
