"""Classify one Linux kernel message (NVIDIA Xid, PCIe AER, MCE, EDAC, thermal, OOM, panic) into the catalogue."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

# NVRM: Xid (PCI:0000:01:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
# Some drivers print "Xid (0000:01:00): 3, ..." without the PCI: prefix.
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\): (\d{1,4})\b"
                  r"(?:, pid=(?:'?<?([^,'>]*)>?'?), name=([^,]*))?")
# NVRM: GPU 0000:01:00.0: GPU has fallen off the bus.  (printed beside Xid 79, or alone by old drivers)
_OFF_BUS = re.compile(r"NVRM: GPU (?:at (?:PCI:)?)?([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)"
                      r":? (?:has fallen|GPU has fallen) off the bus")
# Any other wording (newer drivers, several lines, no Xid number):
#   NVRM: The NVIDIA GPU 0000:b3:00.0
#   NVRM: (PCI ID: 10de:26b5) installed in this system has
#   NVRM: fallen off the bus and is not responding to commands.
_FALLEN = re.compile(r"fallen\s+off\s+(?:of\s+)?the\s+bus", re.IGNORECASE)
PCI_ADDRESS = re.compile(r"\b(?:PCI:)?([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\b")
# nvidia 0000:01:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
_AER = re.compile(r"(?:^|(\S+)\s)([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): (?:AER: )?PCIe Bus Error: "
                  r"severity=([A-Za-z]+(?: \((?:Non-)?Fatal\))?), type=([A-Za-z ]+?)(?:,|$)")
_AER_OLD = re.compile(r"PCIe Bus Error: severity=([A-Za-z]+(?: \((?:Non-)?Fatal\))?), type=([A-Za-z ]+?),")
# The root port's summary, often the only line when the device went inaccessible: pcieport 0000:00:01.1: AER:
# [Multiple ]Uncorrected (Fatal) error received: 0000:01:00.0  (or "error message received from", or "id=00e0")
_AER_FATAL = re.compile(r"AER: (?:Multiple )?Uncorrected \(Fatal\) error (?:message )?received(?: from)?:? "
                        r"(?:([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d)|id=([0-9a-fA-F]+))?")
# mce: [Hardware Error]: CPU 3: Machine Check: 0 Bank 5: bea0000000000108
_MCE_BANK = re.compile(r"\[Hardware Error\]: CPU (\d+): Machine Check(?: Exception)?: (\d+) Bank (\d+): ([0-9a-f]+)")
# AMD decoder: [Hardware Error]: CPU:0 (19:21:0) MC5_STATUS[Over|CE|MiscV|AddrV|-|-|SyndV|-|-|-]: 0x...
_MCE_AMD = re.compile(r"\[Hardware Error\]: CPU:(\d+) \([0-9a-f:]+\) MC(\d+)_STATUS\[([^\]]*)\]")
_MCE_FATAL = re.compile(r"Kernel panic - not syncing: Fatal [Mm]achine check|Machine check: Processor context corrupt"
                        r"|\[Hardware Error\]: Uncorrected|\[Hardware Error\]: Machine check: .*(?:fatal|corrupt)")
# EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 ...)
_EDAC = re.compile(r"EDAC (?:MC|mc)(\d+): (\d+) (CE|UE) (.{0,120})")
_THROTTLE = re.compile(r"CPU(\d+): (Core|Package) temperature above threshold, cpu clock throttled")
_CRITICAL = re.compile(r"critical temperature reached(?: \((\d+) C\))?.*shutting down", re.IGNORECASE)
# Out of memory: Killed process 4242 (python3) total-vm:... / Memory cgroup out of memory: Killed process ...
_OOM = re.compile(r"(Memory cgroup out of memory|Out of memory)(?: \([^)]*\))?: Kill(?:ed)? process (\d+) \(([^)]*)\)"
                  r"(?:.*?anon-rss:(\d+)kB)?")
_PANIC = re.compile(r"Kernel panic - not syncing: (.{0,80})")
_LOCKUP = re.compile(r"watchdog: BUG: soft lockup - CPU#(\d+) stuck for (\d+)s! \[([^\]]*)\]"
                     r"|Watchdog detected hard LOCKUP on cpu (\d+)|INFO: task (\S+) blocked for more than (\d+) seconds")
_FS_RECOVERY = re.compile(r"EXT4-fs \(([^)]+)\): recovery complete|XFS \(([^)]+)\): Starting recovery"
                          r"|BTRFS info \(device ([^)]+)\): (?:start tree-log replay|replaying log)")
_NOISE = (
    (re.compile(r"ACPI BIOS Error \(bug\)|ACPI Error: AE_NOT_FOUND|ACPI Warning: SystemIO range"), 100),
    (re.compile(r"loading out-of-tree module taints kernel|module verification failed: signature and/or required key"
                r"|module license '[^']*' taints kernel|Disabling lock debugging due to kernel taint"), 101),
    (re.compile(r"nvidia-gpu [0-9a-fA-F:.]+: i2c timeout error"), 102),
)
# Names of processes that are training runs (for the OOM killer): python and the usual launchers.
TRAINING_NAMES = re.compile(r"^(python[\d.]*|pt_main_thread|torchrun|accelerate|deepspeed|pt_data_worker|"
                            r"pt_autograd_\d+|jupyter.*|ipykernel.*)$")
# Lines that close a boot cleanly (kernel_restart / kernel_power_off / kernel_halt).
CLEAN_SHUTDOWN = re.compile(r"reboot: (?:Power down|Restarting system|System halted)|systemd-shutdown\[\d+\]: ")
BOOT_START = re.compile(r"^Linux version \d")
XID_CLASSES = {79, 13, 31, 43, 48, 63, 64, 92, 94, 95, 119, 120, 61, 62}


@dataclass(frozen=True, slots=True)
class Hit:
    """One catalogued kernel message: catalogue key (provider, id) and the detail worth showing."""

    provider: str
    event_id: int
    detail: str = ""
    device: str = ""  # PCI address for Xid and AER
    count: int = 1  # errors the line reports (EDAC "262 CE")


_CAUSED_BY = re.compile(r"caused by previous Xid (\d{1,4})")


def _xid(m: re.Match[str]) -> Hit:
    pci, number = m.group(1), int(m.group(2))
    cause = _CAUSED_BY.search(m.string) if number == 45 else None
    if cause:  # Xid 45 is the driver cleaning up after another Xid, which it names: that one is the event
        number = int(cause.group(1))
        return Hit("NVRM Xid", number, f"GPU at PCI {pci} (named by the Xid 45 cleanup after it)", pci)
    who = f", process {m.group(4).strip()} (pid {m.group(3)})" if m.group(4) and m.group(3) not in ("", "unknown") \
        else ""
    return Hit("NVRM Xid", number, f"GPU at PCI {pci}{who}", pci)


def fallen_off_bus(message: str, device: str = "") -> Hit:
    """'Fallen off the bus' in any wording is the Xid 79 event; the GPU address when the line names one."""
    m = PCI_ADDRESS.search(message.split("fallen", 1)[0]) or PCI_ADDRESS.search(message)
    pci = m.group(1) if m else device
    where = f"GPU at PCI {pci}" if pci else "a GPU (address not on this line)"
    return Hit("NVRM Xid", 79, f"{where} (driver message: fallen off the bus)", pci)


def _aer(message: str) -> Optional[Hit]:
    m = _AER.search(message)
    driver = ""
    if m:
        driver, device, severity, kind = m.group(1) or "", m.group(2), m.group(3), m.group(4).strip()
    else:
        old = _AER_OLD.search(message)
        if not old:
            fatal = _AER_FATAL.search(message)
            if not fatal:
                return None
            device = fatal.group(1) or ""
            return Hit("PCIe AER", 1, "Uncorrected (Fatal) error received" + (f" from {device}" if device else
                       f", id={fatal.group(2)}" if fatal.group(2) else ""), device)
        device, severity, kind = "", old.group(1), old.group(2).strip()
    corrected = severity.lower() in ("corrected", "correctable")  # kernels print either word
    role = {"pcieport": " (PCIe port: a root port or bridge)", "nvidia": " (NVIDIA GPU)"}.get(driver, "")
    where = f" on {driver + ' ' if driver else ''}{device}{role}" if device else ""
    return Hit("PCIe AER", 0 if corrected else 1, f"{severity}, {kind}{where}", device)


def _mce(message: str) -> Optional[Hit]:
    if _MCE_FATAL.search(message):
        return Hit("MCE", 1, message.split("]: ", 1)[-1][:100])
    m = _MCE_BANK.search(message)
    if m:
        status = int(m.group(4), 16)
        uncorrected = bool(status >> 61 & 1)  # MCi_STATUS.UC (Intel SDM vol. 3B §16.3.2.2, AMD APM vol. 2)
        return Hit("MCE", 1 if uncorrected and status >> 57 & 1 else 0,  # UC + PCC: processor context corrupt
                   f"CPU {m.group(1)} bank {m.group(3)} status 0x{m.group(4)}")
    amd = _MCE_AMD.search(message)
    if amd:
        flags = set(amd.group(3).split("|"))
        fatal = "UE" in flags and "PCC" in flags
        return Hit("MCE", 1 if fatal else 0, f"CPU {amd.group(1)} MC{amd.group(2)} [{amd.group(3)}]")
    return None


def classify(message: str) -> Optional[Hit]:
    """The catalogue entry a kernel message belongs to, or None (not relevant). Cheap tests first."""
    if "NVRM" in message:
        m = _XID.search(message)
        if m:
            return _xid(m)
        off = _OFF_BUS.search(message)
        if off:  # the line beside an Xid 79 repeats it; alone (old drivers) it is the same event
            return Hit("NVRM Xid", 79, f"GPU at PCI {off.group(1)} (driver message)", off.group(1))
        if _FALLEN.search(message):
            return fallen_off_bus(message)
        return None
    if "fallen" in message and _FALLEN.search(message):
        return fallen_off_bus(message)
    if "PCIe Bus Error" in message or "(Fatal) error" in message:
        return _aer(message)
    if "Hardware Error" in message or "achine check" in message:
        hit = _mce(message)
        if hit:
            return hit
    if "EDAC" in message:
        m = _EDAC.search(message)
        if m:
            n = int(m.group(2))
            overflow = " (OVERFLOW: more were lost, so at least this many)" if "OVERFLOW" in message else ""
            return Hit("EDAC", 0 if m.group(3) == "CE" else 1, (f"MC{m.group(1)}: {n} {m.group(3)} "
                       f"{m.group(4).strip()}"[:140]) + overflow, count=max(n, 1))
        return None
    if "temperature" in message:
        m = _THROTTLE.search(message)
        if m:
            return Hit("thermal", 0, f"CPU{m.group(1)} {m.group(2).lower()} temperature")
        c = _CRITICAL.search(message)
        if c:
            return Hit("thermal", 1, f"{c.group(1)} °C" if c.group(1) else "")
    if "out of memory" in message.lower():
        m = _OOM.search(message)
        if m:
            name = m.group(3)
            rss = f", {int(m.group(4)) // 1024} MiB resident" if m.group(4) else ""
            return Hit("OOM killer", 0 if TRAINING_NAMES.match(name) else 1, f"killed {name} (pid {m.group(2)}){rss}")
    if "Kernel panic" in message:
        m = _PANIC.search(message)
        if m:
            return Hit("kernel", 1, m.group(1).strip())
    if "lockup" in message.lower() or "blocked for more than" in message:
        m = _LOCKUP.search(message)
        if m:
            return Hit("kernel", 2, m.group(0)[:100])
    if "recovery" in message or "replay" in message:
        m = _FS_RECOVERY.search(message)
        if m:
            return Hit("boot", 1, f"filesystem {next(g for g in m.groups() if g)}")
    for pattern, number in _NOISE:
        if pattern.search(message):
            return Hit("kernel", number)
    return None
