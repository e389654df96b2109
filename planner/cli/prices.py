"""`planner prices ...`: extract offers from a page, refresh prices from retailers, show a part's price history."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from planner.cli.common import console, emit_json, handle_errors, styled
from planner.errors import InputError

prices_app = typer.Typer(help="Live prices: extract, refresh, history.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(prices_app, name="prices")


def _is_url(s: str) -> bool:
    return s.lower().startswith(("http://", "https://"))


@prices_app.command("extract")
@handle_errors
def extract_cmd(
    source: str = typer.Argument(..., help="A saved page (HTML or search-API JSON) or an http(s) URL."),
    url: Optional[str] = typer.Option(None, "--url", help="The page's address (picks retailer formats)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Read the offers on one page: the main product first, or a search page's results in order."""
    from planner.prices.extract import extract

    if _is_url(source):
        from planner.prices.fetch import PoliteFetcher
        from planner.prices.http_cache import HttpCache

        fetched = PoliteFetcher(cache=HttpCache()).fetch_sync(source)
        content, page_url = fetched.content, url or fetched.url
    else:
        path = Path(source)
        if path.is_dir():
            raise InputError(f"{source} is a directory; give a saved page file")
        content, page_url = path.read_bytes(), url
    result = extract(content, page_url)
    if as_json:
        emit_json(result.to_json())
        return
    if result.blocked:
        console.print(styled("[bold red]blocked:[/] the page is a bot wall / captcha, no price read"))
        return
    if not result.offers:
        stock = {True: "in stock", False: "not in stock", None: "stock unknown"}[result.page_in_stock]
        console.print(f"no price on this page ({stock})")
        return
    t = Table("#", "name", "price", "stock", "condition", "route")
    for i, o in enumerate(result.offers, 1):
        stock = {True: "yes", False: "no", None: "?"}[o.in_stock]
        t.add_row(str(i), (o.name or "")[:70], f"{o.price} {o.currency}", stock, o.condition, o.route)
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
    from planner.prices.fetch import PoliteFetcher
    from planner.prices.http_cache import HttpCache
    from planner.prices.refresh import plan_jobs, refresh
    from planner.prices.retailers import Registry
    from planner.prices.store import PriceStore

    parts = _catalog_parts()
    registry = Registry()
    jobs = plan_jobs(registry, parts, retailer, category, per_part)
    with PriceStore(db) as store:
        report = refresh(store, PoliteFetcher(registry, cache=HttpCache()), jobs, parts, progress=not as_json)
    if as_json:
        emit_json(report.to_json())
        if report.errors and not report.pages:
            raise typer.Exit(1)
        return
    console.print(f"{report.pages} page(s), {report.stored} price(s) stored ({report.suspects} suspect), "
                  f"{len(report.unmatched)} listing(s) not matched, {len(report.blocked)} blocked, "
                  f"{len(report.errors)} error(s)")
    for u, e in report.errors:
        console.print(styled("  [red]error[/] {}", e))
    for u in report.blocked:
        console.print(styled("  [yellow]blocked[/] {}", u))
    if report.errors and not report.pages:
        raise typer.Exit(1)  # nothing could be fetched: let scripts notice


def _catalog_parts() -> list:
    try:
        from planner.catalog.load import load_catalog  # type: ignore[import-not-found]
    except ImportError as exc:
        raise InputError(f"the catalog is not available ({exc}); cannot match prices to parts") from None
    return list(load_catalog().parts.values())


@prices_app.command("history")
@handle_errors
def history_cmd(
    part: str = typer.Argument(..., help="Part id or an unambiguous name fragment."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Every price observed for one part, oldest first, with its status (trusted or suspect)."""
    from planner.catalog.load import cached_catalog
    from planner.prices.store import PriceStore, default_path

    path = db or default_path()
    if not Path(path).exists():
        raise InputError(f"no price database at {path}; run `planner prices refresh` first or pass --db")
    with PriceStore(path) as store:
        rows = store.history(part)
        if not rows:  # not an id with history: resolve a catalog id or name fragment (unknown -> exit 2)
            part = cached_catalog().find(part).id
            rows = store.history(part)
    if as_json:
        emit_json({"part_id": part, "observations": [o.to_json() for o in rows]})
        return
    if not rows:
        console.print(f"no price observed for {part}")
        return
    t = Table("#", "observed (UTC)", "retailer", "price", "stock", "status", "route")
    for o in rows:
        stock = {True: "yes", False: "no", None: "?"}[o.in_stock]
        status = o.status if o.status == "trusted" else styled("[yellow]{}[/] ({})", o.status, o.reason)
        t.add_row(str(o.id), o.observed_at.strftime("%Y-%m-%d %H:%M"), o.retailer, f"{o.price} {o.currency}",
                  stock, status, o.route or "")
    console.print(t)


@prices_app.command("confirm")
@handle_errors
def confirm_cmd(
    observation: int = typer.Argument(..., help="Observation id (see `planner prices history`)."),
    db: Optional[Path] = typer.Option(None, "--db", help="Price database (default: user data dir)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Mark a suspect price as checked, so the planner may use it."""
    from planner.prices.store import PriceStore

    with PriceStore(db) as store:
        o = store.confirm(observation)
    if as_json:
        emit_json(o.to_json())
    else:
        console.print(f"#{o.id} {o.part_id} {o.price} {o.currency} at {o.retailer}: trusted")
