"""A priced fix per finding of a checked build: the cheapest one-part swap that clears it without a new problem."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Optional, Sequence

from planner.catalog.load import Catalog
from planner.fx import convert_money
from planner.money import format_money
from planner.request import Request

MAX_CANDIDATES = 80  # cheapest priced parts tried per category and finding (a check costs a few ms)
KEEP = ("gpu",)  # the cards are the user's choice: a fix never swaps them


def _report(cat: Catalog, ids: Sequence[str], req: Request) -> Any:
    from planner.compat.checker import check_parts

    return check_parts(cat, [cat.parts[i] for i in ids], gpu_count=req.gpu_count or 1,
                       power_fraction=req.power_fraction, workload=req.workload, precision=req.precision,
                       model_params=req.model_params, owned=req.owned, used=req.used, currency=req.currency)


def _price(cat: Catalog, pid: str, currency: str) -> Optional[Decimal]:
    offer = cat.offer_for(pid, allow_used=False)
    return None if offer is None else convert_money(offer.price, offer.currency, currency)


def priced_fixes(cat: Catalog, ids: Sequence[str], req: Request) -> dict[str, str]:
    """rule name -> 'swap the A for the B (EUR x, +EUR y)' for each problem or warning of the build that one swap
    of a non-GPU part clears without adding a problem or another warning; rules no single swap clears are left out."""
    from planner.compat.rules import RULES_BY_NAME

    base = _report(cat, ids, req)
    by_cat = {cat.parts[i].category: i for i in ids}
    before_warn = {f.rule for f in base.warnings}
    out: dict[str, str] = {}
    for f in [*base.problems, *base.warnings]:
        if f.rule in out:
            continue
        rule = RULES_BY_NAME.get(f.rule)
        cats = [c for c in (getattr(rule, "categories", ()) or ()) if c in by_cat and c not in KEEP]
        best: Optional[tuple[Decimal, str, str]] = None  # (price, category, part id)
        for c in cats:
            mine = by_cat[c]
            priced = [(p, price) for p in cat.by_category(c) if p.id != mine
                      for price in (_price(cat, p.id, req.currency),) if price is not None]  # unpriced: no fix to buy
            for part, price in sorted(priced, key=lambda t: t[1])[:MAX_CANDIDATES]:
                if best is not None and price >= best[0]:
                    break
                trial = [part.id if i == mine else i for i in ids]
                try:
                    rep = _report(cat, trial, req)
                except Exception:  # noqa: BLE001 - a candidate the checker refuses is simply not a fix
                    continue
                if rep.problems and f.severity.value == "warning":
                    continue
                if any(x.rule == f.rule for x in [*rep.problems, *rep.warnings]):
                    continue
                if len(rep.problems) > len(base.problems) or {x.rule for x in rep.warnings} - before_warn:
                    continue
                best = (price, c, part.id)
                break
        if best is not None:
            price, c, pid = best
            old = _price(cat, by_cat[c], req.currency)
            delta = "" if old is None else (
                f", +{format_money(price - old, req.currency)}" if price >= old
                else f", {format_money(old - price, req.currency)} less")
            out[f.rule] = (f"swap the {cat.parts[by_cat[c]].name} for the {cat.parts[pid].name} "
                           f"({format_money(price, req.currency)}{delta})")
    return out
