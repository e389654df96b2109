"""The HTML export is one self-contained page (no script, no fetched font or style) with every part and price, and
a share link never points at localhost unless the user set it so."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from planner.cli import app


class Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.srcs: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        a = dict(attrs)
        if a.get("src"):
            self.srcs.append(a["src"])
        if a.get("href"):
            self.hrefs.append(a["href"])


@pytest.fixture()
def plan_file(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    monkeypatch.delenv("PLANNER_PUBLIC_URL", raising=False)
    monkeypatch.delenv("PLANNER_BASE_URL", raising=False)
    runner = CliRunner()
    assert runner.invoke(app, ["prices", "add", "gpu-nvidia-rtx5090-fe", "2349", "--shop", "LDLC", "--url",
                               "https://www.ldlc.com/fiche/PB00000000.html"]).exit_code == 0
    res = runner.invoke(app, ["recommend", "--budget", "7000", "--gpus", "1", "--json"])
    path = tmp_path / "plan.json"
    path.write_text(res.stdout, encoding="utf-8")
    return path


def test_the_html_page_holds_every_part_price_record_verdict_speed_and_sweep(plan_file, tmp_path) -> None:
    out = tmp_path / "build.html"
    res = CliRunner().invoke(app, ["share", "export", str(plan_file), "--format", "html", "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text(encoding="utf-8")
    plan = json.loads(plan_file.read_text())["plans"][0]
    refs = Refs()
    refs.feed(html)
    assert "script" not in refs.tags and "link" not in refs.tags and not refs.srcs  # nothing fetched
    assert "@import" not in html and "url(" not in html
    for ln in plan["parts"]:
        assert ln["name"].replace("&", "&amp;") in html
        assert ln["price_kind"] in html
    assert "EUR 2 349.00" in html and "yours" in html
    assert "https://www.ldlc.com/fiche/PB00000000.html" in refs.hrefs  # the shop link of the price
    assert "Compatibility" in html and "compatible" in html
    assert re.search(r"\d+\.\dx a GTX 1080 Ti per GPU", html) and "basis:" in html
    assert "Sweep estimate" in html and "8 runs of 7 h" in html
    assert "localhost" not in html and "No public address" in html  # the token instead of a dead link
    assert "@media print" in html


def test_links_use_the_public_address_and_never_default_to_localhost(plan_file, monkeypatch) -> None:
    runner = CliRunner()
    res = runner.invoke(app, ["share", "export", str(plan_file), "--format", "link"])
    assert res.exit_code == 0 and res.stdout.startswith("v2.") and "localhost" not in res.output
    assert "no public address" in res.stderr
    md = runner.invoke(app, ["share", "export", str(plan_file), "--format", "md"]).stdout
    assert "localhost" not in md and "Build token" in md
    monkeypatch.setenv("PLANNER_PUBLIC_URL", "https://my-planner.streamlit.app/")
    res = runner.invoke(app, ["share", "export", str(plan_file), "--format", "link"])
    assert res.stdout.startswith("https://my-planner.streamlit.app/?b=v2.")
    md = runner.invoke(app, ["share", "export", str(plan_file), "--format", "md"]).stdout
    assert "(https://my-planner.streamlit.app/?b=v2." in md and "Build token" not in md
    monkeypatch.setenv("PLANNER_PUBLIC_URL", "my-planner.example")
    res = runner.invoke(app, ["share", "export", str(plan_file), "--format", "link"])
    assert res.exit_code == 2 and "PLANNER_PUBLIC_URL" in res.output
