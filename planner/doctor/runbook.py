"""Diagnosis steps with their cost, from docs/doctor.md §5.3 (cheapest first; stop when crashes stop)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from planner.settings import GPU_HOT_C

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
         "--query-gpu=temperature.gpu,clocks.sm,power.draw --format=csv -l 5); Pascal throttles at "
         f"{GPU_HOT_C:g} °C (§4.1, §5.3 step 3)", "free", 3),
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
    Step("reseat", "Reseat the card and its power plugs; take out any PCIe riser or extension cable and put the card "
         "in the first x16 slot from the CPU", "free", 8.5),
    Step("pcie_gen", "Force the GPU slot one PCIe generation lower in the firmware (e.g. Gen4 -> Gen3): if the AER "
         "errors and drop-outs stop, the link (riser, slot, board) is marginal; training loses little (§4)", "free",
         8.6),
    Step("ecc_counts", "Read the card's memory health: nvidia-smi -q -d ECC,PAGE_RETIREMENT,ROW_REMAPPER; pending "
         "retirements or remaps need a GPU reset or reboot, a rising count or a remapping failure means RMA",
         "free", 2.5),
    Step("gsp_off", "GSP firmware errors (Xid 119/120): update to the newest driver of your branch; on the "
         "proprietary driver, test with GSP off (kernel option nvidia.NVreg_EnableGpuFirmware=0)", "free", 4.2),
    Step("app_debug", "Find the failing kernel in the program: rerun with CUDA_LAUNCH_BLOCKING=1 (or "
         "compute-sanitizer) and update PyTorch/CUDA; an application Xid alone is not a hardware fault", "free", 0.5),
    Step("host_ram", "Lower host RAM use: fewer DataLoader workers, smaller prefetch and shuffle buffers, memory-map "
         "the dataset; watch `free -m` while training; add swap so a peak is slow instead of killed", "free", 0.6),
    Step("more_ram", "Add RAM if the dataset pipeline needs it (about 2x the GPU memory in host RAM is a common "
         "rule of thumb [estimate])", "medium", 10.3),
    Step("replace_gpu", "Replace the GPU (§5.3 step 11); on a GTX 10xx (Pascal) software forces it anyway: its last "
         "full driver branch is R580 and PyTorch needs the CUDA 12.6 wheels for sm_61 (§5.4)", "high", 11),
)}


# The same step on Linux, where the Windows wording (Event Viewer, DDU, registry) does not apply.
LINUX_TEXT: dict[str, str] = {
    "read_evidence": "Read the evidence: was each crash during training or idle? `journalctl -k -b -1 -e` shows the "
                     "last kernel lines before a crash; `sudo nvidia-bug-report.sh` gathers the rest (§5.3 step 1)",
    "dump_settings": "Keep the evidence of the next crash: a persistent journal (Storage=persistent in "
                     "/etc/systemd/journald.conf) and kdump or pstore for panics",
    "clean_driver": "Reinstall the NVIDIA driver through one route only (distribution packages or NVIDIA's .run, "
                    "never both) and rebuild its module for the running kernel (§5.3 step 4)",
    "rollback_driver": "If hangs persist, install the previous driver branch from your distribution (or the other "
                       "kernel module flavour: open vs proprietary) (§5.3 step 4)",
    "memtest": "Memory test overnight: MemTest86 from a USB stick, or memtester from the running system (§5.3 "
               "step 7)",
    "power_stress": "Whole-system power stress (CPU and GPU together, e.g. stress-ng plus gpu-burn) while watching "
                    "the 12 V rail, which should stay within 11.4-12.6 V (§5.3 step 8)",
    "power_limit": "Power-limit A/B test: set the GPU to 70-80 % of its board power (e.g. sudo nvidia-smi -pl 200 "
                   "on a 250 W card) for a few nights; if the freezes and Xid 79s stop, suspect power delivery or "
                   "transients (§5.3 step 6; costs about 5 % throughput, §4.2)",
    "log_thermals": "Log GPU temperature, clock, power and throttle reasons during a training run: nvidia-smi "
                    "--query-gpu=timestamp,temperature.gpu,clocks.sm,power.draw,power.limit,"
                    "clocks_throttle_reasons.active,pcie.link.gen.current,pcie.link.width.current --format=csv -l 5 "
                    f"(read it back with `planner doctor smi`); Pascal throttles at {GPU_HOT_C:g} °C (§4.1, §5.3 step 3)",
}
WINDOWS_ONLY = frozenset({"tdr_delay"})  # the 2 s TDR watchdog is a Windows mechanism


def step_text(key: str, platform: str = "windows") -> str:
    """A step's text, in the words of the platform the log came from."""
    return LINUX_TEXT.get(key, STEPS[key].text) if platform == "linux" else STEPS[key].text


def ordered(keys: list[str], platform: str = "windows") -> list[Step]:
    """Steps by cost, then by their place in the runbook; duplicates (and other platforms' steps) dropped."""
    unique = {k: STEPS[k] for k in keys if not (platform == "linux" and k in WINDOWS_ONLY)}
    return sorted(unique.values(), key=lambda s: (COST_ORDER[s.cost], s.order))
