"""Check my build tab: pick any part per category and read PCPartPicker-style verdicts with numbers."""

from __future__ import annotations

import streamlit as st

from planner.service import Catalog
from planner.request import Request
from planner.settings import MAX_GPUS
from planner.vocab import TYPE_LABELS
from ui.pages_plan import render_view, view_from_parts
from ui.state import inputs_from_state

NONE = ""


def picked(cat: Catalog) -> list[tuple[str, int]]:
    ss = st.session_state
    gpus = int(ss.get("chk_gpus", 1))
    out = []
    for category in TYPE_LABELS:
        pid = ss.get(f"chk_{category}", NONE)
        if pid and pid in cat.parts:
            out.append((pid, gpus if category == "gpu" else 1))
    return out


def _open_in_plan(cat: Catalog) -> None:
    ss = st.session_state
    parts = picked(cat)
    if parts:
        ss["in_gpus"] = int(ss.get("chk_gpus", 1))
        ss["shared"] = {"origin": "check", "parts": parts, "inputs": inputs_from_state(ss)}
        ss["tab"] = "Plan"  # the button says where the build goes: show it there


def render(cat: Catalog, inputs: Request) -> None:
    st.subheader("Check my build")
    st.caption("Pick parts freely; every rule runs on them and says why, with the numbers.")
    cols = st.columns(4)
    for i, category in enumerate(TYPE_LABELS):
        parts = sorted(cat.by_category(category), key=lambda p: p.name)
        options = [NONE] + [p.id for p in parts]
        cols[i % 4].selectbox(TYPE_LABELS[category], options, key=f"chk_{category}",
                              format_func=lambda pid: "(none)" if pid == NONE else cat.parts[pid].name)
    st.number_input("Identical GPUs", min_value=1, max_value=MAX_GPUS, step=1, key="chk_gpus")
    parts = picked(cat)
    if not parts:
        st.info("Pick at least one part above.")
        return
    view = view_from_parts(cat, parts, inputs.model_copy(update={"gpu_count": int(st.session_state.get("chk_gpus", 1))}),
                           "check")
    render_view(view, inputs, cat)
    st.button("Show this build in the Plan tab (and in the link)", key="chk_open", on_click=_open_in_plan, args=(cat,))
