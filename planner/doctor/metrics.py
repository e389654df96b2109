"""Weak signals in training metrics: divergence, plateau, throughput, utilisation, heat, imbalance, stops."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from typing import Optional

import pandas as pd

from planner.doctor.metrics_io import MetricSeries
from planner.doctor.report import MetricFinding, Severity
from planner.settings import GPU_HOT_C

DIVERGENCE_RISE = 0.25  # smoothed loss 25 % above its best so far
PLATEAU_MAX_DROP = 0.005  # fitted loss drop under 0.5 % across a window covering a quarter of the run
THROUGHPUT_DROP = 0.75  # below 75 % of the run's usual throughput
THROUGHPUT_DECLINE = 0.85  # last fifth of the run below 85 % of the first fifth
UTIL_DIP_POINTS = 20.0  # utilisation 20 points under its usual level
UTIL_LOW = 70.0  # median utilisation under 70 %: GPU starved throughout
IMBALANCE_UTIL_POINTS = 20.0
IMBALANCE_TEMP_C = 15.0
GRAD_SPIKE = 10.0  # grad norm 10x its running median
STEP_GAP_FACTOR = 5.0
TIME_GAP_FACTOR = 10.0
TIME_GAP_MIN_S = 300.0
MIN_RUN = 3  # consecutive rows for a sustained condition


def _num(x: float) -> str:
    """Readable number: thousands as integers with thin grouping, small values to 4 significant digits."""
    return f"{x:,.0f}".replace(",", " ") if abs(x) >= 1000 else f"{x:.4g}"


def _finite(xs: Sequence[float]) -> list[float]:
    return [x for x in xs if math.isfinite(x)]


def _median(xs: Sequence[float]) -> Optional[float]:
    f = _finite(xs)
    return statistics.median(f) if f else None


def rolling_median(xs: Sequence[float], window: int, *, centred: bool = True) -> list[float]:
    """Rolling median over finite values (NaN where the window has none); trailing if not centred."""
    clean = pd.Series(xs, dtype="float64").replace([math.inf, -math.inf], math.nan)
    return clean.rolling(window, center=centred, min_periods=1).median().tolist()


def runs(flags: Sequence[bool], min_len: int = 1) -> list[tuple[int, int]]:
    """(first, last) row indices of consecutive True stretches at least min_len long."""
    out, start = [], None
    for i, f in enumerate(list(flags) + [False]):
        if f and start is None:
            start = i
        elif not f and start is not None:
            if i - start >= min_len:
                out.append((start, i - 1))
            start = None
    return out


def _warmup(n: int) -> int:
    return max(1, n // 20)


class _Findings:
    def __init__(self, steps: Sequence[float]) -> None:
        self.steps = steps
        self.items: list[MetricFinding] = []

    def add(self, kind: str, severity: Severity, first: int, last: int, message: str) -> None:
        lo, hi = sorted((int(self.steps[first]), int(self.steps[last])))  # a restart goes back: still low-high
        self.items.append(MetricFinding(kind=kind, severity=severity, from_step=lo, to_step=hi, message=message))

    def step(self, i: int) -> int:
        return int(self.steps[i])


def _nan_loss(f: _Findings, s: MetricSeries) -> list[tuple[int, int]]:
    rows = s.nonfinite.get("loss", [])
    flags = [False] * len(s.steps)
    for i in rows:
        flags[i] = True
    spans = runs(flags)
    for a, b in spans[:5]:
        tail = " and never recovered" if b == len(s.steps) - 1 else ""
        f.add("nan_loss", "problem", a, b,
              f"loss is NaN/inf from step {f.step(a)} to {f.step(b)}{tail}: the run diverged numerically; lower the "
              "learning rate, add gradient clipping, check fp16 overflow (try bf16 or loss scaling)")
    return spans


def _divergence(f: _Findings, loss: list[float]) -> list[tuple[int, int]]:
    n = len(loss)
    if len(_finite(loss)) < 2 * MIN_RUN:
        return []
    smooth = rolling_median(loss, min(51, max(3, (n // 50) | 1)))
    best, flags = math.inf, []
    for i, v in enumerate(smooth):
        flag = math.isfinite(v) and best < math.inf and v > best + DIVERGENCE_RISE * abs(best) + 1e-9
        flags.append(flag)
        if math.isfinite(v) and v < best:
            best = v
    spans = runs(flags, MIN_RUN)
    for a, b in spans:
        prior = [x for x in smooth[:a] if math.isfinite(x)]
        low = min(prior)
        peak = max(x for x in smooth[a:b + 1] if math.isfinite(x))
        f.add("divergence", "problem", a, b,
              f"loss climbed from its best of {_num(low)} to {_num(peak)} between steps {f.step(a)} and {f.step(b)}: "
              "training is diverging; lower the learning rate or warm up longer, clip gradients")
    return spans


def _slope(ys: list[float]) -> float:
    n = len(ys)
    mx = (n - 1) / 2
    my = sum(ys) / n
    sxx = sum((i - mx) ** 2 for i in range(n))
    return sum((i - mx) * (y - my) for i, y in enumerate(ys)) / sxx


def _drop_error(ys: list[float]) -> float:
    """Standard error of the fitted drop across `ys` (slope x length), from the residuals around the line."""
    n = len(ys)
    if n < 3:
        return 0.0
    b = _slope(ys)
    mx, my = (n - 1) / 2, sum(ys) / n
    resid = sum((y - (my + b * (i - mx))) ** 2 for i, y in enumerate(ys))
    sxx = n * (n * n - 1) / 12
    return math.sqrt(resid / (n - 2) / sxx) * (n - 1)


def _plateau(f: _Findings, loss: list[float], exclude: list[tuple[int, int]]) -> None:
    n = len(loss)
    if len(_finite(loss)) < 20:
        return
    width = max(10, n // 4)
    stride = max(1, width // 4)
    flat = [False] * n
    starts = list(range(0, n - width + 1, stride))
    if starts[-1] != n - width:
        starts.append(n - width)  # the last window ends on the last row
    for start in starts:
        window = loss[start:start + width]
        ys = _finite(window)
        if len(ys) < 0.8 * width:
            continue
        level = abs(sum(ys) / len(ys)) or 1.0
        drop = -_slope(ys) * (len(ys) - 1)
        # flat only when the drop is small with its uncertainty: a noisy loss that falls looks flat by chance
        if drop + _drop_error(ys) < PLATEAU_MAX_DROP * level:
            for i in range(start, start + width):
                flat[i] = True
    for a, b in exclude:
        for i in range(max(0, a - width), b + 1):
            flat[i] = False
    for a, b in runs(flat, width):
        level = _median(loss[a:b + 1]) or 0.0
        ys = _finite(loss[a:b + 1])
        # noise can make each window's fit look flat while the loss falls: the whole span's fit must be flat too
        if len(ys) >= 3 and -_slope(ys) * (len(ys) - 1) >= 2 * PLATEAU_MAX_DROP * (abs(level) or 1.0) * max(
                1.0, len(ys) / width):
            continue
        after = _finite(loss[b + 1:])  # the loss fell again afterwards: it paused, learning did not stall
        if len(after) >= width // 2 and (_median(after) or 0.0) < level - 2 * PLATEAU_MAX_DROP * abs(level):
            continue
        f.add("loss_plateau", "warning", a, b,
              f"loss flat at about {_num(level)} from step {f.step(a)} to {f.step(b)} (less than "
              f"{PLATEAU_MAX_DROP:.1%} lower across each quarter of the run): learning stalled; check the learning-"
              "rate schedule and data repetition, or stop if the model has converged")


def _baseline(xs: list[float]) -> Optional[float]:
    return _median(xs[_warmup(len(xs)):])


def _throughput(f: _Findings, tp: list[float], name: str) -> list[tuple[int, int]]:
    base = _baseline(tp)
    if base is None or base <= 0:
        return []
    n, skip = len(tp), _warmup(len(tp))
    smooth = rolling_median(tp, 3)
    flags = [i >= skip and math.isfinite(v) and v < THROUGHPUT_DROP * base for i, v in enumerate(smooth)]
    spans = runs(flags, MIN_RUN)
    for a, b in spans:
        low = min(_finite(tp[a:b + 1]))
        sev: Severity = "problem" if low < 0.5 * base else "warning"
        f.add("throughput_drop", sev, a, b,
              f"{name} fell to {_num(low)} (usual {_num(base)}, -{1 - low / base:.0%}) from step {f.step(a)} to "
              f"{f.step(b)}: look at what else ran then (thermal or power throttling, data stalls, checkpoints)")
    fifth = max(MIN_RUN, (n - skip) // 5)
    if not spans and n - skip >= 4 * fifth:
        early, late = _median(tp[skip:skip + fifth]), _median(tp[n - fifth:])
        if early and late is not None and late < THROUGHPUT_DECLINE * early:
            f.add("throughput_drop", "warning", n - fifth, n - 1,
                  f"{name} declined from about {_num(early)} early in the run to {_num(late)} at the end "
                  f"(-{1 - late / early:.0%}): slow throttling, memory growth or a degrading input pipeline")
    return spans


def _overlaps(a: int, b: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= y and x <= b for x, y in spans)


def _utilisation(f: _Findings, util: list[float], label: str, tp_drops: list[tuple[int, int]],
                 temp: Optional[list[float]] = None, limit: float = GPU_HOT_C) -> None:
    base = _baseline(util)
    if base is None:
        return
    skip = _warmup(len(util))
    if base < UTIL_LOW:
        f.add("utilisation_dip", "warning", skip, len(util) - 1,
              f"{label} utilisation is only about {base:.0f} % through the run: the GPU waits for data; add "
              "DataLoader workers, prefetch or pre-tokenise, read from a faster disk, or raise the batch size")
        return
    threshold = base - UTIL_DIP_POINTS
    flags = [i >= skip and math.isfinite(v) and v < threshold for i, v in enumerate(util)]
    for a, b in runs(flags, 2):
        low = min(_finite(util[a:b + 1]))
        also = "; throughput fell at the same time" if _overlaps(a, b, tp_drops) else ""
        hot = temp is not None and any(math.isfinite(t) and t >= limit for t in temp[a:b + 1])
        cause = (f"the card was at its {limit:.0f} °C limit meanwhile, so this is throttling rather than the input "
                 "pipeline" if hot else "the GPU waited on the input pipeline (DataLoader workers, disk, "
                 "tokenisation) or on host work such as checkpointing")
        f.add("utilisation_dip", "warning", a, b,
              f"{label} utilisation dipped to {low:.0f} % (usual {base:.0f} %) from step {f.step(a)} to "
              f"{f.step(b)}{also}: {cause}")


def _thermal(f: _Findings, temp: list[float], label: str, limit: float, tp: Optional[list[float]],
             clock: Optional[list[float]]) -> None:
    flags = [math.isfinite(v) and v >= limit for v in temp]
    for a, b in runs(flags, 2):
        peak = max(_finite(temp[a:b + 1]))
        effects = []
        for series, what in ((tp, "throughput"), (clock, "clock")):
            if series is None:
                continue
            before = _median([v for v, hot in zip(series, flags) if not hot][_warmup(len(series)):])
            during = _median(series[a:b + 1])
            if before and during is not None and during < 0.9 * before:
                effects.append(f"{what} {1 - during / before:.0%} lower meanwhile")
        sev: Severity = "problem" if effects else "warning"
        detail = f" ({', '.join(effects)})" if effects else ""
        f.add("thermal_throttling", sev, a, b,
              f"{label} temperature reached {peak:.0f} °C, at or above the {limit:.0f} °C limit, from step "
              f"{f.step(a)} to {f.step(b)}{detail}: GPU Boost lowers clocks there (docs/doctor.md §4.1); clean the "
              "heatsink, raise the fan curve, improve case airflow or set a power limit")


def _imbalance(f: _Findings, per: dict[int, list[float]], what: str, unit: str, spread_min: float) -> None:
    gpus = sorted(per)
    if len(gpus) < 2:
        return
    n = len(per[gpus[0]])
    skip = _warmup(n)
    flags = []
    for i in range(n):
        vals = [per[g][i] for g in gpus if math.isfinite(per[g][i])]
        flags.append(i >= skip and len(vals) >= 2 and max(vals) - min(vals) >= spread_min)
    for a, b in runs(flags, MIN_RUN):
        means = {g: statistics.fmean(_finite(per[g][a:b + 1]) or [math.nan]) for g in gpus}
        lo, hi = min(means, key=means.__getitem__), max(means, key=means.__getitem__)
        if what == "utilisation" and means[lo] <= 0.5 * means[hi]:
            others = [g for g in gpus if g != hi]
            advice = (f"GPU{hi} works (about {means[hi]:.0f} %) while "
                      + ", ".join(f"GPU{g}" for g in others) + f" sit at about "
                      + "/".join(f"{means[g]:.0f}" for g in others) + " %: an input-pipeline bottleneck (data "
                      "loading or preprocessing on one rank, too few DataLoader workers), torch.nn.DataParallel "
                      "gathering on GPU0, or a run using only one of the GPUs")
        elif what == "utilisation":
            advice = (f"GPU{lo} lags (about {means[lo]:.0f} % vs {means[hi]:.0f} % on GPU{hi}): uneven data or "
                      "model split, a slower PCIe link, or one card throttling; data-parallel steps wait for the "
                      "slowest GPU")
        else:
            advice = (f"GPU{hi} runs hotter (about {means[hi]:.0f} {unit} vs {means[lo]:.0f} {unit} on GPU{lo}): "
                      "a card starved of air, e.g. sandwiched against its neighbour")
        f.add("gpu_imbalance", "warning", a, b, f"{what} differs between GPUs from step {f.step(a)} to "
              f"{f.step(b)}: {advice}")


def _grad_spikes(f: _Findings, grad: list[float]) -> None:
    n = len(grad)
    if len(_finite(grad)) < 10:
        return
    trailing = rolling_median(grad, 20, centred=False)
    flags = [False] + [
        trailing[i - 1] > 0 and math.isfinite(grad[i]) and grad[i] > GRAD_SPIKE * trailing[i - 1]
        for i in range(1, n)
    ]
    for a, b in runs(flags):
        peak = max(_finite(grad[a:b + 1]))
        f.add("grad_spike", "warning", a, b,
              f"gradient norm spiked to {_num(peak)} (over {GRAD_SPIKE:.0f}x its running median) at step "
              f"{f.step(a)}" + (f"-{f.step(b)}" if b > a else "") + ": exploding gradients; clip them or lower "
              "the learning rate")


def _stops(f: _Findings, s: MetricSeries, expected: Optional[int]) -> None:
    steps = list(s.steps)
    n = len(steps)
    incs = [steps[i] - steps[i - 1] for i in range(1, n)]
    positive = [d for d in incs if d > 0]
    usual = statistics.median(positive) if positive else 1.0
    for i, d in enumerate(incs, 1):
        if d < 0:  # the same step twice is a second logger call (Lightning writes val rows so), not a restart
            f.add("run_restarted", "warning", i - 1, i,
                  f"step went back from {f.step(i - 1)} to {f.step(i)}: the run was restarted (resumed from a "
                  f"checkpoint?) and about {int(steps[i - 1] - steps[i]) + int(usual)} steps were redone")
        elif d > 0 and d > STEP_GAP_FACTOR * usual and d > usual + 1:
            f.add("step_gap", "warning", i - 1, i,
                  f"no metrics between step {f.step(i - 1)} and {f.step(i)} (usual interval {usual:g}): logging "
                  "or training stalled, or rows were lost")
    times = list(s.epoch_s)
    dts = [times[i] - times[i - 1] for i in range(1, n) if math.isfinite(times[i]) and math.isfinite(times[i - 1])]
    usual_dt = statistics.median([d for d in dts if d > 0]) if any(d > 0 for d in dts) else None
    if usual_dt:
        for i in range(1, n):
            d = times[i] - times[i - 1]
            if math.isfinite(d) and d > max(TIME_GAP_FACTOR * usual_dt, TIME_GAP_MIN_S):
                f.add("logging_gap", "warning", i - 1, i,
                      f"no rows for {d / 60:.0f} min between step {f.step(i - 1)} and {f.step(i)} (usual interval "
                      f"{usual_dt:.0f} s): the run or the machine stalled; compare with `planner doctor events`")
    last_step = s.last_step if s.last_step is not None else steps[-1]
    if expected is not None and last_step < expected:
        when = ""
        if math.isfinite(times[-1]):
            last = s.times[-1].isoformat(timespec="seconds")
            when = f" (last row at {last}; check the event log around then with `planner doctor events`)"
        f.add("run_stopped", "problem", n - 1, n - 1,
              f"the run stopped at step {last_step:g} of {expected} ({last_step / expected:.0%}) without a "
              f"final step{when}")


def find_issues(
    s: MetricSeries, *, expected_steps: Optional[int] = None, temp_limit_c: float = GPU_HOT_C
) -> list[MetricFinding]:
    """All findings for a parsed series, sorted by step; a clean run yields none."""
    f = _Findings(list(s.steps))
    loss = s.column("loss")
    tp = s.column("throughput")
    bad: list[tuple[int, int]] = []
    if loss is not None:
        bad = _nan_loss(f, s) + _divergence(f, loss)
        _plateau(f, loss, bad)
    tp_drops = _throughput(f, tp, s.roles.get("throughput", "throughput")) if tp is not None else []
    util = s.column("util")
    per_util = {g: list(a) for g, a in s.per_gpu.get("util", {}).items()}
    per_temp = {g: list(a) for g, a in s.per_gpu.get("temp", {}).items()}
    if util is not None:
        _utilisation(f, util, "GPU", tp_drops, s.column("temp"), temp_limit_c)
    for g, series in sorted(per_util.items()):
        _utilisation(f, series, f"GPU{g}", tp_drops, per_temp.get(g), temp_limit_c)
    clock = s.column("clock")
    temps: list[tuple[str, list[float]]] = []
    if s.column("temp") is not None:
        temps.append(("GPU", s.column("temp") or []))
    temps += [(f"GPU{g}", list(a)) for g, a in sorted(s.per_gpu.get("temp", {}).items())]
    for label, series in temps:
        _thermal(f, series, label, temp_limit_c, tp, clock)
    _imbalance(f, per_util, "utilisation", "%", IMBALANCE_UTIL_POINTS)
    _imbalance(f, per_temp, "temperature", "°C", IMBALANCE_TEMP_C)
    grad = s.column("grad_norm")
    if grad is not None:
        _grad_spikes(f, grad)
    _stops(f, s, expected_steps or s.expected_steps)
    order: dict[str, int] = {"problem": 0, "warning": 1, "info": 2}
    return sorted(f.items, key=lambda x: (x.from_step, order[x.severity], x.kind))

