"""Command-line arguments checked before a command runs, and its errors said with the options the user typed."""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Optional

from planner.errors import InputError, PlannerError
from planner.validation import finite_number


def option_names(fn: Callable[..., Any]) -> dict[str, str]:
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


def given_values(kwargs: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """(parameter, value) for every value a command was given; a repeated option's values one by one."""
    for key, value in kwargs.items():
        for v in value if isinstance(value, (list, tuple)) else (value,):
            yield key, v


def check_numbers(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """Every number given on the command line is finite and of a size the planner can mean."""
    names = None
    for key, v in given_values(kwargs):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            names = names or option_names(fn)
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
    names = option_names(fn)
    for key, v in given_values(kwargs):
        if isinstance(v, Path) or (strings and isinstance(v, str) and v.strip()):
            decls = set(getattr(getattr(params.get(key), "default", None), "param_decls", None) or ())
            yield names.get(key, key), Path(v), bool(decls & WRITE_OPTIONS)


def check_text(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """Text arguments are Unicode: bytes that are not UTF-8 (Python keeps them as lone surrogates) are refused by
    option, unless the argument names an existing file (a file name may hold any bytes)."""
    names = None
    for key, v in given_values(kwargs):
        if isinstance(v, str) and any("\ud800" <= ch <= "\udfff" for ch in v):
            try:
                if os.path.lexists(v):
                    continue
            except (OSError, ValueError):
                pass
            names = names or option_names(fn)
            raw = os.fsencode(v)[:40] if len(v) <= 4096 else b"..."
            raise InputError(f"{names.get(key, key)} is not UTF-8 text ({raw!r}) and names no existing file; "
                             "retype it, or set a UTF-8 locale (LANG=C.UTF-8) in the terminal")


def check_blank_arguments(fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
    """An argument or option typed as "" (or only spaces) is refused by name, before a reader calls the current
    folder a log, a part named '' is looked up, or an option is dropped as if not given (`--currency ""`)."""
    params = inspect.signature(fn).parameters
    names = None
    for key, v in given_values(kwargs):
        kind = type(getattr(params.get(key), "default", None)).__name__
        if kind in ("ArgumentInfo", "OptionInfo") and isinstance(v, str) and not v.strip():
            names = names or option_names(fn)
            what = "give a value (see --help)" if kind == "ArgumentInfo" else "give a value or leave the option out"
            raise InputError(f"{names.get(key, key)} is empty; {what}")


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
    options = set(option_names(fn).values())
    for option in (*FIELD_OPTIONS.get(field, ()), "--" + field.replace("_", "-")):
        if option in options:
            return option + message[len(prefix) - 1:]
    return message
