"""Streamlit web UI: a thin shell over planner — inputs in the sidebar, one tab per question, permalinks."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import streamlit as st

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `ui` helpers sit beside this file

from planner.errors import PlannerError  # noqa: E402
from planner.service import SharedState  # noqa: E402
from ui import pages_check, pages_cloud, pages_doctor, pages_plan, pages_prices, pages_share, services  # noqa: E402
from ui.state import apply_inputs, ensure_defaults, inputs_from_state, keep_inputs, same_inputs  # noqa: E402
from ui.widgets import sidebar  # noqa: E402

st.set_page_config(page_title="planner: an ML training workstation", page_icon="🛠️", layout="wide")
ss = st.session_state
ensure_defaults(ss)
keep_inputs(ss)

st.title("planner")
st.caption("The best compatible ML-training workstation for your budget: prices with date and source, "
           "PSU sized for transients, speed vs your GTX 1080 Ti, rent or buy, and a link to share it.")

cat = services.run_guarded("Loading the catalog", services.catalog)
if cat is None:
    st.stop()


def restore_from_link() -> None:
    """Opening `?b=<token>` restores those inputs and that exact build (once per token)."""
    token = st.query_params.get("b")
    if not token or token == ss.get("_token"):
        return
    ss["_token"] = token
    try:
        state = SharedState.from_token(token, cat)
        apply_inputs(ss, state.inputs, cat)
        mine = {(m.gpu_id, m.precision, m.median) for m in services.my_measurements()}
        new = tuple(m for m in state.measurements if (m.gpu_id, m.precision, m.median) not in mine)
        ss["_link_measurements"] = replace(state, measurements=new) if new else None
    except PlannerError as exc:  # every way a token can be wrong is bad input: one line, no traceback
        ss["_link_error"] = f"This link could not be opened: {services.one_line(exc)}"
        return
    ss["shared"] = {"origin": "link", "parts": list(state.parts), "inputs": inputs_from_state(ss)} if state.parts else None


restore_from_link()
if ss.get("_link_error"):
    st.error(services.md_escape(ss.pop("_link_error")))  # the token's text must not render as Markdown
services.offer_link_measurements()

# The widgets' values live in session state (defaults, a link, or the user's last edit), so the inputs are read
# before the sidebar is drawn; the sidebar is drawn last so that the answer reaches the screen first.
inputs = services.run_guarded("Reading the inputs", lambda: inputs_from_state(ss))
if inputs is None:  # a bad value: the message above, no stale plan, and the inputs to fix it
    with services.guard("Drawing the inputs"):
        sidebar(cat)
    st.stop()
shared = ss.get("shared")
if shared and not same_inputs(shared["inputs"], inputs):
    ss["shared"] = shared = None  # an input changed: plan again from scratch

# Switching tabs reruns the page, and only the open tab is drawn: the browser then renders one tab's elements,
# not six (a new visit renders about half as much before the answer shows). The Plan is always worked out,
# because the other tabs use it.
view = None
tabs = st.tabs(["Plan", "Cloud vs buy", "Check my build", "Prices", "Share", "Doctor"], key="tab", on_change="rerun")
with tabs[0]:
    with services.guard("Planning"):
        view = (pages_plan.render(cat, inputs, shared) if tabs[0].open
                else pages_plan.view_of(cat, inputs, shared))
LATER = ((tabs[1], "Cloud vs buy", lambda: pages_cloud.render(view, inputs)),
         (tabs[2], "Checking the build", lambda: pages_check.render(cat, inputs)),
         (tabs[3], "Price history", lambda: pages_prices.render(cat, view)),
         (tabs[4], "Sharing", lambda: pages_share.render(cat, inputs, view)),
         (tabs[5], "Doctor", pages_doctor.render))
for tab, what, draw in LATER:
    if tab.open:
        with tab, services.guard(what):
            draw()
ss["_last_tab"] = ss.get("tab") or "Plan"  # lets a tab tell a return visit from a change made on it

with services.guard("Drawing the inputs"):
    sidebar(cat)

# The address bar always holds the permalink of what is on screen.
with services.guard("Making the permalink"):
    mine = services.my_measurements()  # the link carries your measured speeds, as the CLI's does
    token = replace(view["build"], measurements=mine).token() if view else SharedState(inputs, (), mine).token()
    if st.query_params.get("b") != token:
        st.query_params["b"] = token
    ss["_token"] = token
