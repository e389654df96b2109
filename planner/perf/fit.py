"""Fit the speed model on the Lambda calibration set, cross-validate it (LOGO/LOAO) and write data/perf_params.json."""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from planner.catalog.load import load_chips
from planner.catalog.models import GpuChip
from planner.perf.model import (
    DATA_DIR, MODEL_SIZE_REF, OLD_SM_ARCHS, PARAMS_FILE, REFERENCE_CHIP, SHARE_BOUNDS, TF32_ARCHS, PerfParams,
    build_name_index, compute_terms, name_key, relative_step_time,
)

SHARED_CSV = DATA_DIR.parent.parent / "shared" / "facts" / "gpu-training-benchmarks-calibration.csv"
CALIBRATION_CSV = DATA_DIR / "calibration" / "gpu-training-benchmarks.csv"
FIT_COMMAND = "python -m planner.perf.fit --write"
CLASSES = ("transformer", "cnn", "rnn")  # rnn rows only inform the 'generic' share
FITTED = ("share_transformer", "share_cnn", "share_rnn", "tensor_efficiency", "amp_memory_factor",
          "pascal_compute_efficiency", "model_size_slope")
MIN_BASELINE_THROUGHPUT = 20.0  # below this the source's integer rounding moves a ratio by more than 2.5 %
COLUMNS = ["source", "date", "workload", "workload_class", "model_params", "model_params_source", "precision_reported", "precision", "batch_size", "gpu", "chip",
           "throughput", "unit", "ratio_vs_1080ti_same_precision", "baseline_1080ti_fp32_throughput",
           "ratio_vs_1080ti_fp32", "use_in_fit", "excluded_because", "notes"]
RANGE_QUANTILES = (0.10, 0.90)
AMD_WIDENING = (0.75, 1.10)  # judgment: no AMD row in the calibration set, so the LOAO range is widened further


# Trainable parameters per benchmark model (workload name prefix -> count, source). "approx." marks estimates.
MODEL_PARAMS: tuple[tuple[str, float, str], ...] = (
    ("BERT-base", 110e6, "Devlin et al. 2019 (BERT paper): BERT-base 110M"),
    ("BERT-large", 340e6, "Devlin et al. 2019 (BERT paper): BERT-large 340M"),
    ("Transformer-XL base", 151e6, "approx.: Dai et al. 2019 Table 1, WikiText-103 standard model 151M "
                                   "(DLE base config assumed to match it)"),
    ("Transformer-XL large", 257e6, "approx.: Dai et al. 2019 Table 1, WikiText-103 large model 257M "
                                    "(DLE large config assumed to match it)"),
    ("GNMT", 160e6, "approx.: estimate for GNMT v2 as configured in NVIDIA DLE (4+4 LSTM layers of 1024, "
                    "32k shared vocabulary); not a published figure"),
    ("ResNet-50", 25.6e6, "He et al. 2016 / torchvision resnet50: 25.6M"),
    ("ResNet-152", 60.2e6, "torchvision resnet152: 60.2M"),
    ("Inception v3", 23.8e6, "approx.: Keras Applications InceptionV3 23.9M without aux head "
                             "(torchvision with aux head 27.2M)"),
    ("Inception v4", 42.7e6, "approx.: commonly cited 42.7M (timm inception_v4); not checked against the paper"),
    ("VGG-16", 138e6, "Simonyan & Zisserman 2015 Table 2: 138M"),
    ("AlexNet", 61e6, "torchvision alexnet 61.1M (Krizhevsky et al. 2012: 60M)"),
    ("SSD300", 26e6, "approx.: estimate for SSD300 with ResNet-50 backbone (NVIDIA DLE); not a published figure"),
    ("Tacotron2", 28e6, "approx.: commonly cited ~28M for NVIDIA's Tacotron2; not a published figure"),
    ("WaveGlow", 88e6, "approx.: commonly cited ~88M for NVIDIA's WaveGlow (256 channels); not a published figure"),
)


def model_size(workload: str) -> tuple[Optional[float], str]:
    """(parameters, source) of a benchmark model; (None, reason) for averages over several models."""
    for prefix, params, source in MODEL_PARAMS:
        if workload.startswith(prefix):
            return params, source
    return None, "average over several models: no single size"


def workload_class(workload: str) -> str:
    w = workload.lower()
    if w.startswith(("bert", "transformer-xl")):
        return "transformer"
    if w.startswith(("gnmt", "tacotron")):
        return "rnn"
    return "cnn"  # ResNet, SSD, Inception, VGG, AlexNet, WaveGlow (convolutional flow), CNN averages


# ---------------------------------------------------------------- normalisation (shared facts -> data/calibration)
def source_date(source: str, notes: str) -> str:
    """When the measurement was made, as far as the source says (the shared file has no date column)."""
    if "deeplearning-benchmark" in source:
        return "2020 (NGC PyTorch 20.01 / 20.10 containers; repo commit 67a9bb51)"
    if "lambda-tensorflow-benchmark" in source:
        return "2020 (TF 1.15 / 2.3 era per the repo README; commit e086e0e7; not dated in the file)"
    if "2080-ti-deep-learning-benchmarks" in source:
        return "2019-03 (Lambda blog)" if "Mar-2019" in notes else "2018-10 to 2019-03 (Lambda blog)"
    if "best-gpu-tensorflow" in source:
        return "2018-10 to 2019-02 (Lambda blog)"
    return "undated"


def _num(v: str) -> Optional[float]:
    v = (v or "").strip()
    return float(v) if v else None


def normalise(shared_csv: Path, resolve: Callable[[str], GpuChip]) -> list[dict[str, str]]:
    """Our own form of the Lambda rows: chip ids, the executed precision, and the ratio against the 1080 Ti at fp32."""
    with shared_csv.open(newline="", encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    family = lambda src: src.replace("fp16", "fp32")  # noqa: E731  fp16 and fp32 files of one benchmark
    base: dict[tuple[str, str], float] = {}
    fp32_of: dict[tuple[str, str, str], float] = {}
    for r in raw:
        t = _num(r["throughput"])
        cid = resolve(r["gpu"]).id
        if r["precision"] == "fp32" and t:
            fp32_of[(family(r["source"]), r["workload"], cid)] = t
            if cid == REFERENCE_CHIP:
                base[(family(r["source"]), r["workload"])] = t
    out = []
    for r in raw:
        chip = resolve(r["gpu"])
        t, bs = _num(r["throughput"]), _num(r["batch_size"])
        key = (family(r["source"]), r["workload"])
        b = base.get(key)
        prec = "amp" if r["precision"] == "fp16" else ("tf32" if chip.architecture in TF32_ARCHS else "fp32")
        why = ""
        if chip.id == REFERENCE_CHIP and prec == "fp32":
            why = "the baseline itself (ratio 1 by definition)"
        elif t is None or b is None:
            why = "no 1080 Ti fp32 run of this benchmark in the source (ratio vs fp32 baseline unknown)"
        elif b < MIN_BASELINE_THROUGHPUT:
            why = f"1080 Ti baseline is the rounded integer {b:g} (source CAUTION): ratio precision about +-10 %"
        elif bs == 0:
            why = "batch size recorded as 0: memory-limited run (memory limits are memfit's job)"
        elif prec == "amp" and t < 0.5 * fp32_of.get((key[0], key[1], chip.id), 0):
            why = "implausible: amp below half of the same card's fp32 throughput (failed run?)"
        note = r["notes"]
        if prec == "tf32":
            note = ("precision: Lambda 'fp32' column on Ampere = TF32 tensor math (on by default in NGC 20.10 / "
                    "TF 2.x); " + note)
        size, size_source = model_size(r["workload"])
        out.append({
            "source": r["source"], "date": source_date(r["source"], r["notes"]), "workload": r["workload"],
            "workload_class": workload_class(r["workload"]),
            "model_params": "" if size is None else f"{size:.4g}", "model_params_source": size_source,
            "precision_reported": r["precision"],
            "precision": prec, "batch_size": r["batch_size"], "gpu": r["gpu"],
            "chip": chip.id, "throughput": r["throughput"], "unit": r["unit"],
            "ratio_vs_1080ti_same_precision": r["ratio_vs_1080ti"],
            "baseline_1080ti_fp32_throughput": "" if b is None else f"{b:g}",
            "ratio_vs_1080ti_fp32": "" if (t is None or b is None) else f"{t / b:.4f}",
            "use_in_fit": "false" if why else "true", "excluded_because": why, "notes": note,
        })
    return out


def write_calibration(rows: list[dict[str, str]], path: Path = CALIBRATION_CSV) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


# ---------------------------------------------------------------- fitting
@dataclass(frozen=True)
class Row:
    chip: GpuChip
    precision: str
    wclass: str
    ratio: float
    model_params: float = MODEL_SIZE_REF


def load_rows(path: Path = CALIBRATION_CSV, chips: Optional[dict[str, GpuChip]] = None) -> list[Row]:
    chips = chips or load_chips()
    with path.open(newline="", encoding="utf-8") as fh:
        return [Row(chips[r["chip"]], r["precision"], r["workload_class"], float(r["ratio_vs_1080ti_fp32"]),
                    float(r["model_params"]))
                for r in csv.DictReader(fh) if r["use_in_fit"] == "true"]


def _sig(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def params_from_vector(x: Sequence[float], base: PerfParams) -> PerfParams:
    """Unconstrained vector -> parameters: the first six squeezed into (0, 1) by a logistic, the size slope k as is."""
    s = [_sig(v) for v in x[:6]]
    shares = {"transformer": s[0], "cnn": s[1], "rnn": s[2], "generic": base.compute_share.get("generic", 0.5)}
    slope = float(x[6]) if len(x) > 6 else base.model_size_slope
    return replace(base, compute_share=shares, tensor_efficiency=s[3], amp_memory_factor=s[4],
                   pascal_compute_efficiency=s[5], model_size_slope=slope)


def predict(rows: Iterable[Row], p: PerfParams, ref: GpuChip) -> np.ndarray:
    """Predicted ratio vs the 1080 Ti at fp32, row by row, with the model of planner.perf.model (the reference)."""
    return np.array([1.0 / relative_step_time(r.chip, r.precision, r.wclass, p, ref, r.model_params) for r in rows])


class Design:
    """The rows as arrays, so one loss evaluation is a few numpy operations (same formula as relative_step_time)."""

    def __init__(self, rows: Sequence[Row], ref: GpuChip, base: PerfParams, classes: Sequence[str] = CLASSES):
        terms = [compute_terms(r.chip, r.precision, base) for r in rows]
        self.cuda = np.array([t[0] for t in terms])
        self.tensor = np.array([t[1] for t in terms])
        self.old = np.array([r.chip.architecture in OLD_SM_ARCHS for r in rows])
        self.amd = np.array([r.chip.vendor == "AMD" for r in rows])
        self.amp = np.array([r.precision == "amp" for r in rows])
        self.bw = np.array([r.chip.mem_bandwidth_gbs for r in rows])
        self.cls = np.array([list(classes).index(r.wclass) for r in rows])
        self.log_ratio = np.log([r.ratio for r in rows])
        self.log_size = np.log10([r.model_params / MODEL_SIZE_REF for r in rows])
        ref_cuda, _ = compute_terms(ref, "fp32", base)
        self.ref_cuda, self.ref_old, self.ref_bw = ref_cuda, ref.architecture in OLD_SM_ARCHS, ref.mem_bandwidth_gbs

    def predict(self, p: PerfParams, classes: Sequence[str] = CLASSES) -> np.ndarray:
        pe = p.pascal_compute_efficiency
        c = np.maximum(self.cuda, self.tensor * p.tensor_efficiency) * np.where(self.old, pe, 1.0)
        c_ref = self.ref_cuda * (pe if self.ref_old else 1.0)
        b = self.bw / np.where(self.amp, p.amp_memory_factor, 1.0)
        share = np.array([p.compute_share[k] for k in classes])[self.cls] + p.model_size_slope * self.log_size
        share = np.clip(share, *SHARE_BOUNDS)
        t = share * c_ref / c + (1.0 - share) * self.ref_bw / b
        return 1.0 / (t / np.where(self.amd, p.amd_software_factor, 1.0))


def _loss(design: Design, p: PerfParams, classes: Sequence[str] = CLASSES, delta: float = 0.1) -> float:
    """Huber loss on log(predicted / measured): robust to the few odd rows, close to the median's L1."""
    res = np.log(design.predict(p, classes)) - design.log_ratio
    a = np.abs(res)
    return float(np.sum(np.where(a <= delta, 0.5 * res**2, delta * (a - 0.5 * delta))))


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


def fit(rows: list[Row], ref: GpuChip, base: Optional[PerfParams] = None) -> PerfParams:
    """Fit the seven free numbers (three compute shares, tensor and Pascal efficiency, amp memory, size slope k);
    then the generic share (k kept).

    Nelder-Mead from a few starting points (the logistic squeeze has flat edges), best result refined once more.
    """
    base = base or PerfParams(compute_share={"generic": 0.5}, tensor_efficiency=0.5, amp_memory_factor=0.6)
    design = Design(rows, ref, base)
    loss = lambda v: _loss(design, params_from_vector(v, base))  # noqa: E731
    starts = [[0.5, 0.5, 0.5, eta, 0.6, pe] for eta in (0.3, 0.6) for pe in (0.5, 0.8)]
    best = min((nelder_mead(loss, np.array([_logit(v) for v in s0] + [0.0])) for s0 in starts), key=loss)
    p = params_from_vector(nelder_mead(loss, best, step=0.1), base)
    pooled = Design([replace(r, wclass="generic") for r in rows], ref, base, classes=("generic",))
    g = nelder_mead(lambda v: _loss(pooled, replace(p, compute_share={"generic": _sig(v[0])}), ("generic",)),
                    np.array([_logit(0.5)]), step=0.5, iters=200)
    return replace(p, compute_share={**p.compute_share, "generic": _sig(float(g[0]))})


# ---------------------------------------------------------------- cross-validation and report
@dataclass(frozen=True)
class Held:
    row: Row
    predicted: float

    @property
    def error(self) -> float:  # relative error of the prediction, signed
        return self.predicted / self.row.ratio - 1.0


def cross_validate(rows: list[Row], ref: GpuChip, group: Callable[[Row], str], base: Optional[PerfParams] = None) -> list[Held]:
    """Refit without each group (a GPU or an architecture) and predict the held-out rows."""
    out: list[Held] = []
    for g in sorted({group(r) for r in rows}):
        train = [r for r in rows if group(r) != g]
        test = [r for r in rows if group(r) == g]
        p = fit(train, ref, base)
        out += [Held(r, v) for r, v in zip(test, predict(test, p, ref))]
    return out


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
    return {"rows": int(err.size), "median_abs_error": round(float(np.median(np.abs(err))), 4),
            "p90_abs_error": round(float(np.quantile(np.abs(err), 0.9)), 4), "bias": round(float(np.median(err)), 4),
            "measured_over_predicted_q10_q90": q, "per_architecture": per_arch, "per_precision": per_prec}


def typical_params(rows: Sequence[Row]) -> dict[str, float]:
    """Size assumed when the user gives none: geometric mean of the calibration rows per class (2 significant digits)."""
    def gmean(sizes: list[float]) -> float:
        return float(f"{math.exp(sum(math.log(v) for v in sizes) / len(sizes)):.2g}")
    out = {c: gmean([r.model_params for r in rows if r.wclass == c]) for c in CLASSES if any(r.wclass == c for r in rows)}
    return {**out, "generic": gmean([r.model_params for r in rows])}


def run(rows: list[Row], ref: GpuChip) -> dict[str, object]:
    """Fit on all rows, cross-validate by GPU and by architecture, and build the params document."""
    p = fit(rows, ref)
    logo = summarise(cross_validate(rows, ref, lambda r: r.chip.id))
    loao = summarise(cross_validate(rows, ref, lambda r: r.chip.architecture))
    insample = summarise([Held(r, v) for r, v in zip(rows, predict(rows, p, ref))])
    lo, hi = loao["measured_over_predicted_q10_q90"]  # type: ignore[misc]
    ranges = {"seen_architecture": logo["measured_over_predicted_q10_q90"], "new_architecture": [lo, hi],
              "amd": [round(lo * AMD_WIDENING[0], 4), round(hi * AMD_WIDENING[1], 4)]}
    return {
        "model": "roofline mix v2: time = share*C_ref/C + (1-share)*B_ref/B, normalised on the GTX 1080 Ti at fp32; "
                 f"share = clip(s_w + k*log10(P/{MODEL_SIZE_REF:g}), {SHARE_BOUNDS[0]}, {SHARE_BOUNDS[1]}), "
                 "P = trainable parameters (default: typical_params of the class)",
        "fitted_on": date.today().isoformat(), "command": FIT_COMMAND,
        "calibration": {"file": "data/calibration/gpu-training-benchmarks.csv", "rows_used": len(rows),
                        "chips": sorted({r.chip.id for r in rows})},
        "params": {"compute_share": {k: round(v, 4) for k, v in p.compute_share.items()},
                   "tensor_efficiency": round(p.tensor_efficiency, 4), "amp_memory_factor": round(p.amp_memory_factor, 4),
                   "pascal_compute_efficiency": round(p.pascal_compute_efficiency, 4),
                   "model_size_slope": round(p.model_size_slope, 4), "model_size_ref": MODEL_SIZE_REF,
                   "typical_params": typical_params(rows),
                   "dual_fp32_efficiency": p.dual_fp32_efficiency, "amd_fp32_efficiency": p.amd_fp32_efficiency,
                   "amd_software_factor": p.amd_software_factor},
        "fitted": list(FITTED) + ["share_generic"],
        "priors_not_fitted": {
            "dual_fp32_efficiency": "doubled FP32 datapath (Ampere+): share of the marketing FP32 rate reached; "
                                    "no true-fp32 Ampere row to fit it (Lambda 'fp32' ran TF32)",
            "amd_fp32_efficiency": "gpu-specs.csv note: 7900 XTX measured ~25 of 61.4 dual-issue TFLOPS",
            "amd_software_factor": "judgment: ROCm vs CUDA for the same specs; no AMD calibration row"},
        "ranges": ranges,
        "range_note": f"low/high = estimate x the {RANGE_QUANTILES[0]:.0%}/{RANGE_QUANTILES[1]:.0%} quantiles of "
                      "measured/predicted in cross-validation (LOGO for architectures in the calibration set, LOAO "
                      f"for new ones, LOAO widened x{AMD_WIDENING} for AMD)",
        "error": {"in_sample": insample, "leave_one_gpu_out": logo, "leave_one_architecture_out": loao},
    }


def format_report(doc: dict) -> str:
    lines = [f"speed model fit ({doc['fitted_on']}); rows used: {doc['calibration']['rows_used']}", "parameters:"]
    for k, v in doc["params"].items():
        lines.append(f"  {k:22s} {v}")
    for name in ("in_sample", "leave_one_gpu_out", "leave_one_architecture_out"):
        e = doc["error"][name]
        lines.append(f"{name}: median |error| {e['median_abs_error']:.1%}, p90 {e['p90_abs_error']:.1%}, "
                     f"bias {e['bias']:+.1%} over {e['rows']} rows")
        for arch, s in e["per_architecture"].items():
            lines.append(f"    {arch:9s} rows {s['rows']:3d}  median |error| {s['median_abs_error']:6.1%}  bias {s['bias']:+6.1%}")
        for prec, s in e["per_precision"].items():
            lines.append(f"    [{prec:4s}]   rows {s['rows']:3d}  median |error| {s['median_abs_error']:6.1%}  bias {s['bias']:+6.1%}")
    lines.append("ranges (low, high multipliers): " + ", ".join(f"{k} {v}" for k, v in doc["ranges"].items()))
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m planner.perf.fit", description=__doc__)
    ap.add_argument("--normalise", action="store_true", help=f"rebuild {CALIBRATION_CSV.relative_to(DATA_DIR.parent)} from {SHARED_CSV}")
    ap.add_argument("--write", action="store_true", help=f"write {PARAMS_FILE.relative_to(DATA_DIR.parent)}")
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
    doc = run(load_rows(chips=chips), chips[REFERENCE_CHIP])
    print(format_report(doc))
    if args.write:
        PARAMS_FILE.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {PARAMS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
