"""Error hierarchy: every failure a user can cause has a class and a one-line, actionable message."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from pydantic import ValidationError


class PlannerError(Exception):
    """Base class; str(err) is the one-line message shown to the user."""


class InputError(PlannerError):
    """Bad user input (CLI arguments, form values, uploaded files)."""


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
    return f"{where}: {err['msg']} (got {shown})"
