"""Doctor: diagnose an unstable training machine from its event logs and training metrics."""

from planner.doctor.diagnose import diagnose_events, diagnose_metrics
from planner.doctor.report import EventReport, MetricFinding, MetricsReport

__all__ = ["diagnose_events", "diagnose_metrics", "EventReport", "MetricsReport", "MetricFinding"]
