"""Workload families of the speed model: a benchmark's family by its architecture, each under a parent class."""

from __future__ import annotations

from typing import Optional, TypeVar

import numpy as np

# Family -> (parent class of the fit, what defines it physically). Written down (with data/calibration/README.md)
# before any fit with families (issue 14, round 4); a benchmark's family follows from its architecture, never from
# its error. Parent classes are the fit's classes (transformer, cnn, rnn; rnn feeds `generic`).
FAMILIES: dict[str, tuple[str, str]] = {
    "cnn-classification": ("cnn", "image classifiers: conv stacks that shrink the image to one label (ResNet, ResNeXt, "
                                  "VGG, Inception, AlexNet)"),
    "detection-segmentation": ("cnn", "dense prediction: multi-scale heads or encoder-decoder convs with a per-box or "
                                      "per-pixel loss, large activations per parameter (SSD, RetinaNet, Mask R-CNN, U-Net, "
                                      "nnU-Net, 3D U-Net)"),
    "diffusion": ("cnn", "denoising U-Net with timestep embedding and attention blocks (DDPM)"),
    "flow-vocoder": ("cnn", "invertible flows of 1x1 convs and dilated 1-D conv coupling layers (WaveGlow)"),
    "transformer-encoder": ("transformer", "non-autoregressive self-attention stacks over a short sequence "
                                           "(BERT, ViT, FastPitch's feed-forward transformer, MLPerf's Transformer big translation "
                                           "model over sentences of <= 64 tokens)"),
    "transformer-lm": ("transformer", "autoregressive language models: causal attention over long contexts and a "
                                      "softmax over the vocabulary (Transformer-XL, GPT-like such as MPT)"),
    "rnn-seq2seq": ("rnn", "recurrent encoder-decoders: per-timestep LSTM matmuls run in sequence (GNMT, Tacotron2, "
                           "RNN-T)"),
}
# Benchmark name prefix (case-insensitive) -> family; the first match wins.
PREFIXES: tuple[tuple[str, str], ...] = (
    ("resnet", "cnn-classification"), ("resnext", "cnn-classification"), ("se-resnext", "cnn-classification"),
    ("vgg", "cnn-classification"), ("inception", "cnn-classification"), ("alexnet", "cnn-classification"),
    ("ssd", "detection-segmentation"), ("unet", "detection-segmentation"), ("u-net", "detection-segmentation"),
    ("nnu-net", "detection-segmentation"), ("3d u-net", "detection-segmentation"),
    ("mask r-cnn", "detection-segmentation"), ("retinanet", "detection-segmentation"),
    ("ddpm", "diffusion"), ("waveglow", "flow-vocoder"),
    ("bert", "transformer-encoder"), ("vit", "transformer-encoder"), ("fastpitch", "transformer-encoder"),
    ("transformer big", "transformer-encoder"),  # MLPerf's WMT encoder-decoder: short sentences, not a long-context LM
    ("transformer-xl", "transformer-lm"), ("gpt", "transformer-lm"), ("mpt", "transformer-lm"),
    ("gnmt", "rnn-seq2seq"), ("tacotron", "rnn-seq2seq"),
    ("rnn-t", "rnn-seq2seq"),  # MLPerf's RNN transducer (LSTM encoder + LSTM prediction net), round 11
)
# The product's workload classes answer with one family each (the user's small LM is a transformer-lm);
# `generic` keeps the pooled share of every row.
USER_FAMILY: dict[str, str] = {"transformer": "transformer-lm", "cnn": "cnn-classification"}
# Prior (fixed before any fit): the family's predictions are pulled to its parent's with the weight of half a source
# (every source weighs 1 in the fit), plus a small ridge that keeps an offset its rows cannot see at 0.
PRIOR_WEIGHT = 0.5
RIDGE = 1e-3


def family_of(workload: str) -> str:
    """The family of a benchmark named as its source names it; an unknown name is a data error."""
    w = workload.strip().lower()
    for prefix, fam in PREFIXES:
        if w.startswith(prefix):
            return fam
    raise ValueError(f"no workload family for benchmark {workload!r}; add it to planner/perf/families.py PREFIXES")


def offsets_of(offsets: dict[str, tuple[float, float]], workload: str, family: Optional[str] = None) -> tuple[float, float]:
    """(share, matmul) logit offsets that apply: the named family's (a calibration row's own), else the product
    class's family (USER_FAMILY); (0, 0) = the parent class, also for every variant other than `families`."""
    return offsets.get(USER_FAMILY.get(workload, "") if family is None else family, (0.0, 0.0))


def parent_of(family: str) -> str:
    return FAMILIES[family][0]


Share = TypeVar("Share", float, np.ndarray)


def shifted_share(share: Share, offset: Share) -> Share:
    """A family's compute-bound share: its parent's moved by `offset` in logit space (0 = the parent's), in (0, 1).
    Floats or numpy arrays (the fit's design predicts every row at once)."""
    if np.isscalar(offset) and offset == 0.0:
        return share  # exactly the parent's (no logit round trip), e.g. a bound of 1.0
    s = np.clip(share, 1e-9, 1.0 - 1e-9)
    return 1.0 / (1.0 + np.exp(-(np.log(s / (1.0 - s)) + offset)))


def shifted_matmul_share(f0: Share, offset: Share) -> Share:
    """A family's tensor-core share at 1e8 parameters: the global f0 moved by `offset` in logit space, in (0.5, 1)."""
    return 0.5 + 0.5 * shifted_share((f0 - 0.5) / 0.5, offset)
