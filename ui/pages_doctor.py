"""Doctor tab: a Windows or Linux system log, nvidia-smi output and training metrics -> timeline, causes, report."""

from __future__ import annotations

import hashlib
import io
import math
from typing import Any, Optional, Union

import pandas as pd
import streamlit as st

from planner.textsafe import md_escape
from planner.errors import PlannerError

COST_BADGE = {"free": "🟢 free", "low": "🟡 low", "medium": "🟠 medium", "high": "🔴 high"}
LIKELIHOOD_BADGE = {"high": "🔴 high", "medium": "🟠 medium", "low": "⚪ low"}
LOAD_COLOURS = {"load": "#d62728", "idle": "#1f77b4", "unknown": "#7f7f7f", "no_metrics": "#bcbd22"}
CHART_POINTS = 2000  # the loss curve is thinned to this many points, however long the run
MAX_UPLOAD_MB = 100  # per file; docs/doctor.md §10 states it (the readers stream, but an upload sits in memory)
CACHE_ENTRIES = 8  # reports kept per session, keyed by file and options
Upload = Union[bytes, io.BytesIO]


def _stream(data: Upload, name: str) -> io.BytesIO:
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    stream.name = name  # type: ignore[union-attr]
    return stream  # type: ignore[return-value]


def diagnose_events(data: Upload, name: str, gpu_tgp_w: int = 0, cpu_power_w: int = 0, psu_w: int = 0,
                    busy: Optional[list[Any]] = None, gpu_name: str = "", smi: Optional[list[tuple[bytes, str]]] = None,
                    year: int = 0, covered: Optional[list[Any]] = None, gpus: int = 0) -> Any:
    """UI helper over planner.doctor.diagnose_events (0 or '' = unknown); the tests call it directly too."""
    from planner.service import diagnose

    return diagnose().events(_stream(data, name), gpu_tgp_w=[gpu_tgp_w] if gpu_tgp_w else None,
                             cpu_power_w=cpu_power_w or None, psu_w=psu_w or None, busy=busy or None,
                             gpu_name=gpu_name.strip() or None, year=year or None,
                             smi=[_stream(d, n) for d, n in smi or []], covered=covered,
                             expected_gpus=gpus or None)


def diagnose_metrics(data: Upload, name: str, expected_steps: int = 0) -> Any:
    from planner.service import diagnose

    return diagnose().metrics(_stream(data, name), expected_steps=expected_steps or None)


def read_series(data: Upload, name: str) -> Any:
    """The metrics upload read once: the report, the training windows and the loss curve all come from it."""
    from planner.service import diagnose

    return diagnose().read_metrics(_stream(data, name))


def training_windows(text: str, series: Any) -> tuple[list[Any], list[str], Optional[list[Any]]]:
    """Busy windows typed by the user (one START/END a line) plus those the metrics file's times show, and the spans
    where load is known (None without a metrics file: then outside the windows is idle)."""
    from planner.service import diagnose

    windows_of = diagnose().windows

    if isinstance(series, PlannerError):  # the upload was read already and failed: say so, use the typed windows
        windows, covered, notes = windows_of(text.splitlines())
        return windows, notes + [f"the metrics file gives no training windows: {series}"], covered
    windows, covered, notes = windows_of(text.splitlines(), series, lenient=True)
    return windows, notes, covered


def cached(kind: str, key: tuple[Any, ...], compute: Any) -> Any:
    """A result kept in the session for this file and these options: a keystroke elsewhere reads no file again.
    A PlannerError is kept as the result too (shown again, not recomputed)."""
    store = st.session_state.setdefault("_doc_cache", {})
    full = (kind,) + key
    if full not in store:
        try:
            store[full] = compute()
        except PlannerError as exc:
            store[full] = exc
        while len(store) > CACHE_ENTRIES:
            del store[next(iter(store))]
    return store[full]


def timeline_frame(report: Any) -> pd.DataFrame:
    rows = []
    for n, inc in enumerate(report.incidents, start=1):
        for ev in inc.events:
            rows.append({"Incident": n, "Time": ev.time.isoformat(sep=" ", timespec="seconds"), "Source": ev.source,
                         "Event": ev.id, "While": ev.load, "What it means": ev.summary})
    return pd.DataFrame(rows)


def timeline_chart(report: Any) -> Any:
    """Every catalogued event on a time axis, one row per source, coloured by training vs idle (an altair Chart)."""
    import altair as alt  # only when a log is shown (a 0.4-1 s import)

    frame = pd.DataFrame([{"time": ev.time, "event": f"{ev.source} {ev.id}", "while": ev.load, "incident": n,
                           "what": ev.summary[:120]}
                          for n, inc in enumerate(report.incidents, 1) for ev in inc.events])
    colour = alt.Color("while:N", title="while", scale=alt.Scale(domain=list(LOAD_COLOURS),
                                                                 range=list(LOAD_COLOURS.values())))
    return alt.Chart(frame).mark_point(filled=True, size=90).encode(
        x=alt.X("time:T", title="time (as the log's clock)"), y=alt.Y("event:N", title=None), color=colour,
        tooltip=["time:T", "event:N", "incident:Q", "while:N", "what:N"]).properties(height=40 + 28 * frame[
            "event"].nunique())


def loss_frame(series: Any) -> Optional[pd.DataFrame]:
    """Step and loss (and throughput) thinned to CHART_POINTS rows, or None when the file has no loss column."""
    loss = series.values.get("loss")
    if loss is None:
        return None
    every = max(1, math.ceil(len(series.steps) / CHART_POINTS))
    rows = {"step": list(series.steps)[::every], "loss": list(loss)[::every]}
    tp = series.values.get("throughput")
    if tp is not None:
        rows["throughput"] = list(tp)[::every]
    frame = pd.DataFrame(rows)
    return frame[frame["loss"].map(math.isfinite)]


def show_events(report: Any) -> None:
    platform = "Linux kernel log" if report.platform == "linux" else "Windows System log"
    st.markdown(f"Read **{report.total_events}** {'event' if report.total_events == 1 else 'events'} ({platform}, "
                f"{md_escape(report.format)}, {md_escape(report.encoding)}); **{len(report.incidents)}** "
                "incident(s) on the timeline.")
    if report.incidents:
        st.markdown("**Timeline**")
        st.altair_chart(timeline_chart(report), width="stretch")
        st.dataframe(timeline_frame(report), hide_index=True)
    for f in report.smi:
        st.markdown(f"nvidia-smi **{md_escape(f['kind'])}**: {md_escape(f['message'])}")
    st.markdown("**Most likely causes**")
    if not report.hypotheses:
        st.info("No event in the log points at a hardware or driver cause.")
    for h in report.hypotheses:
        with st.expander(f"{LIKELIHOOD_BADGE.get(h.likelihood, h.likelihood)} · {h.name}", expanded=h.likelihood == "high"):
            st.markdown("Evidence:\n" + "\n".join(f"- {md_escape(e)}" for e in h.evidence))
            st.markdown("Tests, cheapest first:\n" + "\n".join(
                f"1. {COST_BADGE.get(t.cost, t.cost)}: {md_escape(t.step)}" for t in h.tests))
    if report.runbook:
        st.markdown("**Runbook** (ordered by the cost of the test)")
        st.markdown("\n".join(f"{i}. {COST_BADGE.get(t.cost, t.cost)}: {md_escape(t.step)}"
                              for i, t in enumerate(report.runbook, 1)))
    if report.psu:
        st.info(f"For these GPUs the planner's rules would pick a {report.psu.get('recommended_w')} W ATX 3.1 PSU "
                f"(sustained {report.psu.get('sustained_w')} W; the same sizing `planner check` uses).")
    if report.ignored:
        st.caption("Ignored as unrelated noise: " + ", ".join(f"{md_escape(k)} x{v}" for k, v in report.ignored.items()))
    for n in report.notes:
        st.caption(md_escape(n))
    st.download_button("Download the report (Markdown)", report.markdown(), file_name="doctor-report.md",
                       mime="text/markdown", key="doc_report_md")


def show_metrics(report: Any, curve: Optional[pd.DataFrame] = None) -> None:
    st.markdown(f"Read **{report.rows}** {'row' if report.rows == 1 else 'rows'} ({md_escape(report.format)}), steps {report.first_step} to "
                f"{report.last_step}; columns used: "
                f"{md_escape(', '.join(f'{k}={v}' for k, v in report.columns.items()) or 'none')}.")
    if report.ignored:
        st.caption("ignored: " + md_escape(", ".join(report.ignored)) + " (columns the doctor does not know; the "
                   "command line maps one with --column KIND=NAME)")
    if not report.findings:
        st.success("No weak signal found: loss, throughput, utilisation and temperatures look steady.")
    else:
        st.dataframe(pd.DataFrame([{"Severity": f.severity, "Finding": f.kind, "Steps": f"{f.from_step}-{f.to_step}",
                                    "What it means": f.message} for f in report.findings]), hide_index=True)
    if curve is not None and not curve.empty:
        st.markdown("**Loss curve**")
        import altair as alt  # only when a loss curve is shown

        st.altair_chart(alt.Chart(curve).mark_line().encode(
            x=alt.X("step:Q", title="step"), y=alt.Y("loss:Q", title="loss", scale=alt.Scale(zero=False)),
            tooltip=["step:Q", "loss:Q"]).properties(height=240), width="stretch")
    for n in report.notes:
        st.caption(md_escape(n))




def _error(exc: PlannerError) -> None:
    st.error(md_escape(exc))  # file text can sit in the message: no Markdown from it


def kept_upload(label: str, types: list[str], key: str) -> Optional[tuple[bytes, str, str]]:
    """(data, name, id) of a file uploader whose file survives a visit to another tab: only the open tab is drawn,
    and Streamlit forgets a widget that was not drawn, so the file is kept aside and offered again (with a way to
    drop it). The bytes are taken once per file (its id), not on every rerun; a file over MAX_UPLOAD_MB is refused."""
    ss = st.session_state
    kept = f"_{key}_kept"
    up = st.file_uploader(label, type=types, key=key, help=f"Up to {MAX_UPLOAD_MB} MB per file.")
    if up is not None:
        if up.size > MAX_UPLOAD_MB * 1024 * 1024:
            st.error(f"{md_escape(up.name)} is {up.size / 1024 / 1024:.0f} MB, over the {MAX_UPLOAD_MB} MB a file may "
                     "have here; run `planner doctor` on it from the command line (it streams files of any size)")
            ss.pop(kept, None)
            return None
        file_id = str(getattr(up, "file_id", "") or f"{up.name}:{up.size}")
        if kept not in ss or ss[kept][2] != file_id:
            ss[kept] = (up.getvalue(), up.name, file_id)
        return ss[kept]
    if kept in ss and ss.get("_last_tab") == "Doctor":  # the user removed the file on this tab
        del ss[kept]
    if kept in ss:
        data, name, _ = ss[kept]
        st.caption(f"Using {md_escape(name)} ({len(data) / 1024:.0f} KB), uploaded before you switched tabs.")
        if st.button("Forget this file", key=f"{key}_forget"):
            del ss[kept]
            st.rerun()
        return ss[kept]
    return None


def render() -> None:
    st.subheader("Doctor: why does the machine die?")
    st.caption("Windows System log (Event Viewer CSV or XML, 'Copy details as text', the General tab's message, "
               "`wevtutil qe System /f:xml` or `/f:text`, `Get-WinEvent | Format-List`) or Linux kernel log "
               "(`journalctl -k`, `-o short-iso`, `-o json`, syslog/kern.log, `dmesg`, `dmesg -T`, `dmesg -H`, grep "
               "output); nvidia-smi output (the table, `-q`, a `--format=csv` log); training metrics. Nothing leaves "
               "this machine. docs/doctor.md lists every format with an example line.")
    left, right = st.columns(2)
    with left:
        st.markdown("**System log**")
        up = kept_upload("System or kernel log", ["csv", "xml", "txt", "log", "json"], "doc_events_file")
        pasted = st.text_area("...or paste the log text", key="doc_events_text", height=120)
        c1, c2, c3 = st.columns(3)
        tgp = c1.number_input("GPU power, W (0 = unknown)", 0, 1500, 0, step=10, key="doc_tgp")
        cpu = c2.number_input("CPU power, W (0 = unknown)", 0, 1000, 0, step=5, key="doc_cpu")
        psu = c3.number_input("PSU rating, W (0 = unknown)", 0, 5000, 0, step=50, key="doc_psu")
        gpu = st.text_input("GPU model (e.g. GTX 1080 Ti): adds NVIDIA's recommended PSU, as the Check tab does",
                            key="doc_gpu")
        smi = kept_upload("nvidia-smi output (the table, `nvidia-smi -q` or a `--format=csv -l 5` log)",
                          ["txt", "log", "csv"], "doc_smi_file")
        smi_pasted = st.text_area("...or paste nvidia-smi output", key="doc_smi_text", height=90)
        fitted = st.number_input("GPUs fitted (0 = unknown): an nvidia-smi table listing fewer is a lost card", 0, 64,
                                 0, key="doc_gpus")
        if smi is None and smi_pasted.strip():
            smi = (smi_pasted.encode("utf-8"), "pasted nvidia-smi",
                   "pasted:" + hashlib.sha256(smi_pasted.encode("utf-8")).hexdigest())
    with right:
        st.markdown("**Training**")
        metrics = kept_upload("Metrics CSV or JSONL (step, loss, tokens/s, GPU util, temperature, time...)",
                              ["csv", "jsonl", "json", "txt"], "doc_metrics_file")
        steps = st.number_input("Expected total steps (0 = unknown)", 0, 10**9, 0, key="doc_steps")
        busy_text = st.text_area("Training windows, one START/END per line on the log's clock (e.g. "
                                 "2025-10-13T22:00/2025-10-14T06:30); a metrics file with times adds its own",
                                 key="doc_busy", height=90)
    series = cached("series", (metrics[2],), lambda: read_series(metrics[0], metrics[1])) if metrics else None
    try:
        windows, window_notes, covered = training_windows(busy_text, series)
    except PlannerError as exc:
        _error(exc)
        windows, window_notes, covered = [], [], None
    if up is not None:
        log: Optional[tuple[bytes, str, str]] = up
    elif pasted.strip():
        log = (pasted.encode("utf-8"), "pasted log", "pasted:" + hashlib.sha256(pasted.encode("utf-8")).hexdigest())
    else:
        log = None
    if log is not None:
        st.markdown(f"#### System log: {md_escape(log[1])}")
        for note in window_notes:
            st.caption(md_escape(note))
        options = (tgp, cpu, psu, tuple(windows), tuple(covered or ()), gpu, smi[2] if smi else "", fitted)
        report = cached("events", (log[2],) + options, lambda: diagnose_events(
            log[0], log[1], gpu_tgp_w=tgp, cpu_power_w=cpu, psu_w=psu, busy=windows, gpu_name=gpu,
            smi=[smi[:2]] if smi is not None else None, covered=covered, gpus=fitted))
        if isinstance(report, PlannerError):
            _error(report)
        else:
            show_events(report)
    if log is None and smi is not None:  # nvidia-smi alone: its findings and what it cannot show
        st.markdown(f"#### nvidia-smi: {md_escape(smi[1])}")
        from planner.service import diagnose

        found = cached("smi", (smi[2], fitted), lambda: diagnose().smi(_stream(smi[0], smi[1]),
                                                                 expected_gpus=fitted or None))
        if isinstance(found, PlannerError):
            _error(found)
        else:
            for f in found:
                st.markdown(f"**{md_escape(f.severity)}** {md_escape(f.kind)}: {md_escape(f.message)}")
    if metrics is not None:
        st.markdown(f"#### Training metrics: {md_escape(metrics[1])}")
        if isinstance(series, PlannerError):
            _error(series)
        else:
            from planner.service import diagnose

            report_of = diagnose().metrics

            report = cached("metrics", (metrics[2], steps), lambda: report_of(series, expected_steps=steps or None))
            if isinstance(report, PlannerError):
                _error(report)
            else:
                show_metrics(report, loss_frame(series))
    from ui import pages_burnin

    pages_burnin.render()
