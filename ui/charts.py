"""Charts for the web UI: rent-or-buy cost in sweeps (Altair), speed and sweep time by option (plain Vega-Lite)."""

from __future__ import annotations

from typing import Any, Optional, Sequence

from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:  # altair is imported where a chart is drawn: it costs ~0.4-1 s at the page's first run
    import altair as alt

# Okabe-Ito: eight colours people with colour-vision deficiency can tell apart; the build is drawn in black.
PALETTE = ("#000000", "#E69F00", "#0072B2", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442")


def colour_scale(names: Sequence[str]) -> "alt.Scale":
    import altair as alt

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
    """Rows (sweeps, option, kind, cost) of the cost model's one curve (planner.costs.compare.cost_curve)."""
    from planner.service import Comparison

    return Comparison.cost_curve(lines, names, sweep_gpu_hours, max_sweeps, points)


def rent_or_buy_chart(lines: Sequence[dict[str, Any]], names: Sequence[str], sweep_gpu_hours: float,
                      max_sweeps: float, currency: str,
                      break_even_sweeps: Optional[dict[str, float]] = None) -> alt.LayerChart:
    """Cumulative cost against the number of sweeps like the user's over the horizon; y starts at 0."""
    import altair as alt

    from planner.service import Comparison

    frame = cost_lines(lines, names, sweep_gpu_hours, max_sweeps)
    order = list(dict.fromkeys(frame["option"]))
    x = alt.X("sweeps:Q", title="sweeps like yours over the horizon", scale=alt.Scale(domain=[0, max_sweeps], nice=False))
    y = alt.Y("cost:Q", title=f"cumulative cost, {currency}", scale=alt.Scale(domainMin=0, zero=True))
    color = alt.Color("option:N", title="option", scale=colour_scale(order),
                      legend=alt.Legend(orient="bottom", columns=1, labelLimit=480))
    layers = [alt.Chart(frame).mark_line(strokeWidth=2.5).encode(x=x, y=y, color=color,
                                                                 tooltip=["option", alt.Tooltip("cost:Q", format=",.2f")])]
    evens = Comparison.break_even_marks(lines, names, sweep_gpu_hours, max_sweeps, break_even_sweeps or {})
    if len(evens):
        layers.append(alt.Chart(evens).mark_point(size=140, filled=True, shape="diamond").encode(
            x=x, y=y, color=color, tooltip=["option", alt.Tooltip("sweeps:Q", format=",.1f")]))
    one = pd.DataFrame({"sweeps": [1.0], "what": ["your sweep"]})
    layers.append(alt.Chart(one).mark_rule(strokeDash=[4, 4], color="gray").encode(x="sweeps:Q", tooltip=["what"]))
    return alt.layer(*layers).properties(height=380)


def _bars(rows: Sequence[dict[str, Any]], value: str, low: str, high: str, title: str,
          colours: dict[str, str]) -> dict[str, Any]:
    """A horizontal bar per option with a grey range rule, as a plain Vega-Lite spec (no Altair: cheap to build)."""
    names = [r["option"] for r in rows]
    y = {"field": "option", "type": "nominal", "sort": names, "title": None, "axis": {"labelLimit": 320}}
    return {
        "data": {"values": [dict(r) for r in rows]},
        "height": {"step": 30},  # one band per option, labels never thinned out
        "layer": [
            {"mark": {"type": "bar"}, "encoding": {
                "y": y, "x": {"field": value, "type": "quantitative", "title": title, "scale": {"zero": True}},
                "color": {"field": "option", "type": "nominal", "legend": None,
                          "scale": {"domain": names, "range": [colours[n] for n in names]}},
                "tooltip": [{"field": "option"}, {"field": value, "format": ".1f"}, {"field": low, "format": ".1f"},
                            {"field": high, "format": ".1f"}]}},
            {"mark": {"type": "rule", "color": "#555555"}, "encoding": {
                "y": y, "x": {"field": low, "type": "quantitative"}, "x2": {"field": high}}},
        ],
    }


def speed_chart(rows: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Two bar charts per option: speed vs the 1080 Ti (the user's card included as 1.0x) and hours to finish
    the sweep (the user's card left out: its hours would squash the others; the caption gives them)."""
    colours = {r["option"]: PALETTE[i % len(PALETTE)] for i, r in enumerate(rows)}
    speed = _bars(rows, "speed", "speed_low", "speed_high", "speed vs your GTX 1080 Ti (x)", colours)
    new = [r for r in rows if not r.get("baseline")] or list(rows)
    hours = _bars(new, "sweep_hours", "sweep_low", "sweep_high", "hours to finish your sweep", colours)
    return speed, hours
