"""Fit the speed model's free numbers to calibration rows: parameter vectors, design, Huber loss, Nelder-Mead,
the model variants and their average."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from planner.catalog.models import GpuChip
from planner.perf.model import (
    MATMUL_SHARE_BOUNDS, MODEL_SIZE_REF, OLD_SM_ARCHS, OVERHEAD_MAX, SHARE_BOUNDS, PerfParams, has_old_tensor_cores,
    compute_terms, dram_bandwidth, l2_sizes, sm_clock_tflops, is_pro, load_power_variants, power_scale, relative_power_density, relative_step_time,
)
from planner.perf.families import FAMILIES, PRIOR_WEIGHT, RIDGE, family_of, shifted_matmul_share, shifted_share
from planner.perf.sources import (
    Row,
)

FAMILY_NAMES = tuple(FAMILIES)


CLASSES = ("transformer", "cnn", "rnn")  # rnn rows only inform the 'generic' share
FITTED = ("share_transformer", "share_cnn", "share_rnn", "tensor_efficiency", "amp_memory_factor",
          "pascal_compute_efficiency", "model_size_slope", "pro_clock_factor", "overhead_ref", "batch_exponent")
# Range = estimate x these quantiles of measured/predicted, per precision group: the narrowest pair of those tried
# (5/95, 2.5/97.5, 1/99) whose nested leave-one-source-out coverage reaches the 90 % aim (see nested_coverage).

# Model variants (extra free numbers after the ten of v3), chosen by nested leave-one-source-out (choose_variant).
# Model variants: extra free numbers after the ten of v3, chosen by nested leave-one-source-out (choose_variant).
EXTRAS: dict[str, list[float]] = {  # name -> starting values in the unconstrained vector
    "matmul": [0.0, 0.05],  # matmul share f0 (0.75 at the start) and its size slope: the rest stays on CUDA cores
    "l2": [math.log(150.0), math.log(32.0)],  # L2 bandwidth per SM-clock TFLOPS (GB/s) and half-hit L2 size (MB)
    "powercap": [0.0, 0.0],  # power-density threshold (0.65 at the start, in (0.3, 1)) and clock exponent (in [1/3, 1])
    "families": [0.0] * (2 * len(FAMILY_NAMES)),  # per family: logit offsets of the compute share and the matmul share
    "tcgen": [2.0],  # Volta/Turing tensor-path factor eta_old in (0.3, 1): 0.3 + 0.7 x logistic (0.92 at the start)
    "fp32cap": [0.0, 0.0],  # as `powercap` (threshold in (0.3, 1), exponent in [1/3, 1]), CUDA-core math only
}
EXTRA_NAMES = {"matmul": ("tensor_matmul_share", "tensor_share_slope"), "l2": ("l2_bw_per_tflops", "l2_working_set_mb"),
               "powercap": ("power_density_threshold", "power_density_exponent"),
               "families": tuple(f"family_offsets.{f}.{k}" for f in FAMILY_NAMES for k in ("share", "matmul")),
               "tcgen": ("tensor_gen_efficiency",),
               "fp32cap": ("power_density_threshold", "power_density_exponent")}
# name -> (extras, source weight power w: row weight = rows of its source ^ -w)
VARIANTS: dict[str, tuple[tuple[str, ...], float]] = {
    "v3": ((), 1.0), "v3-w0.5": ((), 0.5), "matmul": (("matmul",), 1.0), "l2": (("l2",), 1.0),
    "powercap": (("powercap",), 0.5),  # issue 14, round 3: power-starved boards (T4, A10, L4) cannot hold their clock
    # issue 14, round 4: `matmul` plus a compute share and a tensor-core share per workload family (families.py),
    # each pulled to its parent class by a fixed prior; fitted by block coordinate descent (_fit_families)
    "families": (("matmul", "families"), 1.0),
    # issue 14, round 7: `matmul` plus one factor on the tensor path of the first two tensor-core generations (Volta,
    # Turing: physics.OLD_TENSOR_ARCHS), pulled toward 1 by a fixed prior (tcgen_prior); fp32 rows never see it
    "tcgen": (("matmul", "tcgen"), 1.0),
    # issue 14, round 9: `matmul` plus the power-density clock cap of `powercap`, but only on steps whose math runs
    # on the CUDA cores (fp32): a power-starved board (T4: TU104 at 70 W) loses clock there, not on the tensor path
    "fp32cap": (("matmul", "fp32cap"), 1.0),
}
FAMILIES_VARIANT = "families"
# Round 3b: `average` = equal-weight geometric mean of the predictions of the five round-3 variants, each fitted on the
# same rows (weights fixed in advance, none fitted); a candidate like the others in the nested choice.
AVERAGE = "average"
# Its members stay these five: neither round 4's `families`, round 7's `tcgen` nor round 9's `fp32cap` joined
# (decided before their runs).
AVERAGE_MEMBERS: tuple[str, ...] = ("v3", "v3-w0.5", "matmul", "l2", "powercap")
# Prior of `tcgen`, fixed before its one nested run: Huber (delta 0.1) on log(eta_old), i.e. toward 1 = no generation
# gap, with the weight of half a source (every source weighs 1 in this variant's fit).
TCGEN_PRIOR_WEIGHT = 0.5
CANDIDATES: tuple[str, ...] = (*VARIANTS, AVERAGE)
DEFAULT_VARIANT = "matmul"  # the shipped variant: chosen by `--nested` (docs/perf.md, "How the variant was chosen"; rounds 10-11)

def _sig(x: float) -> float:
    # exp(-x) overflows below x = -709.8 (a simplex step on a hostile training set went there); exp(x) is the same
    # value to double precision from -700 down, so ordinary fits are bit-for-bit unchanged.
    return 1.0 / (1.0 + math.exp(-x)) if x > -700.0 else math.exp(x)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def params_from_vector(x: Sequence[float] | np.ndarray, base: PerfParams, variant: str = "v3") -> PerfParams:
    """Unconstrained vector -> parameters: six squeezed into (0, 1) by a logistic, the size slope k clipped at 0 (bigger
    layers never lower the arithmetic intensity), the pro clock factor as exp(x), the overhead share at 1e8
    parameters as OVERHEAD_MAX x logistic; then the variant's extras in EXTRAS order (matmul share in (0.5, 1) with
    a slope >= 0; L2 bandwidth factor and half-hit size as exp(x); the Volta/Turing tensor factor in (0.3, 1))."""
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
        elif extra in ("powercap", "fp32cap"):  # physics prior: clock ~ power^(1/3) on the DVFS curve, ~ power at the
            # voltage floor; `fp32cap`: the same bounds, the cap binding only on CUDA-core math
            p = replace(p, power_density_threshold=0.3 + 0.7 * _sig(float(x[i])),
                        power_density_exponent=1.0 / 3.0 + (2.0 / 3.0) * _sig(float(x[i + 1])),
                        power_cap_cuda_only=float(extra == "fp32cap"))
        elif extra == "tcgen":  # physics prior: an older generation reaches at most the newer one's share of its peak
            p = replace(p, tensor_gen_efficiency=0.3 + 0.7 * _sig(float(x[i])))
        elif extra == "families":
            p = replace(p, family_offsets={f: (float(x[i + 2 * j]), float(x[i + 2 * j + 1]))
                                           for j, f in enumerate(FAMILY_NAMES)})
        i += len(EXTRAS[extra])
    return p


def predict(rows: Iterable[Row], p: PerfParams, ref: GpuChip, variants: Optional[dict[str, float]] = None) -> np.ndarray:
    """Predicted ratio of each row (target over its reference run), with the model of planner.perf.model (the reference)."""
    v = load_power_variants() if variants is None else variants
    if p.members:  # average: geometric mean of the members' predictions (each with its own batch exponent)
        rows = list(rows)
        return np.exp(np.mean([np.log(predict(rows, m, ref, v)) for m in p.members.values()], axis=0))

    def t(chip: GpuChip, prec: str, r: Row) -> float:  # a row's own family ("" = none: its class)
        return relative_step_time(chip, prec, r.wclass, p, ref, r.model_params, v.get(chip.id, 1.0),
                                  family_of(r.workload) if r.workload else "")
    return np.array([t(r.ref_chip or ref, r.ref_precision, r) / t(r.chip, r.precision, r) * r.batch_ratio ** p.batch_exponent
                     for r in rows])


class _Side:
    """Chip-dependent arrays of one side of the rows' ratios (the measured card, or its reference run)."""

    def __init__(self, chips: Sequence[GpuChip], precs: Sequence[str], base: PerfParams, variants: dict[str, float]):
        terms = [compute_terms(c, pr, base) for c, pr in zip(chips, precs)]
        self.cuda = np.array([t[0] for t in terms])
        self.tensor = np.array([t[1] for t in terms])
        self.old = np.array([c.architecture in OLD_SM_ARCHS for c in chips])
        self.oldtc = np.array([has_old_tensor_cores(c) for c in chips])
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

    def time(self, p: PerfParams, share: np.ndarray, c_ref: np.ndarray | float, b_ref: float, o: np.ndarray,
             f: np.ndarray) -> np.ndarray:
        tc = self.tensor * p.tensor_efficiency * np.where(self.oldtc, p.tensor_gen_efficiency, 1.0)
        with np.errstate(divide="ignore"):
            amdahl = 1.0 / (f / np.where(tc > 0, tc, np.inf) + (1.0 - f) / self.cuda)
        c = np.where(tc > self.cuda, amdahl, self.cuda)
        if p.power_density_threshold > 0:
            cap = np.minimum(self.density / p.power_density_threshold, 1.0) ** p.power_density_exponent
            # `fp32cap`: the clock drops only for CUDA-core math; the faster of the capped CUDA path and the tensor path
            c = np.maximum(np.where(tc > 0, amdahl, 0.0), self.cuda * cap) if p.power_cap_cuda_only else c * cap
        c = c * np.where(self.old, p.pascal_compute_efficiency, 1.0) * np.where(self.pro, p.pro_clock_factor, 1.0)
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
        self.fam = np.array([FAMILY_NAMES.index(family_of(r.workload)) if r.workload else -1 for r in rows], dtype=int)
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
        share = np.array([p.compute_share[k] for k in classes])[self.cls]
        f0 = np.full(share.shape, p.tensor_matmul_share)
        if p.family_offsets:  # variant `families`: each family's shares moved from its parent's in logit space
            a, b = (np.array([p.family_offsets.get(f, (0.0, 0.0))[k] for f in FAMILY_NAMES] + [0.0])[self.fam]
                    for k in (0, 1))  # index -1 (no family) picks the trailing 0
            share, f0 = shifted_share(share, a), shifted_matmul_share(f0, b)
        share = np.clip(share + p.model_size_slope * self.log_size, *SHARE_BOUNDS)
        o = np.minimum(p.overhead_ref * (10.0 ** -self.log_size) ** p.overhead_exponent, OVERHEAD_MAX)
        f = np.clip(f0 + p.tensor_share_slope * self.log_size, *MATMUL_SHARE_BOUNDS)
        b_ref = dram_bandwidth(self.ref, p)
        ratio = self.base.time(p, share, c_ref, b_ref, o, f) / self.target.time(p, share, c_ref, b_ref, o, f)
        return ratio * np.exp(p.batch_exponent * self.log_batch)


def _huber(res: np.ndarray, weight: np.ndarray, delta: float = 0.1) -> float:
    a = np.abs(res)
    return float(np.sum(weight * np.where(a <= delta, 0.5 * res**2, delta * (a - 0.5 * delta))))


def _loss(design: Design, p: PerfParams, classes: Sequence[str] = CLASSES, delta: float = 0.1) -> float:
    """Huber loss on log(predicted / measured): robust to the few odd rows, close to the median's L1."""
    return _huber(np.log(design.predict(p, classes)) - design.log_ratio, design.weight, delta)


def tcgen_prior(p: PerfParams) -> float:
    """Prior of the `tcgen` variant: a pseudo-measurement that Volta/Turing tensor cores reach the same share of their
    peak as Ampere onwards (Huber on log(eta_old)), weight TCGEN_PRIOR_WEIGHT; 0 when the factor is 1 (off)."""
    return _huber(np.array([math.log(p.tensor_gen_efficiency)]), np.array([TCGEN_PRIOR_WEIGHT]))


def family_prior(design: Design, p: PerfParams) -> float:
    """Prior of the `families` variant: pseudo-measurements saying each family's rows behave as its parent class
    predicts them (Huber on log(family / parent prediction), weight PRIOR_WEIGHT spread over the family's rows),
    plus a small ridge on the offsets themselves (an offset its rows cannot see, e.g. the tensor share of a family
    measured only in fp32, stays at 0)."""
    if not p.family_offsets:
        return 0.0
    counts = np.bincount(design.fam[design.fam >= 0], minlength=len(FAMILY_NAMES))
    w = np.where(design.fam >= 0, PRIOR_WEIGHT / np.maximum(counts[design.fam], 1), 0.0)
    shift = np.log(design.predict(p)) - np.log(design.predict(replace(p, family_offsets={})))
    return _huber(shift, w) + RIDGE * sum(a * a + b * b for a, b in p.family_offsets.values())


def _fit_families(design: Design, loss: Callable[[np.ndarray], float], x: np.ndarray, rounds: int) -> np.ndarray:
    """Block coordinate descent for `families` on its `loss` (fit plus family prior): each measured family's two
    offsets alone (the rest fixed), then the shared numbers with the offsets fixed, `rounds` times. Families without
    rows keep offsets 0 (their parent's)."""
    x = np.asarray(x, dtype=float).copy()
    n_shared = len(x) - len(EXTRAS["families"])
    present = set(int(i) for i in design.fam if i >= 0)
    for j in range(len(FAMILY_NAMES)):
        if j not in present:
            x[n_shared + 2 * j: n_shared + 2 * j + 2] = 0.0
    for _ in range(rounds):
        for j in sorted(present):
            k = n_shared + 2 * j

            def part(v: np.ndarray, k: int = k) -> float:
                y = x.copy()
                y[k: k + 2] = v
                return loss(y)
            x[k: k + 2] = nelder_mead(part, x[k: k + 2], step=0.5, iters=200)

        def shared(v: np.ndarray) -> float:
            return loss(np.concatenate([v, x[n_shared:]]))
        x[:n_shared] = nelder_mead(shared, x[:n_shared], step=0.1, iters=600)
    return x


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
    """(unconstrained vector, parameters) of the lowest training loss found from several starting points (the
    logistic squeeze has flat edges and the loss more than one basin), the best refined once more. `x0` (a warm
    start) is one more starting point, never a constraint: the fit it leads to is kept only if its training loss is
    lower, so a start fitted on rows outside `rows` (e.g. a held-out source's) cannot hold the fit in a worse basin."""
    base = base or PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    variant = variant or DEFAULT_VARIANT
    if variant not in VARIANTS:
        raise ValueError(f"fit_vector fits one variant of {tuple(VARIANTS)}, not {variant!r} (use fit for {AVERAGE!r})")
    extras, weight_power = VARIANTS[variant]
    design = Design(rows, ref, base, weight_power=weight_power)
    with_prior = "tcgen" in extras

    def loss(v: np.ndarray) -> float:
        p = params_from_vector(v, base, variant)
        prior = tcgen_prior(p) if with_prior else family_prior(design, p) if variant == FAMILIES_VARIANT else 0.0
        return _loss(design, p) + prior
    if variant == FAMILIES_VARIANT:  # from `matmul` (offsets 0 = every family as its parent), and from the warm start
        found = [_fit_families(design, loss, np.concatenate([fit_vector(rows, ref, base, "matmul")[0],
                                                             EXTRAS["families"]]), rounds=3)]
        if x0 is not None:
            found.append(_fit_families(design, loss, x0, rounds=2))
    else:
        starts = [[0.5, 0.5, 0.5, eta, 0.6, pe] for eta in (0.3, 0.6) for pe in (0.5, 0.8)]
        tail = [0.0, 0.0, _logit(0.02 / OVERHEAD_MAX), 0.0] + [v for e in extras for v in EXTRAS[e]]
        cold = min((nelder_mead(loss, np.array([_logit(v) for v in s0] + tail), iters=900) for s0 in starts), key=loss)
        found = [nelder_mead(loss, start, step=0.1, iters=900)
                 for start in ([cold] if x0 is None else [cold, np.asarray(x0, dtype=float)])]
    x = min(found, key=loss)
    p = params_from_vector(x, base, variant)
    pooled = Design([replace(r, wclass="generic") for r in rows], ref, base, classes=("generic",),
                    weight_power=weight_power)
    g = nelder_mead(lambda v: _loss(pooled, replace(p, compute_share={"generic": _sig(v[0])}, family_offsets={}),
                                    ("generic",)),
                    np.array([_logit(0.5)]), step=0.5, iters=200)
    generic = _sig(float(g[0]))
    seen = {r.wclass for r in rows}  # a class without rows keeps no fitted share: it falls back to the pooled one
    fams = {family_of(r.workload) for r in rows if r.workload}  # a family without rows: its parent class (no entry)
    return x, replace(p, compute_share={**{k: (v if k in seen else generic) for k, v in p.compute_share.items()},
                                        "generic": generic},
                      family_offsets={f: o for f, o in p.family_offsets.items() if f in fams})


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


