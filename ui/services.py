"""Cached calls into planner for the web UI: catalog, solves, cost comparisons, guarded rendering."""

from __future__ import annotations

import os
import sys
import traceback
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional

import streamlit as st

from planner.service import Catalog
from planner.errors import PlannerError
from planner.request import Request
from planner.settings import SOLVER_TIME_LIMIT_S
from planner.textsafe import md_escape
from planner.textsafe import one_line as textsafe_one_line


def catalog_key() -> str:
    """Changes whenever a catalog file, the price history or your measurements change (invalidates the caches)."""
    from planner.service import catalog_key as key

    return key()


@st.cache_resource(show_spinner=False, max_entries=2)
def _catalog(key: str) -> Catalog:
    from planner.service import priced_catalog

    return priced_catalog(key)


def catalog() -> Catalog:
    return _catalog(catalog_key())


@st.cache_resource(show_spinner=False, max_entries=64)
def solve(req_json: str, key: str) -> Any:
    """The service pipeline's plan for one Request (the same call the CLI makes), kept as objects; keyed on the
    request JSON and the catalog's files."""
    from planner.service import plan

    return plan(_catalog(key), Request.model_validate_json(req_json), time_limit=SOLVER_TIME_LIMIT_S)


@st.cache_resource(show_spinner=False, max_entries=64)
def describe(req_json: str, key: str) -> Any:
    """The typed Answer the page shows (the service pipeline's describe, the same the CLI prints), kept as objects
    like `solve`: the plan's sweeps, the model assumed, the catalog's gaps, owned parts left out."""
    from planner.service import describe as describe_plan

    return describe_plan(_catalog(key), solve(req_json, key), time_limit=SOLVER_TIME_LIMIT_S)


def speed_of(chip_id: str, workload: str, precision: str, power_fraction: float,
             model_params: Optional[float] = None) -> Any:
    """Speedup vs the GTX 1080 Ti (value/low/high/basis) from the speed model."""
    from planner.service import speed_model

    cat = catalog()
    return speed_model().gpu_speed(cat.chips[chip_id], cat.chips, workload, precision, power_fraction, model_params)


def speed_limit_sentence(chip_id: str, workload: str, precision: str, model_params: Optional[float] = None) -> str:
    """What limits the user's model on this card (the speed model's step split), one sentence; '' if unknown."""
    from planner.service import speed_model

    try:
        return speed_model().model.limit_of(chip_id, precision=precision, workload=workload,
                                          model_params=model_params).sentence()
    except PlannerError:  # an unknown chip or size: the caption simply says nothing more
        return ""


@st.cache_data(show_spinner=False, max_entries=64)
def compare_costs(build_key: str, req_json: str, key: str, _report: Any) -> dict[str, Any]:
    """Buy the checked build (`_report`, a CheckReport, not hashed: `build_key` identifies it) vs rent each cloud
    GPU, through the service pipeline: options, break-even and the cumulative-cost chart rows."""
    from planner.fx import load_rates
    from planner.service import compare

    req = Request.model_validate_json(req_json)
    rates = load_rates()
    comp = compare(_catalog(key), req, _report, rates=rates)
    return {"options": [o.to_json() for o in comp.options], "break_even": [b.to_json() for b in comp.break_even],
            "skipped": comp.skipped, "lines": comp.lines(),
            "notes": list(rates.warnings), "rates_date": rates.date.isoformat(),
            "kwh": {"price": str(comp.params.kwh_price), "source": comp.params.KWH_PRICE_SOURCE},
            "horizon_months": comp.params.horizon_months, "baseline_gpu_hours": comp.workload.baseline_gpu_hours}


def one_line(exc: BaseException) -> str:
    """An error as one short line (planner.textsafe.one_line, cut at 400 characters; its type when it has no text)."""
    text = textsafe_one_line(exc)
    return text[:400] if text else type(exc).__name__


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show a one-line st.error instead of a traceback; unexpected errors are logged to stderr too."""
    try:
        yield
    except PlannerError as exc:
        st.error(f"{what}: {md_escape(one_line(exc))}")
    except Exception as exc:  # noqa: BLE001 - never a traceback in the page
        traceback.print_exc(file=sys.stderr)
        st.error(f"{what} failed unexpectedly ({type(exc).__name__}: {md_escape(one_line(exc))}). "
                 "Please report it with the link of this page.")


def run_guarded(what: str, fn: Callable[[], Any]) -> Any:
    with guard(what):
        return fn()
    return None


def app_url() -> str:
    """Public base address for permalinks: $PLANNER_PUBLIC_URL (or $PLANNER_BASE_URL), else this page's address
    when others can open it (not localhost); '' when there is none, never a localhost default."""
    from planner.settings import is_local_address, public_url

    try:
        env = public_url()
    except PlannerError:
        env = None
    if env:
        return env
    try:
        url = st.context.url  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - older Streamlit or no browser (AppTest)
        url = None
    url = (url or "").split("?")[0]
    return "" if is_local_address(url) else url


def my_measurements() -> tuple[Any, ...]:
    """The user's own measured speeds (planner calibrate), which a shared link carries."""
    from planner.service import measurements

    return measurements().to_share()


def _use_link_measurements() -> None:
    from planner.service import measurements

    ss = st.session_state
    try:
        found = ss.pop("_link_measurements", None)  # the link's SharedState
        n = measurements().adopt(found.measurements if found else ())
    except PlannerError as exc:
        ss["_link_measure_msg"] = ("error", one_line(exc))
        return
    ss["_link_measure_msg"] = ("ok", f"Added {n} measured speed(s) to your calibration: those cards now read "
                                     "'measured', as they do for the sender.")


def offer_link_measurements() -> None:
    """A link that carries the sender's measured speeds: say so and let the user plan with them."""
    ss = st.session_state
    msg = ss.pop("_link_measure_msg", None)
    if msg:
        (st.success if msg[0] == "ok" else st.error)(md_escape(msg[1]))
    found = ss.get("_link_measurements")  # the link's SharedState, with the measured speeds not yet yours
    if not found:
        return
    st.info(md_escape(found.measurements_sentence + ". Your speeds stay modelled unless you use them."))
    c1, c2 = st.columns(2)
    c1.button("Use the sender's measured speeds", key="link_measure_use", on_click=_use_link_measurements)
    c2.button("Keep my own speeds", key="link_measure_skip", on_click=lambda: ss.pop("_link_measurements", None))
