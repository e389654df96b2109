"""The web UI's import of a posted list: unmatched lines get a picker, and re-importing applies the picks."""

from __future__ import annotations

from pathlib import Path

import pytest

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parents[1] / "app.py")
LIST = Path(__file__).parent / "data" / "real" / "lists" / "wensheng-html-2017.html"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "no-history.sqlite"))
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))


def test_unmatched_lines_get_a_picker_and_the_pick_is_applied() -> None:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["tab"] = "Share"
    at.run()
    share = at.tabs[4]
    share.text_area(key="import_text").input(LIST.read_text(encoding="utf-8"))
    share.button(key="import_btn").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.selectbox(key="pick_line_61")  # "Samsung 850 EVO 500GB SSD": no such drive, candidates offered
    options = [o for o in picker.options if o.startswith("ssd-samsung-870-evo-1tb")]
    assert options, picker.options
    picker.set_value(options[0])
    at.button(key="import_pick_btn").click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    json_ = at.session_state["import_msg"]["json"]
    assert any(m["line"] == 61 and m["how"] == "picked" for m in json_["matched"])
    shown = " ".join(w.value for w in at.warning).replace("\\", "")  # shown Markdown-escaped (psu\\_right\\_sized)
    assert json_["check"]["warnings"] and all(f["rule"] in shown for f in json_["check"]["warnings"])
