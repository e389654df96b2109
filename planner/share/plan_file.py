"""Saved plans: read `planner recommend --json` output (or one plan) and turn a plan into a cost-model Build."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Optional

from planner.costs import compare as C
from planner.errors import InputError
from planner.fx import Rates, convert_exact
from planner.money import check_currency, parse_decimal


def first_plan(data: Any, where: str = "the build", error: type[InputError] = InputError) -> dict[str, Any]:
    """The first plan of a recommendation, or the object itself when it is one plan with a 'parts' list."""
    if isinstance(data, dict) and isinstance(data.get("plans"), list):
        if not data["plans"]:
            raise error(f"{where}: the recommendation holds no plan (nothing fitted the request)")
        data = data["plans"][0]
    if not isinstance(data, dict) or not isinstance(data.get("parts"), list):
        raise error(f"{where}: expected `planner recommend --json` output or one plan with a 'parts' list")
    return data


def read_plan(path: Path) -> dict[str, Any]:
    """The first plan of a JSON file written by `planner recommend --json` (or a bare plan)."""
    from planner.validation import load_json, read_text_capped

    data = load_json(read_text_capped(Path(path), what="plan file"), str(path))
    return first_plan(data, str(path))


def _catalog_part(part_id: str) -> Any:
    from planner.catalog.load import cached_catalog

    return cached_catalog().get(part_id)


def build_from_plan(
    plan: dict[str, Any],
    rates: Rates,
    currency: str,
    *,
    owned: set[str] = frozenset(),  # type: ignore[assignment]
    draw_w: Optional[float] = None,
    lookup: Callable[[str], Any] = _catalog_part,
) -> tuple[C.Purchase, list[str]]:
    """A Build from a plan's parts (prices converted to `currency`), plus notes on what was assumed."""
    notes: list[str] = []
    gpu_total = platform_total = owned_total = Decimal(0)
    chips: set[str] = set()
    gpu_names: list[str] = []
    gpu_count = 0
    psu_w: Optional[int] = None
    efficiency: Optional[str] = None
    dates: set[str] = set()
    retailers: set[str] = set()
    kinds: set[str] = set()
    plan_chip = (plan.get("gpu") or {}).get("chip") if isinstance(plan.get("gpu"), dict) else None
    for i, part in enumerate(plan["parts"]):
        if not isinstance(part, dict) or "id" not in part or "category" not in part:
            raise InputError(f"plan part #{i + 1} needs at least 'category' and 'id'")
        pid, cat = str(part["id"]), str(part["category"])
        qty = int(part.get("quantity") or 1)
        price = part.get("price") or {}
        amount = parse_decimal(price.get("amount", "0"), f"price of {pid}")
        line = convert_exact(amount * qty, check_currency(price.get("currency", currency)), currency, rates)
        is_owned = bool(part.get("owned")) or pid in owned
        if is_owned:
            owned_total += line
        if cat == "gpu":
            chip = part.get("chip") or plan_chip or getattr(lookup(pid), "chip", None)
            if not chip:
                raise InputError(f"GPU part {pid!r}: no chip id (not in the catalog and no 'chip' key)")
            chips.add(str(chip))
            gpu_count += qty
            gpu_names.append(str(part.get("name") or pid))
            gpu_total += Decimal(0) if is_owned else line
        else:
            platform_total += Decimal(0) if is_owned else line
        if cat == "psu":
            known = None if ("efficiency" in part and "wattage_w" in part) else lookup(pid)
            efficiency = str(part.get("efficiency") or getattr(known, "efficiency", "") or "") or None
            watts = part.get("wattage_w") or getattr(known, "wattage_w", None)
            psu_w = int(watts) if watts else None
        if is_owned:
            continue
        when = part.get("observed_on") or part.get("price_observed_on") or price.get("observed_on")
        if when:
            dates.add(str(when))
        if part.get("retailer"):
            retailers.add(str(part["retailer"]))
        if part.get("price_source"):
            kinds.add(str(part["price_source"]))
    if not chips:
        raise InputError("the plan has no GPU part")
    if len(chips) > 1:
        raise InputError(f"the plan mixes GPU chips ({', '.join(sorted(chips))}); one GPU model per build is supported")
    power = plan.get("power") or {}
    if draw_w is None:
        if not power.get("sustained_w"):
            raise InputError("the plan has no power.sustained_w; pass --draw-w WATTS")
        draw_w = float(power["sustained_w"])
        notes.append(f"draw while training = the plan's sustained_w ({draw_w:g} W, a sizing upper bound)")
    if psu_w is None:
        psu_w = int(power["recommended_psu_w"]) if power.get("recommended_psu_w") else None
        notes.append("PSU rating not in the plan's parts: used power.recommended_psu_w" if psu_w
                     else "PSU rating unknown: assumed the PSU runs at 80 % load")
    if not efficiency:
        efficiency = "bronze"
        notes.append("PSU efficiency unknown: assumed 80 PLUS Bronze")
    ordered = sorted(dates)
    date_text = (ordered[0] if len(ordered) == 1 else f"{ordered[0]}..{ordered[-1]}") if ordered else "date not in plan"
    source = f"plan parts from {', '.join(sorted(retailers))}" if retailers else "plan parts (retailer not given)"
    if kinds:
        source += f" ({', '.join(sorted(kinds))} prices)"
    if "estimate" in kinds:
        notes.append("some part prices of the plan are estimates")
    name = str(plan.get("name") or f"{gpu_count}x {gpu_names[0]} build")
    build = C.Purchase(
        name=name, chip=chips.pop(), gpu_count=gpu_count, gpu_price=gpu_total, platform_price=platform_total,
        currency=currency, dc_w=float(draw_w), psu_w=psu_w, psu_efficiency=efficiency, price_date=date_text,
        price_source=source, owned_value=owned_total, gpu_name=gpu_names[0],
    )
    return build, notes
