"""A Markdown table for the benchmarks' printouts (stdlib only: scripts that time other trees import it freely)."""

from __future__ import annotations

from typing import Any


def table(headers: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table of the rows, for docs/benchmarks.md."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join(" --- " for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)
