"""`planner share export|import`: a build as a permalink, Markdown, CSV or JSON, and back into the planner."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Table

from planner import atomicfile
from planner.service import load_priced_catalog
from planner.cli.common import console, emit_json, emit_text, err_console, handle_errors, styled
from planner.errors import InputError, ShareError
from planner.money import format_money
from planner.validation import load_json, read_text_capped
from planner.service import (
    SharedBuild, export_build, import_build,
)

share_app = typer.Typer(help="Share a build: permalink, Markdown (PCPartPicker-style), CSV, JSON; import one back.",
                        no_args_is_help=True)
FORMATS = ("md", "csv", "json", "link", "html")
MAX_FILE_BYTES = 5_000_000


def register(app: typer.Typer) -> None:
    app.add_typer(share_app, name="share")


def _read_text(path: Path) -> str:
    return read_text_capped(path, max_bytes=MAX_FILE_BYTES, what="build list")


def _print_list_prices(result: Any) -> None:
    """The list's price of each line beside the catalog's, and the list's total."""
    prices = result.list_prices
    if not prices:
        return
    table = Table(title="The list's prices against the catalog's")
    for col in ("part", "list price", "shop", "catalog price", "difference"):
        table.add_column(col, justify="right" if col in ("list price", "catalog price", "difference") else "left")
    for p in prices:
        ref = "—" if p.catalog_amount is None else f"{format_money(p.catalog_amount, p.currency)} ({p.catalog_kind})"
        diff = "—" if p.difference is None else ("+" if p.difference > 0 else "") + format_money(p.difference, p.currency)
        qty = f"{p.quantity} x " if p.quantity > 1 else ""
        table.add_row(p.name, qty + format_money(p.amount, p.currency), p.shop or "—", ref, diff)
    console.print(table)
    total = result.list_total
    if total is not None:
        console.print(styled("The list's total: {} ({} priced line(s))", format_money(*total), len(prices)))


def _is_file(source: str) -> bool:
    try:
        return len(source) < 4096 and Path(source).is_file()
    except OSError:  # e.g. a name too long for the file system
        return False


def _exists(source: str) -> bool:
    try:
        return len(source) < 4096 and Path(source).exists()
    except OSError:
        return False


def _load_build(path: Path) -> SharedBuild:
    return SharedBuild.from_json(load_json(_read_text(path), str(path)))


def _check_known(build: SharedBuild) -> None:
    """A link is opened against the catalog: every part must exist there."""
    cat = load_priced_catalog(use_history=False)  # the shipped parts: a link names catalog ids
    missing = [ln.part_id for ln in build.lines if ln.part_id not in cat.parts]
    if missing:
        raise ShareError(f"part {missing[0]!r} is not in the catalog, so a link to it could not be opened")


@share_app.command("export")
@handle_errors
def export_cmd(
    file: Optional[Path] = typer.Argument(None, metavar="FILE", help="The build: same as --build"),
    build: Optional[Path] = typer.Option(None, "--build", help="`planner recommend --json` output (first plan), one plan, or our JSON export"),
    fmt: str = typer.Option("md", "--format", help="md | csv | json | link | html (one self-contained page)"),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="Public address of the web UI, for the link "
                                           "(default: $PLANNER_PUBLIC_URL; none: no link, the token instead)"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout"),
    as_json: bool = typer.Option(False, "--json", help="Print {format, content, token} as JSON"),
) -> None:
    """Export a build as a permalink, Markdown table, CSV or versioned JSON."""
    if file is not None and build is not None and file != build:
        raise InputError(f"two builds given ({file} and --build {build}); give one")
    build = file or build
    if build is None:
        raise InputError("give the build to export: a file from `planner recommend --json` (as an argument or --build)")
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    from planner.settings import is_local_address, public_url

    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise InputError(f"--base-url must start with http:// or https:// (got {base_url!r})")
    base_url = base_url or public_url()
    if base_url is not None and is_local_address(base_url):
        err_console.print(f"note: {base_url} opens only on this computer; a friend needs the deployed planner's "
                          "address (README: Share with a friend)", highlight=False, markup=False)
    data = load_json(_read_text(build), str(build))
    from dataclasses import replace as _replace

    from planner.service import measurements

    shared = _replace(SharedBuild.from_json(data), measurements=measurements().to_share())  # the link carries your measured speeds
    if not shared.lines:
        raise InputError(f"{build}: the build has no parts")
    token = shared.token()
    if fmt == "link":
        _check_known(shared)
    link = shared.permalink(base_url) if base_url else None
    if link is None and fmt in ("link", "md", "html"):
        err_console.print("note: no public address of the planner is configured (PLANNER_PUBLIC_URL or --base-url), "
                          "so there is no link; " + ("here is the build's token: the friend pastes it into the "
                          "planner's Share tab" if fmt == "link" else "the token is in the export instead"),
                          highlight=False, markup=False)
    content = (link or token) + "\n" if fmt == "link" else export_build(
        shared, fmt, link=link, token=None if fmt == "md" and link else token, source=data)
    if output is not None:
        # atomically (planner.atomicfile): a bad path or a full disk is one line and leaves no half-written export;
        # a link the user points at is written through, as a plain write would, not replaced by a file
        target = output.resolve() if output.is_symlink() else output
        atomicfile.write_bytes(target, content.encode("utf-8"), "the export",
                               "give --output a file in an existing, writable directory",
                               make_dirs=False, private=False)
        err_console.print(f"wrote {output} ({len(content)} characters)", highlight=False)
    if as_json:
        emit_json({"format": fmt, "content": content if output is None else None, "token": token,
                   "link": link, "output": None if output is None else str(output)})
    elif output is None:
        emit_text(content)


@share_app.command("import")
@handle_errors
def import_cmd(
    source: str = typer.Argument(..., help="A file (Markdown table, our JSON, recommend output) or a link/token"),
    currency: Optional[str] = typer.Option(None, "--currency", help="Price the build in this currency"),
    pick: Optional[list[str]] = typer.Option(None, "--pick", metavar="LINE=PART_ID",
                                             help="Take this catalog part for line LINE of the list (repeatable); "
                                                  "the unmatched lines print their candidates"),
    keep_prices: bool = typer.Option(False, "--keep-prices", help="Keep the list's prices (kind 'from the shared "
                                     "list', dated today) and plan with them from now on"),
    force: bool = typer.Option(False, "--force", help="With --keep-prices: keep a price far from other shops' too"),
    use_measurements: bool = typer.Option(False, "--use-measurements", help="Add the measured speeds a link "
                                          "carries to your calibration, so speeds read 'measured' as for the sender"),
    as_json: bool = typer.Option(False, "--json", help="Print JSON"),
) -> None:
    """Import a shared build (a posted list in any common form, our JSON, a link): match its lines to the catalog,
    check what matched and price it."""
    picks: dict[int, str] = {}
    for p in pick or ():
        m = re.fullmatch(r"\s*(\d{1,5})\s*=\s*([a-z0-9][a-z0-9._-]*)\s*", p)
        if m is None:
            raise InputError(f"--pick {p!r}: expected LINE=PART_ID, e.g. --pick 12=psu-corsair-rm1000x-2024")
        picks[int(m.group(1))] = m.group(2)
    if _is_file(source):
        text = _read_text(Path(source))
    elif re.match(r"v\d+\.", source.strip()) or "b=" in source:
        text = source
    elif _exists(source):  # a folder or a device: say so, not "no such file"
        raise InputError(f"{source[:80]}: not a regular file (a folder or a device), cannot be a build list; give "
                         "the file, a link or a token")
    else:
        raise InputError(f"{source[:80]}: no such file, and not a build link or token")
    result = import_build(text, load_priced_catalog(), currency=currency, picks=picks)
    adopted = 0
    if use_measurements and result.measurements:
        from planner.service import measurements

        adopted = measurements().adopt(result.measurements)
    kept, refused = [], []
    if keep_prices and result.list_prices:
        from planner.service import my_prices

        kept, refused = my_prices().keep_list(result.list_prices, force=force)
        before = result.list_prices
        result = import_build(text, load_priced_catalog(), currency=currency, picks=picks)  # priced as every answer now prices it
        result.list_prices = before
    if as_json:
        out = result.to_json()
        out["kept_prices"] = {"asked": keep_prices, "kept": len(kept), "refused": refused}
        out["measurements_used"] = adopted
        emit_json(out)
        return
    table = Table(title=f"Imported from {result.kind}")
    for col in ("line", "type", "part", "qty", "matched from", "how (sure)"):
        table.add_column(col)
    for m in result.matched:
        sure = "" if m.confidence is None else f" {m.confidence:.0%}"
        table.add_row("" if m.line is None else str(m.line), m.part.category,  # type: ignore[union-attr]
                      styled("{} [dim]({})[/]", m.part.name, m.part.id), str(m.quantity),  # type: ignore[union-attr]
                      m.text, m.how + sure + (f" ({m.note})" if m.note else ""))
    console.print(table)
    for m in result.unmatched:
        where = f"line {m.line}, " if m.line is not None else ""
        console.print(styled("[yellow]not matched[/] ({}{}): {} — {}", where, m.category or "?", m.text, m.note))
        for cid, name, _ in m.candidates:
            console.print(styled("    candidate: {} [dim]({})[/]  → --pick {}={}", name, cid, m.line or "?", cid))
    for n in result.notes:
        console.print(styled("[dim]note: {}[/]", n))
    if result.measurements:
        said = result.measurements_sentence
        console.print(styled("{}; " + ("added to your calibration: speeds of these cards now read 'measured'" if adopted
                                       else "not used: pass --use-measurements to plan with them"), said))
    if result.report is None:
        console.print(styled("[red]no part could be matched; nothing to check[/]"))
        return
    rep, shared = result.report, result.build
    verdict = ("[green]compatible[/]" if rep.verdict == "compatible" else f"[red]{len(rep.problems)} problem(s)[/]"
               if rep.problems else f"[yellow]partial build[/] (missing {', '.join(rep.missing)})")
    _print_list_prices(result)
    total = format_money(shared.total, shared.currency) if shared else str(rep.total)
    if kept:
        basis = (f"with the list's prices: {len(kept)} kept as 'from the shared list' (dated today); every answer "
                 "plans with them until `planner prices forget PART --shared`")
    else:
        basis = "today's catalog prices"
        if result.list_prices and keep_prices:
            basis += "; --keep-prices kept none of the list's prices (why below)"
        elif result.list_prices:
            basis += "; the list's own prices are not kept: pass --keep-prices to plan with them"
    console.print(styled("Verdict: " + verdict + "; total {} ({})", total, basis))
    for why, times in Counter(refused).items():  # one database error is said once, not once per price
        console.print(styled("  [yellow]not kept[/]{}: {}", f" ({times} prices)" if times > 1 else "", why))
    if rep.sizing is not None:
        g = rep.build.get("gpu")
        gpus = f"{rep.build.gpu_count} x {g.name}, " if g is not None else ""
        console.print(styled("Power: {}sustained {} W, transients to {} W, PSU of at least {} W recommended", gpus,
                             rep.sizing.sustained_w, rep.sizing.transient_w, rep.sizing.recommended_w))
    for f in rep.problems:
        console.print(styled("  [red]✗ {}[/]: {}", f.rule, f.message))
    for f in rep.warnings:
        console.print(styled("  [yellow]! {}[/]: {}", f.rule, f.message))
