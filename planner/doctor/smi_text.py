"""Read the nvidia-smi text people paste: the plain `nvidia-smi` table and its error lines ('Unable to determine the
device handle ...', 'No devices were found'), as findings with what such a snapshot can and cannot show."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional

from planner.doctor.smi import SmiFinding

# |   0  NVIDIA RTX A4000    Off  | 00000000:65:00.0  On |                  Off |
_GPU_ROW = re.compile(r"^\|\s*(\d{1,3})\s+(.+?)\s+(On|Off|N/A|ERR!)?\s*\|\s*([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}"
                      r"\.\d)\s+(\S+)\s*\|\s*(.*?)\s*\|")
# | 41%   30C    P8    11W / 140W |     93MiB / 16376MiB |      0%      Default |
_STATE_ROW = re.compile(r"^\|\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*/\s*(\S+)\s*\|\s*(.*?)\s*\|\s*(\S+)\s")
_TABLE_MARK = re.compile(r"^\|\s*(?:NVIDIA-SMI \d|GPU\s+Name\b)")
# What nvidia-smi prints instead of a GPU when the GPU no longer answers.
_LOST_LINE = re.compile(r"Unable to determine the device handle for (?:GPU|gpu)\s*([0-9A-Fa-f]{3,8}:[0-9A-Fa-f]{2}:"
                        r"[0-9A-Fa-f]{2}\.\d)?:?\s*([^\n]*)|No devices were found|GPU is lost|fallen off the bus",
                        re.IGNORECASE)
TABLE_BLIND = ("a table is one instant: it shows no Xid events, no throttling over time and no PCIe link state; "
               "log `nvidia-smi --query-gpu=... --format=csv -l 5` while training, and read `journalctl -k` for Xids")


@dataclass
class TableGpu:
    """One GPU row pair of the plain nvidia-smi table."""

    index: str
    name: str
    bus: str
    ecc: str = ""
    fan: str = ""
    temp: Optional[float] = None
    perf: str = ""
    power: str = ""
    cap: str = ""
    util: str = ""
    errors: list[str] = field(default_factory=list)


def is_smi_text(lines: list[str]) -> bool:
    """True for the plain table or nvidia-smi's error lines."""
    return any(_TABLE_MARK.match(ln.strip()) or _GPU_ROW.match(ln.strip()) or _LOST_LINE.search(ln) for ln in lines)


def is_smi_paste(lines: list[str]) -> bool:
    """Stricter than is_smi_text: the table's own rows, or an error line nvidia-smi starts with (a system log that
    quotes 'fallen off the bus' in a message is still a system log)."""
    return any(_TABLE_MARK.match(ln.strip()) or _GPU_ROW.match(ln.strip()) or ln.strip().startswith(
        ("Unable to determine the device handle", "No devices were found")) for ln in lines)


def read_table(lines: Iterable[str], name: str, temp_limit_c: float,
               expected_gpus: Optional[int] = None) -> list[SmiFinding]:
    """Findings from a pasted `nvidia-smi` (table and error lines); always ends with what the text could show."""
    gpus: list[TableGpu] = []
    lost: list[tuple[str, str]] = []
    table = False
    for raw in lines:
        line = raw.rstrip("\r\n").strip()
        if _TABLE_MARK.match(line):
            table = True
        m = _GPU_ROW.match(line)
        if m:
            table = True
            gpus.append(TableGpu(m.group(1), m.group(2).strip(), m.group(4), ecc=m.group(6).strip()))
            if "ERR!" in line:
                gpus[-1].errors.append("ERR! in its first row")
            continue
        s = _STATE_ROW.match(line)
        if s and gpus and gpus[-1].temp is None and not gpus[-1].fan:
            g = gpus[-1]
            g.fan, g.perf, g.power, g.cap, g.util = s.group(1), s.group(3), s.group(4), s.group(5), s.group(7)
            temp = s.group(2).rstrip("C")
            g.temp = float(temp) if temp.isdigit() else None
            if "ERR!" in line:
                g.errors.append("ERR! in " + ", ".join(f for f, v in (("fan", g.fan), ("temperature", s.group(2)),
                                                                       ("power", g.power)) if "ERR" in v) or "ERR!")
            continue
        lost_line = _LOST_LINE.search(line)
        if lost_line:
            lost.append((lost_line.group(1) or "", line[:120]))
    out: list[SmiFinding] = []
    for bus, text in lost:
        where = bus or "a GPU"
        out.append(SmiFinding("gpu_lost", "problem", where, f"nvidia-smi: {text!r}: {where} no longer answers (the Xid 79 "
                              "finding: it fell off the bus or needs a reset): its power cables, riser and slot, heat, "
                              "or the card", (("gpu_hardware", 2.0), ("pcie_link", 2.0), ("psu_power", 1.0))))
    for g in gpus:
        label = f"GPU {g.index} ({g.name}, {g.bus})"
        if g.errors:
            out.append(SmiFinding("gpu_error", "problem", g.bus, f"{label}: {'; '.join(g.errors)}: the driver cannot "
                                  "read the card (a dying fan or sensor, or a GPU about to drop off the bus)",
                                  (("gpu_hardware", 1.5),)))
        if g.temp is not None and g.temp >= temp_limit_c:
            out.append(SmiFinding("hot", "warning", g.bus, f"{label}: {g.temp:g} °C in this snapshot, at or past "
                                  f"{temp_limit_c:g} °C", (("thermal", 1.0),)))
        if g.ecc.isdigit() and int(g.ecc) > 0:
            out.append(SmiFinding("ecc", "problem", g.bus, f"{label}: {g.ecc} volatile uncorrected ECC error(s)",
                                  (("gpu_hardware", 3.0),)))
    if table:
        listed = ", ".join(f"{g.index}: {g.bus}" for g in gpus) or "none"
        count = f"the table lists {len(gpus)} GPU{'s' if len(gpus) != 1 else ''} ({listed})"
        if expected_gpus is not None and len(gpus) < expected_gpus:
            out.append(SmiFinding("gpu_missing", "problem", "", f"{count}, {expected_gpus} fitted: "
                                  f"{expected_gpus - len(gpus)} GPU(s) are missing, which is how a card that fell off "
                                  "the bus shows in nvidia-smi (reseat it, check its power cables and riser)",
                                  (("gpu_hardware", 2.0), ("pcie_link", 2.0), ("psu_power", 1.0))))
        else:
            out.append(SmiFinding("gpu_count", "info", "", count + ("" if expected_gpus is not None else
                                                                    ": compare with the GPUs fitted (a card that "
                                                                    "fell off the bus is simply not listed)")))
    blind = TABLE_BLIND if table else ("only nvidia-smi's error lines, no table: they show which GPU stopped "
                                       "answering but cannot show why; read `journalctl -k` for the Xid 79 and AER lines "
                                       "around that time")
    out.append(SmiFinding("coverage", "info", "", f"{name}: {blind}"))
    return out
