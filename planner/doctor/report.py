"""Report records of the doctor and their JSON contract (issue 8): EventReport and MetricsReport."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

from planner.doctor.runbook import Cost

Likelihood = Literal["high", "medium", "low"]
Severity = Literal["problem", "warning", "info"]


def _stamp(t: datetime, utc: bool) -> str:
    return t.isoformat(timespec="seconds") + ("Z" if utc else "")


class EventLine(BaseModel):
    """One event on the timeline."""

    model_config = ConfigDict(frozen=True)
    time: datetime
    source: str
    id: int
    summary: str
    load: Literal["load", "idle", "unknown", "no_metrics"] = "unknown"

    def to_json(self, utc: bool) -> dict[str, Any]:
        return {"time": _stamp(self.time, utc), "source": self.source, "id": self.id, "summary": self.summary}


class Incident(BaseModel):
    """Events close together, ending with the boot-time record of a crash if there was one."""

    model_config = ConfigDict(frozen=True)
    start: datetime
    end: datetime
    events: list[EventLine]

    def to_json(self, utc: bool) -> dict[str, Any]:
        return {
            "start": _stamp(self.start, utc),
            "end": _stamp(self.end, utc),
            "events": [e.to_json(utc) for e in self.events],
        }


class TestStep(BaseModel):
    """A test to run, with what it costs."""

    __test__ = False  # not a pytest class
    model_config = ConfigDict(frozen=True)
    step: str
    cost: Cost

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step, "cost": self.cost}


class Hypothesis(BaseModel):
    """A possible cause, how likely the log makes it, why, and how to test it (cheapest first)."""

    model_config = ConfigDict(frozen=True)
    name: str
    likelihood: Likelihood
    score: float
    evidence: list[str]
    tests: list[TestStep]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "likelihood": self.likelihood,
            "evidence": list(self.evidence),
            "tests": [t.to_json() for t in self.tests],
        }


class EventReport(BaseModel):
    """Everything `doctor events` found; to_json() is the issue-8 contract, the rest feeds the text view."""

    model_config = ConfigDict(frozen=True)
    incidents: list[Incident]
    hypotheses: list[Hypothesis]
    runbook: list[TestStep] = Field(default_factory=list)
    ignored: dict[str, int] = Field(default_factory=dict)  # noise events by "Source Id"
    unrecognised: int = 0
    total_events: int = 0
    format: str = ""
    encoding: str = ""
    utc: bool = False
    clock: str = "local"  # "utc", "local" or "boot" (seconds since boot, raw dmesg)
    platform: str = "windows"  # "windows" or "linux"
    smi: list[dict[str, Any]] = Field(default_factory=list)  # nvidia-smi findings (kind, severity, gpu, message)
    notes: list[str] = Field(default_factory=list)
    psu: Optional[dict[str, Any]] = None  # the planner's PSU sizing, when the GPU power is known

    def stamp(self, when: datetime, short: bool = False) -> str:
        """A time of this report as its log's clock means it (wall clock, time since boot, or the line number)."""
        from planner.doctor.markdown import stamp_text

        return stamp_text(when, self.clock, short)

    def markdown(self, title: str = "Doctor report") -> str:
        """The report as Markdown (planner.doctor.markdown): `doctor events --format md` and the web UI's download."""
        from planner.doctor.markdown import events_markdown

        return events_markdown(self, title)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "incidents": [i.to_json(self.utc) for i in self.incidents],
            "hypotheses": [h.to_json() for h in self.hypotheses],
        }
        if self.smi:  # added only when nvidia-smi evidence was given: the issue-8 contract stays as it was
            out["smi"] = [{k: f[k] for k in ("kind", "severity", "gpu", "message")} for f in self.smi
                          if f["severity"] != "info"]  # what the output could show is text, not a finding
        return out


class MetricFinding(BaseModel):
    """A weak signal in training metrics, with the step range it covers."""

    model_config = ConfigDict(frozen=True)
    kind: str
    severity: Severity
    from_step: int
    to_step: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "from_step": self.from_step,
            "to_step": self.to_step,
            "message": self.message,
        }


class MetricsReport(BaseModel):
    """Everything `doctor metrics` found; to_json() is the issue-8 contract."""

    model_config = ConfigDict(frozen=True)
    findings: list[MetricFinding]
    rows: int = 0
    first_step: Optional[int] = None
    last_step: Optional[int] = None
    columns: dict[str, str] = Field(default_factory=dict)  # role -> column name used
    ignored: list[str] = Field(default_factory=list)  # columns read but mapped to no role
    format: str = ""
    notes: list[str] = Field(default_factory=list)

    def markdown(self, title: str = "Training metrics report") -> str:
        """The report as Markdown (planner.doctor.markdown): `doctor metrics --format md`."""
        from planner.doctor.markdown import metrics_markdown

        return metrics_markdown(self, title)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"findings": [f.to_json() for f in self.findings]}
        if self.ignored:  # added only when a column was left out: the issue-8 contract stays as it was
            out["ignored"] = list(self.ignored)
        return out
