"""Cross-validate the speed model: hold out a source, GPU or architecture, choose the variant by nested
leave-one-source-out, summarise the errors and turn them into the stated ranges."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from planner.catalog.models import GpuChip
from planner.perf.model import (
    geometric_mean, PerfParams,
)
from planner.perf.sources import REFERENCE_CHIP, Row


from planner.perf.fitting import AVERAGE, AVERAGE_MEMBERS, CANDIDATES, fit, fit_vector, predict

# Quantiles reported by summarise() (the spread of measured/predicted); until issue 25 they were also the range.
RANGE_QUANTILES = (0.01, 0.99)
# Range (issue 25) = estimate x the narrowest interval holding this share of the held-out measured/predicted ratios,
# per precision group. Built from other sources' held-out rows, it covers 80.8 % of each unseen source's rows at a
# median high/low of 1.93 (the 1/99 quantiles: 93.8 % at 4.13); see docs/perf.md "Ranges".
RANGE_SHARE = 0.90

@dataclass(frozen=True)
class Held:
    row: Row
    predicted: float

    @property
    def error(self) -> float:  # relative error of the prediction, signed
        return self.predicted / self.row.ratio - 1.0


def cross_validate(rows: list[Row], ref: GpuChip, group: Callable[[Row], str], base: Optional[PerfParams] = None,
                   variant: Optional[str] = None) -> list[Held]:
    """Refit without each group (a source, GPU or architecture) and predict the held-out rows."""
    out: list[Held] = []
    for g in sorted({group(r) for r in rows}):
        train = [r for r in rows if group(r) != g]
        test = [r for r in rows if group(r) == g]
        p = fit(train, ref, base, variant)
        out += [Held(r, v) for r, v in zip(test, predict(test, p, ref))]
    return out


def median_error(held: Sequence[Held]) -> float:
    return float(np.median(np.abs([h.error for h in held])))


def inner_loso(rows: list[Row], ref: GpuChip, variant: str, x0: np.ndarray) -> list[Held]:
    """Leave-one-source-out inside `rows` for one variant; x0 (a fit on `rows`) is one more start of each fit, kept
    only where it reaches a lower training loss (fit_vector)."""
    out: list[Held] = []
    for src in sorted({r.source for r in rows}):
        train, test = [r for r in rows if r.source != src], [r for r in rows if r.source == src]
        p = fit_vector(train, ref, variant=variant, x0=x0)[1]
        out += [Held(r, v) for r, v in zip(test, predict(test, p, ref))]
    return out


def average_held(members: Sequence[Sequence[Held]]) -> list[Held]:
    """Held-out rows of `average` from its members' held-out rows (same rows, same order): the geometric mean of their
    predictions, each member fitted on the same training rows, so the average needs no fit of its own."""
    for hs in members[1:]:
        if [h.row for h in hs] != [h.row for h in members[0]]:
            raise ValueError("average_held: the members' held-out rows differ")
    return [Held(h.row, geometric_mean([m[i].predicted for m in members])) for i, h in enumerate(members[0])]


def choose_variant(rows: list[Row], ref: GpuChip, variants: Sequence[str] = CANDIDATES) -> tuple[str, dict[str, float]]:
    """The variant with the lowest leave-one-source-out median error on `rows` alone, and every variant's error
    (ties: the first in `variants`). `average` reuses its members' inner fits."""
    errors, held = {}, {}
    for v in [v for v in variants if v != AVERAGE] + [m for m in AVERAGE_MEMBERS if AVERAGE in variants and m not in variants]:
        x0 = fit_vector(rows, ref, variant=v)[0]
        held[v] = inner_loso(rows, ref, v, x0)
    for v in variants:
        h = average_held([held[m] for m in AVERAGE_MEMBERS]) if v == AVERAGE else held[v]
        errors[v] = round(median_error(h), 4)
    return min(errors, key=errors.__getitem__), errors


def _nested_fold(args: tuple[list[Row], GpuChip, str, Sequence[str]]) -> tuple[str, str, dict[str, float], list[Held]]:
    rows, ref, src, variants = args
    train, test = [r for r in rows if r.source != src], [r for r in rows if r.source == src]
    chosen, errors = choose_variant(train, ref, variants)
    p = fit(train, ref, variant=chosen)
    return src, chosen, errors, [Held(r, v) for r, v in zip(test, predict(test, p, ref))]


def nested_loso(rows: list[Row], ref: GpuChip, variants: Sequence[str] = CANDIDATES,
                workers: int = 1) -> tuple[list[Held], dict[str, dict[str, object]]]:
    """Leave-one-source-out where the variant is chosen inside each training fold (by an inner leave-one-source-out
    over the other sources), so the held-out source never influences which model predicts it."""
    folds = [(rows, ref, src, variants) for src in sorted({r.source for r in rows})]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(workers) as pool:
            results = list(pool.map(_nested_fold, folds))
    else:
        results = [_nested_fold(f) for f in folds]
    held = [h for *_, hs in results for h in hs]
    return held, {src: {"chosen": chosen, "inner_median_error": errors} for src, chosen, errors, _ in results}


def summarise(held: list[Held]) -> dict[str, object]:
    err = np.array([h.error for h in held])
    per_arch = {}
    for arch in sorted({h.row.chip.architecture for h in held}):
        e = np.array([h.error for h in held if h.row.chip.architecture == arch])
        per_arch[arch] = {"rows": int(e.size), "median_abs_error": round(float(np.median(np.abs(e))), 4),
                          "bias": round(float(np.median(e)), 4)}
    per_prec = {}
    for prec in sorted({h.row.precision for h in held}):
        e = np.array([h.error for h in held if h.row.precision == prec])
        per_prec[prec] = {"rows": int(e.size), "median_abs_error": round(float(np.median(np.abs(e))), 4),
                          "bias": round(float(np.median(e)), 4)}
    ratio = np.array([h.row.ratio / h.predicted for h in held])
    q = [round(float(np.quantile(ratio, qq)), 4) for qq in RANGE_QUANTILES]
    per_gpu = {}
    for cid in sorted({h.row.chip.id for h in held}):
        e = np.array([h.error for h in held if h.row.chip.id == cid])
        per_gpu[cid] = {"rows": int(e.size), "median_abs_error": round(float(np.median(np.abs(e))), 4),
                        "bias": round(float(np.median(e)), 4)}
    per_source = {}
    for src in sorted({h.row.source for h in held}):
        e = np.array([h.error for h in held if h.row.source == src])
        per_source[src] = {"rows": int(e.size), "median_abs_error": round(float(np.median(np.abs(e))), 4),
                           "bias": round(float(np.median(e)), 4)}
    return {"per_gpu": per_gpu, "per_source": per_source,"rows": int(err.size), "median_abs_error": round(float(np.median(np.abs(err))), 4),
            "p90_abs_error": round(float(np.quantile(np.abs(err), 0.9)), 4), "bias": round(float(np.median(err)), 4),
            "measured_over_predicted_q10_q90": q, "per_architecture": per_arch, "per_precision": per_prec}


def range_group(row: Row) -> str:
    """Which range applies: 'fp32' when both runs use CUDA-core fp32 math, else 'tensor' (amp or tf32 on a side)."""
    return "fp32" if row.precision == "fp32" and row.ref_precision == "fp32" else "tensor"


def shortest_interval(ratios: Sequence[float], share: float = RANGE_SHARE) -> tuple[float, float]:
    """The narrowest [low, high] (in log space) holding `share` of the ratios: tighter than equal tails where the
    errors are skewed (the model over-predicts more held-out tensor rows than it under-predicts)."""
    logs = np.sort(np.log(np.asarray(ratios, dtype=float)))
    k = max(1, int(math.ceil(share * logs.size)))
    i = int(np.argmin(logs[k - 1:] - logs[:logs.size - k + 1]))
    return float(np.exp(logs[i])), float(np.exp(logs[i + k - 1]))


def equal_tails(ratios: Sequence[float], quantiles: tuple[float, float] = RANGE_QUANTILES) -> tuple[float, float]:
    """The pre-issue-25 range: fixed quantiles of the ratios (kept to measure before/after)."""
    lo, hi = (float(np.quantile(np.asarray(ratios, dtype=float), q)) for q in quantiles)
    return lo, hi


Interval = Callable[[Sequence[float]], tuple[float, float]]


def range_quantiles(held: Sequence[Held], interval: Interval = shortest_interval) -> dict[str, list[float]]:
    """Per range group: the stated range of measured / predicted over held-out rows (default: the narrowest interval
    holding RANGE_SHARE of them)."""
    out = {}
    for g in ("fp32", "tensor"):
        r = [h.row.ratio / h.predicted for h in held if range_group(h.row) == g]
        out[g] = [round(v, 4) for v in interval(r)] if r else [0.7, 1.3]
    return out


def nested_coverage(held: list[Held], interval: Interval = shortest_interval) -> float:
    """Share of held-out rows inside the range built without their own source: for each source, the per-group
    range comes from the other sources' held-out rows only (no row sets its own range)."""
    return range_check(held, interval)["coverage"]


def range_check(held: list[Held], interval: Interval = shortest_interval) -> dict[str, float]:
    """Coverage and width of a range construction on unseen sources: each source's rows against the range built from
    the other sources' held-out rows; width = high / low of the range each row was checked against."""
    inside, widths, per_source = 0, [], []
    for src in sorted({h.row.source for h in held}):
        ranges = range_quantiles([h for h in held if h.row.source != src], interval)
        mine = [h for h in held if h.row.source == src]
        hits = 0
        for h in mine:
            lo, hi = ranges[range_group(h.row)]
            hits += lo <= h.row.ratio / h.predicted <= hi
            widths.append(hi / lo)
        inside += hits
        per_source.append(hits / len(mine))
    return {"coverage": round(inside / len(held), 4), "coverage_per_source_mean": round(float(np.mean(per_source)), 4),
            "median_high_over_low": round(float(np.median(widths)), 3)}


def grouped_errors(held: Sequence[Held], key: Callable[[Held], tuple]) -> list[tuple[tuple, int, float, float]]:
    """(group, rows, median |error|, median signed error) per group of held-out (or in-sample) rows, largest first."""
    groups: dict[tuple, list[float]] = {}
    for h in held:
        groups.setdefault(key(h), []).append(h.error)
    out = [(k, len(e), float(np.median(np.abs(e))), float(np.median(e))) for k, e in groups.items()]
    return sorted(out, key=lambda t: (-t[1], t[0]))



# The benchmark a row measures, for comparing two sources' runs of the same one (the text of `workload` names it
# differently per source); benchmarks on other inputs (GPU-Insights' 32x32 ResNet-50) are not the same benchmark.
_BENCHMARKS = (("resnet-50", "resnet-50"), ("resnet50", "resnet-50"), ("resnet-101", "resnet-101"),
               ("resnet-152", "resnet-152"), ("resnet152", "resnet-152"), ("inception v3", "inception-v3"),
               ("inception v4", "inception-v4"), ("vgg-16", "vgg-16"), ("vgg16", "vgg-16"),
               ("transformer-xl base", "transformer-xl-base"), ("transformer-xl large", "transformer-xl-large"),
               ("tacotron2", "tacotron2"), ("waveglow", "waveglow"))


def benchmark_of(workload: str) -> Optional[str]:
    text = workload.lower()
    if "32x32" in text:
        return None
    return next((key for word, key in _BENCHMARKS if word in text), None)


@dataclass(frozen=True)
class Disagreement:
    """Two sources' measured speed ratio of the same two GPUs on the same benchmark and precision."""
    benchmark: str
    precision: str
    gpus: tuple[str, str]
    sources: tuple[str, str]
    ratios: tuple[float, float]

    @property
    def size(self) -> float:  # how far apart, as a relative difference (>= 0)
        a, b = self.ratios
        return max(a, b) / min(a, b) - 1.0


def reproducibility(rows: Sequence[Row]) -> list[Disagreement]:
    """Every pair of GPUs that two sources ran on the same benchmark at the same precision, with both ratios: how
    much labs disagree about the same measurement (no model can be closer than half of it to both)."""
    groups: dict[tuple, dict[str, float]] = {}
    for r in rows:
        bench = benchmark_of(r.workload)
        if bench is None:
            continue
        ref = r.ref_chip.id if r.ref_chip is not None else REFERENCE_CHIP
        g = groups.setdefault((r.source, bench, r.precision, ref, r.ref_precision), {})
        g[r.chip.id] = r.ratio
        if r.ref_precision == r.precision:
            g.setdefault(ref, 1.0)  # the reference run itself, at the same precision
    by_pair: dict[tuple, list[tuple[str, float]]] = {}
    for (source, bench, precision, _ref, _refp), ratios in groups.items():
        chips = sorted(ratios)
        for i, a in enumerate(chips):
            for b in chips[i + 1:]:
                by_pair.setdefault((bench, precision, a, b), []).append((source, ratios[a] / ratios[b]))
    out = []
    for (bench, precision, a, b), seen in sorted(by_pair.items()):
        for i, (s1, r1) in enumerate(seen):
            out += [Disagreement(bench, precision, (a, b), (s1, s2), (r1, r2)) for s2, r2 in seen[i + 1:] if s2 != s1]
    return out


def _median_abs(log_res: Sequence[float] | np.ndarray) -> float:
    return float(np.median(np.abs(np.expm1(np.asarray(log_res)))))


def correction_transfer(rows: list[Row], ref: GpuChip, key: Callable[[Row], tuple], variant: Optional[str] = None,
                        held_out: bool = True, fitted: Optional[PerfParams] = None) -> dict[str, float]:
    """How far a free multiplier per group (`key`, e.g. workload family x precision) would take the median error: in
    sample (the fitted model's residuals with each group's median removed) and held out by source (the multipliers
    taken from the other sources' residuals only: what such a term can carry to a lab it has not seen). `fitted`:
    the variant's fit on all `rows` when the caller has it already."""
    def residuals(some: list[Row], p: PerfParams) -> np.ndarray:
        return np.log(predict(some, p, ref)) - np.log([r.ratio for r in some])

    def shifted(train: list[Row], test: list[Row], p: PerfParams) -> tuple[np.ndarray, np.ndarray]:
        res_tr = residuals(train, p)
        groups: dict[tuple, list[float]] = {}
        for r, e in zip(train, res_tr):
            groups.setdefault(key(r), []).append(float(e))
        shift = {k: float(np.median(v)) for k, v in groups.items()}
        res = res_tr if test is train else residuals(test, p)
        return res, res - np.array([shift.get(key(r), 0.0) for r in test])
    plain, corrected = shifted(rows, rows, fitted or fit(rows, ref, variant=variant))
    held_plain: list[float] = []
    held_corrected: list[float] = []
    for src in sorted({r.source for r in rows}) if held_out else []:
        train, test = [r for r in rows if r.source != src], [r for r in rows if r.source == src]
        a, b = shifted(train, test, fit(train, ref, variant=variant))
        held_plain += list(a)
        held_corrected += list(b)
    return {"groups": float(len({key(r) for r in rows})), "in_sample": _median_abs(plain),
            "in_sample_corrected": _median_abs(corrected),
            **({"loso": _median_abs(held_plain), "loso_corrected": _median_abs(held_corrected)} if held_out else {})}
