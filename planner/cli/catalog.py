"""`planner catalog list|validate|import-pcpp|generate`: browse, validate and build catalogs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from planner.price_label import offer_label
from planner.service import catalog_invariants, load_priced_catalog
from planner.cli.common import console, emit_json, fail, handle_errors, styled
from planner.vocab import CATEGORIES

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
            "price_record": None if offer is None else offer_label(offer).text(),
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
    cat = load_priced_catalog(catalog_dir, use_history=catalog_dir is None)  # the prices every answer uses
    parts = [p for c in CATEGORIES if category in (None, c) for p in cat.by_category(c)]
    if as_json:
        emit_json([part_json(cat, p) for p in parts])
        return
    table = Table(title=f"{len(parts)} parts", show_lines=False)
    for col in ("category", "id", "name", "key specs", "price", "price kind, date, age, shop"):
        table.add_column(col)
    for p in parts:
        o = cat.offer_for(p.id)
        price = "—" if o is None else f"{o.price} {o.currency}" + (" (used)" if o.condition != "new" else "")
        when = "—" if o is None else f"{offer_label(o).text()}, {o.retailer}"
        table.add_row(p.category, p.id, p.name, KEY_SPECS[p.category](p), price, when)
    console.print(table)


@sub.command("validate")
@handle_errors
def validate_cmd(
    catalog_dir: Optional[Path] = typer.Option(None, "--catalog", help="Catalog directory (default: shipped data/)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Validate every row and the catalog invariants; exit 2 on the first bad row or any broken invariant."""
    cat = load_priced_catalog(catalog_dir, use_history=False)  # the rows as shipped: the history is not validated
    issues = catalog_invariants(cat)
    counts = {c: len(cat.by_category(c)) for c in CATEGORIES}
    if as_json:
        emit_json({"ok": not issues, "counts": counts, "chips": len(cat.chips), "issues": issues})
    else:
        console.print(f"{sum(counts.values())} parts, {len(cat.chips)} GPU chips: "
                      + ", ".join(f"{c} {n}" for c, n in counts.items()))
        for i in issues:
            console.print(styled("[red]invariant:[/] {}", i))
    if issues:  # the catalog is bad input, like a bad row
        fail(f"{len(issues)} catalog invariant(s) broken, the first: {issues[0]}")


@sub.command("import-pcpp")
@handle_errors
def import_pcpp_cmd(
    src: Path = typer.Argument(..., help="pc-part-dataset directory holding <category>.json files"),
    out: Optional[Path] = typer.Option(None, "--out", help="Catalog directory to write"),
    include_all: bool = typer.Option(False, "--all", help="Also keep unpriced parts (written without offers)"),
    as_json: bool = typer.Option(False, "--json", help="Print the import report as JSON"),
) -> None:
    """Import the PCPartPicker-derived dataset into a catalog directory (USD snapshot prices)."""
    from rich.progress import BarColumn, Progress, TaskID, TextColumn

    from planner.cli.common import err_console
    from planner.service import import_pcpp

    if out is None:
        fail("missing --out DIR (the catalog directory to write)")
    if not src.is_dir():
        fail(f"dataset directory {src} does not exist")
    with Progress(TextColumn("{task.description:<12}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  console=err_console, transient=True, disable=as_json) as bar:
        tasks: dict[str, TaskID] = {}

        def step(category: str, done: int, total: int) -> None:
            if category not in tasks:
                tasks[category] = bar.add_task(category, total=total)
            bar.update(tasks[category], completed=done)

        report = import_pcpp(src, out, include_unpriced=include_all, progress=step)
    if as_json:
        emit_json(report.to_json())
        return
    table = Table(title=f"Imported {report.total('written')} parts into {out} (USD, {report.observed_on})")
    for col in ("category", "read", "priced", "written", "offers", "skipped (reason: count)"):
        table.add_column(col)
    for cat, n in report.categories.items():
        skipped = "; ".join(f"{r}: {k}" for r, k in n.skipped.most_common())
        table.add_row(cat, str(n.read), str(n.priced), str(n.written), str(n.offers), skipped)
    console.print(table)
    for cat, n in report.categories.items():
        for col, known in n.dropped_columns.items():
            if known:
                console.print(styled("[yellow]note:[/] {}", f"{cat}.{col} left out: the model takes no empty value "
                                     f"there ({known} derived values not stored)"))


@sub.command("generate")
@handle_errors
def generate_cmd(
    parts: int = typer.Option(1000, "--parts", help="About how many parts to write (16 to 1 000 000)"),
    out: Optional[Path] = typer.Option(None, "--out", help="Catalog directory to write"),
    seed: int = typer.Option(0, "--seed", help="Random seed (same seed, same catalog)"),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write a synthetic catalog of any size (synthetic specs and estimate prices) for benchmarks."""
    from planner.resources import SHIPPED_DATA_DIR
    from planner.service import generate_catalog as generate

    if out is None:
        fail("missing --out DIR (the catalog directory to write)")
    if not 16 <= parts <= 1_000_000:
        fail(f"--parts must be between 16 and 1000000, got {parts}")
    if out.resolve() == SHIPPED_DATA_DIR.resolve():
        fail(f"refusing to overwrite the shipped catalog {out}; choose another --out directory")
    if out.exists() and not out.is_dir():
        fail(f"--out {out} exists and is not a directory")
    generate(out, parts, seed=seed)
    cat = load_priced_catalog(out, use_history=False)
    counts = {c: len(cat.by_category(c)) for c in CATEGORIES}
    if as_json:
        emit_json({"out": str(out), "seed": seed, "parts": sum(counts.values()), "counts": counts})
    else:
        console.print(f"{sum(counts.values())} synthetic parts written to {out} (seed {seed}): "
                      + ", ".join(f"{c} {n}" for c, n in counts.items()))


def register(app: typer.Typer) -> None:
    app.add_typer(sub, name="catalog")
