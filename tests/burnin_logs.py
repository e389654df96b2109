"""Small generators of burn-in logs: an nvidia-smi --query-gpu CSV log, a training metrics CSV."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Callable, Optional

HEADER = ("timestamp, index, name, temperature.gpu, clocks.sm [MHz], clocks_throttle_reasons.active, "
          "power.draw [W], power.limit [W], utilization.gpu [%]")
START = datetime(2026, 12, 5, 21, 0, 0)


def smi_log(minutes: float = 60, gpus: int = 1, every_s: int = 5,
            tweak: Optional[Callable[[float, int, dict], None]] = None) -> bytes:
    """A steady burn-in: a 10-minute warm-up from 45 to 78 C, then 78-79 C, SM 2700-2715 MHz, at the power cap.
    `tweak(minute, gpu, row)` changes a sample (row keys: temp, clock, reasons, util, power)."""
    lines = [HEADER]
    for i in range(int(minutes * 60 / every_s) + 1):
        t = START + timedelta(seconds=i * every_s)
        minute = i * every_s / 60
        for g in range(gpus):
            row = {"temp": min(78.0, 45 + 3.3 * minute) + (i % 2), "clock": 2700 + 15 * (i % 2),
                   "reasons": 0x4 if i % 3 == 0 else 0x0, "util": 99, "power": 570.0}
            if tweak:
                tweak(minute, g, row)
            lines.append(f"{t:%Y/%m/%d %H:%M:%S}.{i % 1000:03d}, {g}, NVIDIA GeForce RTX 5090, {row['temp']:.0f}, "
                         f"{row['clock']:.0f} MHz, 0x{row['reasons']:016X}, {row['power']:.2f} W, 575.00 W, "
                         f"{row['util']} %")
    return ("\n".join(lines) + "\n").encode()


def metrics_csv(points: int = 120, sag_from: Optional[int] = None, sag: float = 0.0, start_min: float = 0) -> bytes:
    """A training run's throughput, one row a minute from `start_min` minutes after START; from row `sag_from` on it
    is `sag` lower."""
    rows = ["time,step,loss,tokens_per_s"]
    for i in range(points):
        t = START + timedelta(minutes=start_min + i)
        tps = 126_000 * (1 - (sag if sag_from is not None and i >= sag_from else 0)) + (i % 3) * 300
        rows.append(f"{t.isoformat()},{i * 100},{4 / (1 + i / 30):.4f},{tps:.0f}")
    return ("\n".join(rows) + "\n").encode()
