"""What the money a plan leaves unspent would buy instead: rented hours of the plan's own card (issue 34, item 6).

A plan that leaves money says why (nothing within the budget sweeps sooner) and what the next faster build costs;
this says what the rest is worth in the user's terms: GPU-hours of the same card on the cheapest dated rental,
and how many more sweeps of this size they run.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Optional

from planner.money import format_money
from planner.request import Request


def rest_note(plan: Any, req: Request, rates: Any = None, offers: Any = None, chips: Any = None,
              speedup: Optional[Callable[[str], float]] = None) -> Optional[str]:
    """'the EUR 3 784.00 left would rent ...' for a fastest-within-budget plan leaving at least 2 % (or EUR 50) of the
    budget; None otherwise. With no dated rental of the plan's own card, the nearest rented card (the one try before
    you buy rents: same architecture first, then closest modelled speed) given `chips` and `speedup` (chip id ->
    speedup vs the GTX 1080 Ti for this workload), named as a stand-in; None when no rental is known at all."""
    if req.mode != "best" or req.budget is None or plan.currency != req.currency:
        return None
    left = req.budget - plan.total
    if left < max(Decimal(50), req.budget * Decimal("0.02")):
        return None
    from planner.costs.cloud import latest_offers, load_cloud_offers
    from planner.fx import convert_exact, load_rates

    offers = latest_offers(load_cloud_offers()) if offers is None else offers
    rates = load_rates() if rates is None else rates
    own = [o for o in offers if o.chip == plan.chip.id]
    name, speed, stand_in = plan.chip.name, plan.speed.value, ""
    if not own and chips is not None and speedup is not None:  # the EUR 10 000 plan's RTX 5080 has no dated rental
        from planner.costs.trial import trial_for

        near = trial_for(plan.chip, offers, chips, speedup, currency=req.currency, rates=rates)
        if near is not None:
            own = [o for o in offers if o.chip == near.offer.chip]
            name, speed = near.rented_chip_name, speedup(str(near.offer.chip))
            stand_in = f", the nearest rented card to the {plan.chip.name} (no dated rental of it)"
    if not own:
        return None
    per_h = lambda o: convert_exact(o.price_per_gpu_hour, o.currency, req.currency, rates)  # noqa: E731
    pick = min(own, key=lambda o: (per_h(o), o.provider, o.offer))
    price = per_h(pick)
    if price <= 0:
        return None
    gpu_hours = float(left / price)
    sweep_gpu_hours = (req.runs_left or req.runs) * req.baseline_hours / speed  # one run per rented GPU
    num = lambda x: f"{x:,.0f}".replace(",", " ")  # noqa: E731
    return (f"what the {format_money(left, req.currency)} left would buy instead: about {num(gpu_hours)} GPU-hours of "
            f"a rented {name} ({pick.provider}, {pick.offer}, {pick.price_per_gpu_hour} "
            f"{pick.currency}/GPU-h, {pick.date_text}){stand_in}, about {num(gpu_hours / sweep_gpu_hours)} more sweeps of "
            "this size run beside the machine (estimate: the model's speed, one run per rented GPU)")
