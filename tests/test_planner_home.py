"""Every file the planner writes goes under $PLANNER_HOME when it is set: the price history, the HTTP cache and the
fetched FX rates; nothing lands in the platform's ~/.local/share or ~/.cache (issue 28, item 6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = """
from planner.prices.store import PriceStore
from planner.prices.http_cache import HttpCache
from planner.fx import user_fx_dir
with PriceStore() as store:
    pass
HttpCache().put("http://127.0.0.1/x", 200, {}, b"page")
d = user_fx_dir(); d.mkdir(parents=True, exist_ok=True); (d / "probe").write_text("x")
"""


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_planner_home_holds_every_written_file(tmp_path: Path) -> None:
    home, planner_home = tmp_path / "home", tmp_path / "planner-home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PLANNER_PRICE_DB", "PLANNER_HTTP_CACHE", "XDG_DATA_HOME", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), PLANNER_HOME=str(planner_home))
    subprocess.run([sys.executable, "-c", SCRIPT], env=env, check=True, cwd=tmp_path)
    written = _files(planner_home)
    assert "prices.sqlite" in written
    assert any(f.startswith("cache/http-cache") for f in written)
    assert any(f.startswith("fx/") for f in written)
    assert _files(home) == []  # nothing under ~/.local/share, ~/.cache


def test_explicit_paths_still_win(tmp_path: Path, monkeypatch) -> None:
    from planner.prices.http_cache import default_cache_path
    from planner.prices.store import default_path

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "db.sqlite"))
    monkeypatch.setenv("PLANNER_HTTP_CACHE", str(tmp_path / "cache.sqlite"))
    assert default_path() == tmp_path / "db.sqlite"
    assert default_cache_path() == tmp_path / "cache.sqlite"
    monkeypatch.delenv("PLANNER_PRICE_DB")
    monkeypatch.delenv("PLANNER_HTTP_CACHE")
    assert default_path().parent == tmp_path / "home"
    assert default_cache_path().parent == tmp_path / "home" / "cache"


def test_tests_never_read_the_users_planner_home(tmp_path: Path, repo_dir: Path) -> None:
    """Issue 32, item 6: with a PLANNER_HOME that holds the user's calibrations (and junk where a profile, a price
    history and FX rates go), tests that check modelled figures still pass: conftest points every user path away."""
    home = tmp_path / "users-home"
    env = dict(os.environ, PLANNER_HOME=str(home))
    for args in (["tests/data/calibrate/gtx1080ti-metrics.csv", "--gpu", "GTX 1080 Ti"],
                 ["tests/data/calibrate/rtx4090-wandb.jsonl", "--gpu", "RTX 4090"]):
        subprocess.run([sys.executable, "-m", "planner", "calibrate", *args], env=env, check=True, cwd=repo_dir,
                       capture_output=True)
    assert (home / "calibration.json").is_file()
    (home / "profile.json").write_text('{"model_params": 1}')
    (home / "prices.sqlite").write_text("not a database")
    env.update(PLANNER_PRICE_DB=str(home / "prices.sqlite"), PLANNER_FX_DIR=str(home / "fx"))
    (home / "fx").mkdir()
    (home / "fx" / "eurofxref-daily.xml").write_text("<not-rates/>")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                        "tests/test_perf_cli.py::test_speedup_json_contract", "tests/test_perf_cli.py"],
                       env=env, cwd=repo_dir, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:]
    # and the user's home is untouched by the run
    # nothing written but an empty lock file beside the calibration store (it carries no data)
    assert sorted(p.name for p in home.iterdir() if p.name != "calibration.json.lock") == [
        "calibration.json", "fx", "prices.sqlite", "profile.json"]
