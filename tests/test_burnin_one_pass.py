"""The burn-in reads its nvidia-smi log once, with smi.py's one row parser, and judges heat by the one hot-GPU
constant (issue 35 item 6): a stream that can be read only once gives the verdict a file does."""

from __future__ import annotations

import io

from burnin_logs import smi_log
from planner.doctor import burnin_log, smi
from planner.doctor.burnin import check_burnin, thresholds
from planner.settings import GPU_HOT_C


class _OneShot(io.RawIOBase):
    """A pipe-like stream: no seek, and once read it is empty."""

    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:  # type: ignore[override]
        n = min(len(b), len(self._data) - self._pos)
        b[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n


def test_the_log_is_opened_once_and_each_row_parsed_once(monkeypatch, tmp_path) -> None:
    data = smi_log(70, gpus=2)
    rows = len(data.decode().strip().splitlines()) - 1
    opened, parsed = [], []
    real_open, real_row = burnin_log.open_text, burnin_log.csv_row

    def counting_open(source):
        opened.append(source)
        return real_open(source)

    def counting_row(*args):
        parsed.append(1)
        return real_row(*args)

    def second_parser(*args, **kwargs):
        raise AssertionError("the burn-in must not run smi.py's own CSV reader over the log again")

    monkeypatch.setattr(burnin_log, "open_text", counting_open)
    monkeypatch.setattr(burnin_log, "csv_row", counting_row)
    monkeypatch.setattr(smi, "read_csv_log", second_parser)
    monkeypatch.setattr(smi, "read_smi", second_parser)
    streamed = check_burnin(io.BufferedReader(_OneShot(data)))
    assert len(opened) == 1 and len(parsed) == rows
    path = tmp_path / "smi.csv"
    path.write_bytes(data)
    from_file = check_burnin(str(path))
    assert streamed.verdict == from_file.verdict == "pass"
    assert [c.model_dump() for c in streamed.checks] == [c.model_dump() for c in from_file.checks]


def test_the_warning_temperature_is_the_doctors_hot_gpu_constant(tmp_path) -> None:
    def warm(minute: float, gpu: int, row: dict) -> None:
        if minute >= 30:
            row["temp"] = GPU_HOT_C + 1  # above the hot mark, below the fail mark
    assert thresholds()["temp_warn_c"] == GPU_HOT_C
    path = tmp_path / "smi.csv"
    path.write_bytes(smi_log(70, tweak=warm))
    report = check_burnin(str(path))
    temp = next(c for c in report.checks if c.criterion == "temperature")
    assert f"{GPU_HOT_C:g} °C" in temp.message
