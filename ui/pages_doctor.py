"""Doctor tab: upload (or paste) a Windows System log or a training-metrics file; read timeline, causes, runbook."""

from __future__ import annotations

import io
from typing import Any, Optional, Union

import pandas as pd
import streamlit as st

from planner.errors import PlannerError

COST_BADGE = {"free": "🟢 free", "low": "🟡 low", "medium": "🟠 medium", "high": "🔴 high"}
LIKELIHOOD_BADGE = {"high": "🔴 high", "medium": "🟠 medium", "low": "⚪ low"}
Upload = Union[bytes, io.BytesIO]


def diagnose_events(data: Upload, name: str, gpu_tgp_w: int = 0, cpu_power_w: int = 0, psu_w: int = 0) -> Any:
    """UI helper over planner.doctor.diagnose_events (0 = unknown); the tests call it directly too."""
    from planner.doctor.diagnose import diagnose_events as run

    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    stream.name = name  # type: ignore[union-attr]
    return run(stream, gpu_tgp_w=[gpu_tgp_w] if gpu_tgp_w else None, cpu_power_w=cpu_power_w or None,
               psu_w=psu_w or None)


def diagnose_metrics(data: Upload, name: str, expected_steps: int = 0) -> Any:
    from planner.doctor.diagnose import diagnose_metrics as run

    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    stream.name = name  # type: ignore[union-attr]
    return run(stream, expected_steps=expected_steps or None)


def timeline_frame(report: Any) -> pd.DataFrame:
    rows = []
    for n, inc in enumerate(report.incidents, start=1):
        for ev in inc.events:
            rows.append({"Incident": n, "Time": ev.time.isoformat(sep=" ", timespec="seconds"), "Source": ev.source,
                         "Event": ev.id, "While": ev.load, "What it means": ev.summary})
    return pd.DataFrame(rows)


def show_events(report: Any) -> None:
    st.markdown(f"Read **{report.total_events}** {'event' if report.total_events == 1 else 'events'} ({report.format}, {report.encoding}); "
                f"**{len(report.incidents)}** incident(s) on the timeline.")
    if report.incidents:
        st.markdown("**Timeline**")
        st.dataframe(timeline_frame(report), hide_index=True)
    st.markdown("**Most likely causes**")
    if not report.hypotheses:
        st.info("No event in the log points at a hardware or driver cause.")
    for h in report.hypotheses:
        with st.expander(f"{LIKELIHOOD_BADGE.get(h.likelihood, h.likelihood)} · {h.name}", expanded=h.likelihood == "high"):
            st.markdown("Evidence:\n" + "\n".join(f"- {e}" for e in h.evidence))
            st.markdown("Tests, cheapest first:\n" + "\n".join(f"1. {COST_BADGE.get(t.cost, t.cost)}: {t.step}" for t in h.tests))
    if report.runbook:
        st.markdown("**Runbook** (ordered by the cost of the test)")
        st.markdown("\n".join(f"{i}. {COST_BADGE.get(t.cost, t.cost)}: {t.step}" for i, t in enumerate(report.runbook, 1)))
    if report.psu:
        st.info(f"For these GPUs the planner's rules would pick a {report.psu.get('recommended_w')} W ATX 3.1 PSU "
                f"(sustained {report.psu.get('sustained_w')} W; see the PSU breakdown on the Plan tab).")
    if report.ignored:
        st.caption("Ignored as unrelated noise: " + ", ".join(f"{k} x{v}" for k, v in report.ignored.items()))
    for n in report.notes:
        st.caption(n)


def show_metrics(report: Any) -> None:
    st.markdown(f"Read **{report.rows}** {'row' if report.rows == 1 else 'rows'} ({report.format}), steps {report.first_step} to {report.last_step}; "
                f"columns used: {', '.join(f'{k}={v}' for k, v in report.columns.items()) or 'none'}.")
    if not report.findings:
        st.success("No weak signal found: loss, throughput, utilisation and temperatures look steady.")
    else:
        st.dataframe(pd.DataFrame([{"Severity": f.severity, "Finding": f.kind, "Steps": f"{f.from_step}-{f.to_step}",
                                    "What it means": f.message} for f in report.findings]), hide_index=True)
    for n in report.notes:
        st.caption(n)


def _run(kind: str, data: Optional[Upload], name: str, **options: int) -> None:
    if data is None:
        return
    try:
        report = diagnose_events(data, name, **options) if kind == "events" else diagnose_metrics(data, name, **options)
    except PlannerError as exc:
        st.error(" ".join(str(exc).split()))
        return
    (show_events if kind == "events" else show_metrics)(report)


def render() -> None:
    st.subheader("Doctor: why does the machine die?")
    st.caption("Windows System log exported as CSV (Event Viewer), XML (`wevtutil qe System /f:xml`) or text "
               "(`Get-WinEvent | Format-List`); UTF-8 or UTF-16. Nothing leaves this machine.")
    left, right = st.columns(2)
    with left:
        st.markdown("**Event log**")
        up = st.file_uploader("System log export", type=["csv", "xml", "txt", "log"], key="doc_events_file")
        pasted = st.text_area("...or paste the log text", key="doc_events_text", height=120)
        c1, c2, c3 = st.columns(3)
        tgp = c1.number_input("GPU power, W (0 = unknown)", 0, 1500, 0, step=10, key="doc_tgp")
        cpu = c2.number_input("CPU power, W (0 = unknown)", 0, 1000, 0, step=5, key="doc_cpu")
        psu = c3.number_input("PSU rating, W (0 = unknown)", 0, 5000, 0, step=50, key="doc_psu")
    with right:
        st.markdown("**Training metrics**")
        upm = st.file_uploader("Metrics CSV or JSONL (step, loss, tokens/s, GPU util, temperature...)",
                               type=["csv", "jsonl", "json", "txt"], key="doc_metrics_file")
        steps = st.number_input("Expected total steps (0 = unknown)", 0, 10**9, 0, key="doc_steps")
    power = {"gpu_tgp_w": tgp, "cpu_power_w": cpu, "psu_w": psu}
    if up is not None:
        st.markdown(f"#### Event log: {up.name}")
        _run("events", up.getvalue(), up.name, **power)
    elif pasted.strip():
        st.markdown("#### Event log (pasted)")
        _run("events", pasted.encode("utf-8"), "pasted log", **power)
    if upm is not None:
        st.markdown(f"#### Training metrics: {upm.name}")
        _run("metrics", upm.getvalue(), upm.name, expected_steps=steps)
