"""Shared fixtures: paths to the repo, its data and the read-only ../shared materials."""

from __future__ import annotations

from pathlib import Path

import os

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


# Every variable through which the planner finds the user's own files (planner/resources.py, prices/store.py,
# prices/http_cache.py, fx.py, catalog/load.py) or a user's server (share links), plus the platform directories
# platformdirs falls back on. Tests never read the user's data (issue 32, item 6).
_USER_PATH_VARS = ("PLANNER_DATA_DIR", "PLANNER_FX_DIR", "PLANNER_HTTP_CACHE", "PLANNER_PRICE_DB", "PLANNER_BASE_URL")


def _isolate_user_paths(mp: pytest.MonkeyPatch, root: Path) -> None:
    for var in _USER_PATH_VARS:
        mp.delenv(var, raising=False)
    mp.setenv("PLANNER_HOME", str(root / "planner-home"))
    mp.setenv("XDG_DATA_HOME", str(root / "xdg-data"))
    mp.setenv("XDG_CACHE_HOME", str(root / "xdg-cache"))
    mp.setenv("XDG_CONFIG_HOME", str(root / "xdg-config"))


@pytest.fixture(scope="session", autouse=True)
def _no_user_paths_in_session(tmp_path_factory):
    """Module and session fixtures (the catalog, fits) already run with the user's paths pointed away."""
    with pytest.MonkeyPatch.context() as mp:
        _isolate_user_paths(mp, tmp_path_factory.mktemp("user-paths"))
        yield


@pytest.fixture(autouse=True)
def _no_user_paths(monkeypatch, tmp_path_factory):
    """Each test gets an empty PLANNER_HOME of its own: a calibration, profile or price history in the user's
    PLANNER_HOME (or one written by another test) never changes an answer a test checks. A test that wants a
    home of its own sets PLANNER_HOME itself, which wins."""
    _isolate_user_paths(monkeypatch, tmp_path_factory.mktemp("home"))


@pytest.fixture
def home(_no_user_paths) -> Path:
    """The test's own empty PLANNER_HOME (set by _no_user_paths), for a test that reads or writes files in it."""
    return Path(os.environ["PLANNER_HOME"])


@pytest.fixture(autouse=True)
def _headline_rule_on_every_answer(monkeypatch):
    """Issue 32, item 2: every answer the suite builds through the service (CLI in-process, web UI, scripts) keeps
    the headline rule (planner.service.headline): the pipeline's side-by-side step sees the recommendation, the
    request and the target, so it is wrapped here to check them first; `describe` is wrapped to check the typed
    Answer it returns (every list of builds the user reads)."""
    from planner.service import headline, uncertainty

    original = uncertainty.side_by_side

    def checked(rec, req, target=None):
        broken = headline.violations(rec, req, headline.shown_plans(rec, target[0] if target else None))
        assert not broken, "headline rule broken: " + "; ".join(broken)
        return original(rec, req, target)

    monkeypatch.setattr(uncertainty, "side_by_side", checked)

    from planner.service import pipeline

    described = pipeline.describe

    def checked_answer(*args, **kw):  # the same rule on the typed Answer the user reads (every list of builds)
        answer = described(*args, **kw)
        broken = headline.answer_violations(answer)
        assert not broken, "headline rule broken in the answer: " + "; ".join(broken)
        return answer

    monkeypatch.setattr(pipeline, "describe", checked_answer)


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


def require_shared() -> Path:
    """../shared, or skip with one line when it is absent outside CI; under CI (CI set) its absence fails."""
    if SHARED.is_dir():
        return SHARED
    if os.environ.get("CI"):
        pytest.fail(f"../shared must sit beside the repo under CI (looked in {SHARED})")
    pytest.skip(f"../shared is absent (looked in {SHARED}); CI runs these tests")


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return require_shared()


@pytest.fixture(scope="module")
def cat():
    """The shipped catalog (data/), without any user price history."""
    from planner.catalog.load import SHIPPED_DATA_DIR, load_catalog

    return load_catalog(SHIPPED_DATA_DIR)


@pytest.fixture(scope="module")
def chips():
    """The GPU chip table (data/gpu_chips.csv), as the speed model reads it."""
    from planner.catalog.load import load_chips

    return load_chips()


@pytest.fixture(scope="module")
def rows(chips):
    """The speed model's calibration rows (every source in data/calibration/)."""
    from planner.perf.sources import all_rows

    return all_rows(chips)


def fit_inputs_digest() -> str:
    """What a speed-model fit depends on: the calibration rows, the chip tables, the shipped parameters and the
    perf package's code. Equal digests give equal fits, so a cached result may stand in for a refit."""
    import hashlib

    h = hashlib.sha256()
    files = [*sorted((REPO / "data" / "calibration").glob("*")), *sorted((REPO / "data").glob("gpu_*.csv")),
             REPO / "data" / "perf_params.json", *sorted((REPO / "planner" / "perf").glob("*.py"))]
    for f in files:
        if f.is_file():
            h.update(f.name.encode())
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


def cached_fit(request, name: str, compute):
    """`compute()` (JSON-serialisable), kept in pytest's cache under the fit inputs' digest: the slow suite refits
    only when the data or the model's code changed (`pytest --cache-clear` forces a refit)."""
    cache = getattr(request.config, "cache", None)
    key = f"planner/fits/{name}/{fit_inputs_digest()}"
    if cache is not None:
        hit = cache.get(key, None)
        if hit is not None:
            return hit
    value = compute()
    if cache is not None:
        cache.set(key, value)
    return value


@pytest.fixture
def no_price_history(monkeypatch, tmp_path):
    """CLI commands read the shipped data/ and no user price DB."""
    from helpers_parts import isolate_cli_env

    isolate_cli_env(monkeypatch, tmp_path)


def assert_own_loso_fold(chips, source: str, others: tuple[str, ...] = ("nvidia-dle", "gpu-insights-v2")) -> None:
    """Holding `source` out, its predictions come from the other sources only: multiplying its measurements by 3
    leaves them unchanged (a small training set of two other sources keeps this fast)."""
    from dataclasses import replace

    from planner.perf.model import REFERENCE_CHIP
    from planner.perf.sources import load_independent_rows
    from planner.perf.validate import cross_validate

    ref = chips[REFERENCE_CHIP]
    rows = [r for r in load_independent_rows(chips=chips) if r.source in (source, *others)]
    assert {r.source for r in rows} == {source, *others}
    tripled = [replace(r, ratio=r.ratio * 3) if r.source == source else r for r in rows]
    by_source = lambda r: r.source  # noqa: E731
    held = [h for h in cross_validate(rows, ref, by_source, variant="v3") if h.row.source == source]
    held3 = [h for h in cross_validate(tripled, ref, by_source, variant="v3") if h.row.source == source]
    assert len(held) == len(held3) == sum(r.source == source for r in rows) > 0
    for a, b in zip(held, held3):
        assert a.predicted == pytest.approx(b.predicted, rel=1e-9)
        assert b.row.ratio == pytest.approx(3 * a.row.ratio)


def source_csv_rows(source: str) -> list[dict[str, str]]:
    """The rows of one source as written in data/calibration/independent-benchmarks.csv (used or not)."""
    import csv

    from planner.perf.sources import INDEPENDENT_CSV

    with INDEPENDENT_CSV.open(newline="", encoding="utf-8") as fh:
        return [r for r in csv.DictReader(fh) if r["source"] == source]


def assert_amp_row_against(r: dict[str, str], reference: str) -> None:
    """What every row of an MLPerf source carries: amp against `reference`'s amp run, a batch and a sourced model
    size, per-GPU units, and no URL of a source the issue keeps back for judging."""
    from test_perf_physics import FORBIDDEN

    assert r["precision"] == "amp" and r["reference"] == f"{reference}@amp"
    assert int(r["batch_size"]) > 0 and float(r["model_params"]) > 0 and r["model_params_source"]
    assert "per GPU" in r["unit"]
    assert not any(f.lower() in r["url"].lower() for f in FORBIDDEN)


def assert_loaded_as_ratios_to(raw: list[dict[str, str]], chips, source: str, reference: str,
                               bounds: tuple[float, float]) -> list:
    """The loader turns each used row into throughput / the reference run's of the same workload, with both sides'
    batches; `bounds` is a plausibility range for the ratio. Returns the loaded rows."""
    from planner.perf.sources import load_independent_rows

    rows = [r for r in load_independent_rows(chips=chips) if r.source == source]
    by_key = {(r["workload"], r["chip"]): r for r in raw}
    for row in rows:
        mine, ref = by_key[(row.workload, row.chip.id)], by_key[(row.workload, reference)]
        assert row.ratio == pytest.approx(float(mine["throughput"]) / float(ref["throughput"]))
        assert row.batch_ratio == pytest.approx(float(mine["batch_size"]) / float(ref["batch_size"]))
        assert (row.ref_chip.id, row.ref_precision, row.precision) == (reference, "amp", "amp")
        assert bounds[0] < row.ratio < bounds[1]
    return rows


def csv_rows_fixture(source: str):
    """A module fixture `raw` of one source's CSV rows: `raw = csv_rows_fixture(SOURCE)` in a test module."""
    @pytest.fixture(scope="module")
    def raw() -> list[dict[str, str]]:
        rows = source_csv_rows(source)
        assert rows, f"the rows of {source} are missing from the calibration file"
        return rows
    return raw


def mlperf_place(url: str) -> tuple[str, str]:
    """(system, benchmark) of an MLPerf result URL: .../<submitter>/results/<system>/<benchmark>/result_N.txt."""
    system, benchmark = url.split("/results/", 1)[1].split("/")[:2]
    return system, benchmark


def assert_use_in_fit(r: dict[str, str], reference_run: bool, fp8_pair: bool) -> None:
    """A reference run and a pair whose reference used FP8 layers are kept out of the fit, each saying why; the
    other rows are used."""
    if reference_run:
        assert r["use_in_fit"] == "false" and r["excluded_because"] == "the group's reference itself"
    elif fp8_pair:
        assert r["use_in_fit"] == "false" and "FP8" in r["excluded_because"]
    else:
        assert r["use_in_fit"] == "true" and not r["excluded_because"]
