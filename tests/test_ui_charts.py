"""Charts of the web UI as Vega-Lite specs: the user's range on x, y from 0, colours people can tell apart."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ui.charts import PALETTE, cost_lines, default_sweeps_shown, rent_or_buy_chart, speed_chart  # noqa: E402

LINES = [{"option": "build", "kind": "buy", "fixed": 3000.0, "per_baseline_hour": 0.002},
         {"option": "4090 x1", "kind": "rent", "fixed": 0.0, "per_baseline_hour": 0.046},
         {"option": "A100 x1", "kind": "rent", "fixed": 0.0, "per_baseline_hour": 0.083},
         {"option": "odd", "kind": "buy", "fixed": -50.0, "per_baseline_hour": 0.0}]


def _layers(spec: dict) -> list[dict]:
    return spec.get("layer", [spec])


def test_x_runs_over_the_users_sweeps_and_y_starts_at_zero() -> None:
    spec = rent_or_buy_chart(LINES, ["build", "4090 x1", "A100 x1", "odd"], 56.0, 24, "EUR",
                             {"4090 x1": 1900.0, "A100 x1": 900.0}).to_dict()
    line = _layers(spec)[0]["encoding"]
    assert line["x"]["scale"]["domain"] == [0, 24]
    assert line["y"]["scale"]["domainMin"] == 0
    assert cost_lines(LINES, ["odd"], 56.0, 24)["cost"].min() >= 0  # a negative net never dips below 0
    colours = line["color"]["scale"]["range"]
    assert len(set(colours)) == len(colours) == 4 and colours[0] == PALETTE[0]


def test_break_even_beyond_the_range_is_not_drawn_and_the_range_follows_a_near_one() -> None:
    spec = rent_or_buy_chart(LINES, ["build", "4090 x1"], 56.0, 24, "EUR", {"4090 x1": 1900.0}).to_dict()
    assert not any(l.get("mark", {}).get("shape") == "diamond" for l in _layers(spec))
    assert default_sweeps_shown([1900.0], 24) == 24  # one sweep a month when buying is far off
    assert default_sweeps_shown([8.0], 24) == 10  # the crossing comes sooner: show it
    assert default_sweeps_shown([None], 24) == 24


def test_cost_lines_are_fixed_plus_rate_times_work() -> None:
    frame = cost_lines(LINES, ["build"], 56.0, 10)
    assert frame["cost"].tolist() == [3000.0, 3000.0 + 0.002 * 10 * 56.0]


def test_speed_chart_has_one_bar_per_option_with_ranges() -> None:
    rows = [{"option": "your GTX 1080 Ti (today)", "baseline": True, "speed": 1.0, "speed_low": 1.0,
             "speed_high": 1.0, "sweep_hours": 56.0, "sweep_low": 56.0, "sweep_high": 56.0, "finish": "x"},
            {"option": "RTX 5090", "baseline": False, "speed": 10.9, "speed_low": 7.6, "speed_high": 14.0,
             "sweep_hours": 5.2, "sweep_low": 4.0, "sweep_high": 7.4, "finish": "Tue 03:10"},
            {"option": "RTX 4090", "baseline": False, "speed": 7.0, "speed_low": 5.0, "speed_high": 9.0,
             "sweep_hours": 8.0, "sweep_low": 6.2, "sweep_high": 11.2, "finish": "Tue 06:00"}]
    speed, hours = speed_chart(rows)
    assert [r["option"] for r in speed["data"]["values"]] == [r["option"] for r in rows]
    assert [r["option"] for r in hours["data"]["values"]] == ["RTX 5090", "RTX 4090"]  # the 56 h bar would squash
    assert speed["layer"][0]["encoding"]["x"]["title"] == "speed vs your GTX 1080 Ti (x)"
    assert hours["layer"][1]["encoding"]["x"]["field"] == "sweep_low"  # the range is drawn
    colours = speed["layer"][0]["encoding"]["color"]["scale"]["range"]
    assert len(set(colours)) == 3 and hours["layer"][0]["encoding"]["color"]["scale"]["range"] == colours[1:]
