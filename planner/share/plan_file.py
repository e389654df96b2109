"""Saved plans: read `planner recommend --json` output (or one plan) into a PlanView, and turn a plan into what the
cost model buys (the one plan-to-purchase step, used for plan files and for checked or solved builds alike)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from collections.abc import Callable, Set as AbstractSet
from typing import Any, Optional

from planner.costs import compare as C
from planner.errors import InputError
from planner.fx import Rates, convert_exact
from planner.plan_view import (
    PlanView, PricedLine, first_plan, read_plan_view, seen_dates,  # noqa: F401 - first_plan re-exported
)


def read_plan(path: Path) -> PlanView:
    """The first plan of a JSON file written by `planner recommend --json` (or a bare plan, or our share export),
    validated: a negative price, an absurd quantity or a wrong type is one InputError line naming the file."""
    from planner.validation import load_json, read_text_capped

    data = load_json(read_text_capped(Path(path), what="plan file"), str(path))
    return read_plan_view(data, str(path))


def _catalog_part(part_id: str) -> Any:
    from planner.catalog.load import cached_catalog

    return cached_catalog().parts.get(part_id)


def gpu_chip(line: PricedLine, plan: Optional[PlanView] = None,
             lookup: Callable[[str], Any] = _catalog_part) -> Optional[str]:
    """The chip id of a GPU line: its own `chip`, the plan's GPU summary, else the catalog part's."""
    return line.chip or (plan.gpu.chip if plan is not None and plan.gpu is not None else None) \
        or getattr(lookup(line.part_id), "chip", None)


def purchase_from_plan(
    plan: PlanView,
    rates: Rates,
    currency: str,
    *,
    owned: AbstractSet[str] = frozenset(),
    draw_w: Optional[float] = None,
    lookup: Callable[[str], Any] = _catalog_part,
) -> tuple[C.Purchase, list[str]]:
    """The cost model's Purchase for a plan's lines (converted exactly to `currency`; owned parts cost nothing and
    count as owned value), plus notes on what was assumed. A line without a price is refused: its cost would be 0."""
    notes: list[str] = []
    gpu_total = platform_total = owned_total = Decimal(0)
    chips: set[str] = set()
    gpu_names: list[str] = []
    gpu_count = 0
    unpriced: list[str] = []
    for line in plan.parts:
        is_owned = line.owned or line.part_id in owned
        amount = convert_exact((line.unit_price or Decimal(0)) * line.quantity, line.currency, currency, rates)
        if line.unit_price is None and not is_owned:
            unpriced.append(line.name)
        if line.category == "gpu":
            chip = gpu_chip(line, plan, lookup)
            if not chip:
                raise InputError(f"GPU part {line.part_id!r}: no chip id (not in the catalog and no 'chip' key)")
            chips.add(chip)
            gpu_count += line.quantity
            gpu_names.append(line.name)
        if is_owned:
            owned_total += amount
        elif line.category == "gpu":
            gpu_total += amount
        else:
            platform_total += amount
    if not chips:
        raise InputError("the plan has no GPU part")
    if len(chips) > 1:
        raise InputError(f"the plan mixes GPU chips ({', '.join(sorted(chips))}); one GPU model per build is supported")
    if unpriced:
        raise InputError(f"no price for {', '.join(unpriced)}: costs need every part priced")
    power = plan.power
    if draw_w is None:
        if power is None or not power.sustained_w:
            raise InputError("the plan has no power.sustained_w; pass --draw-w WATTS")
        draw_w = float(power.sustained_w)
        notes.append(f"draw while training = the plan's sustained_w ({draw_w:g} W, a sizing upper bound)")
    psu_line = plan.line("psu")
    known = lookup(psu_line.part_id) if psu_line is not None and not (psu_line.wattage_w and psu_line.efficiency) \
        else None
    psu_w = (psu_line.wattage_w if psu_line is not None else None) or getattr(known, "wattage_w", None)
    efficiency = (psu_line.efficiency if psu_line is not None else None) or getattr(known, "efficiency", None)
    if psu_w is None:
        psu_w = int(power.recommended_psu_w) if power is not None and power.recommended_psu_w else None
        notes.append("PSU rating not in the plan's parts: used power.recommended_psu_w" if psu_w
                     else "PSU rating unknown: assumed the PSU runs at 80 % load")
    if not efficiency:
        efficiency = "bronze"
        notes.append("PSU efficiency unknown: assumed 80 PLUS Bronze")
    bought = [ln for ln in plan.parts if not (ln.owned or ln.part_id in owned)]
    dates = seen_dates(bought)
    date_text = (dates[0] if len(dates) == 1 else f"{dates[0]}..{dates[-1]}") if dates else "date not in plan"
    retailers = sorted({ln.retailer for ln in bought if ln.retailer})
    kinds = sorted({ln.price_source for ln in bought if ln.price_source})
    source = f"plan parts from {', '.join(retailers)}" if retailers else "plan parts (retailer not given)"
    if kinds:
        source += f" ({', '.join(kinds)} prices)"
    if "estimate" in kinds:
        notes.append("some part prices of the plan are estimates")
    name = plan.name or f"{gpu_count}x {gpu_names[0]} build"
    build = C.Purchase(
        name=name, chip=chips.pop(), gpu_count=gpu_count, gpu_price=gpu_total, platform_price=platform_total,
        currency=currency, dc_w=float(draw_w), psu_w=psu_w, psu_efficiency=efficiency, price_date=date_text,
        price_source=source, owned_value=owned_total, gpu_name=gpu_names[0],
        vram_gb=_card_vram(plan, lookup),
    )
    return build, notes


def _card_vram(plan: PlanView, lookup: Callable[[str], Any]) -> Optional[float]:
    """One GPU card's VRAM (GB): the plan's GPU summary, else its GPU part's (how many runs share the card)."""
    if plan.gpu is not None and plan.gpu.vram_gb:
        return float(plan.gpu.vram_gb)
    line = plan.line("gpu")
    part = lookup(line.part_id) if line is not None else None
    vram = getattr(part, "vram_gb", None)
    return float(vram) if vram else None

