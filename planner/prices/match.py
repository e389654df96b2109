"""Retailer listings -> catalog parts: the catalog matcher's score, plus condition, ambiguity and acceptance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from planner.catalog.match import DEFAULT_THRESHOLD, PartLike, score
from planner.prices.condition import condition_from_text

@dataclass(frozen=True)
class MatchResult:
    """Best catalog part for a listing; `accepted` says whether the price may be used for it."""

    listing: str
    part_id: Optional[str]
    confidence: float
    accepted: bool
    reason: str
    condition: str = "new"
    runners_up: list[tuple[str, float]] = field(default_factory=list)


def match_listing(
    listing: str,
    parts: Iterable[PartLike],
    category: Optional[str] = None,
    condition: Optional[str] = None,
    threshold: float = DEFAULT_THRESHOLD,
    want_condition: str = "new",
) -> MatchResult:
    """Best part for a listing name. Below `threshold`, ambiguous, or another condition: not accepted.

    `condition` is the listing's (from the extractor); when None it is read from the listing's words.
    """
    condition = condition or condition_from_text(listing) or "new"
    scored = []
    for p in parts:
        if category and getattr(p, "category", category) != category:
            continue
        s, why = score(listing, p, category)
        scored.append((s, p.id, why))
    if not scored:
        return MatchResult(listing, None, 0.0, False, "no catalog part in this category", condition)
    scored.sort(key=lambda x: -x[0])
    best, best_id, why = scored[0]
    runners = [(pid, s) for s, pid, _ in scored[1:4] if s > 0]
    if best <= 0:
        return MatchResult(listing, None, 0.0, False, f"no match ({why})", condition, runners)
    if len(scored) > 1 and scored[1][0] >= best - 0.02 and scored[1][0] > 0:
        best = round(best * 0.8, 3)
        why = f"ambiguous between {best_id} and {scored[1][1]}"
    if condition != want_condition:
        return MatchResult(listing, best_id, best, False, f"{condition} listing, wanted {want_condition}",
                           condition, runners)
    accepted = best >= threshold
    reason = why if accepted else f"low confidence {best:.2f} < {threshold:.2f}: {why}"
    return MatchResult(listing, best_id, best, accepted, reason, condition, runners)
