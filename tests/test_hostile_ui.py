"""Hostile links and imports in the web UI (AppTest): one st.error line, no traceback, no Markdown injection."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from planner.share import token as T

AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
APP = str(Path(__file__).resolve().parents[1] / "app.py")
INJECTION = "![x](http://host.example/track.png) [click](http://host.example/phish)"


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.delenv("PLANNER_BASE_URL", raising=False)
    monkeypatch.delenv("PLANNER_PUBLIC_URL", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "no-history.sqlite"))


def raw_token(body: dict) -> str:
    """A well-formed v1 token around any JSON body, valid or not (what an attacker can craft)."""
    text = json.dumps(body, separators=(",", ":")).encode("utf-8")
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(text) + packer.flush()
    return f"{T.TOKEN_VERSION}.{T._b64encode(T._HEADER.pack(zlib.crc32(stream), len(stream)) + stream)}"


def open_link(token: str):
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["b"] = token
    at.run()
    return at


def assert_inert(text: str) -> None:
    """No Markdown image or link can form from this st.error body."""
    assert "![" not in text and "](" not in text.replace("\\](", "") and "http://" not in text, text


@pytest.mark.parametrize("body, needle", [
    ({"i": {"budget": "1e30"}, "p": []}, "budget"),
    ({"i": {"budget": "9" * 5000}, "p": []}, "budget"),
    ({"i": {"currency": "XXX"}, "p": []}, "currency"),
    ({"i": {"hours": 1e308}, "p": []}, "hours"),
    ({"i": {}, "p": [[INJECTION, 1]]}, "catalog"),
    ({"i": {"owned": [INJECTION]}, "p": []}, "catalog"),
])
def test_a_hostile_link_gives_one_inert_error(body, needle):
    at = open_link(raw_token(body))
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error]
    hits = [e for e in errors if "could not be opened" in e]
    assert len(hits) == 1 and needle in hits[0].lower(), errors
    assert_inert(hits[0])


def test_a_pasted_import_with_markup_is_shown_inert():
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["tab"] = "Share"  # only the open tab is drawn
    at.run()
    share = at.tabs[4]
    assert share.button, "the Share tab's Import button"
    share.text_area(key="import_text").input(json.dumps({"parts": [{"category": "gpu", "id": INJECTION}]}))
    share.button[0].click()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = [e.value for e in at.error] + [w.value for w in at.warning] + [c.value for c in at.caption]
    suspicious = [s for s in shown if "host.example" in s]
    assert suspicious, shown  # the hostile id is reported ...
    for s in suspicious:
        assert_inert(s)  # ... as text


def test_the_share_tabs_address_field_renders_no_markdown():
    """Issue 29 item 11: what is typed in the link-address field is shown as text, never as a link or image."""
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["tab"] = "Share"
    at.run()
    share = at.tabs[4]
    field = [t for t in share.text_input if t.key == "share_base"]
    assert field, "the Share tab's address field (needs a build on the Plan tab)"
    field[0].input(INJECTION + " **bold** <b>x</b>")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error if "link address" in e.value]
    assert len(errors) == 1, [e.value for e in at.error]
    assert_inert(errors[0])
    assert "**" not in errors[0].replace("\\*", "") and "<b>" not in errors[0]
