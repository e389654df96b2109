"""Error hierarchy: every failure a user can cause has a class and a one-line, actionable message."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import ValidationError


class PlannerError(Exception):
    """Base class; str(err) is the one-line message shown to the user."""


class InputError(PlannerError):
    """Bad user input (CLI arguments, form values, uploaded files). `field` names the model field at fault when the
    message starts with it (`validation_message`), so a front end can say it as its user typed it (`--gpus`)."""

    def __init__(self, message: object = "", *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class CatalogError(PlannerError):
    """A catalog file or row is invalid; the message names the file, the row and the field."""


class UnknownPartError(InputError):
    """A part id or name fragment matches nothing, or is ambiguous."""


class CurrencyError(InputError):
    """An unknown currency or a missing conversion rate."""


class InfeasibleError(PlannerError):
    """No build satisfies the requirements."""


class FetchError(PlannerError):
    """A page or feed could not be fetched (network, robots, blocked, not allowed)."""


class ShareError(InputError):
    """A permalink token or shared list is tampered with, truncated, oversized or unknown."""


def validation_message(exc: "ValidationError", what: str = "value") -> str:
    """One line for the first error of a pydantic ValidationError: our own PlannerError message when a
    validator raised one, else 'field: problem (got value)'."""
    err = exc.errors()[0]
    cause = err.get("ctx", {}).get("error")
    if isinstance(cause, PlannerError):
        return str(cause)
    where = ".".join(str(p) for p in err["loc"]).replace("_", " ") or what
    shown = repr(err.get("input"))
    shown = shown if len(shown) <= 60 else shown[:60] + "..."
    # a bound written as a fraction (1/60 h) reads as 0.01667, not 0.016666666666666666
    msg = re.sub(r"\d+\.\d{6,}", lambda m: f"{float(m.group()):.4g}", str(err["msg"]))
    return f"{where}: {msg} (got {shown})"


def validation_field(exc: "ValidationError") -> str | None:
    """The top-level field of the first error of a pydantic ValidationError (None for a model-wide one)."""
    loc = exc.errors()[0].get("loc") or ()
    return str(loc[0]) if loc else None
