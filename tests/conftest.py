"""Shared fixtures: paths to the repo, its data and the read-only ../shared materials."""

from __future__ import annotations

from pathlib import Path

import os

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


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
