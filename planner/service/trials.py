"""Try before you buy, for the top candidates of a recommendation: the cheapest rental of each card (or its
nearest), the cost of a 30-minute measurement, and the steps that end in `planner calibrate`."""

from __future__ import annotations

import functools
from typing import Any, Optional, Sequence

from planner.catalog.load import Catalog
from planner.request import Request
from planner.service.answer import BuildSummary, SideBySide, Trial

MAX_CANDIDATES = 3


def candidate_chips(plans: Sequence[BuildSummary], close: Sequence[BuildSummary] = ()) -> list[str]:
    """Chip ids of the recommended plan, every side-by-side build ("what would decide" names a rental for each)
    and the alternatives while fewer than MAX_CANDIDATES, in that order."""
    ids = list(dict.fromkeys([*(b.gpu.chip for b in plans[:1]), *(b.gpu.chip for b in close)]))
    for b in plans[1:]:
        if len(ids) >= MAX_CANDIDATES:
            break
        if b.gpu.chip not in ids:
            ids.append(b.gpu.chip)
    return ids


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


def trials(catalog: Catalog, request: Request, plans: Sequence[BuildSummary], close: Sequence[BuildSummary] = (),
           rates: Any = None) -> list[Trial]:
    """One try-before-you-buy entry per candidate card (candidate_chips of the answer's plans and side-by-side
    builds), cheapest rental first considered, in the request currency; each names the answer's builds it measures."""
    from planner.costs.cloud import latest_offers, load_cloud_offers
    from planner.costs.trial import trial_for
    from planner.fx import load_rates
    from planner.service.pipeline import speed_functions

    chips = candidate_chips(plans, close)
    if not chips:
        return []
    speedup, _ = speed_functions(catalog, request)
    speed = functools.cache(lambda c: float(speedup(c).value))  # asked for each card a rental could stand in for
    offers = latest_offers(load_cloud_offers())
    rates = rates if rates is not None else load_rates()
    shown = {b.key: b.model_copy(update={"role": None, "parts": None}) for b in [*plans, *close]}
    out: dict[tuple, dict[str, Any]] = {}  # one measurement per rented offer, naming every candidate it serves
    for cid in chips:
        t = trial_for(catalog.chips[cid], offers, catalog.chips, speed, currency=request.currency, rates=rates,
                      steps_hint=steps_hint(cid, speed(cid)))
        if t is None:
            continue
        key = (t.offer.provider, t.offer.offer, t.offer.chip)
        served = out[key]["for_gpus"] if key in out else []
        builds = out[key]["builds"] if key in out else []
        if key not in out or (t.exact and not out[key]["exact_card"]):  # the exact card's words lead
            out[key] = {**t.to_json(), "sentence": t.sentence()}
        out[key]["for_gpus"] = [*served, t.chip_name]
        out[key]["builds"] = [*builds, *(b for b in shown.values() if b.gpu.chip == cid)]
    return [Trial.model_validate(v) for v in out.values()]


def name_rented_cards(sbs: Optional[SideBySide], rentals: Sequence[Trial]) -> Optional[SideBySide]:
    """The side-by-side table with "what would decide" naming the cards try-before-you-buy rents (the nearest
    rented card where the candidate itself has no dated rental), so the two never disagree."""
    from planner.service.uncertainty import MEASUREMENT, measurement_sentence

    if sbs is None or not sbs.what_would_decide:
        return sbs
    rented: dict[str, tuple[Optional[str], bool]] = {}
    for t in rentals:
        for name in t.for_gpus:
            rented[name] = (t.rent, t.rent == name)
    modelled = sorted({b.gpu.name for b in sbs.builds if b.speedup_basis != "measured"})
    return sbs.model_copy(update={"what_would_decide": [
        measurement_sentence(modelled, rented) if line.startswith(MEASUREMENT) else line
        for line in sbs.what_would_decide]})
