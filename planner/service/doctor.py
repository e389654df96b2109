"""`planner doctor` and the Doctor tab as one use case: a machine's logs read and diagnosed (events, nvidia-smi, metrics)."""

from __future__ import annotations

from typing import Any


class LogDoctor:
    """The diagnosis of a machine's logs, one method per log kind (each the planner.doctor function of that concern,
    loaded on first call so `doctor smi` does not pay for the metrics reader)."""

    def events(self, *args: Any, **kwargs: Any) -> Any:
        """An event log's report (planner.doctor.diagnose.diagnose_events)."""
        from planner.doctor.diagnose import diagnose_events

        return diagnose_events(*args, **kwargs)

    def metrics(self, *args: Any, **kwargs: Any) -> Any:
        """A training-metrics report, from a file or a series read already (planner.doctor.diagnose.diagnose_metrics)."""
        from planner.doctor.diagnose import diagnose_metrics

        return diagnose_metrics(*args, **kwargs)

    def windows(self, *args: Any, **kwargs: Any) -> Any:
        """Training windows from typed spans and a metrics series (planner.doctor.diagnose.training_windows)."""
        from planner.doctor.diagnose import training_windows

        return training_windows(*args, **kwargs)

    def smi(self, *args: Any, **kwargs: Any) -> Any:
        """An nvidia-smi log's findings (planner.doctor.smi.read_smi)."""
        from planner.doctor.smi import read_smi

        return read_smi(*args, **kwargs)

    def read_metrics(self, *args: Any, **kwargs: Any) -> Any:
        """A metrics file read once into a series (planner.doctor.metrics_io.read_metrics)."""
        from planner.doctor.metrics_io import read_metrics

        return read_metrics(*args, **kwargs)


def diagnose() -> LogDoctor:
    """The use case behind `planner doctor events|smi|metrics` and the Doctor tab."""
    return LogDoctor()
