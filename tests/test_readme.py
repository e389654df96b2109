"""The README's set-up commands and example block stay true: the examples run, exit codes checked."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")


def _blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_exactly_two_setup_commands() -> None:
    first = _blocks()[0].strip().splitlines()
    assert len(first) == 2
    assert first[0].startswith("pip install -e . && planner ")
    assert first[1] == "pip install -e '.[test]' && python -m pytest"
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pip install -q -e '.[test]' && python -m pytest" in ci


def _example_commands() -> list[tuple[str, int]]:
    """(command, expected exit code): a comment starting 'exits N' names a non-zero code."""
    example = README.split("## Example", 1)[1]
    block = re.search(r"```bash\n(.*?)```", example, flags=re.S).group(1)
    out = []
    for line in filter(str.strip, block.splitlines()):
        cmd, _, comment = line.partition("  #")
        code = re.match(r"\s*exits (\d)", comment)
        out.append((cmd.strip(), int(code.group(1)) if code else 0))
    return out


def test_every_example_command_runs(tmp_path, monkeypatch) -> None:
    commands = _example_commands()
    assert len(commands) >= 6
    env = {"PLANNER_PRICE_DB": str(tmp_path / "prices.sqlite")}
    import os

    assert any(code == 1 for _, code in commands)  # "no build fits" is shown with its exit code
    for cmd, code in commands:
        args = shlex.split(cmd)
        assert args[0] == "planner"
        done = subprocess.run([sys.executable, "-c", "from planner.cli import main; main()", *args[1:]],
                              capture_output=True, text=True, cwd=REPO, timeout=300,
                              env={**os.environ, **env, "COLUMNS": "120"})
        assert done.returncode == code, f"{cmd}\n{done.stderr[-2000:]}"
        assert done.stdout.strip(), cmd


def test_the_readme_stands_alone() -> None:
    assert "../shared" not in README and "user-story.md" not in README
    assert "1080 Ti" in README and "8 runs" in README  # the user story is told, not linked


def test_the_first_command_recommends_a_build() -> None:
    main_job = _blocks()[0].strip().splitlines()[0].split("&& ", 1)[1]
    args = shlex.split(main_job)[1:] + ["--json"]
    done = subprocess.run([sys.executable, "-c", "from planner.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    import json

    out = json.loads(done.stdout)
    assert out["status"] == "optimal" and len(out["plans"]) == 3
