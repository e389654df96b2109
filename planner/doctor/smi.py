"""Read nvidia-smi evidence: `nvidia-smi -q` dumps and `--query-gpu ... --format=csv -l N` logs, streaming."""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Optional

from planner.doctor.textio import Source, as_source, open_text, whole_lines
from planner.errors import InputError
from planner.settings import GPU_HOT_C, MAX_GPUS_SEEN

# NVML clock throttle (event) reason bits, nvml.h nvmlClocksThrottleReason* / nvmlClocksEventReason*.
SW_POWER_CAP, HW_SLOWDOWN, HW_THERMAL, HW_POWER_BRAKE, SW_THERMAL = 0x4, 0x8, 0x40, 0x80, 0x20
LOADED_UTIL = 50.0  # % utilisation from which a sample counts as "under load"
SHARE = 0.2  # a condition seen in at least this share of loaded samples (and MIN_SAMPLES) is reported
MIN_SAMPLES = 3
LAGGING_SHARE = 0.5  # a GPU under half the busiest one's utilisation at the same instant lags [our threshold]
MAX_GPUS = MAX_GPUS_SEEN  # distinct GPU ids counted in one log
SMI_SOURCE = "nvidia-smi documentation (nvidia-smi -q fields, --help-query-gpu) and NVML clock-reason bits"
_Q_LINE = re.compile(r"^(\s*)(\S[^:]*?)\s*: (.*)$")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
# What nvidia-smi writes in a cell (or a line) when the GPU no longer answers: it fell off the bus or needs a reset.
LOST = re.compile(r"requires reset|unknown error|gpu is lost|fallen off the bus|unable to determine the device handle"
                  r"|no devices were found|\[error\]", re.IGNORECASE)
# Clock-reason names as nvidia-smi -q and some loggers write them instead of the bitmask.
REASON_NAMES = {"gpu idle": 0x1, "applications clocks setting": 0x2, "sw power cap": SW_POWER_CAP,
                "hw slowdown": HW_SLOWDOWN, "sync boost": 0x10, "sw thermal slowdown": SW_THERMAL,
                "hw thermal slowdown": HW_THERMAL, "hw power brake slowdown": HW_POWER_BRAKE,
                "hw power brake": HW_POWER_BRAKE, "display clock setting": 0x100, "not active": 0, "none": 0}


@dataclass(frozen=True)
class SmiFinding:
    """One observation from nvidia-smi, the causes it points at (hypothesis key -> points) and its evidence."""

    kind: str  # gpu_lost, link_down, power_cap, hw_slowdown, hot, ecc, retired_pages, remap_failure, gpu_idle
    severity: str  # problem, warning, info
    gpu: str
    message: str
    causes: tuple[tuple[str, float], ...] = ()


@dataclass
class GpuTally:
    """Running counts for one GPU over a CSV log: memory stays flat however long the log is."""

    name: str = ""
    samples: int = 0
    loaded: int = 0
    link_down: int = 0
    worst_link: str = ""
    power_cap: int = 0
    hw_slowdown: int = 0
    power_brake: int = 0
    hw_thermal: int = 0
    sw_thermal: int = 0
    hot: int = 0
    max_temp: float = -math.inf
    ecc_uncorrected: float = 0.0
    retired_pending: bool = False
    idle_while_others_work: int = 0
    lagging: int = 0  # under half the busiest GPU's utilisation at the same instant
    instants_with_busy_peer: int = 0
    first: str = ""
    last: str = ""
    lost: int = 0  # rows saying the GPU no longer answers ([GPU requires reset], [Unknown Error], GPU is lost)
    lost_text: str = ""


def _num(text: str) -> Optional[float]:
    if not text:
        return None
    head = text.split(" ", 1)[0]
    if head[:1].isdigit():  # the usual cell ('2700 MHz', '99 %', '570.00 W'): no regular expression needed
        try:
            value = float(head)
        except ValueError:
            pass
        else:
            return value if math.isfinite(value) and abs(value) < 1e9 else None
    m = _NUMBER.search(text or "")
    if not m or "N/A" in text or "Not Supported" in text.title():
        return None
    value = float(m.group(0))
    return value if math.isfinite(value) and abs(value) < 1e9 else None


def reasons_value(text: str) -> Optional[int]:
    """The clock-reason bitmask of a cell: `0x...` hex, zero-padded hex without `0x`, decimal (`64`), or names
    (`HW Thermal Slowdown`, several joined by `,`, `|` or `;`). None when the cell says nothing readable
    (`[N/A]`, `[Not Supported]`, garbage): not measured, which is not the same as no reason."""
    text = (text or "").strip().strip('"').strip()
    low = text.lower()
    try:
        if low.startswith("0x"):
            return int(low, 16)
        if re.fullmatch(r"[0-9a-f]+", low) and (len(low) >= 8 or re.search(r"[a-f]", low)):
            return int(low, 16)  # zero-padded or with hex letters: the bitmask without its 0x
        if low.isdigit():
            return int(low)
    except ValueError:
        return None
    names = [n.strip() for n in re.split(r"[,|;+]", low) if n.strip()]
    if names and all(n in REASON_NAMES for n in names):
        return sum({REASON_NAMES[n] for n in names})
    return None


@dataclass
class SmiRow:
    """One sample of one GPU, as the CSV log or a -q dump gives it (None = not reported)."""

    gpu: str
    name: str = ""
    time: str = ""
    util: Optional[float] = None
    temp: Optional[float] = None
    slowdown_temp: Optional[float] = None
    power: Optional[float] = None
    limit: Optional[float] = None
    gen: Optional[float] = None
    gen_max: Optional[float] = None
    width: Optional[float] = None
    width_max: Optional[float] = None
    reasons: int = 0
    reasons_read: bool = True  # False: the reasons cell said nothing readable ([N/A], [Not Supported], garbage)
    lost: str = ""  # a cell nvidia-smi writes when the GPU no longer answers ([GPU requires reset], ...)
    clock: Optional[float] = None  # SM clock, MHz
    ecc_uncorrected: Optional[float] = None
    retired_pending: bool = False
    remap_failure: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def tally(tallies: dict[str, GpuTally], row: SmiRow, temp_limit_c: float) -> None:
    """Add one sample to its GPU's running counts."""
    t = tallies.setdefault(row.gpu, GpuTally(name=row.name))
    t.samples += 1
    t.first = t.first or row.time
    t.last = row.time or t.last
    if row.lost:
        t.lost += 1
        t.lost_text = t.lost_text or row.lost
        return  # nothing else in the row is a reading
    loaded = (row.util is not None and row.util >= LOADED_UTIL) or (
        row.power is not None and row.limit and row.power >= 0.6 * row.limit)
    if row.temp is not None:
        t.max_temp = max(t.max_temp, row.temp)
        if row.temp >= (row.slowdown_temp - 5 if row.slowdown_temp else temp_limit_c):
            t.hot += 1
    t.ecc_uncorrected = max(t.ecc_uncorrected, row.ecc_uncorrected or 0.0)
    t.retired_pending = t.retired_pending or row.retired_pending
    if not loaded:
        return
    t.loaded += 1
    gen_short = row.gen is not None and row.gen_max is not None and row.gen < row.gen_max
    width_short = row.width is not None and row.width_max is not None and row.width < row.width_max
    if gen_short or width_short:
        t.link_down += 1
        t.worst_link = f"Gen{row.gen:g} x{row.width:g} (max Gen{row.gen_max:g} x{row.width_max:g})" \
            if None not in (row.gen, row.width, row.gen_max, row.width_max) else "below its maximum"
    if row.reasons & SW_POWER_CAP or (row.power is not None and row.limit and row.power >= 0.97 * row.limit):
        t.power_cap += 1
    if row.reasons & SW_THERMAL:
        t.sw_thermal += 1
    if row.reasons & (HW_SLOWDOWN | HW_THERMAL | HW_POWER_BRAKE):
        t.hw_slowdown += 1
        t.power_brake += bool(row.reasons & HW_POWER_BRAKE)
        t.hw_thermal += bool(row.reasons & HW_THERMAL)


def _often(count: int, t: GpuTally) -> bool:
    return count >= min(MIN_SAMPLES, t.loaded) and count >= SHARE * t.loaded and count > 0


def findings(tallies: dict[str, GpuTally]) -> list[SmiFinding]:
    """What the counts say, per GPU, with the causes each points at."""
    out: list[SmiFinding] = []
    for gpu, t in tallies.items():
        label = f"GPU {gpu}" + (f" ({t.name})" if t.name else "")
        share = (lambda n: f"{n} of {t.loaded} samples under load")  # noqa: E731
        if t.lost:
            out.append(SmiFinding("gpu_lost", "problem", gpu, f"{label}: nvidia-smi wrote {t.lost_text!r} in {t.lost} "
                                  f"of {t.samples} rows: the GPU fell off the bus or stopped answering (the Xid 79 "
                                  "finding): its power cables, riser and slot, or the card", (("gpu_hardware", 2.0),
                                                                                              ("pcie_link", 2.0),
                                                                                              ("psu_power", 1.0))))
        if _often(t.link_down, t):
            out.append(SmiFinding("link_down", "problem", gpu, f"{label}: PCIe link trained down under load to "
                                  f"{t.worst_link} in {share(t.link_down)}: riser, slot, seating or the card's "
                                  "connector (an idle card may drop its Gen to save power; under load it should not)",
                                  (("pcie_link", 3.0), ("gpu_hardware", 1.0))))
        if _often(t.hw_slowdown, t):
            why = ("the PSU or board asserted power brake" if t.power_brake else
                   "hardware thermal slowdown" if t.hw_thermal else "overheating or an external power-brake signal")
            causes = (("psu_power", 3.0),) if t.power_brake else (("thermal", 3.0),) if t.hw_thermal else (
                ("psu_power", 1.5), ("thermal", 1.5))
            out.append(SmiFinding("hw_slowdown", "problem", gpu, f"{label}: HW Slowdown active in "
                                  f"{share(t.hw_slowdown)}: {why} halves clocks or worse", causes))
        if _often(t.sw_thermal, t):
            out.append(SmiFinding("thermal_slowdown", "warning", gpu, f"{label}: SW thermal slowdown (0x20) active in "
                                  f"{share(t.sw_thermal)}: the driver lowers clocks to hold the temperature "
                                  f"(up to {t.max_temp:g} °C)", (("thermal", 2.0),)))
        if _often(t.power_cap, t):
            out.append(SmiFinding("power_cap", "warning", gpu, f"{label}: at its power cap in {share(t.power_cap)}: "
                                  "the card runs at its full board power for hours, the PSU's hardest sustained load "
                                  "(and the clocks the cap allows)", (("psu_power", 0.5),)))
        if t.hot and t.max_temp > -math.inf:
            out.append(SmiFinding("hot", "warning", gpu, f"{label}: reached {t.max_temp:g} °C, at or near its "
                                  f"slowdown temperature in {t.hot} of {t.samples} samples", (("thermal", 2.0),)))
        if t.ecc_uncorrected > 0:
            out.append(SmiFinding("ecc", "problem", gpu, f"{label}: {t.ecc_uncorrected:g} uncorrected ECC error(s)",
                                  (("gpu_hardware", 3.0),)))
        if t.retired_pending:
            out.append(SmiFinding("retired_pages", "problem", gpu, f"{label}: retired pages or remapped rows pending: "
                                  "reset the GPU; a rising count means RMA", (("gpu_hardware", 2.0),)))
        if t.idle_while_others_work >= MIN_SAMPLES:
            out.append(SmiFinding("gpu_idle", "warning", gpu, f"{label}: idle in {t.idle_while_others_work} of "
                                  f"{t.samples} samples while another GPU worked: a stuck rank or a data-parallel "
                                  "imbalance", (("software", 1.0),)))
        lag = t.lagging + t.idle_while_others_work
        if t.lagging and lag >= MIN_SAMPLES and lag >= SHARE * t.instants_with_busy_peer:
            out.append(SmiFinding("gpu_imbalance", "warning", gpu, f"{label}: under half the busiest GPU's "
                                  f"utilisation in {lag} of {t.instants_with_busy_peer} samples while another GPU "
                                  "worked: the GPUs wait on the input pipeline (data loading or preprocessing on one "
                                  "rank, too few DataLoader workers), an uneven split, or torch.nn.DataParallel "
                                  "gathering on GPU 0", (("software", 1.0),)))
    return out


# ---- CSV logs --------------------------------------------------------------------------------------
_CSV_FIELDS = {
    "timestamp": "time", "index": "index", "name": "name", "pci.bus_id": "bus", "temperature.gpu": "temp",
    "utilization.gpu": "util", "power.draw": "power", "power.limit": "limit", "enforced.power.limit": "limit",
    "pcie.link.gen.current": "gen", "pcie.link.gen.gpucurrent": "gen", "pcie.link.gen.max": "gen_max",
    "pcie.link.gen.gpumax": "gen_max", "pcie.link.width.current": "width", "pcie.link.width.max": "width_max",
    "clocks_throttle_reasons.active": "reasons", "clocks_event_reasons.active": "reasons",
    "ecc.errors.uncorrected.volatile.total": "ecc", "retired_pages.pending": "pending",
    "temperature.gpu.tlimit": "tlimit", "clocks.sm": "clock", "clocks.current.sm": "clock",
    "clocks.max.sm": "clock_max", "clocks.max.sm_clock": "clock_max",
}


def csv_header(line: str) -> Optional[dict[int, str]]:
    """Column index -> field for a `--format=csv` header line ('power.draw [W]'), or None if it is not one."""
    try:
        cells = [c.strip() for c in next(csv.reader([line]), [])]
    except csv.Error:  # a NUL or a stray CR in the line: not a header
        return None
    fields = {i: _CSV_FIELDS[c.split(" [")[0].strip().lower()] for i, c in enumerate(cells)
              if c.split(" [")[0].strip().lower() in _CSV_FIELDS}
    return fields if ("util" in fields.values() or "power" in fields.values() or "temp" in fields.values()) else None


_WORST = {"temp": max, "util": min, "clock": min}  # a column given twice: the value that could hide a fault


def csv_row(cells: list[str], fields: dict[int, str], row_no: int) -> SmiRow:
    values: dict[str, str] = {}
    for i, f in fields.items():
        if i < len(cells):
            if f in values and f in _WORST and values[f] != cells[i].strip():
                a, b = _num(values[f]), _num(cells[i])
                values[f] = "" if a is None or b is None else str(_WORST[f](a, b))  # disagree, one unreadable: unknown
            elif f == "reasons" and f in values:
                a, b = reasons_value(values[f]), reasons_value(cells[i])
                values[f] = "" if a is None or b is None else hex(a | b)
            else:
                values.setdefault(f, cells[i].strip().strip('"').strip())
    gpu = values.get("index") or values.get("bus") or "0"
    reasons = reasons_value(values.get("reasons", "")) if "reasons" in values else 0
    lost = next((c.strip() for c in cells if LOST.search(c)), "") if LOST.search(",".join(cells)) else ""
    return SmiRow(gpu=gpu[:32], name=values.get("name", "")[:60], time=values.get("time", "")[:40],
                  util=_num(values.get("util", "")), temp=_num(values.get("temp", "")),
                  power=_num(values.get("power", "")), limit=_num(values.get("limit", "")),
                  gen=_num(values.get("gen", "")), gen_max=_num(values.get("gen_max", "")),
                  width=_num(values.get("width", "")), width_max=_num(values.get("width_max", "")),
                  reasons=reasons or 0, reasons_read=reasons is not None, lost=lost[:80],
                  ecc_uncorrected=_num(values.get("ecc", "")), clock=_num(values.get("clock", "")),
                  retired_pending=values.get("pending", "").strip().lower() == "yes")


class SmiLog:
    """A `--format=csv` log read line by line into per-GPU running counts (bounded; saved by the watch), so
    `doctor smi`, `doctor events --smi`, the watch and the burn-in judge samples with one set of rules."""

    def __init__(self, name: str, temp_limit_c: float = GPU_HOT_C,
                 on_row: Optional[Callable[[SmiRow], None]] = None) -> None:
        self.name, self.temp_limit_c, self.on_row = name, temp_limit_c, on_row
        self.fields: Optional[dict[int, str]] = None
        self.header = ""
        self.tallies: dict[str, GpuTally] = {}
        self.instant = ""  # the sampling time of the rows in `batch`
        self.batch: dict[str, Optional[float]] = {}  # gpu -> utilisation at that instant

    def feed(self, line: str) -> None:
        text = line.strip()
        if not text:
            return
        if self.fields is None:
            fields = csv_header(line)
            if fields is None:
                raise InputError(f"{self.name}: not an nvidia-smi --format=csv log (header {text[:60]!r})")
            self.fields, self.header = fields, text
            return
        if text == self.header:
            return  # the header nvidia-smi repeats (or writes again after a restart)
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error:
            return
        self.add(csv_row(cells, self.fields, 0))

    def add(self, row: SmiRow) -> None:
        """Count one parsed row (the burn-in parses each line once and hands the row here)."""
        if len(self.tallies) >= MAX_GPUS and row.gpu not in self.tallies:
            return  # a log that invents GPU ids without end: the counts stay bounded
        tally(self.tallies, row, self.temp_limit_c)
        if self.on_row is not None:
            self.on_row(row)
        if row.time != self.instant:
            _imbalance(self.tallies, self.batch)
            self.instant, self.batch = row.time, {}
        if len(self.batch) < MAX_GPUS:
            self.batch[row.gpu] = row.util

    def findings(self) -> list[SmiFinding]:
        """What the counts say now (the sampling instant in progress included)."""
        tallies = {g: replace(t) for g, t in self.tallies.items()}
        _imbalance(tallies, self.batch)
        return findings(tallies)

    def to_json(self) -> dict[str, Any]:
        return {"fields": {str(k): v for k, v in (self.fields or {}).items()}, "header": self.header,
                "tallies": {g: asdict(t) for g, t in self.tallies.items()}, "instant": self.instant,
                "batch": self.batch}

    @classmethod
    def from_json(cls, data: dict[str, Any], name: str, temp_limit_c: float) -> "SmiLog":
        log = cls(name, temp_limit_c)
        try:
            if data.get("fields"):
                log.fields = {int(k): str(v) for k, v in dict(data["fields"]).items()}
                log.header = str(data.get("header", ""))
            known = GpuTally.__dataclass_fields__
            log.tallies = {str(g): GpuTally(**{k: v for k, v in dict(t).items() if k in known})
                           for g, t in dict(data.get("tallies") or {}).items()}
            log.instant = str(data.get("instant", ""))
            log.batch = {str(g): (None if u is None else float(u)) for g, u in dict(data.get("batch") or {}).items()}
        except (TypeError, ValueError, AttributeError):
            raise InputError(f"{name}: the watch state for this log is unreadable; delete the state file") from None
        return log


def read_csv_log(lines: Iterator[str], name: str, temp_limit_c: float) -> dict[str, GpuTally]:
    log = SmiLog(name, temp_limit_c)
    for line in lines:
        log.feed(line)
    if log.fields is None:
        raise InputError(f"{name}: not an nvidia-smi --format=csv log (empty)")
    _imbalance(log.tallies, log.batch)
    return log.tallies


def _imbalance(tallies: dict[str, GpuTally], batch: dict[str, Optional[float]]) -> None:
    """Within one sampling instant: a GPU near 0 % (idle) or under half the busiest one's utilisation (lagging)
    while another is busy."""
    utils = {g: u for g, u in batch.items() if u is not None and g in tallies}
    if len(utils) < 2:
        return
    top = max(utils.values())
    if top < LOADED_UTIL:
        return
    for g, u in utils.items():
        tallies[g].instants_with_busy_peer += 1
        if u < 5:
            tallies[g].idle_while_others_work += 1
        elif u < LAGGING_SHARE * top:
            tallies[g].lagging += 1


# ---- nvidia-smi -q dumps ----------------------------------------------------------------------------
def read_q(lines: Iterator[str], name: str, temp_limit_c: float, fragment: bool = False) -> dict[str, GpuTally]:
    """`nvidia-smi -q` (one or several dumps back to back): indentation gives the section of each key."""
    tallies: dict[str, GpuTally] = {}
    row: Optional[SmiRow] = None
    path: list[tuple[int, str]] = []
    for line in lines:
        text = line.rstrip("\r\n")
        if not text.strip() or text.startswith("="):
            continue
        indent = len(text) - len(text.lstrip())
        if indent == 0 and text.startswith("GPU ") and " : " not in text:
            if row is not None:
                tally(tallies, row, temp_limit_c)
            row, path = SmiRow(gpu=text[4:].strip()[:32]), []
            continue
        while path and path[-1][0] >= indent:
            path.pop()
        m = _Q_LINE.match(text)
        if not m:
            path.append((indent, text.strip().lower()))
            continue
        if row is None and fragment:
            row = SmiRow(gpu="(GPU not named in the fragment)")
        if row is not None:
            _q_value(row, [p for _, p in path], m.group(2).strip().lower(), m.group(3).strip())
    if row is not None:
        tally(tallies, row, temp_limit_c)
    if not tallies:
        raise InputError(f"{name}: no 'GPU 00000000:01:00.0' section found; expected `nvidia-smi -q` output")
    return tallies


def _q_value(row: SmiRow, path: list[str], key: str, value: str) -> None:
    section = path[-1] if path else ""
    where = " / ".join(path)
    if key == "product name":
        row.name = value[:60]
    elif section == "utilization" and key == "gpu":
        row.util = _num(value)
    elif section == "temperature" and key == "gpu current temp":
        row.temp = _num(value)
    elif section == "temperature" and key == "gpu slowdown temp":
        row.slowdown_temp = _num(value)
    elif "power readings" in section and key == "power draw":
        row.power = _num(value)
    elif "power readings" in section and key in ("enforced power limit", "power limit", "current power limit"):
        row.limit = row.limit or _num(value)
    elif section == "pcie generation" and key in ("current", "device current"):
        row.gen = row.gen if row.gen is not None else _num(value)
    elif section == "pcie generation" and key in ("max", "device max"):
        row.gen_max = row.gen_max if row.gen_max is not None else _num(value)
    elif section == "link width" and key == "current":
        row.width = _num(value)
    elif section == "link width" and key == "max":
        row.width_max = _num(value)
    elif "reasons" in where and value.lower() == "active":
        bit = {"sw power cap": SW_POWER_CAP, "hw slowdown": HW_SLOWDOWN, "hw thermal slowdown": HW_THERMAL,
               "hw power brake slowdown": HW_POWER_BRAKE, "sw thermal slowdown": SW_THERMAL}.get(key, 0)
        row.reasons |= bit
    elif "ecc errors" in where and "volatile" in where and ("double bit" in where or "uncorrectable" in key):
        if key in ("total", "sram uncorrectable", "dram uncorrectable") and _num(value):
            row.ecc_uncorrected = (row.ecc_uncorrected or 0) + (_num(value) or 0)
    elif ("retired pages" in where and key.startswith("pending")) or (
            "remapped rows" in where and key == "pending"):
        row.retired_pending = row.retired_pending or value.lower() == "yes"
    elif "remapped rows" in where and key.startswith("remapping failure"):
        row.remap_failure = value.lower() == "yes"
        row.retired_pending = row.retired_pending or row.remap_failure


def read_smi(source: Source, temp_limit_c: float = GPU_HOT_C, expected_gpus: Optional[int] = None) -> list[SmiFinding]:
    """Findings from nvidia-smi output, sniffed from its content: a -q dump (whole or a fragment), a --format=csv log,
    or the plain table and its error lines; the last finding (kind 'coverage') says what that output could show."""
    from planner.doctor.smi_text import is_smi_text, read_table

    with open_text(as_source(source)) as stream:
        head = list(itertools.islice(stream.lines, 60))
        first = next((ln for ln in head if ln.strip()), "")
        lines = whole_lines(itertools.chain(head, stream.lines), stream.name)
        q_lines = sum(bool(_Q_LINE.match(ln.rstrip("\r\n"))) and ln[:1] == " " for ln in head)
        if first.startswith("====") or first.strip().startswith("Timestamp") or first.startswith("GPU "):
            tallies, fragment = read_q(lines, stream.name, temp_limit_c), False
        elif csv_header(first) is not None:
            tallies = read_csv_log((ln for ln in lines if ln.strip()), stream.name, temp_limit_c)
            return findings(tallies) + [SmiFinding("coverage", "info", "", f"{stream.name}: {CSV_BLIND}")]
        elif is_smi_text(head):
            return read_table(lines, stream.name, temp_limit_c, expected_gpus)
        elif q_lines >= 3:
            tallies, fragment = read_q(lines, stream.name, temp_limit_c, fragment=True), True
        else:
            raise InputError(f"{stream.name}: not nvidia-smi output (first line {first.strip()[:60]!r}); read: "
                             "`nvidia-smi` (the table), `nvidia-smi -q` (whole or a fragment), or "
                             "`nvidia-smi --query-gpu=... --format=csv -l 5`")
    what = (f"{stream.name}: a fragment of `nvidia-smi -q`: only the sections pasted were read, so it cannot say the "
            "GPU is healthy; " if fragment else f"{stream.name}: ") + Q_BLIND
    return findings(tallies) + [SmiFinding("coverage", "info", "", what)]


Q_BLIND = ("a -q dump is one instant: it shows ECC counts, retired pages, the link and the throttle reasons now, but no "
           "Xid events and nothing over time; log `--query-gpu ... --format=csv -l 5` while training")
CSV_BLIND = ("a --query-gpu log shows only the columns logged, at its sampling interval; it shows no Xid events "
             "(read `journalctl -k` for those)")
