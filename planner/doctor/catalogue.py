"""Event catalogue: (provider, event id) -> what it means for GPU/PSU stability, its weight, noise or not."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional

Kind = Literal[
    "hard_reset",  # Kernel-Power 41
    "gpu_hang",  # nvlddmkm 153, Display 4101 (TDR)
    "gpu_exception",  # nvlddmkm 13/14
    "bugcheck",  # BugCheck 1001
    "unexpected_shutdown",  # EventLog 6008
    "whea_fatal",
    "whea_pcie",
    "whea_cpu",
    "whea_memory",
    "dump_failed",  # volmgr 161
    "sleep",
    "wake",
    "noise",
]
Weight = Literal["high", "medium", "low", "none"]

FACTS = "docs/doctor.md §5.1"
# Meanings not covered by docs/doctor.md §5.1 are the commonly documented ones; they are marked
# so nobody mistakes them for verified facts.
UNVERIFIED = "meaning as commonly reported; not in docs/doctor.md §5.1 [UNVERIFIED]"


@dataclass(frozen=True)
class EventInfo:
    """What one catalogued event means and how much it counts."""

    source: str  # display name as Event Viewer shows it
    event_id: int
    kind: Kind
    meaning: str
    weight: Weight
    reference: str

    @property
    def noise(self) -> bool:
        return self.kind == "noise"

    @property
    def context(self) -> bool:
        """Sleep/wake markers: they tell load from idle but are not incidents themselves."""
        return self.kind in ("sleep", "wake")


_ENTRIES = (
    EventInfo("Kernel-Power", 41, "hard_reset",
              "rebooted without a clean shutdown (stopped responding, crashed or lost power)", "high", FACTS),
    EventInfo("nvlddmkm", 153, "gpu_hang", "NVIDIA driver reset a hung GPU (Windows had to intervene)", "high", FACTS),
    EventInfo("Display", 4101, "gpu_hang",
              "display driver nvlddmkm stopped responding and recovered (TDR: GPU missed the 2 s timeout)", "high",
              FACTS + "; Microsoft TDR registry keys doc"),
    EventInfo("nvlddmkm", 13, "gpu_exception", "NVIDIA driver reported a graphics engine exception", "medium",
              UNVERIFIED),
    EventInfo("nvlddmkm", 14, "gpu_exception", "NVIDIA driver reported a GPU engine error", "medium", UNVERIFIED),
    EventInfo("BugCheck", 1001, "bugcheck", "rebooted from a bugcheck (blue screen); the stop code is logged", "high",
              "docs/doctor.md §5.2"),
    EventInfo("EventLog", 6008, "unexpected_shutdown", "the previous system shutdown was unexpected", "medium",
              "docs/doctor.md §5 (pairs with Kernel-Power 41)"),
    EventInfo("WHEA-Logger", 1, "whea_fatal", "fatal hardware error reported by the platform (WHEA)", "high",
              UNVERIFIED),
    EventInfo("WHEA-Logger", 17, "whea_pcie", "corrected hardware error on a PCI Express link", "medium", UNVERIFIED),
    EventInfo("WHEA-Logger", 18, "whea_fatal", "fatal hardware error (machine check), usually the CPU", "high",
              UNVERIFIED),
    EventInfo("WHEA-Logger", 19, "whea_cpu", "corrected hardware error in the CPU, cache or bus", "medium",
              UNVERIFIED),
    EventInfo("WHEA-Logger", 47, "whea_memory", "corrected memory error", "medium", UNVERIFIED),
    EventInfo("volmgr", 161, "dump_failed", "crash dump creation failed, so a stop code may be missing", "medium",
              UNVERIFIED),
    EventInfo("Kernel-PnP", 219, "noise",
              "WudfRd failed to load for a software device at boot; boot timing, unrelated to crashes", "none", FACTS),
    EventInfo("Hyper-V-Hypervisor", 42, "noise",
              "hypervisor did not launch: SVM (AMD-V) disabled in firmware; unrelated to crashes", "none", FACTS),
    EventInfo("Kernel-Power", 42, "sleep", "the system is entering sleep", "none", UNVERIFIED),
    EventInfo("Kernel-Power", 107, "wake", "the system resumed from sleep", "none", UNVERIFIED),
    EventInfo("Power-Troubleshooter", 1, "wake", "the system returned from a low power state", "none", UNVERIFIED),
)

# Provider names as XML / Get-WinEvent print them -> the Event Viewer display name.
_ALIASES = {
    "microsoft-windows-wer-systemerrorreporting": "bugcheck",
    "wer-systemerrorreporting": "bugcheck",
    "nvlddmkm": "nvlddmkm",
}
_BY_KEY = {(e.source.lower(), e.event_id): e for e in _ENTRIES}
_DISPLAY = {e.source.lower(): e.source for e in _ENTRIES}


def provider_key(provider: str) -> str:
    """Normalise 'Microsoft-Windows-Kernel-Power' and 'Kernel-Power' to one lower-case key."""
    p = provider.strip().lower()
    if p in _ALIASES:
        return _ALIASES[p]
    if p.startswith("microsoft-windows-"):
        p = p[len("microsoft-windows-"):]
    return p


def display_source(provider: str) -> str:
    """The name Event Viewer shows in its Source column."""
    key = provider_key(provider)
    return _DISPLAY.get(key, provider.strip())


def lookup(provider: str, event_id: int) -> Optional[EventInfo]:
    """The catalogue entry for an event, keyed by provider and id (Kernel-Power 42 is not Hyper-V 42)."""
    return _BY_KEY.get((provider_key(provider), event_id))


# Stop codes that point somewhere specific (Microsoft bug check reference names).
BUGCHECK_HINTS: dict[int, tuple[str, str]] = {
    0x116: ("VIDEO_TDR_FAILURE", "driver"),
    0x117: ("VIDEO_TDR_TIMEOUT_DETECTED", "driver"),
    0x119: ("VIDEO_SCHEDULER_INTERNAL_ERROR", "driver"),
    0x10E: ("VIDEO_MEMORY_MANAGEMENT_INTERNAL", "driver"),
    0x124: ("WHEA_UNCORRECTABLE_ERROR", "overclock"),
    0x101: ("CLOCK_WATCHDOG_TIMEOUT", "overclock"),
    0x1A: ("MEMORY_MANAGEMENT", "memory"),
    0x50: ("PAGE_FAULT_IN_NONPAGED_AREA", "memory"),
    0x3B: ("SYSTEM_SERVICE_EXCEPTION", "driver"),
    0x133: ("DPC_WATCHDOG_VIOLATION", "driver"),
}
