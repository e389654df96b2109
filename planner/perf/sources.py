"""Calibration rows for the speed model: the Lambda set (normalised from ../shared) and independent public sources."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from planner.catalog.load import load_chips
from planner.catalog.models import GpuChip
from planner.perf.model import DATA_DIR, MODEL_SIZE_REF, REFERENCE_CHIP, TF32_ARCHS

SHARED_CSV = DATA_DIR.parent.parent / "shared" / "facts" / "gpu-training-benchmarks-calibration.csv"
CALIBRATION_CSV = DATA_DIR / "calibration" / "gpu-training-benchmarks.csv"
INDEPENDENT_CSV = DATA_DIR / "calibration" / "independent-benchmarks.csv"

MIN_BASELINE_THROUGHPUT = 20.0  # below this the source's integer rounding moves a ratio by more than 2.5 %
COLUMNS = ["source", "date", "workload", "workload_class", "model_params", "model_params_source", "precision_reported", "precision", "batch_size", "gpu", "chip",
           "throughput", "unit", "ratio_vs_1080ti_same_precision", "baseline_1080ti_fp32_throughput",
           "ratio_vs_1080ti_fp32", "use_in_fit", "excluded_because", "notes"]


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



# ---------------------------------------------------------------- rows for the fit
@dataclass(frozen=True)
class Row:
    """One measured ratio: throughput of `chip` at `precision` over `ref_chip` at `ref_precision`, same benchmark."""

    chip: GpuChip
    precision: str
    wclass: str
    ratio: float
    model_params: float = MODEL_SIZE_REF
    ref_chip: Optional[GpuChip] = None  # None = the model's reference, the GTX 1080 Ti
    ref_precision: str = "fp32"
    source: str = "lambda-pytorch"  # lab + harness: the unit of leave-one-source-out
    lab: str = "Lambda"
    batch_ratio: float = 1.0  # per-GPU batch of the measured run over the reference run's (1 = same or unknown)
    workload: str = ""  # the benchmark as the source names it (column `workload`)


def lambda_source(source: str) -> str:
    """Harness of a Lambda row: NGC PyTorch repo, TensorFlow repo, or the blog posts."""
    if "lambda-tensorflow-benchmark" in source:
        return "lambda-tf"
    return "lambda-pytorch" if "deeplearning-benchmark" in source else "lambda-blog"


def _batch_ratio(batch: str, ref_batch: Optional[str]) -> float:
    """Batch of a run over its reference run's; 1.0 when either is unknown or recorded as 0 (chosen by the harness)."""
    try:
        b, rb = float(batch), float(ref_batch or "")
    except ValueError:
        return 1.0
    return b / rb if b > 0 and rb > 0 else 1.0


def load_rows(path: Path = CALIBRATION_CSV, chips: Optional[dict[str, GpuChip]] = None) -> list[Row]:
    """The Lambda rows used in the fit (ratio against the 1080 Ti at fp32, with the two runs' batch ratio)."""
    chips = chips or load_chips()
    with path.open(newline="", encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    family = lambda src: src.replace("fp16", "fp32")  # noqa: E731
    base_batch = {(family(r["source"]), r["workload"]): r["batch_size"] for r in raw
                  if r["chip"] == REFERENCE_CHIP and r["precision"] == "fp32"}
    return [Row(chips[r["chip"]], r["precision"], r["workload_class"], float(r["ratio_vs_1080ti_fp32"]),
                float(r["model_params"]), source=lambda_source(r["source"]),
                batch_ratio=_batch_ratio(r["batch_size"], base_batch.get((family(r["source"]), r["workload"]))),
                workload=r["workload"])
            for r in raw if r["use_in_fit"] == "true"]


def load_independent_rows(path: Path = INDEPENDENT_CSV, chips: Optional[dict[str, GpuChip]] = None) -> list[Row]:
    """Rows of the other labs: each row's throughput over its group's reference run (column `reference`,
    `chip@precision`, same source and workload); a reference missing from the file is a data error."""
    chips = chips or load_chips()
    with path.open(newline="", encoding="utf-8") as fh:
        raw = list(csv.DictReader(fh))
    runs = {(r["source"], r["workload"], r["chip"], r["precision"]): (float(r["throughput"]), r["batch_size"])
            for r in raw if r["use_in_fit"] == "true" or r["excluded_because"] == "the group's reference itself"}
    out = []
    for r in raw:
        if r["use_in_fit"] != "true":
            continue
        ref_chip, ref_prec = r["reference"].split("@")
        base = runs.get((r["source"], r["workload"], ref_chip, ref_prec))
        if base is None:
            raise ValueError(f"{path.name}: no reference run {r['reference']!r} for {r['source']} / {r['workload']}")
        out.append(Row(chips[r["chip"]], r["precision"], r["workload_class"], float(r["throughput"]) / base[0],
                       float(r["model_params"]), chips[ref_chip], ref_prec, r["source"], r["lab"],
                       _batch_ratio(r["batch_size"], base[1]), r["workload"]))
    return out


def all_rows(chips: Optional[dict[str, GpuChip]] = None) -> list[Row]:
    """Every calibration row of every source."""
    chips = chips or load_chips()
    return load_rows(chips=chips) + load_independent_rows(chips=chips)
