"""Small-LM validation set (data/validation/small_lm.csv): within-source GPU pairs, never fitted on, scored."""

from __future__ import annotations

import argparse
import csv
import itertools
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

from planner.errors import CatalogError
from planner.perf.model import DATA_DIR, PerfModel, load_perf_model
from planner.vocab import PRECISIONS

VALIDATION_CSV = DATA_DIR / "validation" / "small_lm.csv"
REQUIRED = ("source", "repo", "commit", "workload", "model_params", "precision", "batch_size", "seq_len",
            "tokens_per_step", "chip", "tokens_per_s", "arithmetic")


@dataclass(frozen=True)
class Point:
    """One measured run: tokens/s of one model on one card, with what makes two runs comparable."""
    source: str
    workload: str
    model_params: float
    precision: str
    batch_size: int
    tokens_per_step: int
    chip: str
    tokens_per_s: float


@dataclass(frozen=True)
class Pair:
    """Two runs of one source, model and precision on two cards: measured and predicted speedup b over a."""
    a: Point
    b: Point
    measured: float
    predicted: float
    low: float
    high: float

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    @property
    def inside(self) -> bool:
        return self.low <= self.measured <= self.high

    @property
    def same_batch(self) -> bool:
        return self.a.tokens_per_step == self.b.tokens_per_step


def load_points(path: Path = VALIDATION_CSV, chips: Optional[set[str]] = None) -> list[Point]:
    """Rows of the validation CSV; a missing column, a bad number or an unknown chip is a CatalogError naming the row."""
    if not path.exists():
        raise CatalogError(f"{path} is missing")
    out: list[Point] = []
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in REQUIRED if c not in (reader.fieldnames or [])]
        if missing:
            raise CatalogError(f"{path.name}: missing column(s) {', '.join(missing)}")
        for i, r in enumerate(reader, start=2):
            try:
                p = Point(r["source"], r["workload"], float(r["model_params"]), r["precision"], int(r["batch_size"]),
                          int(r["tokens_per_step"]), r["chip"], float(r["tokens_per_s"]))
            except ValueError as exc:
                raise CatalogError(f"{path.name} line {i}: {exc}") from None
            if p.precision not in PRECISIONS or p.tokens_per_s <= 0 or p.model_params <= 0:
                raise CatalogError(f"{path.name} line {i}: bad precision or non-positive number")
            if chips is not None and p.chip not in chips:
                raise CatalogError(f"{path.name} line {i}: unknown chip {p.chip!r}")
            if not (r.get("repo") and r.get("commit") and r.get("arithmetic")):
                raise CatalogError(f"{path.name} line {i}: no provenance (repo, commit, arithmetic)")
            out.append(p)
    return out


def pairs(points: Sequence[Point], model: PerfModel) -> list[Pair]:
    """Every pair of cards within one source, model and precision (b over a, a = the earlier row of the file),
    predicted by `model` at the run's model size."""
    out: list[Pair] = []
    groups: dict[tuple[str, str, str], list[Point]] = {}
    for p in points:
        groups.setdefault((p.source, p.workload, p.precision), []).append(p)
    for group in groups.values():
        for a, b in itertools.combinations(group, 2):
            if a.chip == b.chip:
                continue
            est = model.speedup(b.chip, baseline=a.chip, workload="transformer", precision=a.precision,
                                model_params=a.model_params)
            out.append(Pair(a, b, b.tokens_per_s / a.tokens_per_s, est.value, est.low, est.high))
    return out


def summary(ps: Sequence[Pair]) -> dict[str, float]:
    """Median |predicted/measured - 1|, share of measured ratios inside the stated range, median high/low."""
    if not ps:
        return {"pairs": 0}
    return {"pairs": len(ps), "median_error": statistics.median(abs(p.error) for p in ps),
            "coverage": sum(p.inside for p in ps) / len(ps),
            "median_high_over_low": statistics.median(p.high / p.low for p in ps),
            "bias": statistics.median(p.error for p in ps)}


def refit_without(model: PerfModel, sources: Sequence[str]) -> PerfModel:
    """The shipped variant refitted on every calibration row except `sources` (its stated ranges kept): the way to
    score a validation source whose harness has a sibling among the calibration rows."""
    from planner.perf.fitting import fit
    from planner.perf.sources import REFERENCE_CHIP, all_rows
    rows = [r for r in all_rows(model.chips) if r.source not in set(sources)]
    p = fit(rows, model.chips[REFERENCE_CHIP], variant=model.params.meta.get("variant"))
    p = replace(p, typical_params=model.params.typical_params, ranges=model.params.ranges, meta=model.params.meta)
    return PerfModel(model.chips, p, model.calibrated_chips, model.power_variants)


def report(ps: Sequence[Pair]) -> str:
    lines = []
    for label, sel in (("all pairs", list(ps)), ("same tokens per step", [p for p in ps if p.same_batch])):
        s = summary(sel)
        if s["pairs"]:
            lines.append(f"{label:22s} {s['pairs']:4d} pairs  median |error| {s['median_error']:6.1%}  bias "
                         f"{s['bias']:+6.1%}  inside range {s['coverage']:6.1%}  median high/low "
                         f"{s['median_high_over_low']:.2f}")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m planner.perf.small_lm", description=__doc__)
    ap.add_argument("--refit-without", nargs="*", default=None, metavar="SOURCE",
                    help="also score a refit without these calibration sources (e.g. lambda-pytorch, the sibling "
                         "harness of lambda-pytorch-v2; about a minute)")
    args = ap.parse_args(argv)
    model = load_perf_model()
    points = load_points(chips=set(model.chips))
    print(f"{len(points)} points, {len({p.chip for p in points})} cards, sources: "
          f"{', '.join(sorted({p.source for p in points}))}")
    print("shipped model:\n" + report(pairs(points, model)))
    if args.refit_without:
        print(f"refit without {', '.join(args.refit_without)}:\n"
              + report(pairs(points, refit_without(model, args.refit_without))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
