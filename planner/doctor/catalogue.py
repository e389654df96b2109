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
    # Linux kernel log (journalctl -k, dmesg): see planner/doctor/kernel.py for the message patterns
    "gpu_off_bus",  # Xid 79
    "xid_app",  # Xid 13, 31, 43: usually the application
    "gpu_memory",  # Xid 48, 63, 64, 92, 94, 95: VRAM ECC and row remapping
    "xid_gsp",  # Xid 119, 120: GSP firmware
    "xid_internal",  # Xid 61, 62: internal micro-controller
    "aer_corrected",
    "aer_uncorrected",
    "mce_corrected",
    "mce_fatal",
    "edac_ce",
    "edac_ue",
    "cpu_throttle",
    "thermal_shutdown",
    "oom_kill",
    "kernel_panic",
    "lockup",
    "xid_other",  # any other Xid code
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

XID = "NVIDIA Xid catalogue, https://docs.nvidia.com/deploy/xid-errors/ (Xid %d)"
AER = "Linux kernel PCIe AER howto, https://docs.kernel.org/PCI/pcieaer-howto.html"
MCE = "Linux kernel machine-check docs, https://docs.kernel.org/arch/x86/x86_64/machinecheck.html"
EDAC = "Linux kernel EDAC docs, https://docs.kernel.org/driver-api/edac.html"
KERNEL = "Linux kernel log message as printed by the kernel [meaning as commonly documented]"


def _xid(number: int, kind: Kind, meaning: str, weight: Weight) -> EventInfo:
    return EventInfo("NVRM Xid", number, kind, f"Xid {number}: {meaning}", weight, XID % number)


_LINUX = (
    _xid(79, "gpu_off_bus", "GPU has fallen off the bus (the card stopped answering on PCIe: power, link, heat "
         "or a dead card)", "high"),
    _xid(13, "xid_app", "graphics engine exception (usually the application: an out-of-range access)", "low"),
    _xid(31, "xid_app", "GPU memory page fault (usually the application: an illegal address)", "low"),
    _xid(43, "xid_app", "GPU stopped processing the application's work (a software fault; the GPU stays usable)",
         "low"),
    _xid(48, "gpu_memory", "double-bit ECC error in GPU memory (uncorrectable)", "high"),
    _xid(63, "gpu_memory", "ECC page retirement or row remapping recorded (GPU memory cells going bad)", "medium"),
    _xid(64, "gpu_memory", "ECC page retirement or row remapping failed to record", "high"),
    _xid(92, "gpu_memory", "high single-bit ECC error rate in GPU memory", "medium"),
    _xid(94, "gpu_memory", "contained ECC error (one application affected; reset the GPU)", "high"),
    _xid(95, "gpu_memory", "uncontained ECC error (every application on the GPU affected; reset it)", "high"),
    _xid(119, "xid_gsp", "GSP firmware RPC timeout (the GPU's system processor did not answer the driver)", "high"),
    _xid(120, "xid_gsp", "GSP firmware error", "high"),
    _xid(61, "xid_internal", "internal micro-controller breakpoint/warning", "medium"),
    _xid(62, "xid_internal", "internal micro-controller halt", "high"),
    _xid(8, "xid_other", "GPU stopped processing (channel idle timeout)", "medium"),
    _xid(32, "xid_other", "invalid or corrupted push buffer stream (driver, PCIe bus or system memory)", "medium"),
    _xid(45, "noise", "preemptive cleanup of a channel after an earlier error or a killed process; it follows the "
         "error that matters", "none"),
    _xid(154, "xid_other", "GPU recovery action changed (the driver asks for a GPU reset or a reboot)", "medium"),
    EventInfo("PCIe AER", 0, "aer_corrected", "corrected PCI Express error (the link retried; data intact)", "low",
              AER),
    EventInfo("PCIe AER", 1, "aer_uncorrected", "uncorrected PCI Express error (non-fatal or fatal: data lost on "
              "the link)", "high", AER),
    EventInfo("MCE", 0, "mce_corrected", "corrected machine check (CPU, cache or memory controller)", "medium", MCE),
    EventInfo("MCE", 1, "mce_fatal", "fatal machine check: the CPU could not continue (kernel panic)", "high", MCE),
    EventInfo("EDAC", 0, "edac_ce", "corrected memory (ECC RAM) error reported by EDAC", "medium", EDAC),
    EventInfo("EDAC", 1, "edac_ue", "uncorrected memory (ECC RAM) error reported by EDAC", "high", EDAC),
    EventInfo("thermal", 0, "cpu_throttle", "CPU temperature above threshold: clock throttled", "medium", KERNEL),
    EventInfo("thermal", 1, "thermal_shutdown", "critical temperature reached: the kernel shut the machine down",
              "high", KERNEL),
    EventInfo("OOM killer", 0, "oom_kill", "out of host memory (RAM): the kernel killed the training process",
              "high", KERNEL),
    EventInfo("OOM killer", 1, "oom_kill", "out of host memory (RAM): the kernel killed a process", "medium", KERNEL),
    EventInfo("kernel", 1, "kernel_panic", "kernel panic: the machine stopped", "high", KERNEL),
    EventInfo("kernel", 2, "lockup", "a CPU was stuck (soft/hard lockup or hung task watchdog)", "medium", KERNEL),
    EventInfo("boot", 0, "hard_reset", "booted again without a clean shutdown (froze, crashed or lost power)",
              "high", KERNEL + "; a filesystem journal replayed at boot, or a boot ending on a fatal event"),
    EventInfo("boot", 1, "unexpected_shutdown", "a filesystem journal was replayed at boot: confirms the previous "
              "shutdown was not clean", "medium", KERNEL),
    EventInfo("kernel", 100, "noise", "firmware ACPI table warning printed at every boot; unrelated to crashes",
              "none", KERNEL),
    EventInfo("kernel", 101, "noise", "the NVIDIA module taints the kernel (out-of-tree/proprietary): printed at "
              "every load, harmless", "none", KERNEL),
    EventInfo("kernel", 102, "noise", "i2c timeout on the card's USB-C controller (nvidia-gpu), common on Turing "
              "boards; unrelated to training crashes", "none", KERNEL),
)


LINUX_SOURCES = frozenset(e.source for e in _LINUX)

# Provider names as XML / Get-WinEvent print them -> the Event Viewer display name.
_ALIASES = {
    "microsoft-windows-wer-systemerrorreporting": "bugcheck",
    "wer-systemerrorreporting": "bugcheck",
    "nvlddmkm": "nvlddmkm",
}
_BY_KEY = {(e.source.lower(), e.event_id): e for e in _ENTRIES + _LINUX}


def provider_key(provider: str) -> str:
    """Normalise 'Microsoft-Windows-Kernel-Power' and 'Kernel-Power' to one lower-case key."""
    p = provider.strip().lower()
    if p in _ALIASES:
        return _ALIASES[p]
    if p.startswith("microsoft-windows-"):
        p = p[len("microsoft-windows-"):]
    return p


def lookup(provider: str, event_id: int) -> Optional[EventInfo]:
    """The catalogue entry for an event, keyed by provider and id (Kernel-Power 42 is not Hyper-V 42)."""
    key = provider_key(provider)
    found = _BY_KEY.get((key, event_id))
    if found is None and key == "nvrm xid":  # any other Xid: still a GPU event, meaning in NVIDIA's catalogue
        return _xid(event_id, "xid_other", "see NVIDIA's Xid catalogue for this code", "medium")
    return found


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
