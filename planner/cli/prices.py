"""`planner prices ...`: extract a page, refresh prices, probe the shops, show a part's price history."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table
from rich.text import Text

from planner.cli.common import console, emit_json, handle_errors, styled
from planner.errors import InputError

prices_app = typer.Typer(help="Live prices: extract, refresh, history.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(prices_app, name="prices")


@prices_app.command("extract")
@handle_errors
def extract_cmd(
    source: str = typer.Argument(..., help="A saved page (HTML or search-API JSON) or an http(s) URL."),
    url: Optional[str] = typer.Option(None, "--url", help="The page's address (picks retailer formats)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Read the offers on one page: the main product first, or a search page's results in order."""
    from planner.service import extract_page

    result = extract_page(source, url)
    if as_json:
        emit_json(result.to_json())
        return
    if result.blocked:
        console.print(styled("[bold red]blocked:[/] the page is a bot wall / captcha, no price read"))
        return
    if not result.offers:
        stock = {True: "in stock", False: "not in stock", None: "stock unknown"}[result.page_in_stock]
        console.print(f"no price on this page ({stock})" + (f": {result.reason}" if result.reason else ""))
        return
    t = Table("#", "name", "price", "stock", "condition", "route")
    for i, o in enumerate(result.offers, 1):
        stock = {True: "yes", False: "no", None: "?"}[o.in_stock]
        opts = o.currency_options
        cur = f"(currency unclear: {'/'.join(opts[:3])}{'...' if len(opts) > 3 else ''})" if opts else o.currency
        t.add_row(str(i), Text((o.name or "")[:70]), Text(f"{o.price} {cur}"), stock, o.condition, o.route)
    console.print(t)


@prices_app.command("refresh")
@handle_errors
def refresh_cmd(
    retailer: Optional[list[str]] = typer.Option(None, "--retailer", "-r", help="ldlc, materiel, topachat, amazon"),
    category: Optional[list[str]] = typer.Option(None, "--category", "-c", help="gpu, cpu, memory..."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    per_part: bool = typer.Option(False, "--per-part", help="One search per catalog part (slower)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fetch retailer search pages politely, match offers to catalog parts and store the prices."""
    from planner.service import refresh_prices

    report = refresh_prices(retailers=retailer, categories=category, per_part=per_part, db=db, progress=not as_json)
    if as_json:
        emit_json(report.to_json())
        if report.errors and not report.pages:
            raise typer.Exit(1)
        return
    console.print(f"{report.pages} page(s), {report.stored} price(s) stored ({report.suspects} suspect), "
                  f"{len(report.unmatched)} listing(s) not matched, {len(report.blocked)} blocked, "
                  f"{len(report.empty)} without any offer, {len(report.errors)} error(s)")
    for u, e in report.errors:
        console.print(styled("  [red]error[/] {}", e))
    for u in report.blocked:
        console.print(styled("  [yellow]blocked[/] {}", u))
    for u, why in report.empty:
        console.print(styled("  [yellow]no offer read[/] {}: {} (see `planner prices probe`)", u, why))
    if report.errors and not report.pages:
        raise typer.Exit(1)  # nothing could be fetched: let scripts notice


@prices_app.command("probe")
@handle_errors
def probe_cmd(
    retailer: Optional[list[str]] = typer.Option(None, "--retailer", "-r", help="ldlc, materiel, topachat, amazon"),
    query: Optional[str] = typer.Option(None, "--query", "-q", help="Search words (default: a GPU search)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Fetch each shop's search page once and say whether it still parses (exit 1 if one does not)."""
    from planner.service import probe_shops

    results = probe_shops(retailer, query)
    if as_json:
        emit_json([r.to_json() for r in results])
    else:
        t = Table("shop", "status", "HTTP", "offers", "first offer / reason")
        for r in results:
            style = "green" if r.ok else ("yellow" if r.status in ("empty", "blocked") else "red")
            t.add_row(Text(r.retailer), Text(r.status, style=style), str(r.http_status or "-"), str(r.offers),
                      Text((r.first or r.reason or "")[:90]))
        console.print(t)
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@prices_app.command("history")
@handle_errors
def history_cmd(
    part: str = typer.Argument(..., help="Part id or an unambiguous name fragment."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Every price observed for one part, oldest first, with its status (trusted or suspect)."""
    from planner.service import my_prices

    part, rows = my_prices().history(part, db)
    if as_json:
        emit_json({"part_id": part, "observations": [o.to_json() for o in rows]})
        return
    if not rows:
        console.print(f"no price observed for {part}", markup=False, highlight=False)
        return
    routes = any(o.route for o in rows)  # no route column when no row came through one (it would crowd the shop out)
    t = Table("#", "observed (UTC)", "kind", "retailer", "price", "stock", "status", *(["route"] if routes else []))
    t.columns[3].min_width = min(max(len(o.retailer) for o in rows), 24)  # a shop's name whole on an 80-column console
    for o in rows:
        stock = {True: "yes", False: "no", None: "?"}[o.in_stock]
        status = Text(o.status) if o.status == "trusted" else Text.assemble((o.status, "yellow"), f" ({o.reason})")
        t.add_row(str(o.id), o.observed_at.strftime("%Y-%m-%d %H:%M"), o.kind, Text(o.retailer), f"{o.price} {o.currency}",
                  stock, status, *([Text(o.route or "")] if routes else []))
    console.print(t)


@prices_app.command("confirm")
@handle_errors
def confirm_cmd(
    observation: int = typer.Argument(..., help="Observation id (see `planner prices history`)."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    force: bool = typer.Option(False, "--force", help="Trust a price outside the sane range for its part too."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Mark a suspect price as checked, so the planner may use it (outside the sane range: with --force)."""
    from planner.service import my_prices

    o = my_prices().confirm(observation, db, force)
    if as_json:
        emit_json(o.to_json())
    else:
        console.print(f"#{o.id} {o.part_id} {o.price} {o.currency} at {o.retailer}: trusted", markup=False,
                      highlight=False)


def _day(text: Optional[str]) -> Optional[date]:
    if text is None:
        return None
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"--date {text[:30]!r} is not a date such as 2026-12-05") from None


@prices_app.command("add")
@handle_errors
def add_cmd(
    part: str = typer.Argument(..., help="Part id or its name (e.g. 'RTX 5090 Founders Edition')."),
    price: str = typer.Argument(..., help="What you pay, VAT included: 2349, '2 349,00 €', '1999 USD'."),
    shop: Optional[str] = typer.Option(None, "--shop", help="Where you saw it (e.g. LDLC)."),
    url: Optional[str] = typer.Option(None, "--url", help="The offer's address."),
    day: Optional[str] = typer.Option(None, "--date", help="The day you saw it (default today), e.g. 2026-12-05."),
    currency: Optional[str] = typer.Option(None, "--currency", help="Currency when the price names none (EUR)."),
    condition: str = typer.Option("new", "--condition", help="new, used or refurbished."),
    force: bool = typer.Option(False, "--force", help="Store it even when it is far from other shops' prices."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Give a price yourself: every answer plans with it from now on (kind 'yours'; undo with `prices forget`)."""
    from planner.service import my_prices

    o = my_prices().add(part, price, shop=shop, url=url, day=_day(day), currency=currency, condition=condition,
                  force=force, db=db)
    if as_json:
        emit_json(o.to_json())
        return
    console.print(f"{o.part_id}: {o.price} {o.currency} at {o.retailer}, seen {o.observed_at.date()} — stored as "
                  f"yours (#{o.id}; {o.reason}); every plan uses it until `planner prices forget {o.part_id}`",
                  markup=False, highlight=False)


@prices_app.command("forget")
@handle_errors
def forget_cmd(
    part: str = typer.Argument(..., help="Part id or its name."),
    shop: Optional[str] = typer.Option(None, "--shop", help="Only the price you gave for this shop."),
    shared: bool = typer.Option(False, "--shared", help="Forget the prices kept from a shared list instead."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Forget the prices you gave for a part (or those kept from a shared list): plans fall back to the others."""
    from planner.service import my_prices

    pid, n = my_prices().forget(part, shop=shop, kinds=("shared list",) if shared else ("yours",), db=db)
    if as_json:
        emit_json({"part_id": pid, "forgotten": n})
        return
    what = "kept from a shared list" if shared else "you gave"
    console.print(f"{pid}: forgot {n} price(s) {what}" if n else f"{pid}: no price {what} to forget",
                  markup=False, highlight=False)
