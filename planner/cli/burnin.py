"""`planner burnin` (a burn-in plan for a build) and `planner doctor burnin` (the verdict on its logs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer
from rich.text import Text

from planner.cli.common import console, emit_json, handle_errors
from planner.errors import InputError
from planner.settings import DEFAULT_BASELINE_HOURS, DEFAULT_RUNS

BURNIN_HELP = "Burn-in plan for a build: what to run, how long, which logs to keep and what passes."


def _build(budget: Optional[str], build: Optional[Path], gpu: Optional[str], currency: Optional[str], m: Any,
           runs: int, hours: float) -> tuple[Any, int, str, str]:
    """(chip, GPU count, label, where it came from) for --gpu, --build or the build `recommend` gives for --budget."""
    from planner.cli.perf import _parse_gpu_spec
    from planner.service import SpeedQueries

    given = [name for name, x in (("--budget", budget), ("--build", build), ("--gpu", gpu)) if x is not None]
    if len(given) > 1:
        raise InputError(f"give only one of --budget, --build or --gpu (got {' and '.join(given)})")
    if not given:
        raise InputError("give one of --budget AMOUNT, --build FILE.json or --gpu '2x RTX 5090'")
    if currency is not None and budget is None:  # else a typo in it would pass unseen
        raise InputError("--currency goes with --budget (the currency of the amount); leave it out with "
                         f"{given[0]}")
    if gpu is not None:
        name, n = _parse_gpu_spec(gpu, 1)
        if not 1 <= n <= 64:
            raise InputError(f"GPU count must be between 1 and 64 in {gpu!r}")
        chip = m.resolve(name)
        return chip, n, f"{n} x {chip.name}", "given with --gpu"
    if build is not None:
        from planner.service import read_plan

        chip, n, _, label = SpeedQueries(m).plan_gpus(read_plan(build), str(build))
        return chip, n, f"{n} x {label}", f"the plan in {build}"
    from planner.request import Request
    from planner.service import describe, load_priced_catalog, plan

    cat = load_priced_catalog(None, use_history=True)
    req = Request.parse(budget=budget, currency=currency, runs=runs, baseline_hours=hours)
    planned = plan(cat, req)
    if not planned.plans:
        raise InputError(f"no build fits --budget {budget}: see `planner recommend --budget {budget}`")
    view = describe(cat, planned).plans[0].view  # the answer `planner recommend` prints, read typed
    chip, n, _, label = SpeedQueries(m).plan_gpus(view, "the recommendation")
    return chip, n, f"{n} x {label}", f"`planner recommend --budget {budget}`"


def register(app: typer.Typer) -> None:
    @app.command("burnin", help=BURNIN_HELP)
    @handle_errors
    def burnin_cmd(
        budget: Optional[str] = typer.Option(None, "--budget", help="Plan the burn-in of the build `planner recommend` "
                                             "gives for this budget, e.g. 7000 or 'EUR 7000'"),
        build: Optional[Path] = typer.Option(None, "--build", help="Plan JSON from `planner recommend --json`"),
        gpu: Optional[str] = typer.Option(None, "--gpu", help="GPUs of the machine, e.g. '2x RTX 5090'"),
        currency: Optional[str] = typer.Option(None, "--currency", help="Currency of --budget (default: EUR)"),
        runs: int = typer.Option(DEFAULT_RUNS, "--runs", help="Runs in your sweep"),
        hours: Optional[float] = typer.Option(None, "--hours", help="Hours per run on the GTX 1080 Ti (default: your "
                                              f"calibrated 1080 Ti log, else {DEFAULT_BASELINE_HOURS:g})"),
        os_name: str = typer.Option("both", "--os", help="linux | windows | both: which log commands to print"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        from planner.service import burnin_plan, measurements, speed_model

        if not 1 <= runs <= 10_000:
            raise InputError(f"--runs must be between 1 and 10000 (got {runs})")
        queries = speed_model()
        m = queries.model
        hours, hours_source = measurements().baseline_hours(hours)
        if not 0 < hours <= 100_000:
            raise InputError(f"--hours must be a positive number of hours (got {hours})")
        chip, n, label, source = _build(budget, build, gpu, currency, m, runs, hours)
        speed = m.anchored(chip.id).estimate
        s = queries.sweep_time(runs, hours, speed, n)
        basis = (f"{source}; {runs} runs of {hours:g} h on a GTX 1080 Ti ({hours_source}) -> {s.hours_per_run:.1f} h "
                 f"per run ({s.hours_per_run_low:.1f}-{s.hours_per_run_high:.1f}), sweep {s.wall_hours:.1f} h on {label}")
        p = burnin_plan(label, n, run_hours=s.hours_per_run, run_hours_high=s.hours_per_run_high,
                        sweep_hours=s.wall_hours, runs=runs, os=os_name.strip().lower(), basis=basis)  # type: ignore[arg-type]
        if as_json:
            emit_json({**p.to_json(), "sweep": s.to_json()})
        else:
            console.print(Text(p.text()), soft_wrap=True)


def register_doctor(doctor: typer.Typer) -> None:
    """`planner doctor burnin`: added to the doctor group from here (planner/cli/doctor.py calls this)."""

    @doctor.command("burnin")
    @handle_errors
    def doctor_burnin(
        smi_log: Path = typer.Argument(..., metavar="SMI_LOG", help="nvidia-smi --query-gpu ... --format=csv -l 5 log"),
        kernel_log: list[Path] = typer.Option([], "--kernel-log", help="Linux kernel log (journalctl -k, dmesg -T)"),
        events: list[Path] = typer.Option([], "--events", help="Windows System log export (wevtutil XML, CSV)"),
        metrics: Optional[Path] = typer.Option(None, "--metrics", help="Training metrics CSV/JSONL with throughput"),
        as_json: bool = typer.Option(False, "--json", help="Print JSON"),
    ) -> None:
        """Burn-in verdict (pass | fail | not_checked | incomplete) from the nvidia-smi log, kernel/System log and
        metrics."""
        from planner.service import check_burnin

        report = check_burnin(smi_log, events=[*kernel_log, *events], metrics=metrics)
        if as_json:
            emit_json(report.to_json())
        else:
            console.print(Text(verdict_text(report)), soft_wrap=True)
        if report.verdict != "pass":
            raise typer.Exit(1)


MARK = {"pass": "ok  ", "warn": "warn", "fail": "FAIL", "incomplete": "??  ", "not_checked": "N/A ", "skipped": "--  "}


def verdict_text(report: Any) -> str:
    lines = [f"verdict: {report.headline or report.verdict}"]
    lines += [f"  {MARK[c.status]} {c.criterion}: {c.message}" for c in report.checks]
    return "\n".join(lines)
