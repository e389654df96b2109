"""Defaults a user can change are defined once (planner.settings): the Request, the CLI's options, the web UI's
widgets and the service read them there, so the CLI and the UI cannot drift apart again (issue 28, item 5)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import typer

from planner import settings
from planner.request import Request

ROOT = Path(__file__).resolve().parents[1]


def _params(module: str, command: str) -> dict:
    import importlib

    holder = typer.Typer(add_completion=False)
    importlib.import_module(f"planner.cli.{module}").register(holder)
    group = typer.main.get_group(holder) if len(holder.registered_commands) > 1 else typer.main.get_command(holder)
    cmd = group.commands[command] if hasattr(group, "commands") else group
    return {p.name: p.default for p in cmd.params}


def test_request_defaults_come_from_settings() -> None:
    r = Request()
    assert (r.runs, r.baseline_hours, r.min_storage_gb) == (settings.DEFAULT_RUNS, settings.DEFAULT_BASELINE_HOURS,
                                                            settings.DEFAULT_MIN_STORAGE_GB)
    assert (r.max_gpus, r.alternatives, r.power_fraction) == (settings.MAX_GPUS, settings.DEFAULT_ALTERNATIVES,
                                                              settings.POWER_FRACTION_MAX)
    with pytest.raises(Exception):
        Request(power_fraction=settings.POWER_FRACTION_MIN - 0.01)
    with pytest.raises(Exception):
        Request(gpu_count=settings.MAX_GPUS + 1)


def test_recommend_options_default_to_settings() -> None:
    p = _params("recommend", "recommend")
    assert p["time_limit"] == settings.SOLVER_TIME_LIMIT_S
    assert p["max_gpus"] == settings.MAX_GPUS
    assert p["alternatives"] == settings.DEFAULT_ALTERNATIVES
    assert p["runs"] is None  # the stored profile's runs, else settings.DEFAULT_RUNS (issue 32 item 1)
    assert p["hours"] is None  # the calibrated 1080 Ti log's run time, else settings.DEFAULT_BASELINE_HOURS (issue 25)


def test_web_ui_widgets_default_to_settings() -> None:
    from ui.state import DEFAULTS, RANGES

    assert DEFAULTS["in_alts"] == settings.UI_ALTERNATIVES
    assert RANGES["in_gpus"] == (0, settings.MAX_GPUS)
    assert RANGES["in_power"] == (round(settings.POWER_FRACTION_MIN * 100), round(settings.POWER_FRACTION_MAX * 100))
    assert RANGES["in_alts"][1] == settings.MAX_ALTERNATIVES
    assert (DEFAULTS["in_runs"], DEFAULTS["in_hours"]) == (settings.DEFAULT_RUNS, settings.DEFAULT_BASELINE_HOURS)


def _literal_time_limits(path: Path) -> list[str]:
    """Calls or signatures that set a solver time limit with a number instead of settings.SOLVER_TIME_LIMIT_S."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.keyword) and node.arg == "time_limit" and isinstance(node.value, ast.Constant):
            out.append(f"{path.name}:{node.value.lineno}")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args.args + node.args.kwonlyargs
            defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults + node.args.kw_defaults
            for a, d in zip(args, defaults):
                if a.arg == "time_limit" and isinstance(d, ast.Constant):
                    out.append(f"{path.name}:{node.lineno}")
    return out


def test_no_front_end_or_core_module_hard_codes_the_solver_time_limit() -> None:
    files = [*(ROOT / "planner").rglob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py", ROOT / "serve.py"]
    bad = [hit for f in files for hit in _literal_time_limits(f)]
    assert not bad, f"use planner.settings.SOLVER_TIME_LIMIT_S: {bad}"


def test_chip_makers_are_listed_once() -> None:
    """The list of chip makers is spelled out only in settings (the catalog's Literal type aside)."""
    spelled = []
    for f in [*(ROOT / "planner").rglob("*.py"), *(ROOT / "ui").glob("*.py")]:
        if f.name == "settings.py":
            continue
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Tuple, ast.List)) and [getattr(e, "value", None) for e in node.elts] == list(
                    settings.CHIP_MAKERS):
                spelled.append(f"{f.relative_to(ROOT)}:{node.lineno}")
    assert not spelled, spelled
