"""Try before you buy, for the top candidates of a recommendation: the cheapest rental of each card (or its
nearest), the cost of a 30-minute measurement, and the steps that end in `planner calibrate`."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from planner.catalog.load import Catalog
from planner.request import Request
from planner.service.answer import BuildSummary

MAX_CANDIDATES = 3


def candidate_chips(builds: Sequence[BuildSummary]) -> list[str]:
    """Chip ids of the builds (the plans', then the side-by-side table's), in order, at most MAX_CANDIDATES."""
    return list(dict.fromkeys(b.gpu.chip for b in builds))[:MAX_CANDIDATES]


def steps_hint(chip: str, speed: float) -> Optional[str]:
    """'about 6 000 steps (20 minutes)' from the user's calibrated baseline steps per second, when known."""
    from planner.costs.trial import STEADY_MINUTES
    from planner.perf.calibration import load_store
    from planner.vocab import BASELINE_CHIP

    base = next((m for m in reversed(load_store().measurements) if m.gpu_id == BASELINE_CHIP and m.steps_per_s), None)
    if base is None or not base.steps_per_s:
        return None
    steps = base.steps_per_s * speed * STEADY_MINUTES * 60
    rounded = int(float(f"{steps:.2g}"))
    return f"about {rounded:,} steps ({STEADY_MINUTES} minutes at the estimated speed)".replace(",", " ")


def trials(catalog: Catalog, request: Request, builds: Sequence[BuildSummary], rates: Any = None) -> list[dict[str, Any]]:
    """One try-before-you-buy entry per candidate card of `builds` (the answer's plans and side-by-side builds),
    cheapest rental first considered, in the request currency."""
    from planner.costs.cloud import latest_offers, load_cloud_offers
    from planner.costs.trial import trial_for
    from planner.fx import load_rates
    from planner.service.pipeline import speed_functions

    chips = candidate_chips(builds)
    if not chips:
        return []
    speedup, _ = speed_functions(catalog, request)
    speed = lambda c: float(speedup(c).value)  # noqa: E731
    offers = latest_offers(load_cloud_offers())
    rates = rates if rates is not None else load_rates()
    out: dict[tuple, dict[str, Any]] = {}  # one measurement per rented offer, naming every candidate it serves
    for cid in chips:
        t = trial_for(catalog.chips[cid], offers, catalog.chips, speed, currency=request.currency, rates=rates,
                      steps_hint=steps_hint(cid, speed(cid)))
        if t is None:
            continue
        key = (t.offer.provider, t.offer.offer, t.offer.chip)
        served = out[key]["for_gpus"] if key in out else []
        if key not in out or (t.exact and not out[key]["exact_card"]):  # the exact card's words lead
            out[key] = {**t.to_json(), "sentence": t.sentence()}
        out[key]["for_gpus"] = [*served, t.chip_name]
    return list(out.values())
