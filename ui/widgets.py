"""Sidebar widgets: budget, workload, owned parts and preferences; keys match ui.state.DEFAULTS."""

from __future__ import annotations

import streamlit as st

from planner.service import Catalog
from planner.vocab import TYPE_LABELS
from planner.service import CheckReport
from planner.settings import CHIP_MAKERS, MAX_ALTERNATIVES, MAX_GPUS, POWER_FRACTION_MAX, POWER_FRACTION_MIN
from ui.state import CURRENCIES, PART_LISTS, changed_settings, chosen_parts


def _part_label(cat: Catalog):
    def label(part_id: str) -> str:
        p = cat.parts.get(part_id)
        return part_id if p is None else f"{TYPE_LABELS.get(p.category, p.category)}: {p.name}"
    return label


def sidebar(cat: Catalog) -> None:
    """Draw the inputs; their values live in st.session_state under the in_* keys."""
    sb = st.sidebar
    sb.header("What you need")
    c1, c2 = sb.columns([3, 2])
    c1.text_input("Budget", key="in_budget", placeholder="7000, 7k, 7 000 €",
                  help="Total for the parts you buy (owned parts cost nothing). Write it as you like: 7000, 7k, "
                       "7 000 €, 7000 EUR, 7,5k. '7.000' is ambiguous and asked back.")
    c2.selectbox("Currency", CURRENCIES, key="in_currency")
    sb.radio("Goal", ["best", "cheapest"], key="in_mode", horizontal=True,
             format_func=lambda m: {"best": "fastest within budget", "cheapest": "cheapest meeting targets"}[m])
    sb.radio("After speed", ["expert", "minimum"], key="in_goal", horizontal=True,
             format_func=lambda g: {"expert": "spend on build quality", "minimum": "cheapest parts that pass"}[g],
             help="Expert: with the speed fixed, the budget left buys PSU class, board power delivery, cooling and "
                  "airflow for months of 24/7 training. Minimum: the cheapest parts that pass the rules.")

    sb.subheader("Workload")
    if st.session_state.get("profile_note"):
        sb.caption(st.session_state["profile_note"].replace("`", "'"))
    c1, c2 = sb.columns(2)
    c1.number_input("Hours per run on the GTX 1080 Ti", min_value=0.1, max_value=10_000.0, step=0.5, key="in_hours")
    c2.number_input("Runs in the sweep", min_value=1, max_value=10_000, step=1, key="in_runs")
    sb.number_input("Runs still to do (0 = all)", min_value=0, max_value=10_000, step=1, key="in_runs_left",
                    help="E.g. 6 when 2 of 8 runs already finished: the sweep time, finish time and deadline count these")
    c1, c2 = sb.columns(2)
    c1.selectbox("Precision", ["amp", "tf32", "fp32"], key="in_precision",
                 help="amp = mixed precision (fp16/bf16 with fp32 master weights)")
    c2.selectbox("Workload class", ["transformer", "cnn", "generic"], key="in_workload")
    sb.number_input("Model size (M parameters, 0 = not given)", min_value=0.0, max_value=1_000_000.0, step=1.0,
                    key="in_model_m",
                    help="Changes the speed estimate (a small model gains less from a big GPU) and sets a VRAM floor "
                         "from weights, gradients and AdamW states (activations not counted). 0 = the workload "
                         "class's typical size from the calibration data, which the Plan tab names.")

    sb.subheader("Parts")
    # Each list or menu costs the browser time to draw (three lists over the whole catalog: about 1 s on a first
    # visit here), so the less used inputs are drawn when opened; their values are kept while hidden
    # (ui.state.keep_inputs) and the switch says what is set.
    chosen = chosen_parts(st.session_state)
    summary = ", ".join(f"{n} {what}" for n, what in zip(chosen.values(), PART_LISTS.values()) if n)
    sb.toggle(f"Parts and makers ({summary or 'none chosen'})", key="in_parts_open",
              help="Parts you own, parts that must be used or left out, board and chip makers to leave out")
    if st.session_state.get("in_parts_open"):
        ids = sorted(cat.parts, key=lambda i: (cat.parts[i].category, cat.parts[i].name))
        label = _part_label(cat)
        sb.multiselect("Parts you already own (cost 0)", ids, key="in_owned", format_func=label)
        sb.multiselect("Parts that must be used", ids, key="in_pinned", format_func=label)
        sb.multiselect("Parts to leave out", ids, key="in_excluded", format_func=label)
        sb.multiselect("Board makers to leave out (the brand on the box)", sorted({p.brand for p in cat.parts.values()}),
                       key="in_brands", help="NVIDIA here leaves out only the cards NVIDIA sells itself (Founders Edition)")
        sb.multiselect("GPU chip makers to leave out", list(CHIP_MAKERS), key="in_chip_makers",
                       help="Leaves out every card with that maker's chip, whoever built the card (a PNY RTX 5090 is "
                            "NVIDIA)")

    changed = changed_settings(st.session_state)
    sb.toggle(f"Constraints and preferences ({len(changed)} changed)" if changed else
              "Constraints and preferences (defaults)", key="in_more_open",
              help="GPU count, VRAM floor, deadline, cooler, used parts, wall power cap, power limit, alternatives, "
                   "warnings you accept")
    if not st.session_state.get("in_more_open"):
        return
    c1, c2 = sb.columns(2)
    c1.number_input("Min VRAM per GPU, GB (0 = any)", min_value=0.0, max_value=1024.0, step=1.0, key="in_min_vram")
    c2.number_input("Sweep deadline, hours (0 = none)", min_value=0.0, max_value=100_000.0, step=1.0, key="in_deadline")
    c1, c2 = sb.columns(2)
    c1.selectbox("CPU cooler", ["any", "air", "aio"], key="in_cooler",
                 format_func=lambda v: {"any": "air or AIO", "air": "air only", "aio": "AIO only"}[v])
    c2.selectbox("Bought used", ["none", "gpu", "all"], key="in_used",
                 format_func=lambda v: {"gpu": "GPU may be used", "none": "all new", "all": "any part"}[v])
    c1, c2 = sb.columns(2)
    c1.selectbox("GPUs (identical)", list(range(MAX_GPUS + 1)), key="in_gpus",
                 format_func=lambda n: f"decide for me (1-{MAX_GPUS})" if n == 0 else str(n),
                 help="How many identical GPUs; by default the planner picks the count that finishes the sweep first")
    c2.number_input("Wall power cap, W (0 = none)", min_value=0, max_value=10_000, step=50, key="in_max_wall")
    sb.slider("GPU power limit, % of stock", min_value=round(POWER_FRACTION_MIN * 100),
              max_value=round(POWER_FRACTION_MAX * 100), step=5, key="in_power")
    sb.checkbox("Allow an 80/70 % GPU power limit to size the PSU", key="in_allow_limit",
                help="A limit set with nvidia-smi -pl resets at reboot; tick this only if you will make it persist "
                     "(the plan says how, on Linux and Windows). Unticked, the PSU is sized for stock board power.")
    sb.slider("Alternatives to show", min_value=0, max_value=MAX_ALTERNATIVES, key="in_alts")
    sb.multiselect("Warnings I accept", CheckReport.warning_rules(), key="in_accept",
                   format_func=CheckReport.rule_summary,
                   help="The solver avoids builds with these warnings; accept one to let it keep, say, an owned CPU "
                        "with fewer cores")
