"""Diagnosis steps with their cost, from docs/doctor.md §5.3 (cheapest first; stop when crashes stop)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Cost = Literal["free", "low", "medium", "high"]
# free: no money, minutes to a few nights of testing; low: under about EUR 30 or borrowed hardware;
# medium: EUR 30-300 (a new PSU, RAM); high: above EUR 300 (a new GPU).
COST_ORDER: dict[str, int] = {"free": 0, "low": 1, "medium": 2, "high": 3}


@dataclass(frozen=True)
class Step:
    """One test or remedy; `order` is its place in the §5.3 runbook, used to break cost ties."""

    key: str
    text: str
    cost: Cost
    order: float


STEPS: dict[str, Step] = {s.key: s for s in (
    Step("read_evidence", "Read the evidence: was each crash during training or idle? Check PowerButtonTimestamp in "
         "the Kernel-Power 41 details and look for minidumps and LiveKernelReports\\WATCHDOG dumps (§5.3 step 1)",
         "free", 1),
    Step("dump_settings", "Make sure a crash dump can be written (volmgr 161): page file on the system drive, "
         "'Automatic memory dump' selected, enough free space", "free", 1.5),
    Step("stock", "Back to stock: remove GPU overclocks and factory-OC profiles, memory XMP/EXPO and CPU PBO/OC "
         "(§5.3 step 2)", "free", 2),
    Step("log_thermals", "Log GPU temperature, clock and power during a training run (GPU-Z/HWiNFO, or nvidia-smi "
         "--query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv -l 5); Pascal throttles at 83 °C "
         "(§4.1, §5.3 step 3)", "free", 3),
    Step("clean_heatsink", "Clean the heatsink and fans and raise the fan curve (§5.3 step 3)", "free", 3.1),
    Step("clean_driver", "Clean driver install: DDU in Safe Mode, reinstall the driver; toggle Hardware-Accelerated "
         "GPU Scheduling and disable Fast Startup (§5.3 step 4)", "free", 4),
    Step("rollback_driver", "If hangs persist, roll back to an older WHQL driver (e.g. the 576 or 566 lines) "
         "(§5.3 step 4)", "free", 4.1),
    Step("tdr_delay", "Diagnostic only: raise TdrDelay to 8-10 s under HKLM\\System\\CurrentControlSet\\Control\\"
         "GraphicsDrivers to see if long CUDA kernels trip the 2 s TDR; never disable TDR (§5.3 step 5)", "free", 5),
    Step("power_limit", "Power-limit A/B test: set the GPU to 70-80 % of its board power (e.g. nvidia-smi -pl 200 on "
         "a 250 W card) for a few nights; if the Kernel-Power 41s stop, suspect power delivery or transients "
         "(§5.3 step 6; costs about 5 % throughput, §4.2)", "free", 6),
    Step("memtest", "Memory test overnight: Windows Memory Diagnostic or MemTest86 (§5.3 step 7)", "free", 7),
    Step("power_stress", "Whole-system power stress (CPU and GPU together, e.g. OCCT power test) while watching the "
         "12 V rail, which should stay within 11.4-12.6 V (§5.3 step 8)", "free", 8),
    Step("cabling", "Cabling: each PCIe 8/6-pin connector on its own cable (no daisy-chained pigtails), reseat the "
         "card and its plugs, try another wall outlet without the surge strip (§5.3 step 9)", "free", 9),
    Step("repaste", "Renew the card's thermal paste and pads (an ageing card likely needs it) (§5.3 step 3)",
         "low", 3.2),
    Step("gpu_other_pc", "Test the GPU in another PC, or another GPU in this one, to separate a GPU fault from a PSU "
         "fault (§5.3 step 10)", "low", 10),
    Step("psu_swap", "Swap the PSU for one sized for transients, preferably ATX 3.1 Gold (§5.3 step 10, §1.7)",
         "medium", 10.1),
    Step("replace_ram", "Replace the memory module(s) that fail the test", "medium", 10.2),
    Step("replace_gpu", "Replace the GPU (§5.3 step 11); on a GTX 10xx (Pascal) software forces it anyway: its last "
         "full driver branch is R580 and PyTorch needs the CUDA 12.6 wheels for sm_61 (§5.4)", "high", 11),
)}


def ordered(keys: list[str]) -> list[Step]:
    """Steps by cost, then by their place in the runbook; duplicates dropped."""
    unique = {k: STEPS[k] for k in keys}
    return sorted(unique.values(), key=lambda s: (COST_ORDER[s.cost], s.order))
