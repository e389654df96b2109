"""Every PLANNER_* variable is read in one place (planner.settings.Settings, pydantic-settings), per call, validated at
the edge: a bad value is one line and exit 2; bounds and the version are written once (issue 35, item 5)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from planner import settings
from planner.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*(ROOT / "planner").rglob("*.py"), *(ROOT / "ui").glob("*.py"), ROOT / "app.py", ROOT / "serve.py"]


def _env_reads(path: Path) -> list[str]:
    """os.environ.get("PLANNER_...") / os.getenv / os.environ["PLANNER_..."] outside settings.py."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and re.fullmatch(r"PLANNER_[A-Z_]+", node.value):
            out.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value}")
    return out


def test_no_module_but_settings_reads_a_planner_variable() -> None:
    bad = [hit for f in SOURCES if f.name != "settings.py" for hit in _env_reads(f)]
    assert not bad, f"read it through planner.settings.current(): {bad}"


def test_the_settings_name_every_variable_the_docs_and_tests_use() -> None:
    fields = set(settings.Settings.model_fields)
    assert {"home", "data_dir", "fx_dir", "http_cache", "price_db", "public_url"} <= fields


def test_settings_are_read_per_call(monkeypatch, tmp_path) -> None:
    """The autouse PLANNER_HOME fixture (tests/conftest.py) and a test's own value both hold at once: nothing cached."""
    from planner.prices.store import default_path
    from planner.resources import user_cache_dir, user_data_dir

    for name in ("a", "b"):
        monkeypatch.setenv("PLANNER_HOME", str(tmp_path / name))
        monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
        assert user_data_dir() == tmp_path / name
        assert user_cache_dir() == tmp_path / name / "cache"
        assert default_path() == tmp_path / name / "prices.sqlite"
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "own.sqlite"))
    assert default_path() == tmp_path / "own.sqlite"


def test_an_empty_variable_counts_as_unset(monkeypatch, tmp_path) -> None:
    from planner.catalog.load import default_data_dir
    from planner.resources import SHIPPED_DATA_DIR

    monkeypatch.setenv("PLANNER_DATA_DIR", "")
    monkeypatch.setenv("PLANNER_PUBLIC_URL", "   ")
    monkeypatch.delenv("PLANNER_BASE_URL", raising=False)
    assert default_data_dir() == SHIPPED_DATA_DIR
    assert settings.public_url() is None


def test_the_older_public_url_name_is_read_too(monkeypatch) -> None:
    monkeypatch.delenv("PLANNER_PUBLIC_URL", raising=False)
    monkeypatch.setenv("PLANNER_BASE_URL", "https://planner.example.org")
    assert settings.public_url() == "https://planner.example.org"
    monkeypatch.setenv("PLANNER_PUBLIC_URL", "https://new.example.org")
    assert settings.public_url() == "https://new.example.org"  # the current name wins


@pytest.mark.parametrize("name, value, says", [
    ("PLANNER_PUBLIC_URL", "ftp://planner.example.org", "must start with http:// or https://"),
    ("PLANNER_BASE_URL", "planner.example.org", "must start with http:// or https://"),
    ("PLANNER_DATA_DIR", "/no/such/catalog/folder", "is not a directory"),
    ("PLANNER_HOME", "   ", "is not a path"),
])
def test_a_bad_value_is_one_line_naming_the_variable(monkeypatch, name, value, says) -> None:
    monkeypatch.delenv("PLANNER_PUBLIC_URL", raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(InputError) as err:
        settings.current()
    text = str(err.value)
    assert text.startswith(f"{name}=") and says in text and "\n" not in text


def test_the_cli_exits_2_with_one_line_on_a_bad_variable(monkeypatch, capsys) -> None:
    from planner.cli import main

    monkeypatch.setenv("PLANNER_DATA_DIR", "/no/such/catalog/folder")
    with pytest.raises(SystemExit) as exc:
        main(["catalog", "list", "--category", "psu"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "PLANNER_DATA_DIR" in err and "Traceback" not in err


def test_the_version_is_written_once() -> None:
    import tomllib

    import planner

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"]["attr"] == "planner.settings.VERSION"
    assert planner.__version__ == settings.VERSION
    literal = [f"{f.relative_to(ROOT)}" for f in SOURCES if f.name != "settings.py"
               and re.search(rf"['\"]{re.escape(settings.VERSION)}['\"]", f.read_text(encoding="utf-8"))]
    assert not literal


def test_one_user_agent_for_every_client() -> None:
    from planner import fx
    from planner.prices import fetch

    assert fx.USER_AGENT is fetch.USER_AGENT is settings.USER_AGENT
    assert settings.VERSION in settings.USER_AGENT


def _number_literals(path: Path, value: float) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{n.lineno}" for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.Constant) and type(n.value) in (int, float) and n.value == value]


def test_the_hot_gpu_temperature_is_one_constant() -> None:
    files = [*(ROOT / "planner" / "doctor").glob("*.py"), ROOT / "planner" / "cli" / "doctor.py",
             ROOT / "planner" / "cli" / "burnin.py", *(ROOT / "ui").glob("*.py")]
    hits = [h for f in files for h in _number_literals(f, settings.GPU_HOT_C)]
    texts = [f"{f.relative_to(ROOT)}" for f in files if re.search(r"\b83 ?°C", f.read_text(encoding="utf-8"))]
    assert not hits and not texts, hits + texts


def test_gpu_count_bounds_come_from_settings() -> None:
    """A build's GPU count (1..MAX_GPUS) and a log's (1..MAX_GPUS_SEEN) are not restated as numbers."""
    from planner.costs.compare import CostParams
    from planner.doctor import burnin_plan, smi
    from planner.share.importing import _list_inputs
    from planner.errors import ShareError
    from planner.request import Request

    assert smi.MAX_GPUS == settings.MAX_GPUS_SEEN
    with pytest.raises(InputError, match=str(settings.MAX_GPUS_SEEN)):
        burnin_plan.burnin_plan("b", settings.MAX_GPUS_SEEN + 1, run_hours=1, run_hours_high=2, sweep_hours=8, runs=8)
    _list_inputs(Request(), settings.MAX_GPUS, (), None)
    with pytest.raises(ShareError, match=f"1 to {settings.MAX_GPUS} "):
        _list_inputs(Request(), settings.MAX_GPUS + 1, (), None)
    assert CostParams.__dataclass_fields__["max_gpus"].default == settings.DEFAULT_MAX_RENTED_GPUS
    for f in (ROOT / "planner" / "share" / "importing.py", ROOT / "planner" / "share" / "export.py",
              ROOT / "ui" / "pages_check.py"):
        assert not re.search(r"<= ?4\b|max_value=4\b", f.read_text(encoding="utf-8")), f
