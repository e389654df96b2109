"""`planner doctor` and the Doctor tab as one use case: a machine's logs read and diagnosed (events, nvidia-smi, metrics)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Optional, Union

from planner.settings import GPU_HOT_C
from planner.validation import Source

if TYPE_CHECKING:  # the doctor itself loads on the first call
    from planner.doctor.diagnose import Window
    from planner.doctor.metrics_io import MetricSeries
    from planner.doctor.report import EventReport, MetricsReport
    from planner.doctor.smi import SmiFinding


class LogDoctor:
    """The diagnosis of a machine's logs, one method per log kind (each the planner.doctor function of that concern,
    loaded on first call so `doctor smi` does not pay for the metrics reader)."""

    def events(
        self,
        path_or_text: Source,
        *,
        gpu_tgp_w: Optional[list[int]] = None,
        cpu_power_w: Optional[int] = None,
        psu_w: Optional[int] = None,
        busy: Optional[list[Window]] = None,
        gap: Optional[timedelta] = None,
        year: Optional[int] = None,
        gpu_name: Optional[str] = None,
        smi: Sequence[Source] = (),
        covered: Optional[list[Window]] = None,
        expected_gpus: Optional[int] = None,
    ) -> EventReport:
        """An event log's report (planner.doctor.diagnose.diagnose_events); `gap` None is the doctor's incident gap
        (planner.doctor.events.INCIDENT_GAP, an hour)."""
        from planner.doctor.diagnose import diagnose_events
        from planner.doctor.events import INCIDENT_GAP

        return diagnose_events(path_or_text, gpu_tgp_w=gpu_tgp_w, cpu_power_w=cpu_power_w, psu_w=psu_w, busy=busy,
                               gap=INCIDENT_GAP if gap is None else gap, year=year, gpu_name=gpu_name, smi=smi,
                               covered=covered, expected_gpus=expected_gpus)

    def metrics(
        self,
        path: Union[Source, MetricSeries],
        *,
        expected_steps: Optional[int] = None,
        temp_limit_c: float = GPU_HOT_C,
        columns: Optional[list[str]] = None,
    ) -> MetricsReport:
        """A training-metrics report, from a file or a series read already (planner.doctor.diagnose.diagnose_metrics)."""
        from planner.doctor.diagnose import diagnose_metrics

        return diagnose_metrics(path, expected_steps=expected_steps, temp_limit_c=temp_limit_c, columns=columns)

    def windows(
        self, typed: Iterable[str], metrics: Union[None, MetricSeries, Source] = None, *, lenient: bool = False
    ) -> tuple[list[Window], Optional[list[Window]], list[str]]:
        """(training windows, the spans where load is known, notes) from typed spans and a metrics file or series
        (planner.doctor.diagnose.training_windows)."""
        from planner.doctor.diagnose import training_windows

        return training_windows(typed, metrics, lenient=lenient)

    def smi(self, source: Source, temp_limit_c: float = GPU_HOT_C,
            expected_gpus: Optional[int] = None) -> list[SmiFinding]:
        """An nvidia-smi log's findings (planner.doctor.smi.read_smi)."""
        from planner.doctor.engine import check_temp_limit
        from planner.doctor.smi import read_smi

        check_temp_limit(temp_limit_c)
        return read_smi(source, temp_limit_c=temp_limit_c, expected_gpus=expected_gpus)

    def read_metrics(self, source: Source,
                     columns: Optional[dict[str, tuple[str, Optional[int]]]] = None) -> MetricSeries:
        """A metrics file read once into a series (planner.doctor.metrics_io.read_metrics)."""
        from planner.doctor.metrics_io import read_metrics

        return read_metrics(source, columns)


def diagnose() -> LogDoctor:
    """The use case behind `planner doctor events|smi|metrics` and the Doctor tab."""
    return LogDoctor()
