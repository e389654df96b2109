"""Benchmark a pasted build list: the link scanner on hostile cells and matching rows on a 100 000-part catalog.

Run from the repository root:

    PYTHONPATH=$PWD python benchmarks/bench_share_import.py [--parts 100000] [--rows 20]

Two figures, each a ratio measured in this process against a baseline in the same process:
  - link scan: `find_link` (one pass) vs the regex it replaced (kept here as the baseline) on cells of
    `[` of 1, 2 and 4 kB; the regex grows with the square of the length, the scanner linearly;
  - matching: `import_build` of a `rows`-row Markdown list on a synthetic catalog of `parts` parts, and one
    row matched the old way (every part scored: catalog.match.resolve, then rank over the whole category).
Prints figures only (no pass/fail).
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
import time
from pathlib import Path

from planner.catalog.load import load_catalog
from planner.catalog.match import rank, resolve
from planner.catalog.synth import generate
from planner.errors import UnknownPartError
from planner.share.importing import find_link, import_build

OLD_LINK = re.compile(r"\[((?:\\.|[^\]\\])*)\]\(\s*([^)\s]*)(?:\s+\"[^\"]*\")?\s*\)")


def timed(fn, repeat: int = 3) -> float:
    runs = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)


def old_match(cat, text: str, category: str) -> None:
    pool = cat.by_category(category)
    try:
        resolve(text, pool, category)
        return
    except UnknownPartError:
        pass
    rank(text, pool, category, typos=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", type=int, default=100_000)
    ap.add_argument("--rows", type=int, default=20)
    args = ap.parse_args()

    print("link scan on a cell of '[' (seconds, median of 3):")
    for n in (1000, 2000, 4000):
        cell = "[" * n
        old, new = timed(lambda: OLD_LINK.search(cell)), timed(lambda: find_link(cell))
        print(f"  {n:>5} chars: regex {old:.4f} s, scanner {new:.6f} s, ratio {old / max(new, 1e-9):,.0f}x")

    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp), args.parts, seed=1)
        cat = load_catalog(tmp)
        gpus = cat.by_category("gpu")
        names = ["Zotac Gaming GeForce RTX 4090 Trinity", "Corsair Vengeance 2x16GB DDR5-6000"]
        names += [f"{p.brand} {p.name}" for p in gpus[: max(0, args.rows - len(names))]]
        table = "| Type | Item | Price |\n|---|---|---|\n" + "".join(
            f"| GPU | {n[:-1] if i % 2 else n} | $1 |\n" for i, n in enumerate(names[: args.rows]))
        t = time.perf_counter()
        import_build(table, cat)
        first = time.perf_counter() - t
        again = timed(lambda: import_build(table, cat))
        per_old = timed(lambda: old_match(cat, names[0], "gpu"), repeat=1)
        print(f"matching {args.rows} rows on {len(cat.parts)} parts ({len(gpus)} GPUs): first import {first:.2f} s "
              f"(index built), again {again:.3f} s = {again / args.rows * 1000:.1f} ms a row; "
              f"old way {per_old:.2f} s a row, ratio {per_old / max(again / args.rows, 1e-9):,.0f}x")


if __name__ == "__main__":
    main()
