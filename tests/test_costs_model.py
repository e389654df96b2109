"""Cost model: hand-worked money examples to the cent, monotonicity, GPU counts, break-even, chart data."""

from __future__ import annotations

import math
from datetime import date
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import planner.costs.compare as C
from helpers_costs import Est, Sweep
from planner.costs.cloud import CloudOffer
from planner.errors import InputError, UnknownPartError
from planner.fx import Rates

RATES = Rates(rates={"EUR": Decimal(1), "USD": Decimal("1.1225"), "GBP": Decimal("0.85033")},
              date=date(2026, 10, 2), source="test")




SPEED = {"rtx-5090": Est(5.0, 4.0, 6.0), "h100-sxm5-80gb": Est(8.0, 6.4, 9.6), "a100-sxm4-80gb": Est(4.0, 3.2, 4.8)}


def speedup(chip: str) -> Est:
    if chip not in SPEED:
        raise UnknownPartError(f"unknown GPU {chip!r}")
    return SPEED[chip]


def sweep(runs: int, baseline_hours: float, est: Est, gpu_count: int = 1) -> Sweep:
    """Same contract as planner.perf.model.sweep_time: wall = ceil(runs / gpus) x hours per run."""
    per_run = baseline_hours / est.value
    return Sweep(hours_per_run=per_run, wall_hours=math.ceil(runs / gpu_count) * per_run)


def offer(price: str = "2.69", chip: str = "h100-sxm5-80gb", k: int = 1, currency: str = "USD", **kw) -> CloudOffer:
    base = dict(provider="RunPod", offer="Community Cloud", gpu_name="H100 SXM", chip=chip, vram_gb=80,
                gpus_per_instance=k, price_per_gpu_hour=Decimal(price), currency=currency,
                observed_on=date(2026, 11, 9), source="test source", billing="on-demand")
    base.update(kw)
    return CloudOffer(**base)


BUILD = C.Purchase(
    name="target build", chip="rtx-5090", gpu_count=1, gpu_price=Decimal("4200"), platform_price=Decimal("2280"),
    currency="EUR", dc_w=905, psu_w=1200, psu_efficiency="gold", price_date="2026-11-20", price_source="fixture",
)
WORK = C.Workload(runs=8, baseline_hours=7)


def test_electricity_to_the_cent():
    # 1000 W at the wall for 7 h = 7 kWh; 7 kWh x EUR 0.1940 = EUR 1.358 -> 1.36
    assert C._q(C.electricity_cost(1000.0, 7.0, Decimal("0.1940"))) == Decimal("1.36")
    # 450 W for 2.5 h = 1.125 kWh; x 0.25 = 0.28125 -> 0.28
    assert C._q(C.electricity_cost(450.0, 2.5, Decimal("0.25"))) == Decimal("0.28")


def test_wall_power_follows_the_80plus_curve():
    # 905 W DC on a 1200 W Gold unit = 75.4 % load; Gold is 90 % at 50 % and 87 % at 100 % load:
    # eff = 0.90 + (0.87 - 0.90) x (0.7542 - 0.5) / 0.5 = 0.88475; wall = 905 / 0.88475 = 1022.89 W
    assert C.wall_power_w(905, "gold", 1200) == pytest.approx(1022.888, abs=0.01)
    assert C.wall_power_w(0, "gold", 1200) == 0.0
    # a worse certificate draws more from the wall for the same DC load
    assert C.wall_power_w(905, "bronze", 1200) > C.wall_power_w(905, "platinum", 1200)


def test_rental_to_the_cent():
    # RunPod Community H100 SXM at USD 2.69/GPU-h, speedup 8: 8 runs x 7 h -> 0.875 h per run, 7.0 h on 1 GPU.
    # Billed 7.0 h + 0.5 h overhead = 7.5 GPU-h -> USD 20.175 -> EUR 20.175 / 1.1225 = 17.9733 -> EUR 17.97
    t = C.timing_from(sweep(8, 7, SPEED["h100-sxm5-80gb"], 1), WORK, SPEED["h100-sxm5-80gb"], 1)
    opt = C.rent_option(offer(), 1, WORK, t, C.CostParams(), RATES)
    assert opt.timing.wall_hours == pytest.approx(7.0)
    assert opt.cost_to_finish == Decimal("17.97")
    assert opt.details["bill_in_price_currency"] == Decimal("20.18")  # 20.175 rounded half-up
    # per run: 17.97327 / 8 = 2.24666 -> 2.25
    assert opt.cost_per_run == Decimal("2.25")
    assert C._q(C.rental_cost(Decimal("2.69"), 1, 7.0, Decimal("0.5"))) == Decimal("20.18")


def test_resale_to_the_cent():
    # after 24 months: GPU 4200 x 0.60 + platform 2280 x 0.40 = 2520 + 912 = 3432.00
    # after 12 months: 4200 x 0.6**0.5 + 2280 x 0.4**0.5 = 3253.3060 + 1441.9986 = 4695.30
    for months, expected in ((24, Decimal("3432.00")), (12, Decimal("4695.30"))):
        p = C.CostParams(horizon_months=months)
        t = C.Timing(1.4, 11.2, 9.3, 14.0)
        buy = C.buy_option(BUILD, WORK, t, p, RATES)
        assert buy.details["resale_after_horizon"] == expected
    assert C.ResaleCurve.fraction(Decimal("0.6"), 48) == pytest.approx(Decimal("0.36"))
    with pytest.raises(InputError):
        C.ResaleCurve(gpu_keep_24m=Decimal("1.2"))


def test_buy_option_cash_and_net_to_the_cent(monkeypatch):
    monkeypatch.setattr(C, "wall_power_w", lambda dc, eff, psu: 1000.0)
    # speedup 5: 7 h / 5 = 1.4 h per run, 8 runs on 1 GPU = 11.2 h; 1000 W x 11.2 h = 11.2 kWh x 0.1940 = 2.1728
    t = C.timing_from(sweep(8, 7, SPEED["rtx-5090"], 1), WORK, SPEED["rtx-5090"], 1)
    buy = C.buy_option(BUILD, WORK, t, C.CostParams(), RATES)
    d = buy.details
    assert d["electricity"] == Decimal("2.17")
    assert buy.cost_to_finish == d["cash_to_finish"] == Decimal("6482.17")  # 6480 + 2.1728
    assert d["net_cost_over_horizon"] == Decimal("3050.17")  # 6482.1728 - 3432
    assert buy.cost_per_run == Decimal("810.27")  # 6482.1728 / 8
    assert d["marginal_cost_per_run"] == Decimal("0.27")  # 2.1728 / 8
    # selling the old 1080 Ti at EUR 150 lowers the net cost, not the cash needed to finish
    sold = C.buy_option(BUILD, WORK, t, C.CostParams(sell_old_gpu=True), RATES)
    assert sold.details["net_cost_over_horizon"] == Decimal("2900.17")
    assert sold.cost_to_finish == buy.cost_to_finish
    # a build priced in USD is converted: 4200 + 2280 USD = 6480 / 1.1225 = 5772.83 EUR
    usd = C.Purchase(**{**BUILD.__dict__, "currency": "USD"})
    assert C.buy_option(usd, WORK, t, C.CostParams(), RATES).details["purchase"] == Decimal("5772.83")


def test_break_even_arithmetic():
    t = C.Timing(1.0, 8.0, 7.0, 9.0)
    buy = C.Option(kind="buy", name="b", gpu="x", gpu_name="x", gpus=1, timing=t, currency="EUR",
                   cost_exact=Decimal(0), fixed_exact=Decimal("3048"), rate_exact=Decimal("0.05"), runs=8,
                   price_date="", price_source="")
    rent = C.Option(kind="rent", name="r", gpu="y", gpu_name="y", gpus=1, timing=t, currency="EUR",
                    cost_exact=Decimal(0), fixed_exact=Decimal(0), rate_exact=Decimal("0.35"), runs=8,
                    price_date="", price_source="")
    # 3048 / (0.35 - 0.05) = 10160 baseline GPU-hours over 24 months = 423.33 per month
    be = C.break_even(buy, rent, WORK, 24)
    assert be.baseline_hours_total == pytest.approx(10160)
    assert be.baseline_hours_per_month == pytest.approx(423.333, abs=1e-3)
    # capacity: the build does 56 baseline hours in 8 wall hours -> 7 x 730.5 = 5113.5 per month
    assert be.buy_capacity_per_month == pytest.approx(5113.5)
    assert be.within_capacity is True
    cheap = C.Option(**{**rent.__dict__, "rate_exact": Decimal("0.04")})
    assert C.break_even(buy, cheap, WORK, 24).baseline_hours_per_month is None  # renting cheaper per hour
    free = C.Option(**{**buy.__dict__, "fixed_exact": Decimal("-10")})
    assert C.break_even(free, rent, WORK, 24).baseline_hours_per_month == 0.0


def test_break_even_is_where_the_cost_lines_cross():
    comp = C.compare(WORK, C.CostParams(), RATES, offers=[offer()], build=BUILD, speedup=speedup, sweep=sweep)
    buy = comp.buy
    for be in comp.break_even:
        rent = next(o for o in comp.options if o.name == be.vs)
        h = Decimal(repr(be.baseline_hours_total))
        assert float(buy.fixed_exact + buy.rate_exact * h) == pytest.approx(float(rent.rate_exact * h), rel=1e-9)


def test_more_rented_gpus_finish_sooner_at_about_the_same_cost():
    no_overhead = C.CostParams(overhead_hours=Decimal(0))
    comp = C.compare(WORK, no_overhead, RATES, offers=[offer()], speedup=speedup, sweep=sweep)
    by_n = sorted(comp.options, key=lambda o: o.gpus)
    assert [o.gpus for o in by_n] == [1, 2, 3, 4, 8]  # 5-7 GPUs finish no sooner than 4 (2 waves)
    walls = [o.timing.wall_hours for o in by_n]
    assert walls == sorted(walls, reverse=True) and walls[0] > walls[-1]
    exact = {o.gpus: o.cost_to_finish for o in by_n if 8 % o.gpus == 0}
    assert len(set(exact.values())) == 1  # 1, 2, 4, 8 GPUs: same GPU-hours, same bill
    # with the default overhead the extra cost is exactly (n - 1) x 0.5 h x price, converted
    comp = C.compare(WORK, C.CostParams(), RATES, offers=[offer()], speedup=speedup, sweep=sweep)
    one, eight = (next(o for o in comp.options if o.gpus == n) for n in (1, 8))
    assert eight.cost_exact - one.cost_exact == pytest.approx(Decimal("2.69") * 7 * Decimal("0.5") / Decimal("1.1225"))


@settings(max_examples=60, deadline=None)
@given(runs=st.integers(1, 40), hours=st.floats(0.1, 100), extra=st.integers(1, 20))
def test_cost_grows_with_work(runs, hours, extra):
    small, big = C.Workload(runs, hours), C.Workload(runs + extra, hours)
    for w_small, w_big in ((small, big), (small, C.Workload(runs, hours * 1.5))):
        a = C.compare(w_small, C.CostParams(), RATES, offers=[offer()], build=BUILD, speedup=speedup, sweep=sweep,
                      only_counts=(1,))
        b = C.compare(w_big, C.CostParams(), RATES, offers=[offer()], build=BUILD, speedup=speedup, sweep=sweep,
                      only_counts=(1,))
        for x, y in zip(a.options, b.options):
            assert y.cost_exact > x.cost_exact
            assert y.timing.wall_hours > x.timing.wall_hours


def test_instance_sizes_and_skips():
    assert C.gpu_counts(1, 4) == [1, 2, 3, 4]
    assert C.gpu_counts(8, 16) == [8, 16]
    assert C.gpu_counts(8, 4) == []
    offers = [offer(k=8), offer(chip=None, gpu_name="B300"), offer(chip="a100-sxm4-80gb", gpu_name="A100")]
    comp = C.compare(WORK, C.CostParams(max_gpus=4), RATES, offers=offers, speedup=speedup, sweep=sweep)
    assert {o.gpu for o in comp.options} == {"a100-sxm4-80gb"}
    assert len(comp.skipped) == 2
    # a chip the speed model does not know is skipped with its reason, not a crash
    unknown = offer(chip="l40s", gpu_name="L40S")
    comp = C.compare(WORK, C.CostParams(), RATES, offers=[unknown], speedup=speedup, sweep=sweep)
    assert comp.options == [] and "l40s" in comp.skipped[0]


def test_bad_inputs_raise_input_error():
    for runs, hours in ((0, 7), (8, -7), (8, 0), (8, float("nan"))):
        with pytest.raises(InputError):
            C.Workload(runs, hours)
    with pytest.raises(InputError):
        C.CostParams(kwh_price=Decimal("-0.1"))
    with pytest.raises(InputError):
        C.CostParams(horizon_months=0)


def test_cost_curve_chart_data():
    """The one cost curve (drawn by the web UI): buy starts at its capital net of resale, and the break-even mark
    sits where the rental line meets the build's."""
    comp = C.compare(WORK, C.CostParams(), RATES, offers=[offer()], build=BUILD, speedup=speedup, sweep=sweep,
                     only_counts=(1,))
    lines, names = comp.lines(), [o.name for o in comp.options]
    sweep_h = WORK.baseline_gpu_hours
    be = comp.break_even[0]
    at = be.baseline_hours_total / sweep_h  # sweeps to break even
    frame = C.cost_curve(lines, names, sweep_h, 2 * at, points=11)
    assert list(frame.columns) == ["sweeps", "option", "kind", "cost"]
    buy = frame[frame.kind == "buy"]
    assert buy.cost.iloc[0] == pytest.approx(float(comp.buy.fixed_exact))  # at zero sweeps: capital net of resale
    assert buy.cost.is_monotonic_increasing
    marks = C.break_even_marks(lines, names, sweep_h, 2 * at, {be.vs: at})
    assert len(marks) == 1 and marks.sweeps.iloc[0] == pytest.approx(at)
    buy_line = next(ln for ln in lines if ln["kind"] == "buy")
    assert marks.cost.iloc[0] == pytest.approx(C.cost_at(buy_line, at, sweep_h), rel=1e-9)  # the lines cross there
    assert C.break_even_marks(lines, names, sweep_h, at / 2, {be.vs: at}).empty  # beyond the range: not drawn
