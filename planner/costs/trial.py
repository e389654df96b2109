"""Try before you buy: the cheapest rental of a candidate card (or its nearest rented chip), what a 30-minute
measurement of the user's own script costs, and the steps that turn it into a calibration."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Callable, Iterable, Optional

from planner.costs.cloud import CloudOffer
from planner.fx import convert_exact

TRIAL_MINUTES = 30  # 5 minutes of set-up, a few of warm-up, ~20 of steady training: enough for a median and an IQR
STEADY_MINUTES = 20


@dataclass(frozen=True)
class Trial:
    """One card's measurement on a rented machine: the offer, its cost and what to do."""

    chip: str  # the candidate's chip id
    chip_name: str
    offer: CloudOffer
    rented_chip_name: str
    exact: bool  # the offer rents the candidate's own chip
    cost: Decimal  # for TRIAL_MINUTES, in `currency`, the whole instance (offers sold as N GPUs bill N)
    currency: str
    steps: tuple[str, ...]
    why_nearest: str = ""

    def to_json(self) -> dict[str, Any]:
        o = self.offer
        return {"gpu": self.chip_name, "rent": self.rented_chip_name, "exact_card": self.exact,
                **({"nearest_because": self.why_nearest} if self.why_nearest else {}),
                "provider": o.provider, "offer": o.offer, "gpus_per_instance": o.gpus_per_instance,
                "price_per_gpu_hour": {"amount": str(o.price_per_gpu_hour), "currency": o.currency},
                "price_observed_on": o.date_text, "price_source": o.source, "price_note": o.note,
                "minutes": TRIAL_MINUTES, "cost": {"amount": str(self.cost), "currency": self.currency},
                "steps": list(self.steps)}

    def sentence(self) -> str:
        o = self.offer
        what = self.rented_chip_name if self.exact else f"{self.rented_chip_name} (nearest rented card: {self.why_nearest})"
        return (f"try before you buy: rent 1 x {what} on {o.provider} ({o.offer}) at {o.price_per_gpu_hour} "
                f"{o.currency}/GPU-h ({o.date_text}); {TRIAL_MINUTES} minutes of your own script cost about "
                f"{self.currency} {self.cost}")


def trial_cost(offer: CloudOffer, currency: str, rates: Any, minutes: int = TRIAL_MINUTES) -> Decimal:
    """The measurement's rent: the whole instance for `minutes`, converted, rounded to cents once."""
    hours = Decimal(minutes) / Decimal(60)
    amount = offer.price_per_gpu_hour * offer.gpus_per_instance * hours
    return convert_exact(amount, offer.currency, currency, rates).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _cheapest(offers: list[CloudOffer], currency: str, rates: Any) -> Optional[CloudOffer]:
    return min(offers, key=lambda o: (trial_cost(o, currency, rates), o.provider, o.offer), default=None)


def trial_for(chip: Any, offers: Iterable[CloudOffer], chips: dict[str, Any], speed: Callable[[str], float], *,
              currency: str = "EUR", rates: Any, steps_hint: Optional[str] = None) -> Optional[Trial]:
    """The cheapest rental of `chip` (any instance size, billed whole), else of the nearest rented chip: same
    architecture first, then the closest modelled speed (`speed(chip_id)` = speedup vs the GTX 1080 Ti)."""
    usable = [o for o in offers if o.chip in chips]
    exact = [o for o in usable if o.chip == chip.id]
    why = ""
    pick = _cheapest(exact, currency, rates)
    if pick is None:
        here = speed(chip.id)
        by_chip: dict[str, list[CloudOffer]] = {}
        for o in usable:
            by_chip.setdefault(str(o.chip), []).append(o)
        if not by_chip:
            return None
        near = min(by_chip, key=lambda c: (chips[c].architecture != chip.architecture,
                                           abs(math.log(speed(c) / here)), c))
        pick = _cheapest(by_chip[near], currency, rates)
        assert pick is not None
        same = chips[near].architecture == chip.architecture
        why = (f"no dated rental of the {chip.name} in the price list; the {chips[near].name} is "
               + (f"the same {chip.architecture} architecture" if same else "the closest in modelled speed")
               + f" ({speed(near):.1f}x vs {here:.1f}x a GTX 1080 Ti), and the model re-anchors the "
               f"{chip.name} on it once it is measured")
    rented = chips[str(pick.chip)].name
    steps = (
        f"rent 1 x {rented} on {pick.provider} ({pick.offer}) and install the same framework versions as at home",
        f"run your own training script unchanged for {steps_hint or 'about ' + str(STEADY_MINUTES) + ' minutes'}, "
        "logging throughput (tokens/s, samples/s or the step time) every few steps",
        "save the log: Lightning's metrics.csv, a W&B run export, a TensorBoard scalar CSV or your own JSONL",
        f"planner calibrate LOG --gpu \"{rented}\" (and once, a log of your GTX 1080 Ti run), then re-run "
        "recommend: the speed of every card is re-anchored on your measurement",
    )
    return Trial(chip.id, chip.name, pick, rented, pick.chip == chip.id, trial_cost(pick, currency, rates), currency,
                 steps, why)
