"""Pure view models for the web UI: table rows, key specs, PSU breakdown, sweep times (no Streamlit here)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Optional

from planner.service import Catalog
from planner.service import AnyPart
from planner.money import format_money
from planner.price_label import DATED_SOURCES, PriceLabel, offer_note, price_label
from planner.service import SharedBuild
from planner.vocab import TYPE_LABELS
from planner.service import Hours

hours_text = Hours.text  # one wording of hours for the CLI and every tab ('45 min', '5.2 h', '3.1 days')
from planner.plan_view import UNVERIFIED_MARK, PlanView, PricedLine


def key_spec(part: AnyPart) -> str:
    """The one line that tells parts of a category apart."""
    c, p = part.category, part
    g = lambda name: getattr(p, name, None)  # noqa: E731
    if c == "gpu":
        bits = [f"{g('vram_gb'):g} GB", f"{g('tgp_w')} W" if g("tgp_w") else "", f"{g('length_mm'):g} mm" if g("length_mm") else ""]
    elif c == "cpu":
        bits = [g("socket"), f"{g('cores')} cores / {g('threads')} threads", f"{p.power_w} W package"]  # type: ignore[union-attr]
    elif c == "motherboard":
        bits = [f"{g('socket')} {g('chipset')}", g("form_factor"), g("memory_type"), f"{g('dimm_slots')} DIMM"]
    elif c == "memory":
        bits = [f"{g('modules')} x {g('module_gb')} GB", f"{g('memory_type')}-{g('speed_mts')}",
                f"CL{g('cas_latency')}" if g("cas_latency") else ""]
    elif c == "storage":
        bits = [f"{g('capacity_gb'):,} GB".replace(",", " "), g("interface"), f"PCIe {g('pcie_gen')}" if g("pcie_gen") else ""]
    elif c == "cooler":
        bits = [f"AIO {g('radiator_mm')} mm" if g("type") == "aio" else f"air, {g('height_mm'):g} mm tall" if g("height_mm") else "air"]
    elif c == "psu":
        bits = [f"{g('wattage_w')} W", f"ATX {g('atx_version')}" if g("atx_version") else "", str(g("efficiency") or "")]
    elif c == "case":
        bits = ["/".join(g("form_factors") or []), f"GPU <= {g('max_gpu_length_mm'):g} mm" if g("max_gpu_length_mm") else ""]
    else:
        bits = []
    return ", ".join(str(b) for b in bits if b)


def line_label(ln: PricedLine, catalog: Catalog) -> PriceLabel:
    """The line's own price record (planner.price_label); a line read without its estimate's basis date looks it
    up in the catalog offer it came from."""
    label = ln.label
    if label.kind == "estimate" and label.seen_on is None:
        note = offer_note(catalog.offers, ln.part_id, ln.price_source, ln.observed_text, ln.retailer)
        label = price_label(ln.price_source, ln.observed_text, note, owned=ln.owned)
    return label


def build_rows(build: SharedBuild, catalog: Catalog, today: Optional[date] = None) -> list[dict[str, Any]]:
    """Rows for the build table: type, part, key spec, price (qty x unit @ retailer), condition, price kind and
    the date it stands for (an age only for prices seen at a shop), link (blank when none)."""
    today = today or date.today()
    rows = []
    for ln in build.lines:
        part = catalog.parts.get(ln.part_id)
        label = line_label(ln, catalog)
        if ln.owned:
            price = "owned"
        elif ln.unit_price is None:
            price = "no price"
        else:
            price = (f"{ln.quantity} x " if ln.quantity > 1 else "") + format_money(ln.unit_price, build.currency)
            shop = ln.retailer and ln.price_source in DATED_SOURCES  # a shop's price, not an estimate
            price += f" @ {ln.retailer}" if shop else ""
        rows.append({
            "Type": TYPE_LABELS.get(ln.category, ln.category),
            "Part": ln.name,
            "Key spec": key_spec(part) if part is not None else "",
            "Price": price,
            "Condition": "" if ln.owned else (ln.condition or "new"),
            "Price kind": label.kind,
            "Price date": label.when,
            "Age": label.age_text(today),
            "Link": ln.url or "",
            # an unverified row says what is still open on it (data/verified_rows.csv `unsettled`, or never read)
            "Specs": (UNVERIFIED_MARK.strip("()") + (f": {ln.unverified_what}" if ln.unverified_what else "")
                      if ln.unverified else "checked" if ln.verified else ""),
            "id": ln.part_id,
        })
    return rows


PSU_TERMS = (
    ("gpu_w", "GPU board power (after power limit)"),
    ("cpu_w", "CPU package power"),
    ("rest_w", "board, memory, drives, fans, pumps"),
    ("sustained_w", "sustained DC draw"),
    ("required_sustained_w", "PSU rating for <= 80 % sustained load"),
    ("transient_w", "worst 100 µs transient (3 x GPU + rest)"),
    ("required_atx3_w", "rating needed, ATX 3.x unit with 12V-2x6"),
    ("required_atx2_w", "rating needed, ATX 2.x unit"),
    ("vendor_floor_w", "GPU vendor's recommended PSU"),
    ("recommended_w", "recommended commercial size (ATX 3.1)"),
)


def psu_rows(breakdown: Optional[dict[str, Any]]) -> list[dict[str, Any]]:
    if not breakdown:
        return []
    return [{"Term": label, "Watts": breakdown.get(key)} for key, label in PSU_TERMS if breakdown.get(key) is not None]


def money(amount: Any, currency: str) -> str:
    return format_money(Decimal(str(amount)), currency)


def plan_summary_rows(plan: PlanView) -> list[dict[str, str]]:
    """Compact rows for an alternative: type, part, price, condition (used shows here too) and price kind."""
    out = []
    for ln in plan.parts:
        qty = f"{ln.quantity} x " if ln.quantity > 1 else ""
        price = ("owned" if ln.owned else "no price" if ln.unit_price is None
                 else qty + money(ln.unit_price, ln.currency))
        label = ln.label
        out.append({"Type": TYPE_LABELS.get(ln.category, ln.category), "Part": ln.name, "Price": price,
                    "Condition": "" if ln.owned else (ln.condition or "new"),
                    "Price kind": label.text()})
    return out
