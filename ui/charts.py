"""Altair charts for the web UI: rent-or-buy cost in sweeps, speed and sweep time by option, price history."""

from __future__ import annotations

from typing import Any, Optional, Sequence

import altair as alt
import pandas as pd

# Okabe-Ito: eight colours people with colour-vision deficiency can tell apart; the build is drawn in black.
PALETTE = ("#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442")


def colour_scale(names: Sequence[str]) -> alt.Scale:
    return alt.Scale(domain=list(names), range=list(PALETTE[: max(len(names), 1)]) if len(names) <= len(PALETTE)
                     else list(PALETTE) * (len(names) // len(PALETTE) + 1))


def default_sweeps_shown(break_even_sweeps: Sequence[Optional[float]], horizon_months: int) -> int:
    """x range of the cost chart, in sweeps over the horizon: one sweep a month, or past the nearest break-even
    when that comes sooner (so the crossing is visible), never fewer than 4."""
    near = [s for s in break_even_sweeps if s is not None and s > 0]
    span = horizon_months if not near else min(horizon_months, 1.25 * min(near))
    return max(4, int(round(span)))


def cost_lines(lines: Sequence[dict[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
               max_sweeps: float, points: int = 2) -> pd.DataFrame:
    """Rows (sweeps, option, kind, cost) for each line fixed + per_baseline_hour x work, work in sweeps."""
    rows = []
    for ln in lines:
        if ln["option"] not in names:
            continue
        for i in range(points):
            n = max_sweeps * i / (points - 1)
            cost = ln["fixed"] + ln["per_baseline_hour"] * n * sweep_gpu_hours
            rows.append({"sweeps": n, "option": ln["option"], "kind": ln["kind"], "cost": max(cost, 0.0)})
    return pd.DataFrame(rows, columns=["sweeps", "option", "kind", "cost"])


def rent_or_buy_chart(lines: Sequence[dict[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
                      max_sweeps: float, currency: str,
                      break_even_sweeps: Optional[dict[str, float]] = None) -> alt.LayerChart:
    """Cumulative cost against the number of sweeps like the user's over the horizon; y starts at 0."""
    frame = cost_lines(lines, names, sweep_gpu_hours, max_sweeps)
    order = list(dict.fromkeys(frame["option"]))
    x = alt.X("sweeps:Q", title="sweeps like yours over the horizon", scale=alt.Scale(domain=[0, max_sweeps], nice=False))
    y = alt.Y("cost:Q", title=f"cumulative cost, {currency}", scale=alt.Scale(domainMin=0, zero=True))
    color = alt.Color("option:N", title="option", scale=colour_scale(order),
                      legend=alt.Legend(orient="bottom", columns=1, labelLimit=480))
    layers = [alt.Chart(frame).mark_line(strokeWidth=2.5).encode(x=x, y=y, color=color,
                                                                 tooltip=["option", alt.Tooltip("cost:Q", format=",.2f")])]
    evens = [{"sweeps": s, "option": n, "cost": float(
        next(ln["per_baseline_hour"] for ln in lines if ln["option"] == n) * s * sweep_gpu_hours)}
        for n, s in (break_even_sweeps or {}).items() if n in names and s is not None and 0 < s <= max_sweeps]
    if evens:
        layers.append(alt.Chart(pd.DataFrame(evens)).mark_point(size=140, filled=True, shape="diamond").encode(
            x=x, y=y, color=color, tooltip=["option", alt.Tooltip("sweeps:Q", format=",.1f")]))
    one = pd.DataFrame({"sweeps": [1.0], "what": ["your sweep"]})
    layers.append(alt.Chart(one).mark_rule(strokeDash=[4, 4], color="gray").encode(x="sweeps:Q", tooltip=["what"]))
    return alt.layer(*layers).properties(height=380)


def speed_chart(rows: Sequence[dict[str, Any]]) -> alt.VConcatChart:
    """Two bar charts side by side per option: speed vs the 1080 Ti (with range) and hours to finish the sweep."""
    frame = pd.DataFrame(rows)
    names = list(frame["option"])
    y = alt.Y("option:N", sort=names, title=None, axis=alt.Axis(labelLimit=320))
    color = alt.Color("option:N", scale=colour_scale(names), legend=None)
    speed = alt.Chart(frame).mark_bar().encode(
        y=y, x=alt.X("speed:Q", title="speed vs your GTX 1080 Ti (x)", scale=alt.Scale(zero=True)), color=color,
        tooltip=["option", alt.Tooltip("speed:Q", format=".1f"), "speed_low", "speed_high"])
    speed_err = alt.Chart(frame).mark_rule(color="gray").encode(y=y, x="speed_low:Q", x2="speed_high:Q")
    hours = alt.Chart(frame).mark_bar().encode(
        y=y, x=alt.X("sweep_hours:Q", title="hours to finish your sweep", scale=alt.Scale(zero=True)), color=color,
        tooltip=["option", alt.Tooltip("sweep_hours:Q", format=".1f"), "finish"])
    hours_err = alt.Chart(frame).mark_rule(color="gray").encode(y=y, x="sweep_low:Q", x2="sweep_high:Q")
    height = 36 * len(names) + 20
    return alt.vconcat((speed + speed_err).properties(height=height), (hours + hours_err).properties(height=height))


def price_history_chart(frame: pd.DataFrame, currency: str) -> alt.Chart:
    """Price of one part over time, one line per retailer (frame: observed_on, retailer, price)."""
    return alt.Chart(frame).mark_line(point=True).encode(
        x=alt.X("observed_on:T", title="date seen"),
        y=alt.Y("price:Q", title=f"price, {currency}", scale=alt.Scale(zero=False)),
        color=alt.Color("retailer:N", scale=alt.Scale(range=list(PALETTE[1:]))),
        tooltip=["retailer", "observed_on:T", alt.Tooltip("price:Q", format=",.2f")]).properties(height=260)
