"""The Plan tab: builds too close to call side by side with what would decide, try-before-you-buy rentals, and a
calibration reaching the page's speeds."""

from __future__ import annotations

import json

from planner.perf import calibration as cal
from planner.perf.calibration_log import LogReading
from planner.perf.model import load_perf_model

from helpers_app import _isolated, run  # noqa: F401  (_isolated: autouse fixture)


def texts(at) -> str:
    tab = at.tabs[0]
    return "\n".join([m.value for m in tab.markdown] + [c.value for c in tab.caption] + [s.value for s in tab.subheader])


def small_model(at):
    at.number_input(key="in_model_m").set_value(15.0)
    return run(at)


def test_side_by_side_and_try_before_you_buy_on_the_plan_tab() -> None:
    at = small_model(run())
    page = texts(at)
    assert "Too close to call: sweep ranges overlap" in page or "Side by side" in page
    assert "What would decide:" in page and "VRAM headroom" in page
    assert "Try before you buy" in page and "planner calibrate LOG" in page and "30 minutes" in page


def test_a_stored_measurement_changes_the_speed_on_the_page(tmp_path) -> None:
    at = small_model(run())
    speed = next(m for m in at.metric if m.label.startswith("Speed vs a GTX 1080 Ti")).value
    m = load_perf_model()
    store = cal.Store()
    for chip, rate in (("gtx-1080-ti", 21000.0), ("rtx-5080", 21000.0 * 2.0), ("rtx-5090", 21000.0 * 2.5)):
        reading = LogReading("tokens/sec", "tokens/s", 50, 5, rate, rate * 0.99, rate * 1.01, "column 'tokens/sec'")
        prec = "fp32" if chip == "gtx-1080-ti" else "amp"
        store = cal.add_measurement(store, cal.measurement_from(reading, m.chips[chip], prec, f"{chip}.csv"))
    cal.save_store(store)
    at = run(at)
    after = next(mm for mm in at.metric if mm.label.startswith("Speed vs a GTX 1080 Ti")).value
    assert after != speed
    assert json.loads(cal.store_path().read_text())["measurements"]
