"""CLI: `planner costs` (rent versus buy for a sweep) and `planner fx show|refresh` (ECB rates)."""

from __future__ import annotations

import dataclasses
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from planner.cli.common import console, emit_json, err_console, fail, handle_errors, styled
from planner.service import cloud_offers, verdict
from planner.errors import FetchError, InfeasibleError, InputError
from planner.fx import ECB_DAILY_URL, Rates, load_rates, refresh
from planner.money import check_currency, format_money, parse_amount, parse_decimal, read_amount
from planner.request import Request
from planner.settings import DEFAULT_BASELINE_HOURS, DEFAULT_MAX_RENTED_GPUS, DEFAULT_RUNS, MAX_MACHINE_W
from planner.service import Comparison, CostParams, CostWorkload, ResaleCurve, purchase_from_plan, read_plan
from planner.vocab import BASELINE_CHIP

fx_app = typer.Typer(help="ECB euro reference rates: show the rates in use, or fetch today's.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("costs")(costs)
    app.add_typer(fx_app, name="fx")


# ---------------------------------------------------------------- wiring (patched in tests)


def _request(work: CostWorkload, currency: str, budget: Optional[Decimal] = None,
             owned: tuple[str, ...] = ()) -> Request:
    return Request.parse(budget=budget, currency=currency, runs=work.runs, baseline_hours=work.baseline_hours,
                         precision=work.precision, workload=work.workload, model_params=work.model_params,
                         run_vram_gb=work.run_vram_gb, owned=owned)


def _speed_functions(work: CostWorkload) -> Optional[tuple[Any, Any]]:
    """The speedup (per chip) and sweep functions compare() uses: None = the service's speed model for the request
    (tests swap in a fixed table)."""
    return None


def _solver_build(budget: Decimal, currency: str, work: CostWorkload, owned: tuple[str, ...], rates: Rates) -> Any:
    """The best build within the budget (the same pipeline as `planner recommend`), as the cost model's Build."""
    from planner.service import costs_build, load_priced_catalog, plan

    planned = plan(load_priced_catalog(), _request(work, currency, budget, owned))
    if not planned.plans:
        why = planned.recommendation.why_not
        detail = "; ".join([*(why.conflicts if why else []), *(why.suggestions if why else [])][:3])
        raise InfeasibleError(f"the solver found no build within {format_money(budget, currency)}"
                              + (f" ({detail})" if detail else "") + "; raise --budget or pass --build")
    return costs_build(planned.plans[0].report, currency, rates)


# ---------------------------------------------------------------- output


def _assumptions(params: CostParams, rates: Rates, notes: list[str], comp: Comparison) -> dict[str, Any]:
    r = params.resale
    return {
        "workload": {"runs": comp.workload.runs, "baseline_hours_per_run": comp.workload.baseline_hours,
                     "baseline_gpu": BASELINE_CHIP, "precision": comp.workload.precision, "workload": comp.workload.workload},
        "kwh_price": str(params.kwh_price),
        "kwh_currency": params.kwh_currency,
        "kwh_price_source": params.KWH_PRICE_SOURCE if params.kwh_price == params.DEFAULT_KWH_PRICE else "user (--kwh-price)",
        "kwh_price_date": params.KWH_PRICE_DATE.isoformat() if params.kwh_price == params.DEFAULT_KWH_PRICE else None,
        "horizon_months": params.horizon_months,
        "resale_gpu_keep_24m": str(r.gpu_keep_24m),
        "resale_platform_keep_24m": str(r.platform_keep_24m),
        "resale_curve": "fraction kept after m months = keep_24m ** (m/24); estimates, see docs/costs.md",
        "sell_old_gpu": params.sell_old_gpu,
        "old_gpu_price": str(params.old_gpu_price),
        "old_gpu_price_source": "estimate (no sourced used GTX 1080 Ti price found)",
        "rental_overhead_hours_per_gpu": str(params.overhead_hours),
        "rental_overhead_source": "estimate: boot, environment, data copy and downloads per rental",
        "max_gpus": params.max_gpus,
        "rental_gpu_counts": "whole instances up to max_gpus; a count that does not finish sooner than a smaller one is dropped",
        "fx": {"base": "EUR", "date": rates.date.isoformat(), "age_days": rates.age_days, "source": rates.source},
        "not_included": "delivery and assembly time, electricity subscription, taxes on resale, storage/egress fees",
        "notes": notes,
    }


def _hours(o: Any) -> str:
    t = o.timing
    return f"{t.wall_hours:.1f} ({t.wall_low:.1f}-{t.wall_high:.1f})"


def _render(comp: Comparison, payload: dict[str, Any], limit: int) -> None:
    cur = comp.params.currency
    sources: list[str] = []

    def ref(src: str) -> str:
        if src not in sources:
            sources.append(src)
        return f"[{sources.index(src) + 1}]"

    if payload.get("verdict"):
        console.print(styled("[bold]{}[/]\n", payload["verdict"]["sentence"]))
    rents = [o for o in comp.options if o.kind == "rent"]
    shown = [o for o in comp.options if o.kind == "buy"] + rents[: limit or None]
    table = Table(title=f"Finish {comp.workload.runs} runs x {comp.workload.baseline_hours:g} h (1080 Ti hours), {cur}",
                  show_lines=False)
    for col, just in (("option", "left"), ("GPUs", "right"), ("hours to finish (range)", "right"),
                      ("cost to finish", "right"), ("per run", "right"), ("price used, date, source", "left")):
        table.add_column(col, justify=just, overflow="fold")  # type: ignore[arg-type]  # never cut a date or price
    for o in shown:
        if o.kind == "buy":
            price = f"{format_money(o.details['purchase'], cur)} parts, {o.price_date} {ref(o.price_source)}"
        else:
            d = o.details
            price = f"{d['price_currency']} {d['price_per_gpu_hour']}/GPU-h, {o.price_date} {ref(o.price_source)}"
        label = f"buy: {o.name}" if o.kind == "buy" else o.name
        table.add_row(label, str(o.gpus), _hours(o), format_money(o.cost_to_finish, cur),
                      format_money(o.cost_per_run, cur), price)
    console.print(table)
    hidden = len(rents) - (len(shown) - (1 if comp.buy else 0))
    if hidden > 0:
        console.print(f"{hidden} more rental options: --limit 0 shows all, --json prints everything.")
    buy = comp.buy
    if buy is not None:
        d = buy.details
        console.print(styled(
            "\n[bold]Buying[/] the {}: [bold]cash to finish[/] {}\n[bold]Net cost over {} months[/] (this sweep only): {}",
            buy.name,
            f"{format_money(d['cash_to_finish'], cur)} (parts {format_money(d['purchase'], cur)} + electricity "
            f"{format_money(d['electricity'], cur)} for {d['electricity_kwh']} kWh at {d['wall_w']} W from the wall).",
            comp.params.horizon_months,
            f"{format_money(d['net_cost_over_horizon'], cur)} after resale {format_money(d['resale_after_horizon'], cur)} "
            f"(GPU keeps {d['resale_gpu_fraction']:.0%}, rest {d['resale_platform_fraction']:.0%})"
            + (f" and selling the old GPU for {format_money(d['old_gpu_sale'], cur)}" if comp.params.sell_old_gpu else "")
            + f". Each further run costs {format_money(d['marginal_cost_per_run'], cur)} of electricity."))
        names = {o.name for o in shown}
        be = Table(title=f"Break-even: baseline (1080 Ti) GPU-hours per month over {comp.params.horizon_months} months")
        for col in ("vs", "buying is cheaper above", "build capacity"):
            be.add_column(col, justify="left" if col == "vs" else "right")
        for b in comp.break_even:
            if b.vs not in names:
                continue
            if b.baseline_hours_per_month is None:
                above = "never (renting is cheaper per hour)"
            else:
                above = f"{b.baseline_hours_per_month:,.0f} h/month" + ("" if b.within_capacity else " (beyond capacity)")
            be.add_row(b.vs, above, f"{b.buy_capacity_per_month:,.0f} h/month")
        console.print(be)
    for s in comp.skipped:
        err_console.print(f"skipped: {s}", highlight=False)
    a = payload["assumptions"]
    console.print(
        f"\nElectricity {a['kwh_currency']} {a['kwh_price']}/kWh ({a['kwh_price_date'] or 'user value'}); "
        f"ECB rates of {a['fx']['date']} ({a['fx']['age_days']} days old) from {a['fx']['source']}; "
        f"rental overhead {a['rental_overhead_hours_per_gpu']} h per GPU (estimate). Notes: "
        + ("; ".join(a["notes"]) or "none"),
        highlight=False,
    )
    console.print("Sources:", highlight=False)
    for i, s in enumerate(sources, start=1):
        console.print(f"  [{i}] {s}", highlight=False, markup=False)
    if a["kwh_price_source"]:
        console.print(f"  electricity: {a['kwh_price_source']}", highlight=False, markup=False)


# ---------------------------------------------------------------- commands


@handle_errors
def costs(
    runs: Optional[int] = typer.Option(None, "--runs", help=f"Number of training runs in the sweep (default: your "
                                       f"profile, else {DEFAULT_RUNS})."),
    hours: Optional[float] = typer.Option(None, "--hours", help="Hours per run on the GTX 1080 Ti (the baseline; "
                                          f"default: from your calibrated 1080 Ti log, else {DEFAULT_BASELINE_HOURS:g})."),
    precision: Optional[str] = typer.Option(None, "--precision", help="fp32, tf32 or amp on the target GPU (default: "
                                            "your profile, else amp)."),
    model_params: Optional[float] = typer.Option(
        None, "--model-params", help="Model size in parameters, e.g. 15e6 (default: your profile, else the workload "
        "class's typical size)."),
    workload: Optional[str] = typer.Option(
        None, "--workload", help="Workload class for the speed model (transformer, cnn, generic; default: your "
        "profile, else transformer)."),
    budget: Optional[str] = typer.Option(
        None, "--budget", help="Ask the solver for the best build within this budget (7000, 7k, '7 000 €')."),
    build: Optional[Path] = typer.Option(
        None, "--build", help="A saved `planner recommend --json` output (first plan) or one plan."),
    kwh_price: str = typer.Option(
        str(CostParams.DEFAULT_KWH_PRICE), "--kwh-price",
        help="Electricity price per kWh in --kwh-currency (default: EDF Tarif Bleu Base, 2026-02-01)."),
    kwh_currency: str = typer.Option("EUR", "--kwh-currency", help="Currency of --kwh-price."),
    horizon_months: int = typer.Option(
        24, "--horizon-months", help="How long you keep the machine before selling it."),
    currency: Optional[str] = typer.Option(
        None, "--currency", help="Currency of the report (ISO code; default: the one in --budget, else EUR)."),
    max_gpus: int = typer.Option(DEFAULT_MAX_RENTED_GPUS, "--max-gpus", help="Largest number of rented GPUs to consider."),
    sell_old_gpu: bool = typer.Option(
        False, "--sell-old-gpu/--keep-old-gpu", help="Count the sale of the old GTX 1080 Ti."),
    old_gpu_price: str = typer.Option(
        str(CostParams.DEFAULT_OLD_GPU_PRICE), "--old-gpu-price", help="Used price of the old GPU in EUR (an estimate)."),
    gpu_resale: str = typer.Option(
        str(ResaleCurve.DEFAULT_GPU_KEEP_24M), "--gpu-resale", help="Fraction of the GPU price recovered after 24 months."),
    platform_resale: str = typer.Option(
        str(ResaleCurve.DEFAULT_PLATFORM_KEEP_24M), "--platform-resale", help="Same for the other parts."),
    overhead_hours: str = typer.Option(
        str(CostParams.DEFAULT_OVERHEAD_HOURS), "--overhead-hours", help="Idle/setup hours billed per rental on each GPU."),
    draw_w: Optional[float] = typer.Option(
        None, "--draw-w", help="DC draw of the build while training, W (default: the plan's sustained_w)."),
    owned: list[str] = typer.Option([], "--owned", help="Part id of the plan you already own (repeatable)."),
    provider: list[str] = typer.Option([], "--provider", help="Only these cloud providers (substring, repeatable)."),
    cloud_gpu: list[str] = typer.Option(
        [], "--cloud-gpu", help="Only these cloud GPUs (chip id or name substring, repeatable)."),
    gpus: list[int] = typer.Option([], "--gpus", help="Only these rented GPU counts (repeatable): --gpus 1 --gpus 8."),
    all_offers: bool = typer.Option(False, "--all-offers", help="Also consider spot and commitment prices."),
    limit: int = typer.Option(20, "--limit", help="Rental rows in the table (0 = all); --json prints all."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Rent or buy: time and cost to finish a sweep on a build vs cloud GPUs, with break-even."""
    if budget is not None and build is not None:
        raise InputError("pass either --budget or --build, not both")
    if draw_w is not None and not 0 < draw_w <= MAX_MACHINE_W:
        raise InputError(f"--draw-w must be a positive number of watts up to {MAX_MACHINE_W} (got {draw_w:g})")
    if limit < 0:
        raise InputError("--limit must be >= 0")
    if any(n < 1 for n in gpus):
        raise InputError("--gpus must be >= 1")
    if model_params is not None and not 0 < model_params <= 1e13:
        raise InputError(f"--model-params must be a positive parameter count (got {model_params:g})")
    from planner.service import measurements

    from planner.service import profile_store

    given_owned = list(owned)  # typed here; the profile's owned parts may belong to another build
    prof = profile_store().apply(model_params=model_params, workload=workload, precision=precision, runs=runs,
                         baseline_hours=hours, run_vram_gb=None, owned=tuple(owned))
    model_params, workload, precision, hours = (prof.values[k] for k in ("model_params", "workload", "precision",
                                                                         "baseline_hours"))
    runs, owned = (DEFAULT_RUNS if prof.values["runs"] is None else prof.values["runs"]), list(prof.values["owned"])
    hours, _ = measurements().baseline_hours(hours)  # given, else your profile, else your calibrated 1080 Ti run, else 7 h
    work = CostWorkload(runs=runs, baseline_hours=hours, precision=precision, workload=workload,
                      model_params=model_params, run_vram_gb=prof.values["run_vram_gb"])
    typed = read_amount(budget, "--budget") if budget is not None else None
    cur = check_currency(currency or (typed.currency if typed else None) or "EUR")
    if typed is not None:
        parse_amount(budget, "--budget", cur)  # a currency in --budget must agree with --currency
    params = CostParams(
        currency=cur, kwh_price=parse_decimal(kwh_price, "--kwh-price"), kwh_currency=check_currency(kwh_currency),
        horizon_months=horizon_months,
        resale=ResaleCurve(parse_decimal(gpu_resale, "--gpu-resale"),
                             parse_decimal(platform_resale, "--platform-resale")),
        sell_old_gpu=sell_old_gpu, old_gpu_price=parse_decimal(old_gpu_price, "--old-gpu-price"),
        overhead_hours=parse_decimal(overhead_hours, "--overhead-hours"), max_gpus=max_gpus,
    )
    rates = load_rates()
    for code in {cur, params.kwh_currency}:
        rates.rate(code)  # unknown to the ECB file -> CurrencyError before any work
    notes: list[str] = list(rates.warnings)
    the_build: Optional[Any] = None
    if build is not None:
        the_plan = read_plan(build)
        in_plan = {line.part_id for line in the_plan.parts}
        strangers = [p for p in given_owned if p not in in_plan]
        if strangers:  # it would be ignored silently, and the build costed as if you owned nothing
            raise InputError(f"--owned {strangers[0]!r} is not a part of {build.name}; its parts are "
                             f"{', '.join(sorted(in_plan))}")
        the_build, more = purchase_from_plan(the_plan, rates, cur, owned=set(owned), draw_w=draw_w)
        notes += more
    elif typed is not None:  # --budget given
        the_build = _solver_build(typed.value, cur, work, tuple(owned), rates)
        if draw_w is not None:
            the_build = dataclasses.replace(the_build, dc_w=float(draw_w))
        notes.append(f"draw while training = --draw-w ({draw_w:g} W)" if draw_w is not None else
                     f"draw while training = the plan's sustained draw ({the_build.dc_w:g} W, a sizing upper bound)")
    else:
        notes.append("no --build or --budget: rental options only, no break-even")
    offers = cloud_offers(all_billing=all_offers, providers=provider, gpus=cloud_gpu)
    if not offers and (provider or cloud_gpu):
        raise InputError("no cloud offer matches --provider/--cloud-gpu")
    from planner.service import compare, load_priced_catalog

    # the same pipeline step as the web UI's Cloud vs buy tab (planner.service.compare), the request built from the
    # options; _speed_functions is the speed model for it (tests swap in a fixed table)
    shipped = load_priced_catalog(use_history=False)  # the catalog as shipped, as costs always read it
    comp = compare(shipped, _request(work, cur, owned=tuple(owned)), the_build, params=params, rates=rates,
                   offers=offers, only_counts=tuple(gpus), speed=_speed_functions(work))
    payload = {
        "currency": cur,
        "options": [o.to_json() for o in comp.options],
        "break_even": [b.to_json() for b in comp.break_even],
        "assumptions": _assumptions(params, rates, notes, comp),
        "skipped": comp.skipped,
        "profile": prof.to_json(),  # which workload the answer describes: the stored profile or the default
    }
    if comp.options:
        payload["verdict"] = verdict(payload["options"], payload["break_even"], runs=work.runs,
                                     baseline_hours=work.baseline_hours, horizon_months=params.horizon_months,
                                     currency=cur).to_json()
    if as_json:
        emit_json(payload)
    else:
        console.print(prof.note, markup=False, highlight=False)
        _render(comp, payload, limit)


@fx_app.command("show")
@handle_errors
def fx_show(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The ECB reference rates in use: date, age, file, and the main currencies."""
    rates = load_rates()
    if as_json:
        emit_json(rates.to_json())
        return
    console.print(f"ECB euro reference rates of {rates.date.isoformat()} ({rates.age_days} days old), from {rates.source}",
                  highlight=False)
    table = Table(show_header=True)
    table.add_column("1 EUR =")
    table.add_column("rate", justify="right")
    for code in ("USD", "GBP", "CHF", "JPY", "CAD", "SEK", "PLN"):
        if code in rates.rates:
            table.add_row(code, str(rates.rates[code]))
    console.print(table)
    console.print(f"{len(rates.rates) - 1} currencies; `planner fx show --json` lists all.")
    for w in rates.warnings:
        err_console.print(f"warning: {w}", highlight=False)


@fx_app.command("refresh")
@handle_errors
def fx_refresh(
    url: str = typer.Option(ECB_DAILY_URL, "--url", help="Where to fetch the ECB daily XML."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fetch today's ECB reference rates; on failure the rates in use stay and their age is shown."""
    try:
        fresh = refresh(url)
    except FetchError as exc:
        kept = load_rates()
        fail(f"could not refresh the ECB rates: {exc}. Still using the rates of {kept.date.isoformat()} "
             f"({kept.age_days} days old) from {kept.source}", code=1)
        return
    in_use = load_rates()
    if as_json:
        emit_json({"fetched": fresh.to_json(), "in_use": {"date": in_use.date.isoformat(), "source": in_use.source}})
        return
    console.print(f"Stored the ECB rates of {fresh.date.isoformat()} ({len(fresh.rates) - 1} currencies) in {fresh.source}; "
                  f"in use: rates of {in_use.date.isoformat()} from {in_use.source}", highlight=False)
