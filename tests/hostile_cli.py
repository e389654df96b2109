"""Run the CLI in-process (main(), the real entry point) and capture exit code, stdout and stderr."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run(*args: str) -> Result:
    """planner ARGS in this process; SystemExit becomes the exit code (0 when main returns)."""
    from planner.cli import main

    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return Result(code, out.getvalue(), err.getvalue())


def assert_one_line_error(r: Result, *needles: str) -> None:
    """Bad input: exit 2, no traceback, one error line on stderr naming what was wrong."""
    assert r.code == 2, (r.code, r.text[-2000:])
    assert "Traceback" not in r.text, r.text[-2000:]
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), r.err
    for n in needles:
        assert n.lower() in lines[0].lower(), (n, lines[0])
