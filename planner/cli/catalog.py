"""`planner catalog list|validate|import-pcpp|generate`: browse, validate and build catalogs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from planner.catalog import load_catalog, price_age_days
from planner.cli.common import console, emit_json, fail, handle_errors
from planner.models import CATEGORIES
from planner.validate import catalog_invariants

sub = typer.Typer(help="Browse and validate the component catalog.", no_args_is_help=True)

KEY_SPECS = {
    "gpu": lambda p: f"{p.vram_gb:g} GB, {p.tgp_w or '?'} W, {p.length_mm or '?'} mm, {p.slots or '?'} slots",
    "cpu": lambda p: f"{p.socket}, {p.cores}C/{p.threads}T, {p.power_w} W",
    "motherboard": lambda p: f"{p.socket} {p.chipset}, {p.form_factor}, {p.memory_type} x{p.dimm_slots}",
    "memory": lambda p: f"{p.memory_type}-{p.speed_mts}, {p.modules}x{p.module_gb} GB",
    "storage": lambda p: f"{p.interface} {p.form_factor}, {p.capacity_gb} GB",
    "cooler": lambda p: f"AIO {p.radiator_mm} mm" if p.type == "aio" else f"air, {p.height_mm or '?'} mm",
    "psu": lambda p: f"{p.wattage_w} W, ATX {p.atx_version or '?'}, {p.efficiency}",
    "case": lambda p: f"GPU <= {p.max_gpu_length_mm or '?'} mm, cooler <= {p.max_cooler_height_mm or '?'} mm",
}


def part_json(catalog, part) -> dict:
    offer = catalog.offer_for(part.id)
    item = {"id": part.id, "category": part.category, "name": part.name, "brand": part.brand,
            "price": None if offer is None else {"amount": str(offer.price), "currency": offer.currency},
            "price_source": None if offer is None else offer.source,
            "price_observed_on": None if offer is None else offer.observed_on.isoformat(),
            "retailer": None if offer is None else offer.retailer,
            "source": part.source}
    item.update(part.model_dump(mode="json", exclude={"id", "name", "brand", "source"}))
    if part.category == "memory":
        item["capacity_gb"] = part.capacity_gb
    return item


@sub.command("list")
@handle_errors
def list_cmd(
    category: Optional[str] = typer.Option(None, "--category", "-c", help=f"One of: {', '.join(CATEGORIES)}"),
    catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """List parts with their reference price, its date and source."""
    if category is not None and category not in CATEGORIES:
        fail(f"unknown category {category!r}; use one of {', '.join(CATEGORIES)}")
    cat = load_catalog(catalog_dir)
    parts = [p for c in CATEGORIES if category in (None, c) for p in cat.by_category(c)]
    if as_json:
        emit_json([part_json(cat, p) for p in parts])
        return
    table = Table(title=f"{len(parts)} parts", show_lines=False)
    for col in ("category", "id", "name", "key specs", "price", "price date / source"):
        table.add_column(col)
    for p in parts:
        o = cat.offer_for(p.id)
        price = "—" if o is None else f"{o.price} {o.currency}" + (" (used)" if o.condition != "new" else "")
        when = "—" if o is None else f"{o.observed_on} ({price_age_days(o)} d), {o.source}, {o.retailer}"
        table.add_row(p.category, p.id, p.name, KEY_SPECS[p.category](p), price, when)
    console.print(table)


@sub.command("validate")
@handle_errors
def validate_cmd(
    catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Validate every row and the catalog invariants; exit 2 on the first bad row."""
    cat = load_catalog(catalog_dir)
    issues = catalog_invariants(cat)
    counts = {c: len(cat.by_category(c)) for c in CATEGORIES}
    if as_json:
        emit_json({"ok": not issues, "counts": counts, "chips": len(cat.chips), "issues": issues})
    else:
        console.print(f"{sum(counts.values())} parts, {len(cat.chips)} GPU chips: "
                      + ", ".join(f"{c} {n}" for c, n in counts.items()))
        for i in issues:
            console.print(f"[red]invariant:[/] {i}")
    if issues:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(sub, name="catalog")
