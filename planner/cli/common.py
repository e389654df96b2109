"""Shared CLI plumbing: JSON output, one-line errors with exit code 2, Rich consoles that never parse user text."""

from __future__ import annotations

import functools
import inspect
import json
import os
import re
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, NoReturn, Optional, TypeVar

import typer
from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from planner.errors import InfeasibleError, InputError, PlannerError
from planner.textsafe import json_text, one_line, rich_escape, terminal_text
from planner.validation import finite_number

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


def _option_names(fn: Callable[..., Any]) -> dict[str, str]:
    """Python parameter name -> the option as typed (`min_vram` -> `--min-vram`)."""
    names = {}
    for name, param in inspect.signature(fn).parameters.items():
        decls = getattr(param.default, "param_decls", None) or ()
        longs = [d for d in decls if d.startswith("--")]
        if type(param.default).__name__ == "ArgumentInfo":  # as --help shows it: its metavar, else its name
            names[name] = getattr(param.default, "metavar", None) or name.upper()
        else:
            names[name] = longs[0] if longs else name.replace("_", "-")
    return names


def check_numbers(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """Every number given on the command line is finite and of a size the planner can mean."""
    names = None
    for key, value in kwargs.items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                names = names or _option_names(fn)
                finite_number(v, names.get(key, key))


# Options through which a command writes what the user names (an export, a catalog directory): a file-system error
# on that path, or under it, is a failure to write; on any other path the user gave, a failure to read.
WRITE_OPTIONS = frozenset({"--out", "--output", "-o"})

# The arguments main() was given, as typed: an empty path ('--out ""') reaches a command as Path("."), the current
# directory, and only the raw arguments tell it apart from a "." the user meant.
raw_args: ContextVar[Optional[tuple[str, ...]]] = ContextVar("raw_args", default=None)


def _path_params(fn: Callable[..., Any], kwargs: dict[str, Any], *, strings: bool = False
                 ) -> Iterator[tuple[str, Path, bool]]:
    """(option as typed, path given, written?) for every path the command was given; with `strings`, also every
    non-empty text argument (some commands take a file or a link in one text argument)."""
    params = inspect.signature(fn).parameters
    names = _option_names(fn)
    for key, value in kwargs.items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, Path) or (strings and isinstance(v, str) and v.strip()):
                decls = set(getattr(getattr(params.get(key), "default", None), "param_decls", None) or ())
                yield names.get(key, key), Path(v), bool(decls & WRITE_OPTIONS)


def check_text(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """Text arguments are Unicode: bytes that are not UTF-8 (Python keeps them as lone surrogates) are refused by
    option, unless the argument names an existing file (a file name may hold any bytes)."""
    names = None
    for key, value in kwargs.items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, str) and any("\ud800" <= ch <= "\udfff" for ch in v):
                try:
                    if os.path.lexists(v):
                        continue
                except (OSError, ValueError):
                    pass
                names = names or _option_names(fn)
                raw = os.fsencode(v)[:40] if len(v) <= 4096 else b"..."
                raise InputError(f"{names.get(key, key)} is not UTF-8 text ({raw!r}) and names no existing file; "
                                 "retype it, or set a UTF-8 locale (LANG=C.UTF-8) in the terminal")


def check_blank_arguments(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """A positional argument typed as "" (or only spaces) is refused by name, before a reader calls the current
    folder a log or looks up a part named ''."""
    params = inspect.signature(fn).parameters
    names = None
    for key, value in kwargs.items():
        if type(getattr(params.get(key), "default", None)).__name__ != "ArgumentInfo":
            continue
        for v in value if isinstance(value, (list, tuple)) else (value,):
            if isinstance(v, str) and not v.strip():
                names = names or _option_names(fn)
                raise InputError(f"{names.get(key, key)} is empty; give a value (see --help)")


def check_empty_paths(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """An empty path ('' typed for a file or directory) is refused, never taken as the current directory."""
    given = raw_args.get()
    if given is None or ("" not in given and not any(a.startswith("-") and a.endswith("=") for a in given)):
        return
    if any(a in (".", "./") or a.endswith(("=.", "=./")) for a in given):
        return  # the user did name the current directory
    for option, path, written in _path_params(fn, kwargs):
        if path == Path(""):
            what = "a file or directory to write" if written else "a file or directory"
            raise InputError(f"{option} is empty; give {what}")


def os_error_message(fn: Callable[..., Any], kwargs: dict[str, Any], exc: OSError) -> str:
    """One line for a file-system error no lower layer turned into a PlannerError: the file, whether it was being read
    or written (from the option that named it), the system's reason and what to do."""
    why = exc.strerror or str(exc)
    target = Path(os.fsdecode(exc.filename))
    where = Path(os.path.abspath(target))
    for option, path, written in _path_params(fn, kwargs, strings=True):
        given = Path(os.path.abspath(path))
        if where == given or given in where.parents:
            if written:
                return f"cannot write {target}: {why}; give {option} a path in an existing, writable directory"
            return f"cannot read {target}: {why}; check {option} names a file you can read"
    return f"cannot open {target}: {why}"


# Model fields (planner.request.Request, the profile) whose option is spelt otherwise on the command line: an error
# about one is said with the option the user typed ("--gpus: ..." rather than "gpu count: ...").
FIELD_OPTIONS: dict[str, tuple[str, ...]] = {
    "gpu_count": ("--gpus",), "min_vram_gb": ("--min-vram",), "min_ram_gb": ("--min-ram",),
    "min_storage_gb": ("--min-storage",), "baseline_hours": ("--hours",), "hours_per_run": ("--hours",),
    "power_fraction": ("--power-limit",), "cooler_type": ("--cooler",), "seq_len": ("--seq", "--seq-len"),
    "excluded_brands": ("--exclude-brand",), "excluded_chip_makers": ("--exclude-chip-maker",),
    "pinned": ("--pin",), "excluded": ("--exclude",), "accepted_warnings": ("--accept-warning",),
}


def said_as_typed(fn: Callable[..., Any], exc: PlannerError) -> str:
    """The error's message, its leading field name replaced by the option of this command that sets it."""
    message = str(exc)
    field = getattr(exc, "field", None)
    if not field:
        return message
    prefix = field.replace("_", " ") + ":"
    if not message.startswith(prefix):
        return message
    options = set(_option_names(fn).values())
    for option in (*FIELD_OPTIONS.get(field, ()), "--" + field.replace("_", "-")):
        if option in options:
            return option + message[len(prefix) - 1:]
    return message


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
