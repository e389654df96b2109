"""Rank causes of instability from incidents: points per observation, evidence text, tests cheapest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from planner.doctor.catalogue import BUGCHECK_HINTS
from planner.doctor.events import IncidentGroup, days_text
from planner.doctor.report import Hypothesis, Likelihood, TestStep
from planner.doctor.linux_scoring import score_linux
from planner.doctor.runbook import ordered, step_text
from planner.errors import InputError
from planner.settings import GPU_HOT_C
from planner.compat.power import PsuSizing, size_psu

# Hypothesis keys -> the name shown to users (the issue-8 list).
NAMES: dict[str, str] = {
    "driver": "driver",
    "psu_power": "PSU transient/power",
    "gpu_hardware": "GPU hardware",
    "thermal": "thermals",
    "memory": "memory",
    "overclock": "overclock",
    "pcie_link": "PCIe link (slot, riser, seating)",
    "software": "training program / host RAM use",
}
TESTS: dict[str, list[str]] = {
    "driver": ["read_evidence", "clean_driver", "rollback_driver", "tdr_delay"],
    "psu_power": ["read_evidence", "power_limit", "power_stress", "cabling", "gpu_other_pc", "psu_swap"],
    "gpu_hardware": ["stock", "log_thermals", "power_limit", "repaste", "gpu_other_pc", "replace_gpu"],
    "thermal": ["log_thermals", "clean_heatsink", "repaste"],
    "memory": ["stock", "memtest", "replace_ram"],
    "overclock": ["stock", "power_stress"],
    "pcie_link": ["read_evidence", "reseat", "pcie_gen", "gpu_other_pc"],
    "software": ["app_debug", "host_ram", "more_ram"],
}
HIGH, MEDIUM = 5.0, 2.0  # score thresholds for likelihood
CAP = 4  # repeated incidents count up to this many times, so a flood of events cannot dominate
GENERIC_CPU_W = 125  # hardware-facts §1.7 example 3; used only when the CPU power is not given


def find_chip(name: str) -> Optional[Any]:
    """The planner's GPU chip record for a name as people write it ('GTX 1080 Ti', '1080ti'), or None."""
    from planner.catalog.load import load_chips  # the same chip table `planner check` sizes PSUs with

    key = _squash(name)
    for chip in load_chips().values():
        if key in {_squash(chip.name), _squash(chip.id), *(_squash(a) for a in chip.aliases)}:
            return chip
    return None


def _squash(text: str) -> str:
    return "".join(ch for ch in text.lower().replace("geforce", "") if ch.isalnum())


@dataclass
class PowerContext:
    """What we know about the machine's power: from options, or from a GPU the log names."""

    gpu_tgp_w: Optional[list[int]] = None
    cpu_power_w: Optional[int] = None
    psu_w: Optional[int] = None
    gpu_mentions: set[str] = field(default_factory=set)
    gpu_name: Optional[str] = None  # --gpu: the card model, for its vendor PSU floor (as `planner check` uses)

    def sizing(self) -> tuple[Optional[PsuSizing], str]:
        """The planner's PSU sizing (vendor floor included when the card is known) and where the figures came from."""
        gpus, label, floor = self.gpu_tgp_w, "your GPU", None
        chip = None
        if self.gpu_name:
            chip = find_chip(self.gpu_name)
            if chip is None:
                raise InputError(f"--gpu {self.gpu_name[:40]!r}: not a GPU the planner knows (e.g. 'GTX 1080 Ti')")
            label = f"your {chip.name.replace('GeForce ', '')}"
        elif not gpus:
            named = sorted(n for n in self.gpu_mentions if find_chip(n) is not None)
            if not named:
                return None, ""
            chip, label = find_chip(named[0]), f"the {named[0]} the log names"
        if chip is not None:
            gpus = gpus or [chip.tdp_w]
            floor = chip.recommended_psu_w
        assert gpus
        cpu, cpu_label = self.cpu_power_w, "CPU"
        if cpu is None:
            cpu, cpu_label = GENERIC_CPU_W, "an assumed generic CPU (pass --cpu-power)"
        sizing = size_psu(list(gpus), cpu, vendor_floor_w=floor)
        return sizing, f"{label} ({'+'.join(str(g) for g in gpus)} W) and {cpu_label} ({cpu} W)"


class _Board:
    def __init__(self) -> None:
        self.score = {k: 0.0 for k in NAMES}
        self.evidence: dict[str, list[str]] = {k: [] for k in NAMES}
        self.extra_steps: dict[str, list[str]] = {k: [] for k in NAMES}

    def add(self, key: str, points: float, text: str) -> None:
        """Add points with the observation that earns them (every score has its evidence)."""
        self.score[key] += points
        if text not in self.evidence[key]:
            self.evidence[key].append(text)


def _dates(groups: Sequence[IncidentGroup]) -> str:
    return days_text(groups)


def _n_days(groups: Sequence[IncidentGroup]) -> int:
    return len({g.start.date() for g in groups})


def _gpu_hangs(board: _Board, groups: list[IncidentGroup]) -> None:
    hangs = [g for g in groups if g.has("gpu_hang")]
    if not hangs:
        return
    n = len(hangs)
    idle = [g for g in hangs if g.load() == "idle"]
    busy = [g for g in hangs if g.load() == "load"]
    unknown = n - len(idle) - len(busy)
    what = (f"{n} GPU hang/reset incident(s) (nvlddmkm 153, Display 4101 TDR) on {_n_days(hangs)} day(s): "
            f"{_dates(hangs)}")
    board.add("driver", 1.5 * min(n, CAP), what + "; each is the driver resetting a hung GPU (docs/doctor.md §5.1)")
    board.add("gpu_hardware", 1.0 * min(n, CAP), what + "; an ageing card (VRAM, power stage) hangs the same way")
    board.add("overclock", 0.5 * min(n, CAP), "GPU hangs also come from an unstable or factory GPU overclock (§5.2)")
    if idle:
        text = (f"{len(idle)} of the GPU hang incidents happened while idle: a hang without load points at the "
                "driver or the card rather than at power transients")
        board.add("driver", 0.5 * min(len(idle), 2), text)
        board.add("gpu_hardware", 0.5 * min(len(idle), 2), text)
    if busy:
        board.add("psu_power", 1.0 * min(len(busy), CAP),
                  f"{len(busy)} GPU hang incident(s) during training windows: sustained ML load makes the largest "
                  "power excursions (docs/doctor.md §1.2)")
        board.add("thermal", 0.5 * min(len(busy), CAP),
                  f"{len(busy)} GPU hang incident(s) under sustained load, where a Pascal card sits at its {GPU_HOT_C:g} °C "
                  "GPU Boost target (§4.1)")
    if unknown:
        board.add("psu_power", 0.5 * min(unknown, CAP),
                  f"{unknown} GPU hang incident(s) with unknown load; under load they would also fit power "
                  "transients (pass --busy windows or --metrics to tell)")
        board.add("thermal", 0.25 * min(unknown, CAP), f"{unknown} GPU hang incident(s) with unknown load; "
                  "under sustained load heat is one cause")


def _gpu_exceptions(board: _Board, groups: list[IncidentGroup]) -> None:
    exc = [g for g in groups if g.has("gpu_exception")]
    if exc:
        n = min(len(exc), CAP)
        text = f"{len(exc)} incident(s) with NVIDIA engine exceptions (nvlddmkm 13/14) on {_dates(exc)}"
        board.add("gpu_hardware", 1.5 * n, text + ": often failing VRAM or an unstable card")
        board.add("driver", 1.0 * n, text)
        board.add("overclock", 0.5 * n, text + ": also a sign of a GPU memory overclock")


def _hard_resets(board: _Board, groups: list[IncidentGroup], platform: str = "windows") -> None:
    resets = [(g, ev) for g in groups for ev in g.of("hard_reset") if g.reset_without_stop_code(ev)]
    if not resets:
        return
    n = len(resets)
    capped = min(n, 3)
    when = _dates([g for g, _ in resets])
    if platform == "linux":
        text = (f"{n} boot(s) without a clean shutdown and no kernel panic logged ({when}): the machine froze or lost "
                "power; a reset with no crash record is the classic sign of a PSU protection trip, an unstable "
                "overclock or overheating (docs/doctor.md §5.2)")
    else:
        text = (f"{n} Kernel-Power 41 reset(s) with no stop code ({when}): a reset with no bugcheck is the classic "
                "sign of a PSU protection trip, an unstable overclock or overheating (docs/doctor.md §5.2, "
                "errorcodeswiki Event 41)")
    board.add("psu_power", 2.5 * capped, text)
    board.add("thermal", 1.0 * capped, text)
    board.add("overclock", 1.0 * capped, text)
    board.add("gpu_hardware", 0.5 * capped, "a failing card can also take the whole machine down (§5.2)")
    board.add("memory", 0.5 * capped,
              "faulty RAM can also cause a Kernel-Power 41 without a blue screen (§5.3 step 7)" if platform == "windows"
              else "faulty RAM can also freeze a machine without a kernel panic (§5.3 step 7)")
    escalated = [g for g, _ in resets if g.has("gpu_hang", "gpu_exception", "gpu_off_bus", "xid_internal", "xid_gsp",
                                             "xid_other")]
    if escalated:
        k = min(len(escalated), 3)
        esc = (f"{len(escalated)} of the resets followed GPU hangs in the same incident: a GPU hang escalated into a "
               "hard reset without a dump (§5.2)")
        board.add("psu_power", 1.0 * k, esc)
        board.add("gpu_hardware", 1.0 * k, esc)
        board.add("driver", 0.5 * k, esc + ("; a driver fault Windows can handle usually ends in 0x116 "
                  "VIDEO_TDR_FAILURE with a dump instead, so the driver alone may not explain it" if platform == "windows"
                  else "; a driver fault alone usually leaves the machine running (the GPU drops, Linux stays up)"))
    loaded = [g for g, _ in resets if g.load() == "load"]
    if loaded:
        board.add("psu_power", 1.0 * min(len(loaded), 3), f"{len(loaded)} reset(s) came during training windows")
        board.add("thermal", 0.5 * min(len(loaded), 3), f"{len(loaded)} reset(s) came during training windows, "
                  "after hours of sustained heat")
    held = [ev for _, ev in resets if ev.power_button]
    if held:
        text = (f"{len(held)} reset(s) with PowerButtonTimestamp set: the power button was held, so the machine "
                "hung rather than lost power")
        board.add("psu_power", -0.5 * len(held), text)
        board.add("driver", 0.5, text)
        board.add("gpu_hardware", 0.5, text)


def _stop_codes(board: _Board, groups: list[IncidentGroup]) -> None:
    for g in groups:
        for code in g.stop_codes():
            name, key = BUGCHECK_HINTS.get(code, ("", ""))
            day = g.start.date().isoformat()
            if key:
                board.add(key, 2.5, f"stop code 0x{code:X} {name} on {day}")
                if key == "overclock":
                    board.add("psu_power", 1.0, f"stop code 0x{code:X} {name} on {day}: also unstable power")
                    board.add("thermal", 0.5, f"stop code 0x{code:X} {name} on {day}: also overheating")
            else:
                board.add("driver", 0.5, f"stop code 0x{code:X} on {day} (look it up in Microsoft's bug check list)")


def _other(board: _Board, groups: list[IncidentGroup]) -> None:
    for g in groups:
        day = g.start.date().isoformat()
        if g.has("unexpected_shutdown") and not g.has("hard_reset"):
            text = f"unexpected shutdown (EventLog 6008) on {day} without a Kernel-Power 41"
            board.add("psu_power", 1.0, text)
            board.add("thermal", 0.5, text)
            board.add("overclock", 0.5, text)
        if g.has("whea_fatal"):
            text = f"fatal WHEA hardware error on {day}: a machine check, usually the CPU or its power"
            board.add("overclock", 2.0, text + "; undo PBO/curve optimiser")
            board.add("psu_power", 1.0, text)
            board.add("thermal", 1.0, text)
        if g.has("whea_cpu"):
            board.add("overclock", 1.5, f"corrected CPU/bus errors (WHEA 19) on {day}: a marginal CPU overclock/PBO")
            board.add("psu_power", 0.5, f"corrected CPU/bus errors (WHEA 19) on {day}: also a sign of unstable power")
        if g.has("whea_pcie"):
            text = f"corrected PCI Express errors (WHEA 17) on {day}: the GPU link (card, slot or riser)"
            board.add("gpu_hardware", 1.0, text)
            board.add("psu_power", 0.5, text + "; or its power")
        if g.has("whea_memory"):
            board.add("memory", 2.5, f"corrected memory errors (WHEA 47) on {day}")
            board.add("overclock", 1.0, f"corrected memory errors (WHEA 47) on {day}: XMP/EXPO may be too tight")
        if g.has("dump_failed"):
            text = (f"volmgr 161 on {day}: the crash dump could not be written, so a real bugcheck may hide behind "
                    "BugcheckCode 0")
            board.add("driver", 0.5, text)
            board.add("psu_power", -0.5, text)
            for key in ("driver", "psu_power"):
                if "dump_settings" not in board.extra_steps[key]:
                    board.extra_steps[key].append("dump_settings")


def _power_link(board: _Board, power: PowerContext) -> Optional[PsuSizing]:
    if board.score["psu_power"] <= 0:
        return None
    sizing, label = power.sizing()
    if sizing is None:
        board.add("psu_power", 0.0, "pass --gpu-tgp (and --cpu-power) to see the PSU size the planner's rules pick")
        return None
    board.add("psu_power", 0.0, (
        f"planner sizing for {label}: {sizing.sustained_w} W sustained; a legacy ATX 2.x unit needs at least "
        f"{sizing.required_atx2_w} W to carry 100 µs transients, an ATX 3.x unit with native 12V-2x6 at least "
        f"{sizing.required_atx3_w} W; the planner would pick {sizing.recommended_w} W ATX 3.1 (docs/doctor.md §1.7)"
        + (f"; NVIDIA recommends at least {sizing.vendor_floor_w} W for this card, the floor `planner check` also "
           "applies" if sizing.vendor_floor_w else "")))
    if sizing.vendor_floor_w is None and power.gpu_tgp_w and not power.gpu_name:
        board.add("psu_power", 0.0, "pass --gpu with the card's name to include NVIDIA's recommended PSU floor, "
                  "as `planner check` does")
    if power.psu_w is not None:
        if power.psu_w < sizing.required_atx2_w:
            board.add("psu_power", 1.0, f"your {power.psu_w} W unit is below the {sizing.required_atx2_w} W a legacy "
                      "unit needs for this GPU: little or no transient margin (§1.7 example 3)")
        else:
            board.add("psu_power", -0.5, f"your {power.psu_w} W unit meets the sizing; transients are less likely "
                      "unless the unit is ageing")
    return sizing


def _pascal(board: _Board, power: PowerContext) -> None:
    pascal = sorted(n for n in power.gpu_mentions if n.startswith("GTX 10"))
    if pascal and board.score["driver"] > 0:
        board.add("driver", 0.5, f"the log names a {pascal[0]} (Pascal): its last full driver branch is R580, with "
                  "quarterly security-only updates after October 2025 (docs/doctor.md §5.4)")


def _step_text(key: str, sizing: Optional[PsuSizing], platform: str = "windows", psu_w: Optional[int] = None) -> str:
    if key == "psu_swap" and sizing is not None:
        if psu_w is not None and psu_w >= max(sizing.recommended_w, sizing.required_atx2_w):
            return (f"Your {psu_w} W PSU already meets the planner's sizing (the rules `planner check` uses: "
                    f"{sizing.recommended_w} W ATX 3.1, {sizing.required_atx2_w} W for a legacy unit): swap it only "
                    f"for a known-good unit of at least {psu_w} W, to rule out an ageing or faulty unit (§5.3 step 10)")
        smaller = (f"; it is smaller than your {psu_w} W legacy unit because an ATX 3.1 unit is rated to carry "
                   "200 % for 100 µs" + ("" if sizing.vendor_floor_w else
                                         " (pass --gpu to add NVIDIA's recommended floor, as `planner check` does)")
                   if psu_w is not None and psu_w > sizing.recommended_w else "")
        return (f"Swap the PSU for a {sizing.recommended_w} W ATX 3.1 unit with native 12V-2x6: what matters is its "
                f"rated 200 % transient headroom, not only the wattage (a legacy ATX 2.x unit would need "
                f"{sizing.recommended_atx2_w} W for the same spikes) (§5.3 step 10, §1.7){smaller}")
    return step_text(key, platform)


def _tests(keys: list[str], sizing: Optional[PsuSizing], platform: str = "windows",
           psu_w: Optional[int] = None) -> list[TestStep]:
    return [TestStep(step=_step_text(s.key, sizing, platform, psu_w), cost=s.cost) for s in ordered(keys, platform)]


def likelihood(score: float) -> Likelihood:
    return "high" if score >= HIGH else "medium" if score >= MEDIUM else "low"


def _smi(board: _Board, smi: Sequence[Any]) -> None:
    """nvidia-smi observations (planner.doctor.smi.SmiFinding) on the same board as the log events."""
    steps = {"link_down": ("pcie_link", "pcie_gen"), "hw_slowdown": ("psu_power", "power_limit"),
             "ecc": ("gpu_hardware", "ecc_counts"), "retired_pages": ("gpu_hardware", "ecc_counts")}
    for finding in smi:
        for key, points in finding.causes:
            board.add(key, points, f"nvidia-smi: {finding.message}")
        if finding.kind in steps:
            key, step = steps[finding.kind]
            if step not in board.extra_steps[key]:
                board.extra_steps[key].append(step)


def rank(
    groups: list[IncidentGroup], power: Optional[PowerContext] = None, platform: str = "windows",
    smi: Sequence[Any] = (),
) -> tuple[list[Hypothesis], list[TestStep], Optional[PsuSizing]]:
    """Hypotheses with a positive score (most likely first), the merged runbook, and the PSU sizing used."""
    power = power or PowerContext()
    board = _Board()
    for scorer in (_gpu_hangs, _gpu_exceptions, _stop_codes, _other):
        scorer(board, groups)
    _hard_resets(board, groups, platform)
    score_linux(board, groups)
    _smi(board, smi)
    _pascal(board, power)
    sizing = _power_link(board, power)
    order = list(NAMES)
    keys = sorted((k for k in NAMES if board.score[k] > 0), key=lambda k: (-board.score[k], order.index(k)))
    hypotheses = [
        Hypothesis(
            name=NAMES[key],
            likelihood=likelihood(board.score[key]),
            score=round(board.score[key], 2),
            evidence=board.evidence[key],
            tests=_tests(TESTS[key] + board.extra_steps[key], sizing, platform, power.psu_w),
        )
        for key in keys
    ]
    all_keys = [k for key in keys for k in TESTS[key] + board.extra_steps[key]]
    return hypotheses, _tests(all_keys, sizing, platform, power.psu_w), sizing
