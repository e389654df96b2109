"""Score planner's extractor on the fresh held-out set of real product pages (benchmarks/fresh-pages).

Run: PYTHONPATH=$PWD python benchmarks/bench_extract_fresh.py [--batch 1|2|3|all] [--pages DIR]
Each batch of pages was chosen and frozen (committed) before the extractor was ever run on it; see the
README in that folder (batch 1: the first 8 pages, no longer blind; batch 2: the second round;
batch 3: the third). Scoring is bench_extract.py's rule, imported from there: a price equal to the
truth as a decimal is a true positive; a wrong price is a false positive and a false negative; no
price where the page has one is a false negative; a price where the truth has none is a false
positive. Printed: F1, tp/fp/fn, exceptions, 'error' results, pages/s, one line per miss; once with
url=None (generic extraction only) and once with the page's URL where the manifest knows it.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import sys
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_extract import _dec, score  # noqa: E402  (one scoring rule for both benchmarks)
from planner.prices.extract import extract  # noqa: E402

PAGES = Path(__file__).resolve().parent / "fresh-pages"


def load_manifest(pages: Path) -> list[dict[str, str]]:
    with (pages / "MANIFEST.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def page_bytes(pages: Path, row: dict[str, str]) -> bytes:
    return gzip.decompress((pages / f"{row['id']}.html.gz").read_bytes())


def run(pages: Path, rows: list[dict[str, str]], with_url: bool) -> tuple[dict, list[str], list[str], float]:
    """(predicted price per id, exceptions, 'error' results, pages/s) for one pass over the set."""
    preds: dict[str, Optional[str]] = {}
    raised: list[str] = []
    errors: list[str] = []
    bodies = {r["id"]: page_bytes(pages, r) for r in rows}
    t0 = time.perf_counter()
    for r in rows:
        url = (r["url"] or None) if with_url else None
        try:
            res = extract(bodies[r["id"]], url)
        except Exception as exc:  # the benchmark counts crashes instead of stopping
            raised.append(f"{r['id']} {type(exc).__name__}: {exc}"[:160])
            preds[r["id"]] = None
            continue
        if res.kind == "error":
            errors.append(f"{r['id']} {res.reason}"[:160])
        o = res.offers[0] if res.offers and res.kind == "product" else None
        preds[r["id"]] = str(o.price) if o else None
    dt = time.perf_counter() - t0
    return preds, raised, errors, len(rows) / dt if dt else 0.0


def report(title: str, rows: list[dict[str, str]], truth: dict, preds: dict, raised: list[str],
           errors: list[str], pps: float) -> None:
    ids = [r["id"] for r in rows]
    s = score(preds, truth, ids)
    print(f"{title}: pages {len(ids)}  price F1 {s['f1']:.3f}  precision {s['precision']:.3f}  "
          f"recall {s['recall']:.3f}  tp {s['tp']} fp {s['fp']} fn {s['fn']}  exceptions {len(raised)}  "
          f"'error' results {len(errors)}  {pps:.1f} pages/s")
    for line in raised:
        print("  raised", line)
    for line in errors:
        print("  error ", line)
    for r in rows:
        want, got = truth[r["id"]]["price"], preds.get(r["id"])
        if _dec(got) not in {_dec(v) for v in want} and (got is not None or want):
            print(f"  miss {r['id']}: got {got} want {want[0] if want else 'no price'} {r['currency']} "
                  f"({r['shop']}, truth {r['truth_source']})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", default=str(PAGES))
    ap.add_argument("--batch", choices=["1", "2", "3", "all"], default="all",
                    help="which batch of the manifest to score (default: all)")
    args = ap.parse_args()
    pages = Path(args.pages)
    rows = [r for r in load_manifest(pages) if args.batch == "all" or r["batch"] == args.batch]
    if not rows:
        sys.exit(f"bench_extract_fresh: no page in batch {args.batch} of {pages / 'MANIFEST.csv'}")
    truth = {r["id"]: {"price": [r["price"]] if r["price"] else []} for r in rows}
    shops = sorted({r["shop"] for r in rows})
    repos = sorted({r["repo"] for r in rows})
    print(f"fresh set, batch {args.batch}: {len(rows)} pages, {len(shops)} shops, {len(repos)} repositories")
    report("url=None (generic)", rows, truth, *run(pages, rows, with_url=False))
    known = [r for r in rows if r["url"]]
    report(f"url=manifest URL ({len(known)} pages with a known URL)", known, truth, *run(pages, known, with_url=True))


if __name__ == "__main__":
    main()
