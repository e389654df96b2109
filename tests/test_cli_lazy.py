"""CLI start-up: `--help` and `--version` load no command module; the help table matches the real commands."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from planner.cli import COMMANDS, LazyGroup, app

PROBE = ("import sys; sys.argv = ['planner', {arg!r}]\n"
         "from planner.cli import main\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('ortools', 'pandas', 'numpy', 'pydantic')"
         " or m.startswith('planner.cli.') and m not in ('planner.cli.common', 'planner.cli.argcheck'))\n"
         "print('HEAVY', heavy)")


@pytest.mark.parametrize("arg", ["--help", "--version"])
def test_help_and_version_import_no_command_module(arg: str) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE.format(arg=arg)], capture_output=True, text=True, check=True)
    line = [x for x in out.stdout.splitlines() if x.startswith("HEAVY")][-1]
    assert line == "HEAVY []", line


def test_version_prints_the_package_version() -> None:
    from planner import __version__

    out = subprocess.run([sys.executable, "-c", PROBE.format(arg="--version")], capture_output=True, text=True)
    assert out.stdout.splitlines()[0] == f"planner {__version__}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_placeholder_help_is_the_commands_own_help(name: str) -> None:
    group = typer.main.get_group(app)
    assert isinstance(group, LazyGroup)
    group.load(COMMANDS[name][0])
    real = group.commands[name]
    assert not isinstance(real, typer.core.TyperCommand) or real.callback is not None
    first_line = (real.help or "").strip().splitlines()[0]
    assert first_line == COMMANDS[name][1]


def test_every_registered_command_is_listed() -> None:
    group = typer.main.get_group(app)
    for module in {m for m, _ in COMMANDS.values()}:
        group.load(module)
    assert set(group.commands) == set(COMMANDS)


RECOMMEND_PROBE = ("import sys; sys.argv = ['planner', 'recommend', '--budget', '3000', '--json']\n"
                   "from planner.cli import main\n"
                   "try:\n    main()\nexcept SystemExit:\n    pass\n"
                   "print('SCRAPER', sorted(m for m in sys.modules if m.split('.')[0] in ('extruct', 'bs4', 'w3lib')"
                   " or m in ('planner.prices.extract', 'planner.prices.fetch')))")


def test_a_plan_does_not_import_the_html_scraper(tmp_path) -> None:
    """recommend reads the price history but never parses a page: extruct, w3lib and BeautifulSoup stay unloaded
    (they cost about half a second of every plan when planner.prices imported its extractor eagerly; lxml.etree
    itself is the FX reader's)."""
    import os

    env = {**os.environ, "PLANNER_PRICE_DB": str(tmp_path / "prices.sqlite")}
    out = subprocess.run([sys.executable, "-c", RECOMMEND_PROBE], capture_output=True, text=True, env=env, cwd=tmp_path)
    line = [x for x in out.stdout.splitlines() if x.startswith("SCRAPER")][-1]
    assert line == "SCRAPER []", line
