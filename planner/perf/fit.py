"""Fit the speed model on every calibration source, cross-validate it (by source, GPU, architecture), write params."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, replace
from datetime import date
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from planner.catalog.load import load_chips
from planner.catalog.models import GpuChip
from planner.perf.model import (
    geometric_mean, DATA_DIR, MATMUL_SHARE_BOUNDS, MODEL_SIZE_REF, OLD_SM_ARCHS, OVERHEAD_MAX, PARAMS_FILE, REFERENCE_CHIP, SHARE_BOUNDS, PerfParams,
    build_name_index, compute_terms, dram_bandwidth, l2_sizes, sm_clock_tflops, is_pro, load_power_variants, name_key, power_scale, relative_power_density, relative_step_time,
)
from planner.perf.sources import (  # noqa: F401  (re-exported: the calibration data's public names)
    CALIBRATION_CSV, COLUMNS, INDEPENDENT_CSV, SHARED_CSV, Row, all_rows, load_independent_rows, load_rows,
    model_size, normalise, workload_class, write_calibration,
)

FIT_COMMAND = "python -m planner.perf.fit --write"
CLASSES = ("transformer", "cnn", "rnn")  # rnn rows only inform the 'generic' share
FITTED = ("share_transformer", "share_cnn", "share_rnn", "tensor_efficiency", "amp_memory_factor",
          "pascal_compute_efficiency", "model_size_slope", "pro_clock_factor", "overhead_ref", "batch_exponent")
# Range = estimate x these quantiles of measured/predicted, per precision group: the narrowest pair of those tried
# (5/95, 2.5/97.5, 1/99) whose nested leave-one-source-out coverage reaches the 90 % aim (see nested_coverage).
RANGE_QUANTILES = (0.01, 0.99)
SIZE_WIDENING = 0.25  # judgment: range grows by this share per decade of model size outside the calibrated sizes
AMD_WIDENING = (0.75, 1.10)  # judgment: no AMD row in the calibration set, so the LOAO range is widened further

# Model variants (extra free numbers after the ten of v3), chosen by nested leave-one-source-out (choose_variant).
# Model variants: extra free numbers after the ten of v3, chosen by nested leave-one-source-out (choose_variant).
EXTRAS: dict[str, list[float]] = {  # name -> starting values in the unconstrained vector
    "matmul": [0.0, 0.05],  # matmul share f0 (0.75 at the start) and its size slope: the rest stays on CUDA cores
    "l2": [math.log(150.0), math.log(32.0)],  # L2 bandwidth per SM-clock TFLOPS (GB/s) and half-hit L2 size (MB)
    "powercap": [0.0, 0.0],  # power-density threshold (0.65 at the start, in (0.3, 1)) and clock exponent (in [1/3, 1])
}
EXTRA_NAMES = {"matmul": ("tensor_matmul_share", "tensor_share_slope"), "l2": ("l2_bw_per_tflops", "l2_working_set_mb"),
               "powercap": ("power_density_threshold", "power_density_exponent")}
# name -> (extras, source weight power w: row weight = rows of its source ^ -w)
VARIANTS: dict[str, tuple[tuple[str, ...], float]] = {
    "v3": ((), 1.0), "v3-w0.5": ((), 0.5), "matmul": (("matmul",), 1.0), "l2": (("l2",), 1.0),
    "powercap": (("powercap",), 0.5),  # issue 14, round 3: power-starved boards (T4, A10, L4) cannot hold their clock
}
# Round 3b: `average` = equal-weight geometric mean of the predictions of every variant above, each fitted on the same
# rows (weights fixed in advance, none fitted); a candidate like the others in the nested choice.
AVERAGE = "average"
AVERAGE_MEMBERS: tuple[str, ...] = tuple(VARIANTS)
CANDIDATES: tuple[str, ...] = (*VARIANTS, AVERAGE)
DEFAULT_VARIANT = "matmul"  # the shipped variant: chosen by `--nested` (docs/perf.md, "How the variant was chosen")

# ---------------------------------------------------------------- fitting
def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def params_from_vector(x: Sequence[float], base: PerfParams, variant: str = "v3") -> PerfParams:
    """Unconstrained vector -> parameters: six squeezed into (0, 1) by a logistic, the size slope k clipped at 0 (bigger
    layers never lower the arithmetic intensity), the pro clock factor as exp(x), the overhead share at 1e8
    parameters as OVERHEAD_MAX x logistic; then the variant's extras in EXTRAS order (matmul share in (0.5, 1) with
    a slope >= 0; L2 bandwidth factor and half-hit size as exp(x))."""
    s = [_sig(v) for v in x[:6]]
    shares = {"transformer": s[0], "cnn": s[1], "rnn": s[2], "generic": base.compute_share.get("generic", 0.5)}
    slope = max(float(x[6]), 0.0) if len(x) > 6 else base.model_size_slope  # physics prior: k >= 0
    pro = math.exp(float(x[7])) if len(x) > 7 else base.pro_clock_factor
    overhead = OVERHEAD_MAX * _sig(float(x[8])) if len(x) > 8 else base.overhead_ref
    batch = float(x[9]) if len(x) > 9 else base.batch_exponent
    p = replace(base, compute_share=shares, tensor_efficiency=s[3], amp_memory_factor=s[4],
                pascal_compute_efficiency=s[5], model_size_slope=slope, pro_clock_factor=pro, overhead_ref=overhead,
                batch_exponent=batch)
    i = 10
    for extra in VARIANTS[variant][0]:
        if extra == "matmul":  # physics prior: smaller models -> more elementwise work, slope >= 0
            p = replace(p, tensor_matmul_share=0.5 + 0.5 * _sig(float(x[i])), tensor_share_slope=max(float(x[i + 1]), 0.0))
        elif extra == "l2":
            p = replace(p, l2_bw_per_tflops=math.exp(float(x[i])), l2_working_set_mb=math.exp(float(x[i + 1])))
        elif extra == "powercap":  # physics prior: clock ~ power^(1/3) on the DVFS curve, ~ power at the voltage floor
            p = replace(p, power_density_threshold=0.3 + 0.7 * _sig(float(x[i])),
                        power_density_exponent=1.0 / 3.0 + (2.0 / 3.0) * _sig(float(x[i + 1])))
        i += len(EXTRAS[extra])
    return p


def predict(rows: Iterable[Row], p: PerfParams, ref: GpuChip, variants: Optional[dict[str, float]] = None) -> np.ndarray:
    """Predicted ratio of each row (target over its reference run), with the model of planner.perf.model (the reference)."""
    v = load_power_variants() if variants is None else variants
    if p.members:  # average: geometric mean of the members' predictions (each with its own batch exponent)
        rows = list(rows)
        return np.exp(np.mean([np.log(predict(rows, m, ref, v)) for m in p.members.values()], axis=0))

    def t(chip: GpuChip, prec: str, r: Row) -> float:
        return relative_step_time(chip, prec, r.wclass, p, ref, r.model_params, v.get(chip.id, 1.0))
    return np.array([t(r.ref_chip or ref, r.ref_precision, r) / t(r.chip, r.precision, r) * r.batch_ratio ** p.batch_exponent
                     for r in rows])


class _Side:
    """Chip-dependent arrays of one side of the rows' ratios (the measured card, or its reference run)."""

    def __init__(self, chips: Sequence[GpuChip], precs: Sequence[str], base: PerfParams, variants: dict[str, float]):
        terms = [compute_terms(c, pr, base) for c, pr in zip(chips, precs)]
        self.cuda = np.array([t[0] for t in terms])
        self.tensor = np.array([t[1] for t in terms])
        self.old = np.array([c.architecture in OLD_SM_ARCHS for c in chips])
        self.pro = np.array([is_pro(c) for c in chips])
        self.amd = np.array([c.vendor == "AMD" for c in chips])
        self.amp = np.array([pr == "amp" for pr in precs])
        self.bw = np.array([c.mem_bandwidth_gbs for c in chips])
        self.l2 = np.array([l2_sizes().get(c.id, 0.0) for c in chips])
        self.sm = np.array([sm_clock_tflops(c) for c in chips])
        self.power = np.array([power_scale(variants.get(c.id, 1.0)) for c in chips])
        self.density = np.array([relative_power_density(c) for c in chips])

    def dram(self, p: PerfParams) -> np.ndarray:
        if p.l2_bw_per_tflops <= 0:
            return self.bw
        h = self.l2 / (self.l2 + p.l2_working_set_mb)
        return 1.0 / ((1.0 - h) / self.bw + h / (p.l2_bw_per_tflops * self.sm))

    def time(self, p: PerfParams, share: np.ndarray, c_ref: np.ndarray, b_ref: float, o: np.ndarray,
             f: np.ndarray) -> np.ndarray:
        tc = self.tensor * p.tensor_efficiency
        with np.errstate(divide="ignore"):
            amdahl = 1.0 / (f / np.where(tc > 0, tc, np.inf) + (1.0 - f) / self.cuda)
        c = np.where(tc > self.cuda, amdahl, self.cuda)
        c = c * np.where(self.old, p.pascal_compute_efficiency, 1.0) * np.where(self.pro, p.pro_clock_factor, 1.0)
        if p.power_density_threshold > 0:
            c = c * np.minimum(self.density / p.power_density_threshold, 1.0) ** p.power_density_exponent
        b = self.dram(p) / np.where(self.amp, p.amp_memory_factor, 1.0)
        t = (share * c_ref / c + (1.0 - share) * b_ref / b) / (np.where(self.amd, p.amd_software_factor, 1.0) * self.power)
        return (1.0 - o) * t + o


class Design:
    """The rows as arrays, so one loss evaluation is a few numpy operations (same formula as relative_step_time)."""

    def __init__(self, rows: Sequence[Row], ref: GpuChip, base: PerfParams, classes: Sequence[str] = CLASSES,
                 variants: Optional[dict[str, float]] = None, weight_power: float = 1.0):
        v = load_power_variants() if variants is None else variants
        self.target = _Side([r.chip for r in rows], [r.precision for r in rows], base, v)
        self.base = _Side([r.ref_chip or ref for r in rows], [r.ref_precision for r in rows], base, v)
        self.cls = np.array([list(classes).index(r.wclass) for r in rows])
        self.log_ratio = np.log([r.ratio for r in rows])
        self.log_size = np.log10([r.model_params / MODEL_SIZE_REF for r in rows])
        self.log_batch = np.log([r.batch_ratio for r in rows])
        counts = {src: sum(r.source == src for r in rows) for src in {r.source for r in rows}}
        # w = 0 lets the largest source (Lambda PyTorch, 198 rows) set the fit, w = 1 gives each source the same weight
        self.weight = np.array([counts[r.source] ** -weight_power for r in rows])
        self.ref_cuda, _ = compute_terms(ref, "fp32", base)
        self.ref_old, self.ref = ref.architecture in OLD_SM_ARCHS, ref

    def predict(self, p: PerfParams, classes: Sequence[str] = CLASSES) -> np.ndarray:
        c_ref = self.ref_cuda * (p.pascal_compute_efficiency if self.ref_old else 1.0)
        share = np.array([p.compute_share[k] for k in classes])[self.cls] + p.model_size_slope * self.log_size
        share = np.clip(share, *SHARE_BOUNDS)
        o = np.minimum(p.overhead_ref * (10.0 ** -self.log_size) ** p.overhead_exponent, OVERHEAD_MAX)
        f = np.clip(p.tensor_matmul_share + p.tensor_share_slope * self.log_size, *MATMUL_SHARE_BOUNDS)
        b_ref = dram_bandwidth(self.ref, p)
        ratio = self.base.time(p, share, c_ref, b_ref, o, f) / self.target.time(p, share, c_ref, b_ref, o, f)
        return ratio * np.exp(p.batch_exponent * self.log_batch)


def _loss(design: Design, p: PerfParams, classes: Sequence[str] = CLASSES, delta: float = 0.1) -> float:
    """Huber loss on log(predicted / measured): robust to the few odd rows, close to the median's L1."""
    res = np.log(design.predict(p, classes)) - design.log_ratio
    a = np.abs(res)
    return float(np.sum(design.weight * np.where(a <= delta, 0.5 * res**2, delta * (a - 0.5 * delta))))


def nelder_mead(
    f: Callable[[np.ndarray], float], x0: np.ndarray, step: float = 0.5, iters: int = 600, tol: float = 1e-9
) -> np.ndarray:
    """Plain Nelder-Mead (no SciPy dependency): enough for a handful of smooth parameters."""
    n = len(x0)
    simplex = [x0] + [x0 + step * np.eye(n)[i] for i in range(n)]
    vals = [f(x) for x in simplex]
    for _ in range(iters):
        order = np.argsort(vals)
        simplex, vals = [simplex[i] for i in order], [vals[i] for i in order]
        if abs(vals[-1] - vals[0]) < tol:
            break
        centroid = np.mean(simplex[:-1], axis=0)
        xr = centroid + (centroid - simplex[-1])
        fr = f(xr)
        if fr < vals[0]:
            xe = centroid + 2.0 * (centroid - simplex[-1])
            fe = f(xe)
            simplex[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            simplex[-1], vals[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (simplex[-1] - centroid)
            fc = f(xc)
            if fc < vals[-1]:
                simplex[-1], vals[-1] = xc, fc
            else:
                simplex = [simplex[0] + 0.5 * (x - simplex[0]) for x in simplex]
                vals = [f(x) for x in simplex]
    return simplex[int(np.argmin(vals))]


def fit_vector(rows: list[Row], ref: GpuChip, base: Optional[PerfParams] = None, variant: Optional[str] = None,
               x0: Optional[np.ndarray] = None) -> tuple[np.ndarray, PerfParams]:
    """(unconstrained vector, parameters) of the best fit; from `x0` (one warm start) when given, else from
    several starting points (the logistic squeeze has flat edges) with the best result refined once more."""
    base = base or PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    variant = variant or DEFAULT_VARIANT
    if variant not in VARIANTS:
        raise ValueError(f"fit_vector fits one variant of {tuple(VARIANTS)}, not {variant!r} (use fit for {AVERAGE!r})")
    extras, weight_power = VARIANTS[variant]
    design = Design(rows, ref, base, weight_power=weight_power)
    loss = lambda v: _loss(design, params_from_vector(v, base, variant))  # noqa: E731
    if x0 is None:
        starts = [[0.5, 0.5, 0.5, eta, 0.6, pe] for eta in (0.3, 0.6) for pe in (0.5, 0.8)]
        tail = [0.0, 0.0, _logit(0.02 / OVERHEAD_MAX), 0.0] + [v for e in extras for v in EXTRAS[e]]
        x0 = min((nelder_mead(loss, np.array([_logit(v) for v in s0] + tail), iters=900) for s0 in starts), key=loss)
    x = nelder_mead(loss, np.asarray(x0, dtype=float), step=0.1, iters=900)
    p = params_from_vector(x, base, variant)
    pooled = Design([replace(r, wclass="generic") for r in rows], ref, base, classes=("generic",),
                    weight_power=weight_power)
    g = nelder_mead(lambda v: _loss(pooled, replace(p, compute_share={"generic": _sig(v[0])}), ("generic",)),
                    np.array([_logit(0.5)]), step=0.5, iters=200)
    generic = _sig(float(g[0]))
    seen = {r.wclass for r in rows}  # a class without rows keeps no fitted share: it falls back to the pooled one
    return x, replace(p, compute_share={**{k: (v if k in seen else generic) for k, v in p.compute_share.items()},
                                        "generic": generic})


def fit(rows: list[Row], ref: GpuChip, base: Optional[PerfParams] = None, variant: Optional[str] = None) -> PerfParams:
    """Fit the ten free numbers of v3 (three compute shares, tensor and Pascal efficiency, amp memory, size slope k,
    pro clock factor, overhead share, batch exponent) plus the variant's extras; then the generic share.
    Variant `average`: every member fitted on the same rows, combined by geometric mean (PerfParams.members)."""
    variant = variant or DEFAULT_VARIANT
    if variant == AVERAGE:
        return average_of({m: fit_vector(rows, ref, base, m)[1] for m in AVERAGE_MEMBERS})
    return fit_vector(rows, ref, base, variant)[1]


def average_of(members: dict[str, PerfParams]) -> PerfParams:
    """The `average` variant from fitted members: predicts the geometric mean of their predictions."""
    first = next(iter(members.values()))
    return replace(first, members=dict(members))


# ---------------------------------------------------------------- cross-validation and report
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
    """Leave-one-source-out inside `rows` for one variant; each fit warm-started from x0 (a fit on `rows`)."""
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


def typical_params(rows: Sequence[Row]) -> dict[str, float]:
    """Size assumed when the user gives none: geometric mean of the calibration rows per class (2 significant digits)."""
    def gmean(sizes: list[float]) -> float:
        return float(f"{math.exp(sum(math.log(v) for v in sizes) / len(sizes)):.2g}")
    out = {c: gmean([r.model_params for r in rows if r.wclass == c]) for c in CLASSES if any(r.wclass == c for r in rows)}
    return {**out, "generic": gmean([r.model_params for r in rows])}


def range_group(row: Row) -> str:
    """Which range applies: 'fp32' when both runs use CUDA-core fp32 math, else 'tensor' (amp or tf32 on a side)."""
    return "fp32" if row.precision == "fp32" and row.ref_precision == "fp32" else "tensor"


def range_quantiles(held: Sequence[Held]) -> dict[str, list[float]]:
    """Per range group: RANGE_QUANTILES of measured / predicted over held-out rows."""
    out = {}
    for g in ("fp32", "tensor"):
        r = np.array([h.row.ratio / h.predicted for h in held if range_group(h.row) == g])
        out[g] = [round(float(np.quantile(r, q)), 4) for q in RANGE_QUANTILES] if r.size else [0.7, 1.3]
    return out


def nested_coverage(held: list[Held]) -> float:
    """Share of held-out rows inside the range built without their own source: for each source, the per-group
    range comes from the other sources' held-out rows only (no row sets its own range)."""
    inside = 0
    for src in {h.row.source for h in held}:
        ranges = range_quantiles([h for h in held if h.row.source != src])
        for h in held:
            if h.row.source == src:
                lo, hi = ranges[range_group(h.row)]
                inside += lo <= h.row.ratio / h.predicted <= hi
    return round(inside / len(held), 4)


def fitted_names(variant: str) -> list[str]:
    """The free numbers of one (non-average) variant's fit."""
    return list(FITTED) + [n for e in VARIANTS[variant][0] for n in EXTRA_NAMES[e]] + ["share_generic"]


def _fitted_json(p: PerfParams) -> dict[str, object]:
    return {"compute_share": {k: round(v, 4) for k, v in p.compute_share.items()},
            "tensor_efficiency": round(p.tensor_efficiency, 4), "amp_memory_factor": round(p.amp_memory_factor, 4),
            "pascal_compute_efficiency": round(p.pascal_compute_efficiency, 4),
            "model_size_slope": round(p.model_size_slope, 4), "model_size_ref": MODEL_SIZE_REF,
            "pro_clock_factor": round(p.pro_clock_factor, 4), "overhead_ref": round(p.overhead_ref, 5),
            "overhead_exponent": p.overhead_exponent, "batch_exponent": round(p.batch_exponent, 4),
            "tensor_matmul_share": round(p.tensor_matmul_share, 4), "tensor_share_slope": round(p.tensor_share_slope, 4),
            "l2_bw_per_tflops": round(p.l2_bw_per_tflops, 2), "l2_working_set_mb": round(p.l2_working_set_mb, 2),
            "power_density_threshold": round(p.power_density_threshold, 4),
            "power_density_exponent": round(p.power_density_exponent, 4)}


def params_json(p: PerfParams, rows: Sequence[Row]) -> dict[str, object]:
    """The `params` block of perf_params.json: the fitted numbers (every member's, under `members`, for `average`),
    the typical sizes and the priors."""
    fitted = {"members": {n: _fitted_json(m) for n, m in p.members.items()}} if p.members else _fitted_json(p)
    return {**fitted, "typical_params": typical_params(rows), "dual_fp32_efficiency": p.dual_fp32_efficiency,
            "amd_fp32_efficiency": p.amd_fp32_efficiency, "amd_software_factor": p.amd_software_factor}


def run(rows: list[Row], ref: GpuChip, nested: bool = False, workers: int = 1) -> dict[str, object]:
    """Fit on all rows; cross-validate by source (lab + harness), GPU and architecture.

    nested=True: also choose the variant by leave-one-source-out on all rows (the shipped model) and report nested
    leave-one-source-out (variant chosen inside each training fold): the headline figure, and what the ranges use."""
    variant, selection = DEFAULT_VARIANT, None
    if nested:
        variant, all_errors = choose_variant(rows, ref)
        nested_held, folds = nested_loso(rows, ref, workers=workers)
        selection = {"chosen_on_all_sources": variant, "loso_median_error_per_variant": all_errors,
                     "per_held_out_source": folds}
    p = fit(rows, ref, variant=variant)
    loso_held = cross_validate(rows, ref, lambda r: r.source, variant=variant)
    loso = {**summarise(loso_held), "coverage_nested": nested_coverage(loso_held)}
    logo = summarise(cross_validate(rows, ref, lambda r: r.chip.id, variant=variant))
    loao_held = cross_validate(rows, ref, lambda r: r.chip.architecture, variant=variant)
    loao = summarise(loao_held)
    insample = summarise([Held(r, v) for r, v in zip(rows, predict(rows, p, ref))])
    headline_held = nested_held if nested else loso_held
    seen = range_quantiles(headline_held)
    loao_q = range_quantiles(loao_held)
    new = {g: [min(seen[g][0], loao_q[g][0]), max(seen[g][1], loao_q[g][1])] for g in seen}
    ranges = {"seen_architecture": seen, "new_architecture": new,
              "amd": {g: [round(v[0] * AMD_WIDENING[0], 4), round(v[1] * AMD_WIDENING[1], 4)] for g, v in new.items()}}
    sizes = [r.model_params for r in rows]
    return {
        "model": "roofline mix v3: work = share*C_ref/C + (1-share)*B_ref/B (power-limited variants / power_scale), "
                 "time = (1-o)*work + o, normalised on the GTX 1080 Ti at fp32; "
                 f"share = clip(s_w + k*log10(P/{MODEL_SIZE_REF:g}), {SHARE_BOUNDS[0]}, {SHARE_BOUNDS[1]}), "
                 f"o = min(o_ref*(1e8/P)^e, {OVERHEAD_MAX}); C x pro_clock_factor on workstation/datacenter boards, "
                 "x (d/d_c)^a below the power-density threshold d_c (variant powercap); variant average: geometric mean of "
                 f"the predictions of {', '.join(AVERAGE_MEMBERS)}, each fitted on the same rows",
        "fitted_on": date.today().isoformat(), "command": FIT_COMMAND,
        "calibration": {"files": ["data/calibration/gpu-training-benchmarks.csv",
                                  "data/calibration/independent-benchmarks.csv"], "rows_used": len(rows),
                        "sources": sorted({r.source for r in rows}), "chips": sorted({r.chip.id for r in rows}),
                        "model_params_range": [min(sizes), max(sizes)]},
        "size_widening_per_decade": SIZE_WIDENING,
        "params": params_json(p, rows),
        "fitted": ({m: fitted_names(m) for m in AVERAGE_MEMBERS} if variant == AVERAGE else fitted_names(variant)),
        "priors_not_fitted": {
            "dual_fp32_efficiency": "doubled FP32 datapath (Ampere+): share of the marketing FP32 rate reached; "
                                    "kept at the prior (few true-fp32 Ampere rows)",
            "overhead_exponent": "physics: fixed cost per step over GPU work that grows ~ P",
            "amd_fp32_efficiency": "gpu-specs.csv note: 7900 XTX measured ~25 of 61.4 dual-issue TFLOPS",
            "amd_software_factor": "judgment: ROCm vs CUDA for the same specs; no AMD calibration row"},
        "ranges": ranges,
        "range_note": f"low/high = estimate x the {RANGE_QUANTILES[0]:.0%}/{RANGE_QUANTILES[1]:.0%} quantiles of "
                      "measured/predicted per precision group (fp32 = CUDA-core fp32 on both sides, tensor = amp or "
                      "tf32) in leave-one-source-out (architectures with a calibration row), the wider of that and "
                      f"leave-one-architecture-out for new ones, widened x{AMD_WIDENING} for AMD; widened by "
                      f"{SIZE_WIDENING:.0%} per decade outside model_params_range",
        "variant": variant, "variant_selection": selection,
        "error": {**({"nested_leave_one_source_out": {**summarise(nested_held),
                                                      "coverage_nested": nested_coverage(nested_held)}} if nested else {}),
                  "leave_one_source_out": loso, "in_sample": insample, "leave_one_gpu_out": logo,
                  "leave_one_architecture_out": loao},
    }


def format_report(doc: dict) -> str:
    lines = [f"speed model fit ({doc['fitted_on']}); rows used: {doc['calibration']['rows_used']}", "parameters:"]
    for k, v in doc["params"].items():
        lines.append(f"  {k:22s} {v}")
    lines.append(f"variant: {doc['variant']}")
    sel = doc.get("variant_selection")
    if sel:
        lines.append(f"  chosen by leave-one-source-out on all sources: {sel['loso_median_error_per_variant']}")
        for src, f in sel["per_held_out_source"].items():
            lines.append(f"  without <{src}>: chose {f['chosen']} (inner errors {f['inner_median_error']})")
    for name in ("nested_leave_one_source_out", "leave_one_source_out", "in_sample", "leave_one_gpu_out",
                 "leave_one_architecture_out"):
        if name not in doc["error"]:
            continue
        e = doc["error"][name]
        lines.append(f"{name}: median |error| {e['median_abs_error']:.1%}, p90 {e['p90_abs_error']:.1%}, "
                     f"bias {e['bias']:+.1%} over {e['rows']} rows")
        if "coverage_nested" in e:
            lines.append(f"    coverage of the stated range (built without the held-out source): {e['coverage_nested']:.1%}")
            for src, s in e["per_source"].items():
                lines.append(f"    <{src:15s}> rows {s['rows']:3d}  median |error| {s['median_abs_error']:6.1%}  bias {s['bias']:+6.1%}")
            worst = sorted(e["per_gpu"].items(), key=lambda kv: -abs(kv[1]["bias"]))[:8]
            lines.append("    largest per-GPU bias: " + ", ".join(f"{k} {v['bias']:+.0%} ({v['rows']})" for k, v in worst))
        for arch, s in e["per_architecture"].items():
            lines.append(f"    {arch:9s} rows {s['rows']:3d}  median |error| {s['median_abs_error']:6.1%}  bias {s['bias']:+6.1%}")
        for prec, s in e["per_precision"].items():
            lines.append(f"    [{prec:4s}]   rows {s['rows']:3d}  median |error| {s['median_abs_error']:6.1%}  bias {s['bias']:+6.1%}")
    lines.append("ranges (low, high multipliers): " + "; ".join(f"{k} {v}" for k, v in doc["ranges"].items()))
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m planner.perf.fit", description=__doc__)
    ap.add_argument("--normalise", action="store_true", help=f"rebuild {CALIBRATION_CSV.relative_to(DATA_DIR.parent)} from {SHARED_CSV}")
    ap.add_argument("--write", action="store_true", help=f"write {PARAMS_FILE.relative_to(DATA_DIR.parent)}")
    ap.add_argument("--nested", action="store_true", help="choose the model variant and report nested leave-one-source-"
                    "out (the variant chosen inside each training fold; several minutes)")
    ap.add_argument("--workers", type=int, default=2, help="processes for the nested folds (default 2)")
    args = ap.parse_args(argv)
    chips = load_chips()
    if args.normalise:
        if not SHARED_CSV.exists():
            print(f"error: {SHARED_CSV} not found (../shared must sit beside the repo)", file=sys.stderr)
            return 2
        index = build_name_index(chips)
        rows = normalise(SHARED_CSV, lambda n: chips[index[name_key(n)]])
        write_calibration(rows)
        print(f"wrote {len(rows)} rows to {CALIBRATION_CSV}")
    doc = run(all_rows(chips), chips[REFERENCE_CHIP], nested=args.nested, workers=args.workers)
    print(format_report(doc))
    if args.write:
        PARAMS_FILE.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {PARAMS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
