"""One price, one record: the plan (JSON and the web table), the Markdown/CSV/JSON exports, `catalog list`, the
alternatives' table and a share import all print the same kind, observed date and age for the same part; an
estimate is dated by the data it rests on, never by the day it was entered."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import date, timedelta

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.service import SharedBuild, import_build, load_priced_catalog, my_prices
from planner.share import to_csv, to_json_text, to_markdown
from planner.share import build_from_json
from ui.view import build_rows, plan_summary_rows

PARTS = ["gpu-nvidia-rtx5090-fe", "cpu-amd-ryzen7-9700x", "psu-seasonic-prime-tx-1600-ssr-1600tr2",
         "psu-seasonic-prime-tx-1600-ssr-1600tr-2022", "ssd-samsung-990-pro-2tb"]


@pytest.fixture()
def catalog(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    seen = date.today() - timedelta(days=2)
    my_prices().add("gpu-nvidia-rtx5090-fe", "2 349,00 €", shop="LDLC", day=seen)
    return load_priced_catalog()


def records_of_build(build, cat) -> dict[str, dict[str, str]]:
    """Per part, the record as each surface prints it."""
    today = date.today()
    out: dict[str, dict[str, str]] = {ln.part_id: {} for ln in build.lines}
    names = {ln.name: ln.part_id for ln in build.lines}
    for line in to_markdown(build, today=today).splitlines():
        cells = line.split(" | ")
        if len(cells) != 3 or not cells[0].startswith("**"):
            continue
        name = re.sub(r"^\[(.*)\]\(.*\)$", r"\1", cells[1].replace(" *(unverified)*", ""))
        label = next(ln.label.text(today) for ln in build.lines if ln.name == name)
        # the price cell: 'EUR 281.00 (record)' or 'EUR 2 349.00 @ LDLC (record)'; the record as the cell ends
        out[names[name]]["markdown"] = label if cells[2].endswith(f"({label})") else cells[2]
    for row in csv.DictReader(io.StringIO(to_csv(build))):
        if row["id"] in out:
            out[row["id"]]["csv"] = row["price_date_means"]
            out[row["id"]]["csv columns"] = f"{row['price_kind']}|{row['price_seen_on']}|{row['price_age_days']}"
    for p in json.loads(to_json_text(build))["parts"]:
        out[p["id"]]["json"] = f"{p['price_kind']}|{p['price_seen_on'] or ''}|" \
                               f"{'' if p['price_age_days'] is None else p['price_age_days']}"
    for r in build_rows(build, cat, today):
        age = r["Age"].removesuffix(" d")
        out[r["id"]]["web table"] = f"{r['Price kind']}|{r['Price date']}|{age}"
    for r, ln in zip(plan_summary_rows(build.view()), build.lines):
        out[ln.part_id]["web alternatives"] = r["Price kind"]
    again = build_from_json(json.loads(to_json_text(build)))  # a share import of our JSON reads the same record
    for ln in again.lines:
        out[ln.part_id]["share import"] = ln.label.text(today)
    listed = json.loads(CliRunner().invoke(app, ["catalog", "list", "--json"]).stdout)
    for p in listed:
        if p["id"] in out:
            out[p["id"]]["catalog list"] = p["price_record"]
    return out


def test_every_surface_prints_the_same_record_for_a_part(catalog) -> None:
    build = SharedBuild.from_catalog(catalog, [(p, 1) for p in PARTS if p != "psu-seasonic-prime-tx-1600-ssr-1600tr-2022"])
    today = date.today()
    recs = records_of_build(build, catalog)
    for ln in build.lines:
        label = ln.label
        text = label.text(today)
        got = recs[ln.part_id]
        for surface in ("markdown", "csv", "web alternatives", "share import", "catalog list"):
            assert got[surface] == text, (ln.part_id, surface, got[surface], text)
        age = "" if label.age_days(today) is None else str(label.age_days(today))
        assert got["json"] == got["csv columns"] == f"{label.kind}|{label.seen_on or ''}|{age}", (ln.part_id, got)
        assert got["web table"] == f"{label.kind}|{label.when}|{age}", (ln.part_id, got)
    fe = recs["gpu-nvidia-rtx5090-fe"]["markdown"]
    assert fe == f"yours {(today - timedelta(days=2)).isoformat()}, 2 d old"
    cpu = recs["cpu-amd-ryzen7-9700x"]["catalog list"]
    assert cpu == f"estimate, based on 2025-07-23 data, {(today - date(2025, 7, 23)).days} d old"
    assert "2026-11-30" not in json.dumps(recs["cpu-amd-ryzen7-9700x"])  # the entry date is never shown as its date
    ssd = recs["ssd-samsung-990-pro-2tb"]["csv"]
    assert ssd.startswith("your research (undated), entered") and "old" not in ssd


def test_the_older_tx1600_estimate_is_dated_by_its_data_too(catalog) -> None:
    build = SharedBuild.from_catalog(catalog, [("psu-seasonic-prime-tx-1600-ssr-1600tr-2022", 1)])
    text = build.lines[0].label.text()
    assert text.startswith("estimate, based on 2025-07-23 data")  # 'PCPartPicker US 2025-07-23 lists ...'
    recs = records_of_build(build, catalog)["psu-seasonic-prime-tx-1600-ssr-1600tr-2022"]
    assert recs["markdown"] == recs["csv"] == recs["catalog list"] == text


def test_a_plan_json_and_catalog_list_agree_on_every_part_of_the_answer(catalog) -> None:
    res = CliRunner().invoke(app, ["recommend", "--budget", "7000", "--json"])
    plan = json.loads(res.stdout)["plans"][0]
    listed = {p["id"]: p for p in json.loads(CliRunner().invoke(app, ["catalog", "list", "--json"]).stdout)}
    for ln in plan["parts"]:
        rec = listed[ln["id"]]["price_record"]
        assert rec.startswith(ln["price_kind"]), (ln["id"], rec, ln["price_kind"])
        if ln["price_seen_on"]:
            assert ln["price_seen_on"] in rec and f"{ln['price_age_days']} d old" in rec
        else:
            assert "old" not in rec
