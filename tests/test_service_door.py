"""The service is the one door: the root package, the CLI and the web UI reach the same steps through it (issue 28.1)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from planner.request import Request

pytestmark = pytest.mark.usefixtures("no_price_history")


def test_root_recommend_applies_the_requests_chip_maker_exclusion_like_the_service(cat) -> None:
    """`planner.recommend` used to call the solver directly: with NVIDIA left out it still answered 2 x RTX 5080."""
    import planner
    from planner import service

    req = Request(budget=Decimal(7000), excluded_chip_makers=("NVIDIA",))
    rec = planner.recommend(cat, req)
    assert [p.chip.vendor for p in rec.plans] == [p.chip.vendor for p in service.plan(cat, req).plans]
    assert all(p.chip.vendor != "NVIDIA" for p in rec.plans)


def test_root_recommend_resolves_typed_names(cat) -> None:
    import planner

    rec = planner.recommend(cat, Request(budget=Decimal(7000), pinned=("RTX 5090 Founders",)))
    assert rec.plans and rec.plans[0].gpu.id == cat.find("RTX 5090 Founders").id


def _capture_refresh(monkeypatch) -> list[dict[str, Any]]:
    """Record what the price refresh is asked to hold prices against, without fetching anything."""
    from planner.prices import refresh as R

    seen: list[dict[str, Any]] = []

    async def fake_async(store, fetcher, jobs, parts, on_page=None, threshold=None, references=None):
        seen.append({"references": dict(references or {}), "jobs": len(jobs)})
        return R.RefreshReport()

    def fake_sync(store, fetcher, jobs, parts, progress=True, threshold=None, references=None):
        seen.append({"references": dict(references or {}), "jobs": len(jobs)})
        return R.RefreshReport()

    monkeypatch.setattr(R, "refresh_async", fake_async)
    monkeypatch.setattr(R, "refresh", fake_sync)
    return seen


def test_cli_and_web_ui_refresh_prices_against_the_same_quarantine_references(monkeypatch, tmp_path, cat) -> None:
    """The web UI's refresh skipped the references the CLI passed, so a misread price was trusted there."""
    from typer.testing import CliRunner

    from planner.cli import app
    from planner.service.prices import quarantine_references
    from ui import pages_prices

    seen = _capture_refresh(monkeypatch)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "prices.sqlite"))
    CliRunner().invoke(app, ["prices", "refresh", "--json"])
    pages_prices.refresh_prices(cat, lambda i, n, url: None)
    assert len(seen) == 2
    expected = quarantine_references(cat)
    assert expected and seen[0]["references"] == seen[1]["references"] == expected
    assert seen[0]["jobs"] == seen[1]["jobs"] > 0


def test_cli_costs_goes_through_the_service_compare_like_the_web_ui(monkeypatch, tmp_path) -> None:
    """`planner costs` assembled its own comparison (costs.compare) beside the pipeline's; now both tabs' answer is
    the one service step."""
    from typer.testing import CliRunner

    from planner.cli import app
    from planner.service import pipeline

    calls = []
    real = pipeline.compare

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compare", spy)
    monkeypatch.setenv("PLANNER_FX_DIR", str(tmp_path / "fx"))
    result = CliRunner().invoke(app, ["costs", "--runs", "6", "--hours", "5", "--json"])
    assert result.exit_code == 0, result.output
    assert len(calls) == 1 and (calls[0].runs, calls[0].baseline_hours) == (6, 5.0)
