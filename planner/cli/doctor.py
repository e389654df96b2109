"""`planner doctor events|metrics`: read an unstable machine's logs and training metrics, cheapest test first."""

from __future__ import annotations

import json
import math
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.markup import escape
from rich.table import Table

from planner.service import EventReport, MetricsReport, Signal, Watch, WatchOptions, diagnose
from planner.settings import GPU_HOT_C
from planner.cli.common import emit_json, emit_text, err_console, handle_errors
from planner.cli.common import markup_console as console
from planner.errors import InputError

doctor = typer.Typer(
    help="Diagnose an unstable training machine from its System log (Windows or Linux kernel), nvidia-smi output "
         "and training metrics; watch a run while it trains.",
    no_args_is_help=True,
)
MAX_GAP_MIN = 366 * 24 * 60
_LIKELY_STYLE = {"high": "bold red", "medium": "yellow", "low": "dim"}
_SEVERITY_STYLE = {"problem": "bold red", "warning": "yellow", "info": "dim"}
_COST_STYLE = {"free": "green", "low": "cyan", "medium": "yellow", "high": "red"}


def _print_events(report: EventReport) -> None:
    basis = ("UTC" if report.utc else "since boot" if report.clock == "boot" else "no times in the file"
             if report.clock == "none" else "local time")
    catalogued = sum(len(i.events) for i in report.incidents)
    console.print(f"[bold]Read {report.total_events} event{'' if report.total_events == 1 else 's'}[/] "
                  f"({report.format}, {report.encoding}); "
                  f"{catalogued} matter for GPU/PSU stability, {report.unrecognised} not relevant.")
    if report.ignored:
        noise = ", ".join(f"{escape(k)} ×{v}" for k, v in sorted(report.ignored.items()))
        console.print(f"Ignored as noise (unrelated to crashes, docs/doctor.md §5.1): {noise}")
    if not report.incidents:
        console.print("[green]No GPU, power or crash events found[/] in what this file records (see the notes for "
                      "what it cannot show).")
    for n, inc in enumerate(report.incidents, 1):
        console.print(f"\n[bold]Incident {n}[/]: {report.stamp(inc.start)} → "
                      f"{report.stamp(inc.end)} ({basis})")
        table = Table(show_header=False, box=None, padding=(0, 1))
        for ev in inc.events:
            table.add_row(report.stamp(ev.time, short=True), f"{escape(ev.source)} {ev.id}", escape(ev.summary))
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
    for f in report.smi:
        console.print(f"nvidia-smi {escape(f['kind'])}: {escape(f['message'])}", highlight=False)
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
    if report.ignored:
        console.print(f"ignored: {escape(', '.join(report.ignored))} (map one with --column KIND=NAME, e.g. "
                      "--column loss=val/loss)", highlight=False)
    for note in report.notes:
        console.print(f"[dim]note: {escape(note)}[/]")


_COLUMN_HELP = ("KIND=NAME (repeat): read column NAME as KIND: loss, throughput, util, temp, power, clock, grad_norm, "
                "step, time, expected, or per GPU gpu1_temp; docs/doctor.md §8.1 lists the names read by default.")


def _format(json_out: bool, fmt: str) -> str:
    fmt = "json" if json_out else fmt.lower()
    if fmt not in ("text", "json", "md"):
        raise InputError(f"--format {fmt[:20]!r}: choose text, json or md")
    return fmt


@doctor.command("events")
@handle_errors
def events_cmd(
    file: str = typer.Argument(..., help="System log: Windows Event Viewer CSV or XML, 'Copy details as text', the "
                               "General tab's message, `wevtutil qe System /f:xml` or `/f:text`, `Get-WinEvent | "
                               "Format-List` (UTF-8 or UTF-16); or a Linux kernel log: `journalctl -k` (short, "
                               "short-iso, short-full, json), syslog/kern.log, `dmesg`, `dmesg -T`, `dmesg -H`, or "
                               "grep'd kernel lines. docs/doctor.md §0 has an example line of each."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report (same as --format json)."),
    fmt: str = typer.Option("text", "--format", help="text, json or md (Markdown to paste in an issue)."),
    gpu_tgp: Optional[list[int]] = typer.Option(None, "--gpu-tgp", help="GPU board power in W (repeat per GPU), "
                                                "e.g. 250 for a GTX 1080 Ti; links the PSU hypothesis to the "
                                                "planner's PSU sizing."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="The card's model, e.g. 'GTX 1080 Ti': its board power "
                                      "and NVIDIA's recommended PSU, so the sizing matches `planner check`."),
    cpu_power: Optional[int] = typer.Option(None, "--cpu-power", help="CPU package power in W (AMD PPT = 1.35 × "
                                            "TDP, e.g. 88 for a 65 W Ryzen; Intel PL2)."),
    psu_w: Optional[int] = typer.Option(None, "--psu-w", help="Rating of the PSU in the machine now, in W."),
    busy: Optional[list[str]] = typer.Option(None, "--busy", help="Training window START/END in ISO form (repeat), "
                                             "e.g. 2025-10-13T22:00/2025-10-14T06:30, on the log's clock (UTC for "
                                             "XML exports and journal JSON, local time otherwise); events outside "
                                             "are idle."),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Metrics CSV/JSONL with a time column: its rows "
                                          "mark when training ran (alternative to --busy)."),
    smi: Optional[list[str]] = typer.Option(None, "--smi", help="nvidia-smi evidence (repeat): the `nvidia-smi` "
                                            "table, `nvidia-smi -q` output or a `--query-gpu=... --format=csv -l 5` "
                                            "log."),
    gpus: Optional[int] = typer.Option(None, "--gpus", min=1, max=64, help="GPUs fitted: an nvidia-smi table "
                                       "(--smi) listing fewer is a lost card."),
    year: Optional[int] = typer.Option(None, "--year", help="Year of a `journalctl` short-format or `dmesg -H` log "
                                       "(they print none); default: the journal header's, else this year (said)."),
    gap_min: int = typer.Option(60, "--gap-min", help="Minutes of quiet that separate two incidents (1 to "
                                f"{MAX_GAP_MIN})."),
) -> None:
    """Group GPU/PSU events into incidents and rank the causes, with a runbook cheapest test first."""
    out = _format(json_out, fmt)
    if gap_min <= 0:
        raise InputError("--gap-min must be positive")
    if gap_min > MAX_GAP_MIN:
        raise InputError(f"--gap-min {gap_min} is more than a year ({MAX_GAP_MIN} minutes)")
    windows, covered, _ = diagnose().windows(busy or [], metrics or None)
    report = diagnose().events(file, gpu_tgp_w=gpu_tgp or None, cpu_power_w=cpu_power, psu_w=psu_w,
                               busy=windows or None, gap=timedelta(minutes=gap_min), year=year, gpu_name=gpu,
                               smi=smi or (), covered=covered, expected_gpus=gpus)
    _emit(out, report, _print_events)


def _emit(out: str, report: Any, printer: Callable[[Any], None]) -> None:
    """One report in the chosen output: JSON, Markdown or the terminal tables."""
    if out == "json":
        emit_json(report.to_json())
    elif out == "md":
        emit_text(report.markdown())
    else:
        printer(report)


@doctor.command("smi")
@handle_errors
def smi_cmd(
    file: str = typer.Argument(..., help="The plain `nvidia-smi` table (or its error lines), `nvidia-smi -q` output "
                               "(whole or a fragment) or a `nvidia-smi --query-gpu=timestamp,index,name,"
                               "utilization.gpu,temperature.gpu,power.draw,power.limit,pcie.link.gen.current,"
                               "pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,"
                               "clocks_throttle_reasons.active --format=csv -l 5` log."),
    json_out: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
    temp_limit: float = typer.Option(GPU_HOT_C, "--temp-limit", help="GPU temperature (°C) counted as "
                                     "hot when the dump gives no slowdown temperature."),
    gpus: Optional[int] = typer.Option(None, "--gpus", min=1, max=64, help="GPUs fitted in the machine: a plain "
                                       "`nvidia-smi` table listing fewer is a lost card."),
) -> None:
    """Read nvidia-smi evidence: link trained down, power cap, HW slowdown, heat, ECC, retired pages, lost GPUs."""
    findings = diagnose().smi(file, temp_limit_c=temp_limit, expected_gpus=gpus)
    if json_out:
        emit_json([{"kind": f.kind, "severity": f.severity, "gpu": f.gpu, "message": f.message} for f in findings])
        return
    if not any(f.severity in ("problem", "warning") for f in findings):
        console.print("[green]No problem found in what this output shows[/] (see below for what it cannot show).")
    for f in findings:
        console.print(f"[{_SEVERITY_STYLE.get(f.severity, 'dim')}]{f.severity}[/] {escape(f.kind)}: "
                      f"{escape(f.message)}", highlight=False)


@doctor.command("metrics")
@handle_errors
def metrics_cmd(
    file: str = typer.Argument(..., help="Training metrics: CSV with a header row, or JSONL (one object per line) "
                               "with step, loss, tokens/s, GPU utilisation, temperature, per-GPU columns..."),
    json_out: bool = typer.Option(False, "--json", help="Print the JSON report."),
    fmt: str = typer.Option("text", "--format", help="text, json or md (Markdown)."),
    expected_steps: Optional[int] = typer.Option(None, "--expected-steps", help="Total steps the run should reach; "
                                                 "a shorter log is reported as stopped."),
    temp_limit: float = typer.Option(GPU_HOT_C, "--temp-limit", help="GPU temperature (°C) where clocks "
                                     f"drop; {GPU_HOT_C:g} is the Pascal/Ada GPU Boost target (docs/doctor.md §4.1)."),
    column: Optional[list[str]] = typer.Option(None, "--column", help=_COLUMN_HELP),
) -> None:
    """Read training metrics and report weak signals with their step ranges."""
    out = _format(json_out, fmt)
    report = diagnose().metrics(file, expected_steps=expected_steps, temp_limit_c=temp_limit, columns=column)
    _emit(out, report, _print_metrics)


@doctor.command("watch")
@handle_errors
def watch_cmd(
    metrics_file: str = typer.Argument(..., help="Metrics CSV or JSONL the training run appends to."),
    kernel_log: Optional[str] = typer.Option(None, "--kernel-log", help="A kernel log that grows (e.g. "
                                             "`journalctl -k -f > kern.log` or /var/log/kern.log): new Xid, AER, MCE, "
                                             "EDAC, thermal or OOM lines raise 'kernel'."),
    smi_log: Optional[str] = typer.Option(None, "--smi-log", help="A growing `nvidia-smi --query-gpu=... "
                                          "--format=csv -l 5` log: throttling and idle GPUs."),
    on: Optional[list[str]] = typer.Option(None, "--on", help="KIND=COMMAND to run when a signal of that kind "
                                           "appears (repeat): the kinds `doctor metrics` and `doctor smi` report "
                                           "(nan_loss, divergence, throughput_drop, thermal_throttling, "
                                           "gpu_imbalance, hw_slowdown, gpu_idle, ...), hang, kernel, or any; the "
                                           "old names nan, plateau, throttling, idle still work. The command gets "
                                           "DOCTOR_SIGNAL, DOCTOR_MESSAGE and DOCTOR_STEP in its environment."),
    cooldown_s: float = typer.Option(600.0, "--cooldown-s", help="Seconds before a kind's command runs again."),
    hang_min: float = typer.Option(10.0, "--hang-min", help="Minutes without a new metrics row that count as a "
                                   "hang."),
    interval_s: float = typer.Option(5.0, "--interval-s", help="Seconds between two looks at the files."),
    state: Optional[str] = typer.Option(None, "--state", help="State file that lets a restarted watch resume "
                                        "(default: METRICS_FILE.doctor-watch.json)."),
    temp_limit: float = typer.Option(GPU_HOT_C, "--temp-limit", help="GPU temperature (°C) that counts "
                                     "as throttling."),
    once: bool = typer.Option(False, "--once", help="Read what is there, report, save the state and stop."),
    max_seconds: Optional[float] = typer.Option(None, "--max-seconds", help="Stop after this many seconds."),
    json_out: bool = typer.Option(False, "--json", help="One JSON object per signal (for other programs)."),
    column: Optional[list[str]] = typer.Option(None, "--column", help=_COLUMN_HELP),
    expected_steps: Optional[int] = typer.Option(None, "--expected-steps", help="Total steps the run should reach."),
) -> None:
    """Follow a training run's growing logs and raise weak signals as they appear; resumes where it stopped."""
    actions: dict[str, str] = {}
    for item in on or []:
        kind, sep, command = item.partition("=")
        if not sep or not command.strip():
            raise InputError(f"--on {item[:40]!r}: expected KIND=COMMAND, e.g. --on nan='notify-send diverged'")
        actions[kind.strip()] = command
    if max_seconds is not None and not (math.isfinite(max_seconds) and 0 <= max_seconds <= 10 * 365 * 86400):
        raise InputError(f"--max-seconds {max_seconds} is out of range")

    def emit(signal: Signal) -> None:
        if json_out:
            sys.stdout.write(json.dumps(signal.to_json()) + "\n")
            sys.stdout.flush()
        else:
            where = "" if signal.step is None else f" (step {signal.step:g})"
            console.print(f"{signal.kind}{where}: {signal.message}", markup=False, highlight=False)

    for option, value in (("--kernel-log", kernel_log), ("--smi-log", smi_log), ("--state", state)):
        if value is not None and not value.strip():  # '' would be dropped silently: the file never watched
            raise InputError(f"{option} is empty; give a file (or leave the option out)")
    watcher = Watch(WatchOptions(metrics=metrics_file, kernel_log=kernel_log, smi_log=smi_log, actions=actions,
                                 cooldown_s=cooldown_s, hang_min=hang_min, interval_s=interval_s, state_path=state,
                                 temp_limit_c=temp_limit, columns=column or [], expected_steps=expected_steps), emit)
    if not json_out:
        console.print(f"{'resuming' if watcher.resumed else 'watching'} {metrics_file} (state in "
                      f"{watcher.state_path})", markup=False, highlight=False)
    for option, value in (("--kernel-log", kernel_log), ("--smi-log", smi_log)):
        if value and not Path(value).exists():  # a logger may create it later; a typo should not pass unseen
            err_console.print(f"note: {option} {value} does not exist yet; the watch reads it once it appears",
                              markup=False, highlight=False)
    said_ignored = False

    def poll_and_tell() -> list[Signal]:
        nonlocal said_ignored
        signals = poll()
        report = watcher.report
        if not json_out and not said_ignored and report is not None:
            said_ignored = True
            used = ", ".join(f"{k}={v}" for k, v in report.columns.items())
            console.print(f"columns used: {used}" + (f"; ignored: {', '.join(report.ignored)} (map one with --column "
                          "KIND=NAME)" if report.ignored else ""), markup=False, highlight=False)
        return signals

    poll, watcher.poll = watcher.poll, poll_and_tell  # type: ignore[method-assign]
    try:
        watcher.run(once=once, max_seconds=max_seconds)
    except KeyboardInterrupt:
        watcher.save()


def register(app: typer.Typer) -> None:
    app.add_typer(doctor, name="doctor")


from planner.cli.burnin import register_doctor as _register_burnin  # noqa: E402  (doctor burnin lives in cli/burnin.py)

_register_burnin(doctor)
