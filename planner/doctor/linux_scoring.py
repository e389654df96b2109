"""Points for the Linux kernel-log kinds (Xid, AER, MCE, EDAC, thermal, OOM) on the one board of causes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from planner.doctor.events import IncidentGroup, LogEvent, days_text

CAP = 4  # as for the Windows events: repeats count up to this many incidents


class Board(Protocol):
    def add(self, key: str, points: float, text: str) -> None: ...

    extra_steps: dict[str, list[str]]


def _with(groups: Sequence[IncidentGroup], *kinds: str) -> list[IncidentGroup]:
    return [g for g in groups if g.has(*kinds)]


def _count(groups: Sequence[IncidentGroup], *kinds: str) -> int:
    """Errors, not lines: an EDAC line reporting 262 corrected errors counts 262."""
    return sum(ev.count for g in groups for ev in g.of(*kinds))


def _gpu_devices(groups: Sequence[IncidentGroup]) -> set[str]:
    """PCI addresses (bus:device) the log shows to be NVIDIA GPUs: any Xid, or an AER line the nvidia driver printed."""
    xids = {ev.device[:10] for g in groups for ev in g.events if ev.info.source == "NVRM Xid" and ev.device}
    return xids | {ev.device[:10] for g in groups for ev in g.events
                   if ev.info.source == "PCIe AER" and ev.device and "NVIDIA GPU" in ev.detail}


def _on_gpu(ev: LogEvent, gpus: set[str]) -> bool:
    """An AER event concerns a GPU when its device is one, or when the line names no device (cannot rule it out)."""
    return not ev.device or ev.device[:10] in gpus or "NVIDIA GPU" in ev.detail


def _named(events: list[LogEvent]) -> str:
    names = sorted({ev.detail.split(" on ", 1)[1] for ev in events if " on " in ev.detail})
    return f" on {', '.join(names[:3])}" if names else ""


def _codes(groups: Sequence[IncidentGroup], *kinds: str) -> str:
    return "/".join(str(n) for n in sorted({ev.info.event_id for g in groups for ev in g.of(*kinds)}))


def _step(board: Board, key: str, step: str) -> None:
    if step not in board.extra_steps[key]:
        board.extra_steps[key].append(step)


def _spread(board: Board, found: Sequence[IncidentGroup], text: str, *weights: tuple) -> None:
    """Each (cause, points[, text suffix]) gets points x the incidents found (up to CAP), with the shared text."""
    n = min(len(found), CAP)
    for cause, points, *suffix in weights:
        board.add(cause, points * n, text + (suffix[0] if suffix else ""))


def _devices(events: list[LogEvent]) -> set[str]:
    return {ev.device[:10] for ev in events if ev.device}  # 0000:01:00 (Xid) matches 0000:01:00.0 (AER)


def _xids(board: Board, groups: Sequence[IncidentGroup]) -> None:
    off = _with(groups, "gpu_off_bus")
    if off:
        _spread(board, off, f"{len(off)} incident(s) with Xid 79, GPU fallen off the bus ({days_text(off)}): NVIDIA "
                "lists power, the PCIe link, heat and a failing card as causes (Xid catalogue)",
                ("psu_power", 2.0), ("gpu_hardware", 1.5), ("pcie_link", 1.0), ("thermal", 0.5))
        busy = [g for g in off if g.load() == "load"]
        if busy:
            board.add("psu_power", 1.0 * min(len(busy), CAP), f"{len(busy)} of the Xid 79 came during training "
                      "windows, when the card draws the most power")
        linked = [g for g in off if _devices(g.of("gpu_off_bus")) & _devices(g.of("aer_corrected", "aer_uncorrected"))]
        if linked:
            board.add("pcie_link", 2.0 * min(len(linked), CAP), f"{len(linked)} incident(s) where the same PCI device "
                      "logged PCIe AER errors before it fell off the bus: the link was failing first")
    mem = _with(groups, "gpu_memory")
    if mem:
        _spread(board, mem, f"{_count(mem, 'gpu_memory')} GPU memory ECC / row-remapping event(s) (Xid "
                f"{_codes(mem, 'gpu_memory')}) on {days_text(mem)}: NVIDIA's catalogue points at the GPU's memory",
                ("gpu_hardware", 2.5), ("overclock", 0.5, "; a memory overclock makes it worse"),
                ("thermal", 0.25, "; hot VRAM errs more"))
        _step(board, "gpu_hardware", "ecc_counts")
    app = _with(groups, "xid_app")
    if app:
        _spread(board, app, f"{_count(app, 'xid_app')} application fault(s) on the GPU (Xid {_codes(app, 'xid_app')}) "
                f"on {days_text(app)}: NVIDIA's catalogue names the application first (bad address, killed kernel)",
                ("software", 1.5), ("driver", 0.5, "; if it recurs with several programs, the driver"),
                ("gpu_hardware", 0.25, "; with other Xids beside it, the card"))
    gsp = _with(groups, "xid_gsp")
    if gsp:
        _spread(board, gsp, f"GSP firmware errors (Xid {_codes(gsp, 'xid_gsp')}) on {days_text(gsp)}: driver/firmware "
                "first", ("driver", 2.0), ("gpu_hardware", 0.5))
        _step(board, "driver", "gsp_off")
    internal = _with(groups, "xid_internal")
    if internal:
        _spread(board, internal, f"internal micro-controller errors (Xid {_codes(internal, 'xid_internal')}) on "
                f"{days_text(internal)}: driver, card or heat (Xid catalogue)",
                ("driver", 1.5), ("gpu_hardware", 1.0), ("thermal", 0.5))
    other = _with(groups, "xid_other")
    if other:
        _spread(board, other, f"other Xid events (Xid {_codes(other, 'xid_other')}) on {days_text(other)}; see "
                "NVIDIA's catalogue", ("driver", 1.0), ("gpu_hardware", 0.5))


def _host(board: Board, groups: Sequence[IncidentGroup]) -> None:
    gpus = _gpu_devices(groups)
    corrected = _with(groups, "aer_corrected")
    if corrected:
        total = _count(corrected, "aer_corrected")
        physical = sum("Physical Layer" in ev.detail for g in corrected for ev in g.of("aer_corrected"))
        events = [ev for g in corrected for ev in g.of("aer_corrected")]
        text = (f"{total} corrected PCIe error(s) (AER){_named(events)} on {days_text(corrected)}"
                + (f", {physical} at the physical layer (signal: slot, riser, seating)" if physical else ""))
        board.add("pcie_link", (1.0 + (1.0 if physical else 0.0)) * min(len(corrected), CAP), text)
        on_gpu = [g for g in corrected if any(_on_gpu(ev, gpus) for ev in g.of("aer_corrected"))]
        if on_gpu:
            board.add("gpu_hardware", 0.5 * min(len(on_gpu), CAP), text)
    uncorrected = _with(groups, "aer_uncorrected")
    if uncorrected:
        events = [ev for g in uncorrected for ev in g.of("aer_uncorrected")]
        weights: list[tuple] = [("pcie_link", 2.5), ("psu_power", 0.5, "; unstable power can also break the link")]
        if any(_on_gpu(ev, gpus) for ev in events):
            weights.insert(1, ("gpu_hardware", 1.0))
        _spread(board, uncorrected, f"uncorrected PCIe error(s) (AER){_named(events)} on {days_text(uncorrected)}: "
                "data was lost on the link", *weights)
    for kind, what, points in (("mce_corrected", "corrected machine checks (MCE)", 1.5),
                               ("mce_fatal", "fatal machine checks (MCE)", 2.5)):
        found = _with(groups, kind)
        if found:
            _spread(board, found, f"{_count(found, kind)} {what} on {days_text(found)}: the CPU, its cache or its power",
                    ("overclock", points, "; undo PBO/curve optimiser/XMP first"), ("psu_power", 0.5 * points),
                    ("thermal", 0.25 * points), ("memory", 0.25 * points, " (memory-controller banks point at RAM)"))
    for kind, what, points in (("edac_ce", "corrected ECC RAM errors (EDAC)", 2.5),
                               ("edac_ue", "uncorrected ECC RAM errors (EDAC)", 4.0)):
        found = _with(groups, kind)
        if found:
            _spread(board, found, f"{_count(found, kind)} {what} on {days_text(found)}",
                    ("memory", points, ": a DIMM is failing (the EDAC line names the slot)"),
                    ("overclock", 0.4 * points, ": or the memory is overclocked"))


def _heat_and_software(board: Board, groups: Sequence[IncidentGroup]) -> None:
    throttle = _with(groups, "cpu_throttle")
    if throttle:
        board.add("thermal", 1.5 * min(len(throttle), CAP), f"CPU clock throttled by temperature on "
                  f"{days_text(throttle)}: the CPU cooler cannot keep up")
    hot = _with(groups, "thermal_shutdown")
    if hot:
        board.add("thermal", 4.0 * min(len(hot), CAP), f"critical temperature shutdown on {days_text(hot)}")
    oom = _with(groups, "oom_kill")
    if oom:
        training = sum(ev.info.event_id == 0 for g in oom for ev in g.of("oom_kill"))
        text = (f"the OOM killer ended {_count(oom, 'oom_kill')} process(es) on {days_text(oom)}"
                + (f", {training} of them training processes" if training else "")
                + ": the machine ran out of host RAM; not a hardware fault")
        board.add("software", (3.0 if training else 1.0) * min(len(oom), CAP), text)
    panic = _with(groups, "kernel_panic")
    if panic:
        _spread(board, panic, f"kernel panic(s) on {days_text(panic)}", ("driver", 1.0), ("memory", 0.5),
                ("psu_power", 0.5))
    lockup = _with(groups, "lockup")
    if lockup:
        _spread(board, lockup, f"CPU lockups or hung tasks on {days_text(lockup)}", ("driver", 1.0), ("overclock", 0.5),
                ("thermal", 0.25))


def score_linux(board: Board, groups: Sequence[IncidentGroup]) -> None:
    """Add the Linux kinds' points; a Windows log has none of these kinds, so nothing changes for it."""
    _xids(board, groups)
    _host(board, groups)
    _heat_and_software(board, groups)
