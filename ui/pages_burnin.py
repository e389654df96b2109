"""The Doctor tab's burn-in check: upload the burn-in's logs, see pass | fail | incomplete and the evidence."""

from __future__ import annotations

import hashlib
import io
from typing import Any, Optional

import pandas as pd
import streamlit as st

from planner.errors import PlannerError
from planner.textsafe import md_escape

STATUS_BADGE = {"pass": "🟢 pass", "warn": "🟡 warn", "fail": "🔴 fail", "incomplete": "⚪ incomplete",
                "not_checked": "🟠 not measured", "skipped": "— not given"}


def _named(data: bytes, name: str, *_key: str) -> io.BytesIO:
    """An upload (bytes, file name[, the Doctor tab's file key]) as a named stream for the readers."""
    stream = io.BytesIO(data)
    stream.name = name  # type: ignore[attr-defined]
    return stream


def check(smi: tuple[bytes, str], events: Optional[tuple[bytes, str]] = None,
          metrics: Optional[tuple[bytes, str]] = None) -> Any:
    """The burn-in verdict of uploaded logs (bytes, file name), through the service."""
    from planner.service import check_burnin

    return check_burnin(_named(*smi), events=[_named(*events)] if events else [],
                        metrics=_named(*metrics) if metrics else None)


def _digest(upload: Optional[tuple[bytes, str, str]]) -> str:
    return hashlib.sha256(upload[0]).hexdigest() if upload is not None else ""


def judged(smi: tuple[bytes, str, str], events: Optional[tuple[bytes, str, str]],
           metrics: Optional[tuple[bytes, str, str]]) -> Any:
    """The verdict for these three files, judged once per session and kept (keyed on the bytes' digests): a rerun
    for a keystroke anywhere on the tab reads no log again. A PlannerError is kept and shown again."""
    from ui.pages_doctor import cached

    key = (_digest(smi), _digest(events), _digest(metrics))
    return cached("burnin", key, lambda: check(smi[:2], events[:2] if events else None,
                                               metrics[:2] if metrics else None))


def checks_frame(report: Any) -> pd.DataFrame:
    return pd.DataFrame([{"Result": STATUS_BADGE.get(c.status, c.status), "Criterion": c.criterion,
                          "GPU": c.gpu or "", "When": c.time or "", "Evidence": c.message} for c in report.checks])


def show(report: Any) -> None:
    failed = [c for c in report.checks if c.status == "fail"]
    headline = md_escape(report.headline or report.verdict)
    if report.verdict == "pass":
        st.success(f"Burn-in verdict: **{headline}**: the machine held sustained load without a hardware event, "
                   "throttle or sag.")
    elif report.verdict == "fail":
        st.error(f"Burn-in verdict: **fail** ({len(failed)} criterion result(s) failed): "
                 + md_escape("; ".join(dict.fromkeys(c.criterion for c in failed))))
    elif report.verdict == "not_checked":
        st.warning(f"Burn-in verdict: **{headline}**. A criterion without data is not a pass: log the missing "
                   "columns and run the burn-in again.")
    else:
        st.warning(f"Burn-in verdict: **{headline}**: the logs are too short or broken to judge; rerun the burn-in "
                   "for at least an hour of load, unbroken.")
    st.dataframe(checks_frame(report), hide_index=True, width="stretch")
    for note in report.notes:
        st.caption(md_escape(note))


def pointer(view: dict[str, Any], cat: Any) -> None:
    """One line under a build on the Plan and Check tabs: how to burn it in (`planner burnin`) and where to judge it."""
    from planner.service import BurninPlan

    gpu = view["report"].build.get("gpu")
    if gpu is not None and gpu.chip in cat.chips:
        st.caption(BurninPlan.pointer(cat.chips[gpu.chip].name, int(view.get("gpus") or 1)))  # catalog names: our text


def render() -> None:
    """The burn-in section of the Doctor tab."""
    from ui.pages_doctor import kept_upload

    st.markdown("#### Burn-in check")
    st.caption("Prove a new machine before trusting it with a sweep: an hour of GPU stress, then your own training "
               "for a run (a night for a long sweep), logged with "
               "`nvidia-smi --query-gpu=timestamp,index,name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active,"
               "power.draw,power.limit,utilization.gpu --format=csv -l 5`. `planner burnin` prints the whole plan.")
    c1, c2, c3 = st.columns(3)
    with c1:
        smi = kept_upload("nvidia-smi CSV log of the burn-in", ["csv", "txt", "log"], "burnin_smi_file")
    with c2:
        events = kept_upload("Kernel log or Windows System log (optional)", ["log", "txt", "xml", "csv", "json"],
                             "burnin_events_file")
    with c3:
        metrics = kept_upload("Training metrics with tokens/s (optional)", ["csv", "jsonl", "json", "txt"],
                              "burnin_metrics_file")
    if smi is None:
        return
    report = judged(smi, events, metrics)
    if isinstance(report, PlannerError):
        st.error(md_escape(report))
        return
    show(report)
