"""Every price says what kind it is and what its date means; 'used' survives every table and export."""

from __future__ import annotations

import csv
import io
from datetime import date

from planner.catalog.load import load_catalog
from planner.price_label import basis_date, offer_note, price_label
from planner.request import Request
from planner.share import build_from_catalog, encode_token, import_build, permalink, to_csv, to_markdown


def test_a_price_is_aged_from_when_its_number_was_observed_never_from_its_entry() -> None:
    scraped = price_label("scraped", "2026-08-13")
    assert scraped.seen_on == "2026-08-13" and scraped.age_days(date(2026, 8, 20)) == 7
    research = price_label("user research", "2026-11-30")
    assert research.kind == "your research (undated)" and research.when == "entered 2026-11-30"
    assert research.seen_on is None and research.age_text() == ""
    est = price_label("estimate", "2026-11-30", "PCPartPicker US price (PCPartPicker snapshot of 2025-07-23 in ...)")
    assert est.kind == "estimate" and est.when == "based on 2025-07-23 data"
    assert est.age_days(date(2026, 12, 5)) == 500  # the data it rests on is 500 days old, not the entry's 5
    assert est.text(date(2026, 12, 5)) == "estimate, based on 2025-07-23 data, 500 d old"
    assert price_label("estimate", "2026-11-30", "recalled; PCPartPicker US 2025-07-23 lists 124.99 USD").seen_on \
        == "2025-07-23"
    mine = price_label("yours", "2026-12-04")
    assert mine.kind == "yours" and mine.text(date(2026, 12, 5)) == "yours 2026-12-04, 1 d old"
    assert price_label("shared list", "2026-12-05").kind == "from the shared list"
    assert price_label("estimate", "2026-11-30", "recalled FR street price").when == "entered 2026-11-30"
    assert price_label("owned", None).kind == "owned" and basis_date(None) is None


def test_the_shipped_catalog_never_shows_an_estimate_as_fresh() -> None:
    cat = load_catalog()
    for pid, offers in cat.offers.items():
        for o in offers:
            label = price_label(o.source, o.observed_on.isoformat(), offer_note(cat.offers, pid, o.source,
                                                                                 o.observed_on.isoformat(), o.retailer))
            if o.source in ("estimate", "user research"):  # an entry date is never shown as the price's date
                assert label.seen_on != o.observed_on.isoformat() and label.when != o.observed_on.isoformat(), (pid, label)


def _used_build(cat):
    gpu = next(pid for pid, offers in cat.offers.items() if pid in cat.parts and cat.parts[pid].category == "gpu"
               and cat.offer_for(pid).condition == "used")
    cpu = cat.by_category("cpu")[0].id
    return gpu, build_from_catalog(cat, [(gpu, 1), (cpu, 1)], used="gpu")


def test_csv_export_keeps_used_and_the_price_kind() -> None:
    cat = load_catalog()
    gpu, build = _used_build(cat)
    line = next(ln for ln in build.lines if ln.part_id == gpu)
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(to_csv(build)))}
    assert rows[gpu]["condition"] == line.condition and line.used
    assert rows[gpu]["price_kind"] and rows[gpu]["price_date_means"]


def test_markdown_import_keeps_the_senders_settings() -> None:
    cat = load_catalog()
    sent = Request(budget="4500", runs=12, baseline_hours=5.0, precision="fp32", model_params=15e6)
    parts = [(cat.by_category(c)[0].id, 1) for c in ("gpu", "cpu", "motherboard")]
    build = build_from_catalog(cat, parts, inputs=sent)
    md = to_markdown(build, link=permalink(encode_token(sent, parts), "https://planner.example/"))
    got = import_build(md, cat)
    assert got.inputs.runs == 12 and got.inputs.precision == "fp32" and got.inputs.model_params == 15e6
    assert any("sender's settings" in n for n in got.notes)
    plain = import_build("\n".join(md.splitlines()[:5]), cat)  # the table without the link: defaults
    assert plain.inputs.runs == Request().runs
