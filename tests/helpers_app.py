"""The web page in Streamlit's AppTest: run it with the shipped catalog and no personal state, and open a tab."""

from __future__ import annotations

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
REPO = Path(__file__).resolve().parents[1]
APP = str(REPO / "app.py")


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped catalog, no personal price history, no base-URL override (autouse where imported)."""
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.delenv("PLANNER_BASE_URL", raising=False)
    monkeypatch.delenv("PLANNER_PUBLIC_URL", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "no-history.sqlite"))
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))  # no calibration of the user's own (planner calibrate)


def run(at=None, **query: str):
    """Run the page (a new one, or `at` again with its changed widgets); `query` sets the address's parameters."""
    at = at or AppTest.from_file(APP, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_tab(at, name: str):
    """Click a tab: only the open tab is drawn (the Plan is always worked out)."""
    at.session_state["tab"] = name
    return run(at)
