"""The sweep on a plan, in the user's terms: runs left, hours, finish time on the clock, and the model assumed."""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any, Optional, Sequence

from planner.perf.sweep import Estimate, sweep_time
from planner.service.answer import AssumedModel, Finish, Hours, SweepReport


def assumed_model(workload: str, precision: str, model_params: Optional[float]) -> AssumedModel:
    """Which model size the speed figure is for: the user's, or the workload class's typical size (said so)."""
    if model_params is not None:
        return AssumedModel(params=float(model_params), assumed=False, workload=workload, precision=precision,
                            basis="your model size")
    from planner.perf.model import load_perf_model

    typical = float(load_perf_model().typical_params(workload))
    return AssumedModel(params=typical, assumed=True, workload=workload, precision=precision,
                        basis=f"typical {workload} size in the calibration data (give yours: it changes the speed)")


def params_text(params: float) -> str:
    """15e6 -> '15 M', 1.3e9 -> '1.3 B'."""
    if params >= 1e9:
        return f"{params / 1e9:.3g} B"
    return f"{params / 1e6:.3g} M"


def model_phrase(model: AssumedModel) -> str:
    """'a 15 M-parameter transformer (amp)', with '(typical size, assumed)' when the user gave none."""
    text = f"a {params_text(model.params)}-parameter {model.workload} ({model.precision})"
    return text + (", typical size assumed" if model.assumed else "")


# Beyond a year a finish time on the clock means nothing (and past year 9999 it cannot be computed): say days.
CLOCK_LIMIT_HOURS = 365 * 24


def _clock(start: datetime, hours: float) -> Optional[str]:
    """The time `hours` after start (ISO, minutes), None when that is more than a year away (or not a number)."""
    if not (math.isfinite(hours) and 0 <= hours <= CLOCK_LIMIT_HOURS):
        return None
    return (start + timedelta(hours=hours)).isoformat(timespec="minutes")


def sweep_report(speed: float, low: float, high: float, *, runs: int, baseline_hours: float, gpu_count: int,
                 runs_left: Optional[int] = None, start: Optional[datetime] = None, chip: Optional[str] = None,
                 vram_gb: Optional[float] = None, precision: str = "amp", model_params: Optional[float] = None,
                 run_vram_gb: Optional[float] = None) -> SweepReport:
    """Wall hours for the runs still to do, and when they finish if started at `start` (default: now, local);
    a finish more than a year away has no clock time (None) and is said in days (`finish_days`).

    With the card (`chip` id, `vram_gb`) and a model size, the sweep is the planned one (planner.perf.planned_sweep:
    as many runs per GPU as fit and add throughput), the figure the solver ranked the build on; the sharing is then
    described under `runs_sharing_each_gpu`."""
    left = runs if runs_left is None else runs_left
    speed_est = Estimate(speed, min(low, speed), max(high, speed))
    planned = _planned(chip, vram_gb, max(1, gpu_count), speed_est, runs=left, baseline_hours=baseline_hours,
                       precision=precision, model_params=model_params, run_vram_gb=run_vram_gb)
    est = planned.sweep if planned is not None else sweep_time(left, baseline_hours, speed_est,
                                                               gpu_count=max(1, gpu_count))
    start = start or datetime.now().astimezone()
    return report_of(planned, est, runs=runs, left=left, baseline_hours=baseline_hours, start=start,
                     alone=sweep_time(left, baseline_hours, speed_est, gpu_count=max(1, gpu_count)))


def report_of(planned: Any, est: Any, *, runs: int, left: int, baseline_hours: float, start: Optional[datetime],
              alone: Any = None, shared: Optional[dict[str, Any]] = None) -> SweepReport:
    """The SweepReport of a computed sweep (`est`, a SweepEstimate; `planned` the PlannedSweep it came from, or
    None; `alone` the same runs one per GPU, said beside a shared sweep; `shared` the sharing as the answer's
    BuildSummary says it, when known)."""
    start = start or datetime.now().astimezone()
    if shared is None and planned is not None and planned.sharing is not None:
        shared = {**planned.sharing.to_json(), "wall_hours": est.wall.to_json(2),
                  "one_run_per_gpu_hours": (alone or est).wall.to_json(2)}
    return SweepReport(
        runs=runs, runs_left=left, counts="all runs" if left == runs else "runs left",
        baseline_hours_per_run=baseline_hours, gpu_count=est.gpu_count, rounds=est.waves,
        hours_per_run=Hours.of(est.per_run), wall_hours=Hours.of(est.wall), start=start.isoformat(timespec="minutes"),
        finish=Finish(value=_clock(start, est.wall_hours), low=_clock(start, est.wall_hours_low),
                      high=_clock(start, est.wall_hours_high)),
        finish_days=Hours(value=round(est.wall_hours / 24, 1), low=round(est.wall_hours_low / 24, 1),
                          high=round(est.wall_hours_high / 24, 1)),
        runs_sharing_each_gpu=shared)


def plan_report(plan: Any, req: Any, *, start: Optional[datetime] = None, summary: Any = None) -> SweepReport:
    """A solver plan's sweep for the request, the planned one (planner.perf.planned_sweep.plan_sweep: the figure
    the solver ranked it on and its BuildSummary, `summary` when made, shows), with its finish from `start`."""
    from planner.perf.planned_sweep import plan_sweep
    from planner.service.answer import sharing_of

    ps = plan_sweep(plan, req)
    shared = summary.runs_sharing_each_gpu if summary is not None else sharing_of(plan, req, ps)
    return report_of(ps, ps.sweep, runs=req.runs, left=req.runs_left or req.runs, baseline_hours=req.baseline_hours,
                     start=start, shared=shared)


def _planned(chip: Optional[str], vram_gb: Optional[float], gpu_count: int, speed: Estimate, *, runs: int,
             baseline_hours: float, precision: str, model_params: Optional[float],
             run_vram_gb: Optional[float]) -> Any:
    if chip is None or vram_gb is None or model_params is None:
        return None
    from planner.catalog.load import load_chips
    from planner.perf.planned_sweep import planned_sweep

    card = load_chips().get(chip)
    if card is None:
        return None
    return planned_sweep(card, float(vram_gb), gpu_count, speed, runs=runs, baseline_hours=baseline_hours,
                         precision=precision, model_params=model_params, run_vram_gib=run_vram_gb)


def clock_text(iso: str, start: str) -> str:
    """'today 23:40', 'tomorrow 03:10', 'Thu 4 Dec 09:00' relative to the start's date."""
    t, s = datetime.fromisoformat(iso), datetime.fromisoformat(start)
    days = (t.date() - s.date()).days
    if days == 0:
        return f"today {t:%H:%M}"
    if days == 1:
        return f"tomorrow {t:%H:%M}"
    return f"{t:%a %d %b %H:%M}"


def days_text(days: float) -> str:
    """'in 412 days', 'in 41 667 days' (thin-space thousands), for a finish beyond a year."""
    return f"in {days:,.0f} days".replace(",", " ")


def finish_text(report: SweepReport, key: str = "value") -> str:
    """When the sweep ends: a clock time within a year ('tomorrow 03:10'), else in days ('in 412 days')."""
    iso = getattr(report.finish, key)
    return clock_text(iso, report.start) if iso is not None else days_text(getattr(report.finish_days, key))


def hours_text(h: float) -> str:
    if h < 1:
        return f"{h * 60:.0f} min"
    return f"{h:.1f} h" if h < 48 else f"{h / 24:,.1f} days".replace(",", " ")


def finish_sentence(report: SweepReport) -> str:
    """'6 of 8 runs left: about 5.2 h, done today 20:48 (19:12 to 22:50) if started now'."""
    f, w, start = report.finish, report.wall_hours, report.start
    left = report.runs_left
    what = f"{left} of {report.runs} runs left" if left != report.runs else f"{left} runs"
    if f.value is None:  # beyond a year: days, no date
        d = report.finish_days
        low = finish_text(report, "low") if f.low is not None else f"{d.low:,.0f}".replace(",", " ")
        high = f"{d.high:,.0f}".replace(",", " ")
        return f"{what}: about {hours_text(w.value)}, done {finish_text(report)} ({low} to {high} days) if started now"
    if f.high is None:
        return (f"{what}: about {hours_text(w.value)}, done {clock_text(f.value, start)} "
                f"({finish_text(report, 'low')} to {finish_text(report, 'high')}) if started now")
    day = lambda iso: datetime.fromisoformat(iso).date()  # noqa: E731
    short = lambda iso: (f"{datetime.fromisoformat(iso):%H:%M}" if day(iso) == day(f.value)  # noqa: E731
                         else clock_text(iso, start))
    return (f"{what}: about {hours_text(w.value)}, done {clock_text(f.value, start)} "
            f"({short(f.low)} to {short(f.high)}) if started now")


def shared_sentence(shared: dict[str, Any]) -> str:
    w, alone = shared["wall_hours"], shared["one_run_per_gpu_hours"]
    basis = "measured" if shared["gain_basis"].startswith("measured") else "estimate"
    return (f"the sweep above puts {shared['runs_per_gpu']} runs on each GPU at once ({shared['gain']:.2f}x one run's "
            f"throughput, {basis}; {shared['per_run_vram_gib']:.0f} GiB per run): about {hours_text(w['value'])} "
            f"({hours_text(w['low'])} to {hours_text(w['high'])}) against {hours_text(alone['value'])} with one run "
            "per GPU")
