"""Your measurements on the Plan tab: upload a training log, name its card, store it (and fill the profile from what
the log states); list and clear what is stored."""

from __future__ import annotations

from typing import Any, Optional

import streamlit as st

from planner.errors import InputError, PlannerError
from planner.textsafe import md_escape, one_line


MAX_UPLOAD_MB = 200  # Streamlit's own upload limit; the reader's cap (256 MB) is above it


def _model() -> Any:
    from planner.service import speed_model

    return speed_model().model


def basis_text(gpu: str, precision: str, workload: str, power_fraction: float,
               model_params: Optional[float]) -> Optional[str]:
    """'measured on your logs' / 're-anchored on your RTX 4090 measurement' / None (modelled) for a card."""
    try:
        a = _model().anchored(gpu, workload=workload, precision=precision, power_fraction=power_fraction,
                              model_params=model_params)
    except PlannerError:
        return None
    if a.basis == "measured":
        return "measured: " + a.note.removeprefix("measured: ")
    if a.basis == "re-anchored":
        return f"re-anchored on your {a.anchor} measurement ({a.note.removeprefix('re-anchored: ')})"
    return None


def _store_upload(upload: Any, gpu: str, precision: str, tokens_per_step: Optional[float],
                  seq_len: Optional[float], save_profile: bool = False) -> str:
    """Read the uploaded log, store the card's measurement; with `save_profile`, fill the profile's unset fields
    with what the log states (as `planner calibrate --save-profile`). The text the page shows."""
    from planner.service import measurements, profile_store
    from planner.service import read_training_log

    data = upload.getvalue()
    if len(data) > MAX_UPLOAD_MB * 2**20:
        raise InputError(f"{upload.name}: over {MAX_UPLOAD_MB} MB; cut the log to the steady part of the run")
    chip = _model().resolve(gpu)
    prec = precision if precision != "auto" else ("amp" if chip.has_tensor_cores else "fp32")
    reading = read_training_log(data, tokens_per_step=tokens_per_step, seq_len=seq_len)
    m = measurements().calibrate(reading, chip, prec, upload.name).measurement
    warn = "".join(f" Warning: {w}" for w in reading.warnings)
    said, _ = profile_store().from_log(reading.stated, upload.name, save_profile,
                               {"tokens_per_step": tokens_per_step, "seq_len": seq_len},
                               how_to_save="ticking \"Fill my profile\"")
    profile = "".join(f" {t[0].upper()}{t[1:]}." for t in (x.strip() for x in said.splitlines()) if t)
    return f"Stored {m.label()} (read {reading.how}, {reading.format}).{warn}{profile}"


def render() -> None:
    """The expander: upload and store, then the stored measurements with a clear button."""
    from planner.service import measurements

    with st.expander("Your measurements: calibrate from a training log", expanded=False):
        st.caption("A log of your own training run on a card (nanoGPT, Megatron-LM, MLX, Hugging Face Trainer "
                   "stdout or trainer_state.json, Lightning / W&B / TensorBoard CSV, JSONL) replaces the model's "
                   "speed for that card; measure the GTX 1080 Ti too, so the others are compared with it.")
        names = sorted({c.name for c in _model().chips.values()})
        with st.form("calibrate_form", clear_on_submit=False):
            upload = st.file_uploader("Training log", key="cal_log")
            gpu = st.selectbox("Card the log was recorded on", names, key="cal_gpu",
                               index=names.index("GeForce GTX 1080 Ti") if "GeForce GTX 1080 Ti" in names else 0)
            c1, c2, c3 = st.columns(3)
            precision = c1.selectbox("Precision", ["auto", "amp", "tf32", "fp32"], key="cal_precision")
            tps = c2.number_input("Tokens per step (optional)", min_value=0.0, value=0.0, step=1024.0,
                                  key="cal_tokens_per_step", help="batch x sequence length: turns steps/s into tokens/s")
            seq = c3.number_input("Tokens per sample (optional)", min_value=0.0, value=0.0, step=128.0,
                                  key="cal_seq_len", help="sequence length: turns samples/s into tokens/s")
            fill = st.checkbox("Fill my profile from the log", key="cal_save_profile",
                               help="The model size, sequence length, batch, tokens per step or peak memory the log "
                                    "states fill the fields your workload profile leaves unset (stored ones are kept)")
            submitted = st.form_submit_button("Store measurement")
        if submitted:
            if upload is None:
                st.error("Choose a training log first.")
            else:
                try:
                    st.success(md_escape(_store_upload(upload, gpu, precision, tps or None, seq or None, fill)))
                except PlannerError as exc:
                    st.error(md_escape(one_line(exc)))
        try:
            store, _ = measurements().mine()
        except PlannerError as exc:
            st.error(md_escape(one_line(exc)))
            store = None
        if store is not None and store.measurements:
            st.markdown("\n".join(f"- {md_escape(m.label())}" for m in store.measurements))
            if st.button("Clear all measurements", key="cal_clear"):
                n, _, _ = measurements().forget()
                st.success(f"Removed {n} measurement(s).")
                st.rerun()
        elif store is not None:
            st.caption("No measurement stored yet.")
