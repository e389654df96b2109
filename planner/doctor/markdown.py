"""Render doctor reports as Markdown for an issue or a shared document; every log-derived text is escaped."""

from __future__ import annotations

from datetime import datetime

from planner.doctor.report import EventReport, MetricsReport
from planner.textsafe import md_escape, md_table

def stamp_text(t: datetime, clock: str, short: bool = False) -> str:
    """A time as the log's clock means it: wall clock (local or UTC) or time since boot (raw dmesg)."""
    if clock == "none":  # a log without times: the event's line in the file stands in for its time
        return f"line {int((t - datetime(1970, 1, 1)).total_seconds())}"
    if clock == "boot":
        seconds = int((t - datetime(1970, 1, 1)).total_seconds())
        return f"boot+{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    if short:
        return f"{t:%m-%d %H:%M:%S}"
    return t.isoformat(sep=" ", timespec="seconds") + (" UTC" if clock == "utc" else "")


_stamp = stamp_text


def events_markdown(report: EventReport, title: str = "Doctor report") -> str:
    """Incidents, evidence, hypotheses and runbook of `doctor events` as Markdown."""
    clock = "utc" if report.utc else report.clock
    lines = [f"# {md_escape(title)}", "",
             f"Read {report.total_events} events ({md_escape(report.format)}, {md_escape(report.encoding)}); "
             f"{sum(len(i.events) for i in report.incidents)} matter for GPU/PSU stability.", ""]
    lines += ["## Incidents", ""]
    if not report.incidents:
        lines += ["No GPU, power or crash events found.", ""]
    for n, inc in enumerate(report.incidents, 1):
        lines += [f"### Incident {n}: {_stamp(inc.start, clock)} to {_stamp(inc.end, clock)}", ""]
        lines.append(md_table(["time", "source", "id", "while", "what it means"],
                              ([_stamp(ev.time, clock), md_escape(ev.source), str(ev.id), ev.load,
                                md_escape(ev.summary)] for ev in inc.events)))
        lines.append("")
    if report.smi:
        lines += ["## nvidia-smi evidence", ""]
        lines += [f"- **{md_escape(f['kind'])}** ({f['severity']}): {md_escape(f['message'])}" for f in report.smi]
        lines.append("")
    lines += ["## Likely causes (most likely first)", ""]
    if not report.hypotheses:
        lines += ["No event points at a hardware or driver cause.", ""]
    for n, hyp in enumerate(report.hypotheses, 1):
        lines += [f"{n}. **{md_escape(hyp.name)}**: {hyp.likelihood}"]
        lines += [f"   - {md_escape(e)}" for e in hyp.evidence]
    lines.append("")
    if report.runbook:
        lines += ["## Runbook, cheapest test first", "", "Stop at the first step that makes the crashes stop.", ""]
        lines += [f"{n}. *{step.cost}*: {md_escape(step.step)}" for n, step in enumerate(report.runbook, 1)]
        lines.append("")
    if report.ignored:
        lines += ["Ignored as noise: " + ", ".join(f"{md_escape(k)} x{v}" for k, v in sorted(report.ignored.items())),
                  ""]
    lines += [f"- note: {md_escape(note)}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"


def metrics_markdown(report: MetricsReport, title: str = "Training metrics report") -> str:
    """Findings of `doctor metrics` as Markdown."""
    lines = [f"# {md_escape(title)}", "",
             f"Read {report.rows} rows ({md_escape(report.format)}), steps {report.first_step} to {report.last_step}.",
             ""]
    if not report.findings:
        lines += ["No weak signal found.", ""]
    else:
        lines.append(md_table(["severity", "steps", "kind", "finding"],
                              ([f.severity, f"{f.from_step}-{f.to_step}", md_escape(f.kind), md_escape(f.message)]
                               for f in report.findings)))
        lines.append("")
    lines += [f"- note: {md_escape(note)}" for note in report.notes]
    return "\n".join(lines).rstrip() + "\n"
