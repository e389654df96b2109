"""The extraction benchmark's errata: each row corrects one page's truth, with the corrected amount shown on it."""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import re
from decimal import Decimal

from conftest import REPO, require_shared


def _bench():
    spec = importlib.util.spec_from_file_location("bench_extract", REPO / "benchmarks" / "bench_extract.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_erratum_replaces_a_thousands_misreading_by_the_amount_the_page_shows() -> None:
    bench_dir = require_shared() / "datasets" / "product-extraction-benchmark"
    truth = json.loads((bench_dir / "ground-truth.json").read_text())
    bench = _bench()
    fixed, n = bench.corrected(truth)
    rows = list(csv.DictReader(bench.ERRATA.open(encoding="utf-8")))
    assert n == len(rows) > 0
    for row in rows:
        (pid,) = [k for k in truth if k.startswith(row["page_id_prefix"])]
        old, new = Decimal(row["truth"]), Decimal(row["corrected"])
        assert new == old * 1000, "an erratum fixes a thousands separator read as a decimal point, nothing else"
        assert [Decimal(v) for v in fixed[pid]["price"]] == [new]
        page = gzip.decompress((bench_dir / "html" / f"{pid}.html.gz").read_bytes()).decode("utf-8", "replace")
        shown = {Decimal(re.sub(r"[.,]", "", m)) for m in re.findall(r"\d{1,3}(?:[.,]\d{3})+(?![\d])", page)}
        shown |= {Decimal(m) for m in re.findall(r"\d+\.00", page)}
        assert new in shown, f"{row['page_id_prefix']}: {new} is not an amount the page shows"
    untouched = [k for k in truth if not any(k.startswith(r["page_id_prefix"]) for r in rows)]
    assert all(fixed[k] == truth[k] for k in untouched)


def test_each_refusal_shows_its_evidence_and_the_extractor_returns_what_the_row_says() -> None:
    """A refusal is a page where the truth holds a reading the price policy refuses ('from', per-unit, a bid, a store
    card's price): the page must show the evidence, and the extractor must still return what the row records."""
    from bs4 import BeautifulSoup

    from planner.prices.extract import extract

    bench_dir = require_shared() / "datasets" / "product-extraction-benchmark"
    truth = json.loads((bench_dir / "ground-truth.json").read_text())
    bench = _bench()
    rows = list(csv.DictReader(bench.REFUSALS.open(encoding="utf-8")))
    assert rows
    for row in rows:
        (pid,) = [k for k in truth if k.startswith(row["page_id_prefix"])]
        assert Decimal(row["truth"]) in {Decimal(v) for v in truth[pid]["price"]}
        raw = gzip.decompress((bench_dir / "html" / f"{pid}.html.gz").read_bytes())
        text = " ".join(BeautifulSoup(raw, "lxml").get_text(" ").split())
        assert row["evidence_on_the_page"] in text, row["page_id_prefix"]
        offers = extract(raw, None).offers
        got = offers[0].price if offers else None
        want = Decimal(row["planner_returns"]) if row["planner_returns"] else None
        assert got == want, f"{row['page_id_prefix']}: extractor returns {got}, the row says {want}"
