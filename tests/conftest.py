"""Shared fixtures: paths to the repo, its data and the read-only ../shared materials."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def repo_dir() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    assert SHARED.is_dir(), f"../shared must sit beside the repo (looked in {SHARED})"
    return SHARED


@pytest.fixture(scope="module")
def cat():
    """The shipped catalog (data/), without any user price history."""
    from planner.catalog.load import SHIPPED_DATA_DIR, load_catalog

    return load_catalog(SHIPPED_DATA_DIR)


@pytest.fixture
def no_price_history(monkeypatch, tmp_path):
    """CLI commands read the shipped data/ and no user price DB."""
    from helpers_parts import isolate_cli_env

    isolate_cli_env(monkeypatch, tmp_path)
