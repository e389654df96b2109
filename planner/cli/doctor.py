"""`planner doctor events|metrics`: read an unstable machine's logs and training metrics, cheapest test first."""

from __future__ import annotations

from datetime import timedelta
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from planner.cli.common import console, emit_json, handle_errors
from planner.doctor import diagnose_events, diagnose_metrics
from planner.doctor.diagnose import busy_windows_from_metrics
from planner.doctor.metrics import DEFAULT_TEMP_LIMIT_C
from planner.doctor.report import EventReport, MetricsReport
from planner.doctor.timestamps import parse_window
from planner.errors import InputError

doctor = typer.Typer(
    help="Diagnose an unstable training machine from its Windows System log and its training metrics.",
    no_args_is_help=True,
)
_LIKELY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
_SEVERITY_STYLE = {"problem": "bold red", "warning": "yellow", "info": "dim"}
_COST_STYLE = {"free": "green", "low": "cyan", "medium": "yellow", "high": "red"}


def _print_events(report: EventReport) -> None:
    basis = "UTC" if report.utc else "local time"
    catalogued = sum(len(i.events) for i in report.incidents)
    console.print(f"[bold]Read {report.total_events} {'event' if report.total_events == 1 else 'events'}[/] ({report.format}, {report.encoding}); "
                  f"{catalogued} matter for GPU/PSU stability, {report.unrecognised} not relevant.")
    if report.ignored:
        noise = ", ".join(f"{escape(k)} ×{v}" for k, v in sorted(report.ignored.items()))
        console.print(f"Ignored as noise (unrelated to crashes, docs/doctor.md §5.1): {noise}")
    if not report.incidents:
        console.print("[green]No GPU, power or crash events found.[/]")
    for n, inc in enumerate(report.incidents, 1):
        console.print(f"\n[bold]Incident {n}[/]: {inc.start:%Y-%m-%d %H:%M:%S} → {inc.end:%Y-%m-%d %H:%M:%S} "
                      f"({basis})")
        table = Table(show_header=False, box=None, padding=(0, 1))
        for ev in inc.events:
            table.add_row(f"{ev.time:%m-%d %H:%M:%S}", f"{escape(ev.source)} {ev.id}", escape(ev.summary))
        console.print(table)
    if report.hypotheses:
        console.print("\n[bold]Likely causes[/] (most likely first)")
    for n, hyp in enumerate(report.hypotheses, 1):
        style = _LIKELY_STYLE[hyp.likelihood]
        console.print(f"{n}. [bold]{escape(hyp.name)}[/] — [{style}]{hyp.likelihood}[/]")
        for line in hyp.evidence:
            console.print(f"   • {escape(line)}")
    if report.runbook:
        console.print("\n[bold]Runbook[/], cheapest test first — stop at the first step that makes the crashes stop")
        for n, step in enumerate(report.runbook, 1):
            console.print(f"{n:>2}. [{_COST_STYLE[step.cost]}]{step.cost:<6}[/] {escape(step.step)}")
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/]")


def _print_metrics(report: MetricsReport) -> None:
    roles = ", ".join(f"{k}={escape(v)}" for k, v in report.columns.items())
    console.print(f"[bold]Read {report.rows} {'row' if report.rows == 1 else 'rows'}[/] ({report.format}), steps {report.first_step}–"
                  f"{report.last_step}; columns used: {roles}")
    if not report.findings:
        console.print("[green]No findings: no divergence, plateau, throughput or utilisation drop, throttling, "
                      "imbalance or early stop.[/]")
    else:
        table = Table(show_lines=False)
        for col in ("severity", "steps", "kind", "finding"):
            table.add_column(col)
        for f in report.findings:
            steps = str(f.from_step) if f.from_step == f.to_step else f"{f.from_step}–{f.to_step}"
            table.add_row(f"[{_SEVERITY_STYLE[f.severity]}]{f.severity}[/]", steps, f.kind, escape(f.message))
        console.print(table)
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/]")


@doctor.command("events")
@handle_errors
def events_cmd(
    file: str = typer.Argument(..., help="System log export: Event Viewer CSV, `wevtutil qe System /f:xml` output "
                               "or `Get-WinEvent -LogName System | Format-List` text (UTF-8 or UTF-16)."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report."),
    gpu_tgp: Optional[list[int]] = typer.Option(None, "--gpu-tgp", help="GPU board power in W (repeat per GPU), "
                                                "e.g. 250 for a GTX 1080 Ti; links the PSU hypothesis to the "
                                                "planner's PSU sizing."),
    cpu_power: Optional[int] = typer.Option(None, "--cpu-power", help="CPU package power in W (AMD PPT = 1.35 × "
                                            "TDP, e.g. 88 for a 65 W Ryzen; Intel PL2)."),
    psu_w: Optional[int] = typer.Option(None, "--psu-w", help="Rating of the PSU in the machine now, in W."),
    busy: Optional[list[str]] = typer.Option(None, "--busy", help="Training window START/END in ISO form (repeat), "
                                             "e.g. 2025-10-13T22:00/2025-10-14T06:30, on the log's clock (UTC for "
                                             "XML exports, local time for CSV and text); events outside are idle."),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Metrics CSV/JSONL with a time column: its rows "
                                          "mark when training ran (alternative to --busy)."),
    gap_min: int = typer.Option(60, "--gap-min", help="Minutes of quiet that separate two incidents."),
) -> None:
    """Group GPU/PSU events into incidents and rank the causes, with a runbook cheapest test first."""
    if gap_min <= 0:
        raise InputError("--gap-min must be positive")
    windows = [parse_window(w) for w in busy or []]
    if metrics:
        windows += busy_windows_from_metrics(metrics)
    report = diagnose_events(file, gpu_tgp_w=gpu_tgp or None, cpu_power_w=cpu_power, psu_w=psu_w,
                             busy=windows or None, gap=timedelta(minutes=gap_min))
    if json_out:
        emit_json(report.to_json())
    else:
        _print_events(report)


@doctor.command("metrics")
@handle_errors
def metrics_cmd(
    file: str = typer.Argument(..., help="Training metrics: CSV with a header row, or JSONL (one object per line) "
                               "with step, loss, tokens/s, GPU utilisation, temperature, per-GPU columns..."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report."),
    expected_steps: Optional[int] = typer.Option(None, "--expected-steps", help="Total steps the run should reach; "
                                                 "a shorter log is reported as stopped."),
    temp_limit: float = typer.Option(DEFAULT_TEMP_LIMIT_C, "--temp-limit", help="GPU temperature (°C) where clocks "
                                     "drop; 83 is the Pascal/Ada GPU Boost target (docs/doctor.md §4.1)."),
) -> None:
    """Read training metrics and report weak signals with their step ranges."""
    report = diagnose_metrics(file, expected_steps=expected_steps, temp_limit_c=temp_limit)
    if json_out:
        emit_json(report.to_json())
    else:
        _print_metrics(report)


def register(app: typer.Typer) -> None:
    app.add_typer(doctor, name="doctor")
