"""Step-time physics of the speed model: compute and memory rates, workload shares, overhead, power curve, density."""

from __future__ import annotations

import math
import statistics
from dataclasses import MISSING, dataclass, field, fields, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from planner.catalog.load import keyed_records, load_chips, load_records
from planner.catalog.models import GpuAchievedMatmul, GpuChip, GpuL2Cache, GpuPowerVariant
from planner.errors import CatalogError, InputError
from planner.perf.families import offsets_of, shifted_matmul_share, shifted_share
from planner.resources import SHIPPED_DATA_DIR

POWER_VARIANTS_FILE = SHIPPED_DATA_DIR / "gpu_power_variants.csv"
L2_FILE = SHIPPED_DATA_DIR / "gpu_l2_cache.csv"
ACHIEVED_FILE = SHIPPED_DATA_DIR / "gpu_achieved_matmul.csv"
# Architectures whose tensor cores run TF32 (Ampere onwards); older chips run a tf32 request as fp32.
TF32_ARCHS = frozenset({"ampere", "ada", "hopper", "blackwell"})
# Architectures with the doubled FP32 datapath (128 FP32 lanes per SM) whose marketing FP32 rate is rarely reached.
DUAL_FP32_ARCHS = frozenset({"ampere", "ada", "hopper", "blackwell"})
# SMs without Volta's separate INT32 pipe and unified L1: they reach a smaller share of their datasheet rate.
OLD_SM_ARCHS = frozenset({"maxwell", "pascal"})
# The first two tensor-core generations (variant `tcgen`, round 7; list fixed before any fit with it, from the
# `architecture` column of data/gpu_chips.csv): Volta (Titan V, V100) and Turing (RTX 20xx, Titan RTX, Quadro RTX, T4).
# No cp.async global->shared copies and less shared memory per SM than Ampere onwards, so their GEMM/conv kernels may
# keep the MMA pipes less busy (cuBLAS GEMM on a V100: 83 of 125 TFLOPS, Markidis et al., IPDPSW 2018,
# doi:10.1109/IPDPSW.2018.00091; no like-for-like Ampere fraction was found, so the size of the gap is fitted).
OLD_TENSOR_ARCHS = frozenset({"volta", "turing"})
# Power-limit curve (hardware-facts.md section 4.2): fraction of stock power -> fraction of throughput.
POWER_CURVE: tuple[tuple[float, float], ...] = ((0.6, 0.82), (0.7, 0.90), (0.8, 0.95), (1.0, 1.0))
MIN_POWER_FRACTION = 0.4
# Model-size term: compute share = clip(s_w + k * log10(P / MODEL_SIZE_REF), *SHARE_BOUNDS); P = trainable parameters.
MODEL_SIZE_REF = 1e8
SHARE_BOUNDS = (0.02, 0.98)
MATMUL_SHARE_BOUNDS = (0.5, 1.0)
MAX_MODEL_PARAMS = 1e13
# Fixed per-step overhead (kernel launches, Python, input pipeline) as a share of the reference step, capped.
OVERHEAD_MAX = 0.5


@dataclass(frozen=True)
class PerfParams:
    """The model's few numbers: fitted ones come from data/perf_params.json, priors are stated there too."""

    compute_share: dict[str, float]  # workload -> share of the 1080 Ti fp32 step that is compute-bound
    tensor_efficiency: float  # fraction of the datasheet tensor rate reached in training
    amp_memory_factor: float  # memory traffic of an amp step relative to fp32 (fp16 activations)
    pascal_compute_efficiency: float = 1.0  # share of its datasheet rate a Pascal/Maxwell SM reaches vs Volta+
    dual_fp32_efficiency: float = 0.65  # prior: share of the doubled FP32 rate reached (Ampere onwards)
    amd_fp32_efficiency: float = 0.45  # prior: RDNA dual-issue FP32 rarely reached (7900 XTX measured ~25 of 61.4)
    amd_software_factor: float = 0.8  # prior: ROCm stack maturity versus CUDA for the same specs
    model_size_slope: float = 0.0  # k: change of the compute share per decade of parameters (0 = no size term)
    pro_clock_factor: float = 1.0  # sustained clock of workstation/datacenter boards vs GeForce under tensor load
    overhead_ref: float = 0.0  # share of a 1080 Ti fp32 step at P = 1e8 that no GPU speeds up (launches, data loading)
    overhead_exponent: float = 1.0  # prior: overhead share grows as (1e8 / P)^e (fixed cost over work ~ P)
    tensor_matmul_share: float = 1.0  # share of the compute time in tensor-core-able ops (matmul/conv) at P = 1e8
    tensor_share_slope: float = 0.0  # change of that share per decade of parameters (small models: more elementwise work)
    l2_bw_per_tflops: float = 0.0  # L2 bandwidth (GB/s) per TFLOPS of SM x clock (fp32 rate per 64 lanes); 0 = no L2 term
    l2_working_set_mb: float = 32.0  # L2 size (MB) at which half of the step's traffic hits L2 instead of DRAM
    power_density_threshold: float = 0.0  # relative board power per unit of compute below which the clock drops; 0 = off
    power_density_exponent: float = 1.0 / 3.0  # sustained clock ~ (density / threshold)^this below the threshold
    # variant `fp32cap` (round 9): 1 = the cap binds only when the step's math runs on the CUDA cores (a tensor-core
    # FLOP costs ~1/8 the energy of an FP32 FMA on the same board); 0 = on every compute path (`powercap`)
    power_cap_cuda_only: float = 0.0
    # variant `tcgen`: tensor path of Volta/Turing chips x this, relative to Ampere onwards (1 = no generation term)
    tensor_gen_efficiency: float = 1.0
    batch_exponent: float = 0.0  # fit only: measured ratio x (batch / reference batch)^b when a source varied batches
    # variant `families`: family -> (logit offset of its compute share from its parent class's, logit offset of its
    # tensor-core share from f0); a family without an entry answers with its parent class (planner.perf.families)
    family_offsets: dict[str, tuple[float, float]] = field(default_factory=dict)
    typical_params: dict[str, float] = field(default_factory=dict)  # workload -> size used when none is given
    # variant `average`: the fitted members (name -> params); step time = geometric mean of theirs, so a speedup is the
    # geometric mean of the members' speedups. The other physics fields of an average are its first member's, unused.
    members: dict[str, "PerfParams"] = field(default_factory=dict)
    ranges: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)  # tier -> group -> (low, high)
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "PerfParams":
        p = data["params"]
        ranges = {t: {g: (float(v[0]), float(v[1])) for g, v in groups.items()}
                  for t, groups in data.get("ranges", {}).items()}
        meta = {k: v for k, v in data.items() if k not in ("params", "ranges")}
        if "members" in p:  # variant `average`: every member's fitted numbers, shared typical sizes, ranges and meta
            shared = {k: v for k, v in p.items() if k != "members"}
            members = {name: cls.from_json({"params": {**shared, **mp}}) for name, mp in p["members"].items()}
            if not members:
                raise CatalogError("perf_params.json: variant 'average' without members")
            return replace(next(iter(members.values())), members=members, ranges=ranges, meta=meta)
        # every number of the model: required when the dataclass gives it no default, else the default (the prior)
        numbers = {f.name: float(p[f.name] if f.default is MISSING else p.get(f.name, f.default))
                   for f in fields(cls) if f.type == "float"}
        return cls(
            compute_share={k: float(v) for k, v in p["compute_share"].items()}, **numbers,
            family_offsets={k: (float(v[0]), float(v[1])) for k, v in p.get("family_offsets", {}).items()},
            typical_params={k: float(v) for k, v in p.get("typical_params", {}).items()},
            ranges=ranges, meta=meta,
        )


def has_dual_fp32(chip: GpuChip) -> bool:
    """GA100 (A100) keeps 64 FP32 lanes per SM; every other Ampere-or-later NVIDIA chip has 128."""
    return chip.vendor == "NVIDIA" and chip.architecture in DUAL_FP32_ARCHS and not chip.id.startswith("a100")


def executed_precision(chip: GpuChip, precision: str) -> str:
    """What the chip actually runs: tf32 needs Ampere+ tensor cores; amp without tensor cores keeps fp32 math."""
    if precision == "tf32" and not (chip.vendor == "NVIDIA" and chip.has_tensor_cores and chip.architecture in TF32_ARCHS):
        return "fp32"
    return precision


def compute_terms(chip: GpuChip, precision: str, p: PerfParams) -> tuple[float, float]:
    """(CUDA-core rate, tensor peak) in TFLOPS for the path the precision takes; tensor peak 0 when unused."""
    prec = executed_precision(chip, precision)
    if chip.vendor == "AMD":
        cuda = chip.fp32_tflops * p.amd_fp32_efficiency
        fp16 = chip.fp16_tensor_tflops_fp16acc or 2.0 * chip.fp32_tflops  # packed FP16 / WMMA rate
        return cuda, (fp16 if prec == "amp" else 0.0)
    cuda = chip.fp32_tflops * (p.dual_fp32_efficiency if has_dual_fp32(chip) else 1.0)
    tensor = achieved_tensor_tflops(chip) if chip.has_tensor_cores and chip.fp16_tensor_tflops_fp32acc else None
    if prec == "fp32" or not tensor:
        return cuda, 0.0  # Pascal amp: fp16 storage, fp32-rate math (GP102 fp16 math is 1/64 rate)
    return cuda, (tensor / 2.0 if prec == "tf32" else tensor)  # TF32 peak = half the fp16 (fp32-acc) tensor rate


def full_rate_fp32_accumulate(chip: GpuChip) -> bool:
    """True when fp16 with fp32 accumulate runs at the full fp16 tensor rate (Titan RTX, Quadro/RTX pro, data-centre
    boards); GeForce cards from Turing on run it at half rate (their fp32-accumulate figure is half the fp16 one)."""
    full, fp16acc = chip.fp16_tensor_tflops_fp32acc, chip.fp16_tensor_tflops_fp16acc
    if not full:
        return False
    return not fp16acc or full >= 0.99 * fp16acc


@lru_cache(maxsize=1)
def achieved_matmul(path: Path = ACHIEVED_FILE) -> dict[str, float]:
    """Chip id -> measured fp16 (fp32-accumulate) matmul TFLOPS (data/gpu_achieved_matmul.csv, each row sourced)."""
    if not path.exists():
        return {}
    rows = keyed_records(path, GpuAchievedMatmul, "chip", "chip")
    return {chip: row.fp16_matmul_tflops for chip, row in rows.items()}


@lru_cache(maxsize=1)
def _full_power_boards(path: Path = POWER_VARIANTS_FILE) -> dict[str, str]:
    """Power-limited board -> the full-power board of the same silicon (data/gpu_power_variants.csv)."""
    return {} if not path.exists() else {r.chip: r.full_power_chip for r in load_records(path, GpuPowerVariant)}


@lru_cache(maxsize=1)
def achieved_fractions() -> dict[bool, float]:
    """full-rate? -> median measured/datasheet fp32-accumulate tensor rate over the measured chips of that kind
    (GeForce half-rate cards hold their boost clock, ~1.0; full-rate boards drop clock under dense tensor load, ~0.75)."""
    chips = load_chips()
    groups: dict[bool, list[float]] = {True: [], False: []}
    for cid, tflops in achieved_matmul().items():
        c = chips.get(cid)
        if c is not None and c.fp16_tensor_tflops_fp32acc:
            groups[full_rate_fp32_accumulate(c)].append(tflops / c.fp16_tensor_tflops_fp32acc)
    return {k: (statistics.median(v) if v else 1.0) for k, v in groups.items()}


def achieved_tensor_tflops(chip: GpuChip) -> float:
    """The fp16 tensor rate a chip reaches (issue 39: achieved, not peak): its measured matmul rate when one is on
    file, else its datasheet fp32-accumulate rate x the median achieved fraction of measured chips of the same kind
    (full-rate or GeForce half-rate). A Titan RTX (full rate, 130.5 on paper) is thus read as ~0.75 x 130.5."""
    table = achieved_matmul()
    measured = table.get(chip.id) or table.get(_full_power_boards().get(chip.id, ""))  # a power variant: its silicon's
    if measured:  # measurement (its lower power limit is applied once, by power_scale)
        return measured
    return chip.fp16_tensor_tflops_fp32acc * achieved_fractions()[full_rate_fp32_accumulate(chip)]


def is_pro(chip: GpuChip) -> bool:
    """Workstation and datacenter NVIDIA boards: power-capped near their rated clock; GeForce boards boost above it."""
    return chip.vendor == "NVIDIA" and chip.segment != "consumer"


def matmul_share(p: PerfParams, model_params: Optional[float] = None, workload: str = "generic",
                 family: Optional[str] = None) -> float:
    """Share of the compute time spent in tensor-core-able ops (matmul, conv) at this size, clipped to [0.5, 1]:
    the rest (normalisation, activations, optimizer, loss scaling) stays on the CUDA cores whatever the precision."""
    size = model_params if model_params is not None else p.typical_params.get(workload, MODEL_SIZE_REF)
    f0 = shifted_matmul_share(p.tensor_matmul_share, offsets_of(p.family_offsets, workload, family)[1])
    f = f0 + p.tensor_share_slope * math.log10(size / MODEL_SIZE_REF)
    return min(max(f, MATMUL_SHARE_BOUNDS[0]), MATMUL_SHARE_BOUNDS[1])


def has_old_tensor_cores(chip: GpuChip) -> bool:
    """NVIDIA chips of the first two tensor-core generations (Volta, Turing: OLD_TENSOR_ARCHS)."""
    return chip.vendor == "NVIDIA" and chip.architecture in OLD_TENSOR_ARCHS


def tensor_generation_factor(chip: GpuChip, p: PerfParams) -> float:
    """Share of the tensor-core efficiency an older tensor-core generation (Volta, Turing) reaches relative to Ampere
    onwards (variant `tcgen`); 1 for every other chip. Only ever multiplies the tensor path (amp, tf32)."""
    return p.tensor_gen_efficiency if has_old_tensor_cores(chip) else 1.0


def compute_tflops(chip: GpuChip, precision: str, p: PerfParams, matmul: float = 1.0) -> float:
    """Effective math rate: when the tensor path (peak x tensor efficiency, x the generation factor of Volta/Turing)
    beats the CUDA cores, only the matmul share `matmul` runs there (Amdahl: 1 / (f / tensor + (1 - f) / cuda)); x the
    Pascal SM factor, x the sustained-clock factor of workstation/datacenter boards, x the power-density clock cap
    (variant `fp32cap`: only when the math runs on the CUDA cores)."""
    cuda, tensor = compute_terms(chip, precision, p)
    tc = tensor * p.tensor_efficiency * tensor_generation_factor(chip, p)
    amdahl = 1.0 / (matmul / tc + (1.0 - matmul) / cuda) if tc > 0 else 0.0
    rate = amdahl if tc > cuda else cuda
    cap = power_clock_factor(relative_power_density(chip), p)
    # `fp32cap`: the clock drops only for CUDA-core math (a tensor-core FLOP costs far less energy), so the step takes
    # the faster of the capped CUDA path and the tensor path; continuous and monotone in both rates
    rate = max(amdahl, cuda * cap) if p.power_cap_cuda_only else rate * cap
    rate *= p.pascal_compute_efficiency if chip.architecture in OLD_SM_ARCHS else 1.0
    return rate * (p.pro_clock_factor if is_pro(chip) else 1.0)


def board_power_density(chip: GpuChip, variants: Optional[dict[str, float]] = None) -> float:
    """Board power (W) per SM x clock TFLOPS at the datasheet boost clock; a power-limited variant of
    data/gpu_power_variants.csv counts with its full-power board (its lower limit is applied by power_scale once)."""
    frac = (_shipped_power_variants() if variants is None else variants).get(chip.id, 1.0)
    return chip.tdp_w / frac / sm_clock_tflops(chip)


@lru_cache(maxsize=1)
def _shipped_power_variants() -> dict[str, float]:
    return load_power_variants()


@lru_cache(maxsize=1)
def _arch_power_density() -> dict[str, float]:
    """Architecture -> median board power density of the shipped chip table's NVIDIA rows (same process node and
    energy per operation within an architecture, so only the ratio to the median says a board is power-starved)."""
    groups: dict[str, list[float]] = {}
    for c in load_chips().values():
        if c.vendor == "NVIDIA" and c.tdp_w and c.fp32_tflops:
            groups.setdefault(c.architecture, []).append(board_power_density(c))
    return {a: statistics.median(v) for a, v in groups.items()}


def relative_power_density(chip: GpuChip) -> float:
    """A board's power per unit of compute over its architecture's median (T4: 70 W for a TU104 -> ~0.5); 1.0 for
    AMD and for chips without a TDP (no cap applied)."""
    med = _arch_power_density().get(chip.architecture)
    if chip.vendor != "NVIDIA" or not med or not chip.tdp_w or not chip.fp32_tflops:
        return 1.0
    return board_power_density(chip) / med


def power_clock_factor(density: float, p: PerfParams) -> float:
    """Sustained clock under training load of a board with this relative power density: 1 at or above the threshold,
    (density / threshold)^exponent below it (dynamic power ~ f V^2: exponent 1/3 on the DVFS curve, up to 1 at the
    voltage floor). Threshold 0 = no cap (the term is off)."""
    t = p.power_density_threshold
    return 1.0 if t <= 0 or density >= t else (density / t) ** p.power_density_exponent


@lru_cache(maxsize=1)
def l2_sizes(path: Path = L2_FILE) -> dict[str, float]:
    """Chip id -> L2 cache in MB (data/gpu_l2_cache.csv as GpuL2Cache rows, each sourced); empty when the file is
    absent; a bad row or a chip given twice is a CatalogError naming the file and the row."""
    if not path.exists():
        return {}
    return {chip: row.l2_mb for chip, row in keyed_records(path, GpuL2Cache, "chip", "chip").items()}


def sm_clock_tflops(chip: GpuChip) -> float:
    """SM count x clock as an FP32 rate of 64 lanes per SM (the doubled datapath halved): what L2 bandwidth scales with."""
    return chip.fp32_tflops / (2.0 if has_dual_fp32(chip) else 1.0)


def dram_bandwidth(chip: GpuChip, p: PerfParams) -> float:
    """Bandwidth seen by the step: DRAM, or with the L2 term the harmonic mix of DRAM (miss share 1 - h) and L2
    (hit share h = L2 / (L2 + W)); large L2s (Ada, Blackwell, A100/H100) make the L2 bandwidth matter more."""
    if p.l2_bw_per_tflops <= 0:
        return chip.mem_bandwidth_gbs
    l2 = l2_sizes().get(chip.id, 0.0)
    h = l2 / (l2 + p.l2_working_set_mb)
    return 1.0 / ((1.0 - h) / chip.mem_bandwidth_gbs + h / (p.l2_bw_per_tflops * sm_clock_tflops(chip)))


def bandwidth_gbs(chip: GpuChip, precision: str, p: PerfParams) -> float:
    """Effective bandwidth: amp moves fewer bytes per step (fp16 activations), which looks like more bandwidth."""
    return dram_bandwidth(chip, p) / (p.amp_memory_factor if precision == "amp" else 1.0)


def compute_share(p: PerfParams, workload: str, model_params: Optional[float] = None,
                  family: Optional[str] = None) -> float:
    """Compute-bound share of a 1080 Ti fp32 step: class share shifted by k per decade of parameters, clipped.

    None = the class's typical size (p.typical_params, the geometric mean of the calibration rows of that class).
    """
    size = model_params if model_params is not None else p.typical_params.get(workload, MODEL_SIZE_REF)
    base = shifted_share(p.compute_share[workload], offsets_of(p.family_offsets, workload, family)[0])
    share = base + p.model_size_slope * math.log10(size / MODEL_SIZE_REF)
    return min(max(share, SHARE_BOUNDS[0]), SHARE_BOUNDS[1])


def overhead_share(p: PerfParams, workload: str, model_params: Optional[float] = None) -> float:
    """Share of a 1080 Ti fp32 step that no GPU speeds up: o_ref x (1e8 / P)^e, capped at OVERHEAD_MAX.

    A fixed cost per step (kernel launches, optimizer bookkeeping, input pipeline) against GPU work that grows
    with the model: small models spend a larger share of each step there, which caps what a faster card gains.
    """
    if p.members:  # average: geometric mean (the averaged speedup is at most 1 / this)
        return geometric_mean([overhead_share(m, workload, model_params) for m in p.members.values()])
    size = model_params if model_params is not None else p.typical_params.get(workload, MODEL_SIZE_REF)
    return min(p.overhead_ref * (MODEL_SIZE_REF / size) ** p.overhead_exponent, OVERHEAD_MAX)


def geometric_mean(values: list[float]) -> float:
    """Equal-weight geometric mean (0 if any value is 0): how the `average` variant combines its members."""
    if any(v == 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def relative_step_time(
    chip: GpuChip, precision: str, workload: str, p: PerfParams, ref: GpuChip, model_params: Optional[float] = None,
    power_fraction: float = 1.0, family: Optional[str] = None,
) -> float:
    """Step time relative to the reference chip at fp32: (1 - o) x (compute share / compute ratio + memory share /
    bandwidth ratio) / power scale + o, where o is the overhead share no GPU speeds up. For the `average` variant:
    the geometric mean of the members' step times, so every speedup is the geometric mean of the members' speedups."""
    if p.members:
        return geometric_mean([relative_step_time(chip, precision, workload, m, ref, model_params, power_fraction,
                                                  family) for m in p.members.values()])
    share = compute_share(p, workload, model_params, family)
    f = matmul_share(p, model_params, workload, family)
    t = share * compute_tflops(ref, "fp32", p, f) / compute_tflops(chip, precision, p, f)
    t += (1.0 - share) * bandwidth_gbs(ref, "fp32", p) / bandwidth_gbs(chip, precision, p)
    t /= (p.amd_software_factor if chip.vendor == "AMD" else 1.0) * power_scale(power_fraction)
    o = overhead_share(p, workload, model_params)
    return (1.0 - o) * t + o


def power_scale(power_fraction: float) -> float:
    """Throughput kept at a power limit (fraction of stock board power); monotone, 1.0 at 1.0 (hardware-facts 4.2)."""
    f = float(power_fraction)
    if not (MIN_POWER_FRACTION <= f <= 1.0):
        raise InputError(f"power limit must be between {MIN_POWER_FRACTION:.0%} and 100% of stock power (got {f:.0%})")
    pts = POWER_CURVE
    if f <= pts[0][0]:  # extrapolate below 60 % with the 60-70 % slope
        (x0, y0), (x1, y1) = pts[0], pts[1]
        return y0 - (x0 - f) * (y1 - y0) / (x1 - x0)
    for (x0, y0), (x1, y1) in zip(pts, pts[1:]):
        if f <= x1:
            return y0 + (f - x0) * (y1 - y0) / (x1 - x0)
    return 1.0


def load_power_variants(path: Path = POWER_VARIANTS_FILE, chips: Optional[dict[str, GpuChip]] = None) -> dict[str, float]:
    """Chip id -> board power / full-power board of the same silicon (e.g. Max-Q 300 W of 600 W); empty if no file.
    Rows are GpuPowerVariant records (types, units, source); both chips must be in the chip table when given."""
    if not path.exists():
        return {}
    out: dict[str, float] = {}
    for r in load_records(path, GpuPowerVariant):
        if chips is not None and (r.chip not in chips or r.full_power_chip not in chips):
            raise CatalogError(f"{path.name}: unknown chip in row {r.chip!r} -> {r.full_power_chip!r}")
        if not (MIN_POWER_FRACTION <= r.power_fraction <= 1.0):
            raise CatalogError(f"{path.name}: {r.chip!r} power fraction {r.power_fraction:.2f} outside "
                               f"{MIN_POWER_FRACTION}-1.0")
        out[r.chip] = r.power_fraction
    return out
