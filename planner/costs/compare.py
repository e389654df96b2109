"""Cloud rental versus purchase: time and cost to finish a sweep, electricity, resale, break-even (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Callable, ClassVar, Iterable, Literal, Mapping, Optional, Sequence, Union

import pandas as pd

from planner.costs.cloud import CloudOffer
from planner.perf.sweep import Estimate, rounds
from planner.compat.power import wall_w
from planner.errors import InputError, PlannerError
from planner.fx import Rates, convert_exact
from planner.money import check_currency
from planner.money import CENT
from planner.settings import DEFAULT_MAX_RENTED_GPUS

HOURS_PER_MONTH = 730.5  # 365.25 d x 24 h / 12
# EDF Tarif Bleu (regulated residential tariff), option Base, 3-6 kVA, TTC, in force from 2026-02-01.
DEFAULT_KWH_PRICE = Decimal("0.1940")
KWH_PRICE_DATE = date(2026, 2, 1)
KWH_PRICE_SOURCE = (
    "EDF Tarif Bleu, option Base 3-6 kVA, TTC, from 2026-02-01 (CRE deliberation of 2026-01-14): "
    "https://www.revolution-energetique.com/actus/voici-les-nouveaux-prix-de-lelectricite-au-1er-fevrier-2026/ ; "
    "https://picbleu.fr/les-articles/tarif-bleu-edf-les-heures-pleines-heures-creuses-evoluent-au-1er-fevrier-2026-sans-baisse"
)
# Resale after 24 months, as a fraction of the purchase price. ESTIMATES, not measurements: a weak
# source (calcbee.com used-GPU calculator) describes GPUs losing 20-30 % in year one and 10-15 % a
# year after, i.e. keeping ~60-72 % after two years; we take the low end. Platform parts (CPU, board,
# RAM, SSD, PSU, case, cooler) resell worse: 40 % is our own estimate.
DEFAULT_GPU_KEEP_24M = Decimal("0.60")
DEFAULT_PLATFORM_KEEP_24M = Decimal("0.40")
# Used GTX 1080 Ti: ESTIMATE (no sourced used price was found); the user's card may also be faulty.
DEFAULT_OLD_GPU_PRICE = Decimal("150")
# Idle and setup time billed per rental on every rented GPU: boot, environment, data copy, downloads.
DEFAULT_OVERHEAD_HOURS = Decimal("0.5")


SpeedupFn = Callable[[str], Estimate]
SweepFn = Callable[..., Any]  # perf.sweep_time(runs, baseline_hours, speedup, gpu_count=1); for a build with its card
# known also chip=, vram_gb= (the service's sweep is then the planned one: runs per GPU within VRAM, as recommend's)


def _d(x: Union[float, int, Decimal]) -> Decimal:
    return x if isinstance(x, Decimal) else Decimal(repr(float(x)) if isinstance(x, float) else x)


def _q(x: Decimal) -> Decimal:
    return x.quantize(CENT, rounding=ROUND_HALF_UP)


@dataclass(frozen=True)
class Workload:
    """runs x baseline_hours: hours per run measured on the baseline GPU (the user's GTX 1080 Ti)."""

    runs: int
    baseline_hours: float
    precision: str = "amp"
    workload: str = "transformer"
    model_params: Optional[float] = None  # model size in parameters (None: the class's typical size)
    run_vram_gb: Optional[float] = None  # VRAM one run takes, GiB (None: memfit's estimate from the model size)

    def __post_init__(self) -> None:
        if not isinstance(self.runs, int) or self.runs < 1:
            raise InputError(f"--runs must be a whole number >= 1 (got {self.runs!r})")
        if not (isinstance(self.baseline_hours, (int, float)) and math.isfinite(self.baseline_hours)) or self.baseline_hours <= 0:
            raise InputError(f"--hours must be a positive number of hours per run (got {self.baseline_hours!r})")

    @property
    def baseline_gpu_hours(self) -> float:
        return self.runs * float(self.baseline_hours)


@dataclass(frozen=True)
class Timing:
    """Wall-clock time of a sweep on one option, with the speed model's range."""

    hours_per_run: float
    wall_hours: float
    wall_low: float
    wall_high: float
    basis: str = ""  # where the speed comes from: "measured", "re-anchored" (planner calibrate) or "model"


def timing_from(sweep: Any, workload: Workload, speed: Estimate, gpus: int) -> Timing:
    """Read a perf.SweepEstimate; its low/high when it carries them, else the same formula on speed low/high."""
    waves = rounds(workload.runs, gpus)
    hb = float(workload.baseline_hours)
    wall, per_run = sweep.wall_hours, sweep.hours_per_run
    if hasattr(per_run, "value"):  # hours given as an Estimate(value, low, high)
        per_run = per_run.value
    if hasattr(wall, "value"):
        wall, low, high = wall.value, wall.low, wall.high
    else:
        low = next((getattr(sweep, n) for n in ("wall_hours_low", "wall_low", "low_wall_hours") if hasattr(sweep, n)), None)
        high = next((getattr(sweep, n) for n in ("wall_hours_high", "wall_high", "high_wall_hours") if hasattr(sweep, n)), None)
    return Timing(
        hours_per_run=float(per_run),
        wall_hours=float(wall),
        wall_low=float(low) if low is not None else waves * hb / float(speed.high),
        wall_high=float(high) if high is not None else waves * hb / float(speed.low),
        basis=str(getattr(speed, "basis", "") or ""),
    )


@dataclass(frozen=True)
class ResaleCurve:
    """Fraction of the price a part fetches after m months: keep_24m ** (m / 24) (geometric decay)."""

    DEFAULT_GPU_KEEP_24M: ClassVar[Decimal] = DEFAULT_GPU_KEEP_24M  # the defaults, for the options that change them
    DEFAULT_PLATFORM_KEEP_24M: ClassVar[Decimal] = DEFAULT_PLATFORM_KEEP_24M

    gpu_keep_24m: Decimal = DEFAULT_GPU_KEEP_24M
    platform_keep_24m: Decimal = DEFAULT_PLATFORM_KEEP_24M

    def __post_init__(self) -> None:
        for name in ("gpu_keep_24m", "platform_keep_24m"):
            v = getattr(self, name)
            if not (Decimal(0) <= v <= Decimal(1)):
                raise InputError(f"resale fraction {name} must be between 0 and 1 (got {v})")

    @staticmethod
    def fraction(keep_24m: Decimal, months: int) -> Decimal:
        if months <= 0 or keep_24m == 1:
            return Decimal(1)
        if keep_24m == 0:
            return Decimal(0)
        return keep_24m ** (Decimal(months) / Decimal(24))


@dataclass(frozen=True)
class CostParams:
    """What a costs comparison assumes: currency, electricity price, horizon, resale, the old GPU, rental overhead."""

    # the defaults and the electricity price's source, for the options that change them and the answer that cites them
    DEFAULT_KWH_PRICE: ClassVar[Decimal] = DEFAULT_KWH_PRICE
    KWH_PRICE_DATE: ClassVar[date] = KWH_PRICE_DATE
    KWH_PRICE_SOURCE: ClassVar[str] = KWH_PRICE_SOURCE
    DEFAULT_OLD_GPU_PRICE: ClassVar[Decimal] = DEFAULT_OLD_GPU_PRICE
    DEFAULT_OVERHEAD_HOURS: ClassVar[Decimal] = DEFAULT_OVERHEAD_HOURS

    currency: str = "EUR"
    kwh_price: Decimal = DEFAULT_KWH_PRICE
    kwh_currency: str = "EUR"
    horizon_months: int = 24
    resale: ResaleCurve = field(default_factory=ResaleCurve)
    sell_old_gpu: bool = False
    old_gpu_price: Decimal = DEFAULT_OLD_GPU_PRICE
    old_gpu_currency: str = "EUR"
    overhead_hours: Decimal = DEFAULT_OVERHEAD_HOURS
    max_gpus: int = DEFAULT_MAX_RENTED_GPUS

    def __post_init__(self) -> None:
        check_currency(self.currency)
        if self.kwh_price < 0:
            raise InputError(f"--kwh-price must be >= 0 (got {self.kwh_price})")
        if self.horizon_months < 1:
            raise InputError(f"--horizon-months must be >= 1 (got {self.horizon_months})")
        if self.overhead_hours < 0:
            raise InputError(f"--overhead-hours must be >= 0 (got {self.overhead_hours})")
        if self.old_gpu_price < 0:
            raise InputError(f"--old-gpu-price must be >= 0 (got {self.old_gpu_price})")
        if self.max_gpus < 1:
            raise InputError(f"--max-gpus must be >= 1 (got {self.max_gpus})")


@dataclass(frozen=True)
class Purchase:
    """A machine to buy: what is paid for GPUs and for the rest, its power, and where prices come from
    (the compatibility layer's Build is the parts themselves; this is what they cost and draw)."""

    name: str
    chip: str
    gpu_count: int
    gpu_price: Decimal  # GPUs bought (owned parts excluded)
    platform_price: Decimal  # every other part bought
    currency: str
    dc_w: float  # sustained DC draw while training
    psu_w: Optional[int]
    psu_efficiency: str
    price_date: str = "date not given"
    price_source: str = "source not given"
    owned_value: Decimal = Decimal(0)
    gpu_name: str = ""
    vram_gb: Optional[float] = None  # one card's VRAM: how many of the user's runs share it (the planned sweep)

    @property
    def purchase(self) -> Decimal:
        return self.gpu_price + self.platform_price


@dataclass(frozen=True)
class Option:
    """One way to finish the sweep. Money in the comparison currency; exact values kept for break-even."""

    kind: Literal["buy", "rent"]
    name: str
    gpu: str
    gpu_name: str
    gpus: int
    timing: Timing
    currency: str
    cost_exact: Decimal  # cash to finish (buy) / rental bill (rent)
    fixed_exact: Decimal  # capital net of resale over the horizon (0 for rent)
    rate_exact: Decimal  # variable cost per baseline GPU-hour of work
    runs: int
    price_date: str
    price_source: str
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def cost_to_finish(self) -> Decimal:
        return _q(self.cost_exact)

    @property
    def cost_per_run(self) -> Decimal:
        return _q(self.cost_exact / self.runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "gpu": self.gpu,
            "gpu_name": self.gpu_name,
            "gpus": self.gpus,
            "hours_to_finish": round(self.timing.wall_hours, 3),
            "hours_low": round(self.timing.wall_low, 3),
            "hours_high": round(self.timing.wall_high, 3),
            "hours_per_run": round(self.timing.hours_per_run, 3),
            **({"speed_basis": self.timing.basis} if self.timing.basis else {}),
            "cost_to_finish": str(self.cost_to_finish),
            "cost_per_run": str(self.cost_per_run),
            "price_date": self.price_date,
            "price_source": self.price_source,
            **{k: (str(v) if isinstance(v, Decimal) else v) for k, v in self.details.items()},
        }


@dataclass(frozen=True)
class BreakEven:
    vs: str
    baseline_hours_total: Optional[float]  # over the horizon; None = renting stays cheaper per hour
    baseline_hours_per_month: Optional[float]
    buy_capacity_per_month: float  # baseline GPU-hours the build can do in a month of 24/7 work
    within_capacity: Optional[bool]

    def to_json(self) -> dict[str, Any]:
        r = lambda x: None if x is None else round(x, 1)  # noqa: E731
        return {
            "vs": self.vs,
            "baseline_hours_per_month": r(self.baseline_hours_per_month),
            "baseline_hours_total": r(self.baseline_hours_total),
            "buy_capacity_per_month": r(self.buy_capacity_per_month),
            "within_capacity": self.within_capacity,
        }


@dataclass(frozen=True)
class Comparison:
    workload: Workload
    params: CostParams
    options: list[Option]
    break_even: list[BreakEven]
    skipped: list[str]

    @property
    def buy(self) -> Optional[Option]:
        return next((o for o in self.options if o.kind == "buy"), None)

    @staticmethod
    def cost_curve(lines: Sequence[Mapping[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
                   max_sweeps: float, points: int = 2) -> pd.DataFrame:
        """The chart rows of a comparison's `lines()` (kept as JSON by the web UI's cache): module cost_curve."""
        return cost_curve(lines, names, sweep_gpu_hours, max_sweeps, points)

    @staticmethod
    def break_even_marks(lines: Sequence[Mapping[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
                         max_sweeps: float, break_even_sweeps: Mapping[str, Optional[float]]) -> pd.DataFrame:
        """Where a rental line crosses the build's, for the chart: module break_even_marks."""
        return break_even_marks(lines, names, sweep_gpu_hours, max_sweeps, break_even_sweeps)

    def lines(self) -> list[dict[str, Any]]:
        """Each option's cost line (fixed + per baseline GPU-hour), the data `cost_curve` draws."""
        return [{"option": o.name, "kind": o.kind, "fixed": float(o.fixed_exact),
                 "per_baseline_hour": float(o.rate_exact)} for o in self.options]


# ---------------------------------------------------------------- building blocks

def wall_power_w(dc_w: float, efficiency: str, psu_w: Optional[int]) -> float:
    """Wall draw for a DC load through the PSU's 80 PLUS curve (planner.compat.power.wall_w)."""
    if dc_w <= 0:
        return 0.0
    psu = psu_w or max(int(math.ceil(dc_w / 0.8)), 1)  # unknown rating: assume the unit runs at 80 % load
    return float(wall_w(dc_w, efficiency, psu))


def electricity_cost(wall_w: float, hours: float, kwh_price: Decimal) -> Decimal:
    """kWh = wall W x hours / 1000; cost = kWh x price (exact Decimal, round later)."""
    return _d(wall_w) * _d(hours) / Decimal(1000) * kwh_price


def rental_cost(price_per_gpu_hour: Decimal, gpus: int, wall_hours: float, overhead_hours: Decimal) -> Decimal:
    """Every rented GPU is billed for the whole sweep plus the per-rental overhead (exact)."""
    return price_per_gpu_hour * gpus * (_d(wall_hours) + overhead_hours)


def gpu_counts(gpus_per_instance: int, max_gpus: int) -> list[int]:
    """GPU counts an offer can be rented in: whole instances, up to max_gpus."""
    return list(range(gpus_per_instance, max_gpus + 1, gpus_per_instance))


def buy_option(build: Purchase, workload: Workload, timing: Timing, params: CostParams, rates: Rates) -> Option:
    cur = params.currency
    conv = lambda amount, ccy: convert_exact(amount, ccy, cur, rates)  # noqa: E731
    purchase = conv(build.purchase, build.currency)
    wall = wall_power_w(build.dc_w, build.psu_efficiency, build.psu_w)
    kwh = _d(wall) * _d(timing.wall_hours) / Decimal(1000)
    power = conv(electricity_cost(wall, timing.wall_hours, params.kwh_price), params.kwh_currency)
    months = params.horizon_months
    f_gpu = ResaleCurve.fraction(params.resale.gpu_keep_24m, months)
    f_rest = ResaleCurve.fraction(params.resale.platform_keep_24m, months)
    resale = conv(build.gpu_price * f_gpu + build.platform_price * f_rest, build.currency)
    old = conv(params.old_gpu_price, params.old_gpu_currency) if params.sell_old_gpu else Decimal(0)
    cash = purchase + power
    fixed = purchase - resale - old
    details = {
        "cash_to_finish": _q(cash),
        "net_cost_over_horizon": _q(cash - resale - old),
        "purchase": _q(purchase),
        "owned_parts_value": _q(conv(build.owned_value, build.currency)),
        "electricity": _q(power),
        "electricity_kwh": float(round(kwh, 2)),
        "wall_w": round(wall, 1),
        "dc_w": build.dc_w,
        "resale_after_horizon": _q(resale),
        "resale_gpu_fraction": float(round(f_gpu, 4)),
        "resale_platform_fraction": float(round(f_rest, 4)),
        "old_gpu_sale": _q(old),
        "marginal_cost_per_run": _q(power / workload.runs),
    }
    return Option(
        kind="buy", name=build.name, gpu=build.chip, gpu_name=build.gpu_name or build.chip, gpus=build.gpu_count, timing=timing,
        currency=cur, cost_exact=cash, fixed_exact=fixed, rate_exact=power / _d(workload.baseline_gpu_hours),
        runs=workload.runs, price_date=build.price_date, price_source=build.price_source, details=details,
    )


def rent_option(
    offer: CloudOffer, gpus: int, workload: Workload, timing: Timing, params: CostParams, rates: Rates
) -> Option:
    bill = rental_cost(offer.price_per_gpu_hour, gpus, timing.wall_hours, params.overhead_hours)
    cost = convert_exact(bill, offer.currency, params.currency, rates)
    details = {
        "provider": offer.provider,
        "offer": offer.offer,
        "billing": offer.billing,
        "gpus_per_instance": offer.gpus_per_instance,
        "price_per_gpu_hour": str(offer.price_per_gpu_hour),
        "price_currency": offer.currency,
        "billed_gpu_hours": float(round(_d(gpus) * (_d(timing.wall_hours) + params.overhead_hours), 3)),
        "overhead_hours_per_gpu": str(params.overhead_hours),
        "bill_in_price_currency": _q(bill),
        "price_note": offer.note,
    }
    name = f"{offer.label} x{gpus}"
    return Option(
        kind="rent", name=name, gpu=offer.chip or "", gpu_name=offer.gpu_name, gpus=gpus, timing=timing,
        currency=params.currency, cost_exact=cost, fixed_exact=Decimal(0),
        rate_exact=cost / _d(workload.baseline_gpu_hours), runs=workload.runs,
        price_date=offer.date_text, price_source=offer.source, details=details,
    )


def break_even(buy: Option, rent: Option, workload: Workload, horizon_months: int) -> BreakEven:
    """Baseline GPU-hours at which buy (fixed + rate_b x H) equals rent (rate_r x H): H = fixed / (rate_r - rate_b)."""
    capacity = HOURS_PER_MONTH * workload.baseline_gpu_hours / buy.timing.wall_hours
    if buy.fixed_exact <= 0:
        total: Optional[float] = 0.0
    elif rent.rate_exact <= buy.rate_exact:
        total = None
    else:
        total = float(buy.fixed_exact / (rent.rate_exact - buy.rate_exact))
    per_month = None if total is None else total / horizon_months
    return BreakEven(
        vs=rent.name, baseline_hours_total=total, baseline_hours_per_month=per_month,
        buy_capacity_per_month=capacity, within_capacity=None if per_month is None else per_month <= capacity,
    )


# ---------------------------------------------------------------- the comparison


def compare(
    workload: Workload,
    params: CostParams,
    rates: Rates,
    *,
    offers: Iterable[CloudOffer] = (),
    build: Optional[Purchase] = None,
    speedup: SpeedupFn,
    sweep: SweepFn,
    only_counts: Sequence[int] = (),
) -> Comparison:
    """Buy `build` (if given) vs rent each offer on 1..max_gpus GPUs. `speedup(chip)` and
    `sweep(runs, hours, estimate, gpu_count=n)` come from planner.perf.model (injected so tests can fake them).
    GPU counts that do not finish sooner than a smaller count of the same offer are dropped;
    `only_counts` (when given) keeps just those GPU counts."""
    options: list[Option] = []
    skipped: list[str] = []
    buy: Optional[Option] = None
    if build is not None:
        est = speedup(build.chip)
        card = {"chip": build.chip, "vram_gb": build.vram_gb} if build.vram_gb else {}  # the card's planned sweep
        t = timing_from(sweep(workload.runs, workload.baseline_hours, est, gpu_count=build.gpu_count, **card),
                        workload, est, build.gpu_count)
        buy = buy_option(build, workload, t, params, rates)
        options.append(buy)
    rents: list[Option] = []
    for offer in offers:
        if offer.chip is None:
            skipped.append(f"{offer.label}: no chip in the chip table, no speed estimate")
            continue
        counts = [n for n in gpu_counts(offer.gpus_per_instance, params.max_gpus) if not only_counts or n in only_counts]
        if not counts:
            skipped.append(f"{offer.label}: sold by {offer.gpus_per_instance} GPUs, no allowed GPU count (--max-gpus/--gpus)")
            continue
        try:
            est = speedup(offer.chip)
        except PlannerError as exc:  # a chip the speed model does not know skips the offer, with the reason
            skipped.append(f"{offer.label}: {exc}")
            continue
        best = math.inf
        for n in counts:
            t = timing_from(sweep(workload.runs, workload.baseline_hours, est, gpu_count=n), workload, est, n)
            if t.wall_hours < best - 1e-9:
                best = t.wall_hours
                rents.append(rent_option(offer, n, workload, t, params, rates))
    rents.sort(key=lambda o: (o.cost_exact, o.timing.wall_hours))
    options.extend(rents)
    evens = [break_even(buy, r, workload, params.horizon_months) for r in rents] if buy else []
    return Comparison(workload=workload, params=params, options=options, break_even=evens, skipped=skipped)


def cost_at(line: Mapping[str, Any], sweeps: float, sweep_gpu_hours: float) -> float:
    """Cumulative cost of an option after `sweeps` sweeps like the user's: fixed + rate x baseline GPU-hours (buy:
    capital net of resale + electricity; rent: the bill), never below 0 (resale above the price is not income)."""
    return max(float(line["fixed"]) + float(line["per_baseline_hour"]) * sweeps * sweep_gpu_hours, 0.0)


def cost_curve(lines: Sequence[Mapping[str, Any]], names: Sequence[str], sweep_gpu_hours: float, max_sweeps: float,
               points: int = 2) -> pd.DataFrame:
    """Chart rows (sweeps, option, kind, cost) of the named options' lines (`Comparison.lines()`) from 0 to
    `max_sweeps` sweeps: the one cost curve the web UI draws."""
    rows = [{"sweeps": max_sweeps * i / (points - 1), "option": ln["option"], "kind": ln["kind"],
             "cost": cost_at(ln, max_sweeps * i / (points - 1), sweep_gpu_hours)}
            for ln in lines if ln["option"] in names for i in range(points)]
    return pd.DataFrame(rows, columns=["sweeps", "option", "kind", "cost"])


def break_even_marks(lines: Sequence[Mapping[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
                     max_sweeps: float, break_even_sweeps: Mapping[str, Optional[float]]) -> pd.DataFrame:
    """Where a rental line crosses the build's (sweeps, option, cost), for crossings within 0..max_sweeps."""
    by_name = {ln["option"]: ln for ln in lines}
    rows = [{"sweeps": s, "option": n, "cost": cost_at(by_name[n], s, sweep_gpu_hours)}
            for n, s in break_even_sweeps.items()
            if n in names and n in by_name and s is not None and 0 < s <= max_sweeps]
    return pd.DataFrame(rows, columns=["sweeps", "option", "cost"])
