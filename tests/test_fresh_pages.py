"""The fresh held-out page set is well-formed (every row sourced and licensed) and extract never raises on it."""

from __future__ import annotations

import csv
import gzip
import re
from collections import Counter
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest

from planner.prices.extract import extract
from planner.prices.result import ExtractResult

PAGES = Path(__file__).resolve().parents[1] / "benchmarks" / "fresh-pages"
COLUMNS = ["id", "repo", "path", "commit", "licence", "shop", "captured", "url", "price", "currency",
           "truth_source", "note", "batch"]


def _rows() -> list[dict[str, str]]:
    with (PAGES / "MANIFEST.csv").open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


ROWS = _rows()


def test_manifest_rows_are_sourced_and_licensed() -> None:
    assert ROWS, "the manifest lists no page"
    ids = [r["id"] for r in ROWS]
    assert len(ids) == len(set(ids)), "duplicate ids"
    for r in ROWS:
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", r["id"]), r["id"]
        assert re.fullmatch(r"[\w.-]+/[\w.-]+", r["repo"]), r
        assert r["path"] and r["licence"] and r["shop"] and r["truth_source"], r
        assert re.fullmatch(r"[0-9a-f]{40}", r["commit"]), r
        assert r["batch"] in ("1", "2", "3"), f"{r['id']}: batch is 1, 2 or 3, not {r['batch']!r}"
        if r["truth_source"] == "read-by-hand":
            assert r["note"], f"{r['id']}: a price read by hand needs its one-line justification"
        else:
            assert ":" in r["truth_source"], f"{r['id']}: truth_source is a repo file:line"


def test_manifest_prices_parse_as_decimal() -> None:
    for r in ROWS:
        if not r["price"]:
            continue
        try:
            price = Decimal(r["price"])
        except InvalidOperation:
            pytest.fail(f"{r['id']}: price {r['price']!r} is not a decimal")
        assert price.is_finite() and price > 0, r
        assert re.fullmatch(r"[A-Z]{3}", r["currency"]), r


def test_every_listed_page_exists_and_no_page_is_unlisted() -> None:
    on_disk = {p.name for p in PAGES.glob("*.html.gz")}
    listed = {f"{r['id']}.html.gz" for r in ROWS}
    assert listed == on_disk
    for name in listed:
        body = gzip.decompress((PAGES / name).read_bytes())
        assert len(body) > 1000, f"{name} is too small to be a saved page"


def test_at_most_four_pages_per_shop() -> None:
    per_shop = Counter(r["shop"] for r in ROWS)
    assert max(per_shop.values()) <= 4, per_shop


def test_batch_two_keeps_its_own_selection_rule() -> None:
    """Batch 2 takes at most 3 pages per shop and none from the repositories batch 1 used up."""
    batch1_repos = {r["repo"] for r in ROWS if r["batch"] == "1"}
    batch2 = [r for r in ROWS if r["batch"] == "2"]
    per_shop = Counter(r["shop"] for r in batch2)
    assert not per_shop or max(per_shop.values()) <= 3, per_shop
    assert not batch1_repos & {r["repo"] for r in batch2}, "batch 2 reuses a batch-1 repository"


def test_batch_three_uses_no_repository_of_the_earlier_batches() -> None:
    """Batch 3 takes its pages from repositories batches 1 and 2 did not use, and none from the excluded ones."""
    earlier = {r["repo"] for r in ROWS if r["batch"] in ("1", "2")}
    excluded = {"scrapinghub/product-extraction-benchmark", "Qlimqx/pc-rachat", "aggiekouv10/tachyon-monitors-1.0",
                "ingonader/rgeizhals", "EricJMarti/inventory-hunter"}
    batch3 = {r["repo"] for r in ROWS if r["batch"] == "3"}
    assert not batch3 & earlier, f"batch 3 reuses {batch3 & earlier}"
    assert not batch3 & excluded, f"batch 3 uses an excluded repository: {batch3 & excluded}"


@pytest.mark.parametrize("row", ROWS, ids=[r["id"] for r in ROWS])
def test_extract_never_raises_on_a_fresh_page(row: dict[str, str]) -> None:
    body = gzip.decompress((PAGES / f"{row['id']}.html.gz").read_bytes())
    for url in {None, row["url"] or None}:
        result = extract(body, url)
        assert isinstance(result, ExtractResult)
        assert result.kind in ("product", "listing", "blocked", "empty", "error")
