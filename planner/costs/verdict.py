"""Rent or buy in one sentence: what to do for this sweep, and the break-even in sweeps and runs a month."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any, Literal, Optional, Sequence

from planner.money import format_money

# Chips the user weighs for renting (the user story names A100 and H100 by the hour).
CONSIDERED_FAMILIES = ("a100", "h100")


@dataclass(frozen=True)
class Verdict:
    """The answer a person can act on, with the numbers behind it (JSON-ready)."""

    action: Literal["rent", "buy", "rent-only"]
    sentence: str
    rent_option: Optional[str]
    rent_cost: Optional[str]
    rent_hours: Optional[float]
    buy_option: Optional[str]
    buy_net_cost: Optional[str]  # this sweep alone: parts + electricity - resale over the horizon
    buy_hours: Optional[float]
    break_even_sweeps_per_month: Optional[float]  # None: renting stays cheaper per hour (never pays off)
    break_even_runs_per_month: Optional[float]
    break_even_hours_per_month: Optional[float]  # training hours a month as measured on the user's 1080 Ti
    within_capacity: Optional[bool]
    horizon_months: int
    currency: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def rentals_to_show(self, options: Sequence[dict[str, Any]]) -> list[str]:
        """The rentals a reader compares first: this verdict's, then the cheapest A100 and H100 (rentals_to_show)."""
        return rentals_to_show(options, self.rent_option)


def _hours(h: float) -> str:
    if h < 1:
        return f"{h * 60:.0f} min"
    return f"{h:.1f} h" if h < 48 else f"{h / 24:.1f} days"


def _per_month(x: float) -> str:
    return f"{x:,.1f}".replace(",", " ") if x < 100 else f"{x:,.0f}".replace(",", " ")


def cheapest_rent(options: Sequence[dict[str, Any]], families: Sequence[str] = ()) -> Optional[dict[str, Any]]:
    """The rental option with the lowest bill to finish (optionally only chips starting with `families`)."""
    rents = [o for o in options if o["kind"] == "rent" and (not families or o["gpu"].startswith(tuple(families)))]
    return min(rents, key=lambda o: (Decimal(o["cost_to_finish"]), o["hours_to_finish"]), default=None)



def rentals_to_show(options: Sequence[dict[str, Any]], named: Optional[str] = None) -> list[str]:
    """The rentals a reader compares first: the one the verdict names, then the cheapest of each family users
    consider (CONSIDERED_FAMILIES: A100, H100), by name, each once."""
    pick = [named] if named else []
    for family in CONSIDERED_FAMILIES:
        hit = cheapest_rent(options, (family,))
        if hit is not None and hit["name"] not in pick:
            pick.append(hit["name"])
    return pick

def verdict(options: Sequence[dict[str, Any]], break_even: Sequence[dict[str, Any]], *, runs: int,
            baseline_hours: float, horizon_months: int, currency: str) -> Verdict:
    """One sentence from a comparison's JSON (`Option.to_json()`, `BreakEven.to_json()` rows).

    Rent when this sweep costs less rented than the build's net cost (parts + electricity - resale);
    the break-even against that rental is given in sweeps like this one, and runs, per month."""
    rent = cheapest_rent(options)
    buy = next((o for o in options if o["kind"] == "buy"), None)
    money = lambda x: format_money(Decimal(str(x)), currency)  # noqa: E731
    sweep_hours = runs * baseline_hours
    if rent is None and buy is None:
        raise ValueError("a comparison without options has no verdict")
    if buy is None:
        assert rent is not None
        sentence = (f"Rent: this sweep costs {money(rent['cost_to_finish'])} on {rent['name']} and finishes in "
                    f"{_hours(rent['hours_to_finish'])}; give a build (or a budget) to see when buying pays off.")
        return Verdict("rent-only", sentence, rent["name"], rent["cost_to_finish"], rent["hours_to_finish"], None, None,
                       None, None, None, None, None, horizon_months, currency)
    net = Decimal(str(buy["net_cost_over_horizon"]))
    if rent is None:
        sentence = (f"Buy: no rental offer is left to compare; the build finishes this sweep in "
                    f"{_hours(buy['hours_to_finish'])} for {money(net)} net of resale over {horizon_months} months.")
        return Verdict("buy", sentence, None, None, None, buy["name"], str(net), buy["hours_to_finish"], None, None,
                       None, None, horizon_months, currency)
    be = next((b for b in break_even if b["vs"] == rent["name"]), None)
    per_month_h = be["baseline_hours_per_month"] if be else None
    sweeps = None if per_month_h is None else per_month_h / sweep_hours
    run_count = None if per_month_h is None else per_month_h / baseline_hours
    within = be["within_capacity"] if be else None
    if sweeps is None or run_count is None:  # no break-even hours a month
        pays = "buying never pays off against it (renting is cheaper per hour of work)"
    elif sweeps <= 0:
        pays = "buying costs nothing extra (the parts are owned)"
    else:
        pays = (f"buying pays off above {_per_month(sweeps)} sweeps like this a month ({_per_month(run_count)} runs of "
                f"{baseline_hours:g} h on your 1080 Ti) over {horizon_months} months")
        if within is False:
            pays += ", more than the build can run, so never in practice"
    cheaper_to_rent = Decimal(str(rent["cost_to_finish"])) < net
    if cheaper_to_rent:
        sentence = (f"Rent: this sweep costs {money(rent['cost_to_finish'])} on {rent['name']} "
                    f"({_hours(rent['hours_to_finish'])}) against {money(net)} for the build net of resale; {pays}.")
    else:
        sentence = (f"Buy: the build finishes this sweep in {_hours(buy['hours_to_finish'])} for {money(net)} net of "
                    f"resale over {horizon_months} months, no more than renting {rent['name']} "
                    f"({money(rent['cost_to_finish'])}).")
    return Verdict("rent" if cheaper_to_rent else "buy", sentence, rent["name"], rent["cost_to_finish"],
                   rent["hours_to_finish"], buy["name"], str(net), buy["hours_to_finish"], sweeps, run_count,
                   per_month_h, within, horizon_months, currency)
