"""Platform rules: socket, memory type and capacity, cooler support and capacity, M.2, balance, software."""

from __future__ import annotations

import math
import re

from planner.catalog.models import MEMORY_TYPES, PLATFORMS, SOCKETS, Severity
from planner.compat.rules.base import Build, Encoder, Rule, ValueAccepted, gpu_chip
from planner.perf.memfit import system_ram_need_gb
from planner.perf.planned_sweep import sharing
from planner.perf.speed import gpu_speed

MIN_COMPUTE_CAPABILITY = 7.5  # CUDA 12.8+ PyTorch wheels target sm_75 and newer (hardware-facts §5.4)
CORES_PER_GPU = 4  # documented minimum so data loading does not starve the GPU (docs/rules.md)
MIN_CORES = 6
CORES_PER_SPEEDUP = 0.6  # estimate: cores per unit of speedup vs a GTX 1080 Ti (data-loader workers)
MIN_GPU_LANES = 8
DDR5_4DIMM_OFFICIAL_MTS = 3600  # AM5 with 2 DIMMs per channel (hardware-facts §2.3)


class CpuSocket(ValueAccepted):
    name = "cpu_socket"
    categories = ("cpu", "motherboard")
    summary = "CPU and board share a socket"
    holder, acceptor, domain, both_ways = "cpu", "motherboard", SOCKETS, True

    def value(self, cpu):
        return cpu.socket

    def accepted(self, mb):
        return (mb.socket,)

    def message(self, cpu, mb):
        return f"{cpu.name} needs socket {cpu.socket} but the board has {mb.socket}"


PLATFORM_NAMES = {"threadripper": "Threadripper", "threadripper-pro": "Threadripper PRO",
                  "LGA1151-skylake-kaby": "Skylake/Kaby Lake (6th/7th gen, 100/200-series boards)",
                  "LGA1151-coffee-lake": "Coffee Lake (8th/9th gen, 300-series boards)"}


class CpuPlatform(ValueAccepted):
    """What the socket alone does not say: sTR5 is shared by WRX90 boards (Threadripper PRO only) and TRX50 boards
    (Threadripper and Threadripper PRO). A socket with one platform needs no data (any CPU of it fits); an sTR5
    board that lists nothing, or an sTR5 CPU without its series, is unknown data (unverified)."""

    name = "cpu_platform"
    categories = ("cpu", "motherboard")
    summary = "the board takes the CPU's series (WRX90: Threadripper PRO only)"
    holder, acceptor, domain, unknown_what = "cpu", "motherboard", PLATFORMS, "CPU series the board takes"
    unknown_value = "CPU series (platform)"

    def applies(self, b: Build) -> bool:  # a socket mismatch is cpu_socket's finding, not a second one here
        return super().applies(b) and b.parts["cpu"].socket == b.parts["motherboard"].socket

    def value(self, cpu):
        return cpu.cpu_platform

    def accepted(self, mb):
        return mb.accepted_platforms

    def message(self, cpu, mb):
        takes = " or ".join(PLATFORM_NAMES.get(p, p) for p in mb.accepted_platforms)
        return (f"{cpu.name} is a {PLATFORM_NAMES.get(cpu.cpu_platform, cpu.cpu_platform)} CPU; the {mb.chipset} "
                f"board {mb.name} takes {takes} only")


class CpuMemoryType(ValueAccepted):
    name = "cpu_memory_type"
    categories = ("cpu", "motherboard")
    summary = "the CPU's memory controller supports the board's memory type"
    holder, acceptor, domain = "motherboard", "cpu", MEMORY_TYPES

    def value(self, mb):
        return mb.memory_type

    def accepted(self, cpu):
        return tuple(cpu.memory_types or ())

    def message(self, mb, cpu):
        return f"{cpu.name} supports {'/'.join(cpu.memory_types)} but the board is {mb.memory_type}"


class MemoryType(ValueAccepted):
    name = "memory_type"
    categories = ("memory", "motherboard")
    summary = "memory kit type matches the board"
    holder, acceptor, domain, both_ways = "memory", "motherboard", MEMORY_TYPES, True

    def value(self, mem):
        return mem.memory_type

    def accepted(self, mb):
        return (mb.memory_type,)

    def message(self, mem, mb):
        return f"{mem.memory_type} kit does not fit a {mb.memory_type} board"


class MemoryCapacity(Rule):
    name = "memory_capacity"
    categories = ("memory", "motherboard")
    summary = "DIMM count within the board's slots, capacity within board and CPU maxima"

    def check(self, b: Build):
        mem, mb, cpu = b.parts["memory"], b.parts["motherboard"], b.get("cpu")
        ids = b.ids("memory", "motherboard")
        out = []
        if mem.modules > mb.dimm_slots:
            out.append(self.finding(f"{mem.modules} DIMMs but the board has {mb.dimm_slots} slots", ids))
        if mb.max_memory_gb is None:
            out.append(self.unverified("board maximum memory", ids))
        elif mem.capacity_gb > mb.max_memory_gb:
            out.append(self.finding(f"{mem.capacity_gb} GB exceeds the board maximum of {mb.max_memory_gb} GB", ids))
        if cpu is not None and cpu.max_memory_gb is not None and mem.capacity_gb > cpu.max_memory_gb:
            out.append(self.finding(f"{mem.capacity_gb} GB exceeds the CPU maximum of {cpu.max_memory_gb} GB",
                                    b.ids("memory", "cpu")))
        return out

    def encode(self, m: Encoder):
        cap = m.attr("memory", lambda p: p.capacity_gb)
        m.model.Add(m.attr("memory", lambda p: p.modules) <= m.attr("motherboard", lambda p: p.dimm_slots))
        m.model.Add(cap <= m.attr("motherboard", lambda p: p.max_memory_gb))
        m.model.Add(cap <= m.attr("cpu", lambda p: p.max_memory_gb))


class CoolerSocket(ValueAccepted):
    name = "cooler_socket"
    categories = ("cooler", "cpu")
    summary = "the cooler ships a mount for the CPU socket"
    holder, acceptor, domain, unknown_what = "cpu", "cooler", SOCKETS, "cooler socket support"

    def value(self, cpu):
        return cpu.socket

    def accepted(self, cooler):
        return tuple(cooler.sockets or ())

    def message(self, cpu, cooler):
        return f"cooler supports {', '.join(cooler.sockets)}, not {cpu.socket}"


class M2Slots(Rule):
    name = "m2_slots"
    categories = ("storage", "motherboard")
    summary = "an M.2 drive has an M.2 slot"

    def check(self, b: Build):
        drive, mb = b.parts["storage"], b.parts["motherboard"]
        if not drive.needs_m2:
            return []
        if mb.m2_slots is None:
            return [self.unverified("board M.2 slot count", b.ids(*self.categories))]
        if mb.m2_slots >= 1:
            return []
        return [self.finding("M.2 drive but the board has 0 M.2 slots", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("storage", lambda d: 1 if d.needs_m2 else 0) <= m.attr("motherboard", lambda p: p.m2_slots))


def full_speed_gen5(drive) -> bool | None:
    """Is the drive a PCIe 5.0 NVMe drive (one that needs a Gen5 M.2 slot for its full speed)?"""
    if drive.interface != "NVMe":
        return False
    return None if drive.pcie_gen is None else drive.pcie_gen >= 5


class M2SharesGpuLanes(Rule):
    name = "m2_gpu_lanes"
    severity = Severity.WARNING
    categories = ("storage", "motherboard")
    summary = "a PCIe 5.0 drive does not need an M.2 slot that takes lanes from the GPU's x16 slot"

    def check(self, b: Build):
        drive, mb = b.parts["storage"], b.parts["motherboard"]
        gen5 = full_speed_gen5(drive)
        if gen5 is False or mb.m2_gen5_shares_gpu is False:
            return []
        if gen5 is None or mb.m2_gen5_shares_gpu is None:
            return [self.unverified("drive PCIe generation or the board's M.2 lane sharing",
                                    b.ids(*self.categories))]
        return [self.finding("the board's PCIe 5.0 M.2 slot takes lanes from the first x16 slot: with this "
                             "PCIe 5.0 drive there the GPU runs at x8 (elsewhere the drive runs at PCIe 4.0 speed); "
                             "choose a PCIe 4.0 drive or a board with a dedicated PCIe 5.0 M.2 slot",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.has("storage", full_speed_gen5, unknown=False)
                    + m.has("motherboard", lambda p: p.m2_gen5_shares_gpu, unknown=False) <= 1)


class CoolerCapacity(Rule):
    name = "cooler_capacity"
    severity = Severity.WARNING
    categories = ("cooler", "cpu")
    summary = "the cooler handles the CPU's sustained package power"

    def check(self, b: Build):
        cooler, cpu = b.parts["cooler"], b.parts["cpu"]
        if cooler.cooling_capacity_w is None:
            return [self.unverified("cooler capacity", b.ids(*self.categories))]
        if cooler.cooling_capacity_w >= cpu.power_w:
            return []
        return [self.finding(f"cooler rated about {cooler.cooling_capacity_w} W for a CPU drawing {cpu.power_w} W "
                             "sustained: expect throttling in 24/7 training", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("cooler", lambda c: c.cooling_capacity_w) >= m.attr("cpu", lambda p: p.power_w))


class RamVsVram(Rule):
    """Dettmers' rule of thumb ("A Full Hardware Guide to Deep Learning", 2018): at least as much RAM as the largest
    GPU's memory, so one card's whole state can be staged or copied out; more cards do not by themselves need more
    (what more processes need is ram_for_workload)."""

    name = "ram_vs_vram"
    severity = Severity.WARNING
    categories = ("memory", "gpu")
    summary = "system RAM at least one GPU's VRAM (a full copy of a card's memory fits in RAM)"

    def check(self, b: Build):
        mem, gpu = b.parts["memory"], b.parts["gpu"]
        if mem.capacity_gb >= gpu.vram_gb:
            return []
        return [self.finding(f"{mem.capacity_gb} GB of RAM is less than one card's {gpu.vram_gb:g} GB of VRAM",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("memory", lambda p: p.capacity_gb) >= m.attr("gpu", lambda g: math.ceil(g.vram_gb)))


class RamForWorkload(Rule):
    """System RAM sized from the workload (issue 34 item 4): the OS, then per training process (one per GPU, or the
    runs sharing each card) its runtime, loaders, pinned buffers and a checkpoint's CPU copy (perf.memfit, an
    estimate). A user's --min-ram replaces the estimate (the solver then accepts this warning)."""

    name = "ram_for_workload"
    severity = Severity.WARNING
    categories = ("memory", "gpu")
    summary = "system RAM covers the workload: OS, each training process's runtime, loaders, pinned buffers and " \
              "checkpoint copy (an estimate)"

    @staticmethod
    def processes(gpu, chips, gpu_count: int, precision: str, model_params) -> int:
        """Training processes at once: the runs sharing each card (planner.perf.planned_sweep) times the cards."""
        share = sharing(chips[gpu.chip], float(gpu.vram_gb), precision=precision, model_params=model_params)
        return max(1, gpu_count) * (share.runs_per_gpu if share else 1)

    def need_gb(self, gpu, chips, gpu_count: int, precision: str, model_params) -> int:
        return system_ram_need_gb(self.processes(gpu, chips, gpu_count, precision, model_params), model_params)

    def check(self, b: Build):
        mem, gpu = b.parts["memory"], b.parts["gpu"]
        n = self.processes(gpu, b.chips, b.gpu_count, b.precision, b.model_params)
        need = system_ram_need_gb(n, b.model_params)
        if mem.capacity_gb >= need:
            return []
        return [self.finding(f"{mem.capacity_gb} GB of RAM is less than the about {need} GB the workload needs "
                             f"({n} training process(es) at once: OS, runtimes, data loaders, pinned buffers, "
                             "a checkpoint's copy; an estimate)", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("memory", lambda p: p.capacity_gb)
                    >= m.attr("gpu", lambda g: self.need_gb(g, m.chips, m.gpu_count, m.precision, m.model_params)))


class GpuSoftwareSupport(Rule):
    name = "gpu_software_support"
    severity = Severity.WARNING
    categories = ("gpu",)
    summary = "current CUDA/PyTorch builds still target the GPU"

    @staticmethod
    def issue(chip) -> str | None:
        if chip.vendor != "NVIDIA":
            return f"{chip.name} needs ROCm; PyTorch support on {chip.vendor} consumer cards is partial"
        cc = chip.compute_capability
        if cc is not None and cc < MIN_COMPUTE_CAPABILITY:
            return (f"{chip.name} ({chip.architecture.title()}, sm_{int(round(cc * 10))}) is no longer targeted by "
                    "PyTorch's CUDA 12.8+ wheels and driver support ends after R580")
        return None

    def check(self, b: Build):
        msg = self.issue(gpu_chip(b.parts["gpu"], b.chips))
        return [self.finding(msg, b.ids("gpu"))] if msg else []

    def encode(self, m: Encoder):
        m.model.Add(m.has("gpu", lambda g: self.issue(m.chips[g.chip]) is not None, unknown=False) == 0)


# Official DDR5 speed with two unbuffered DIMMs per channel (four sticks), by CPU platform.
DDR5_2DPC_MTS = {
    "AM5": DDR5_4DIMM_OFFICIAL_MTS,  # hardware-facts §2.3 (Ryzen 7000: 5200 at 1 DIMM/channel, 3600 at 2)
    "LGA1700": 4000,  # Intel 13th/14th-gen memory spec, 2 DIMMs/channel dual-rank (recalled, not re-read)
    "LGA1851": 4800,  # Intel Core Ultra 200S memory spec, 2 DIMMs/channel (recalled, not re-read)
}


# memory channels a board's platform drives (quad-channel HEDT: X99, X299, X399, TRX40; 8 on WRX80/WRX90)
CHANNELS_BY_CHIPSET = {"TRX50": 4, "WRX90": 8, "X99": 4, "X299": 4, "X399": 4, "TRX40": 4, "WRX80": 8}
DESKTOP_CHANNELS = 2


def memory_channels(board) -> int:
    return CHANNELS_BY_CHIPSET.get(board.chipset or "", DESKTOP_CHANNELS)


class MemoryPerChannel(Rule):
    """One DIMM per channel, every channel filled: two DIMMs per channel on a dual-channel desktop run slower and
    stress the memory controller for months of 24/7 work; on 4- and 8-channel platforms an empty channel cuts the
    bandwidth the data loaders share. When the capacity needs 2 DIMMs per channel, accept the warning by name."""

    name = "memory_per_channel"
    severity = Severity.WARNING
    categories = ("memory", "motherboard")
    summary = "one DIMM per memory channel and every channel filled (a 2 x 64 GB kit, not 4 x 32 GB, on a desktop)"

    def check(self, b: Build):
        mem, board = b.parts["memory"], b.parts["motherboard"]
        ch = memory_channels(board)
        if mem.modules > ch:
            return [self.finding(f"{mem.modules} DIMMs on a {ch}-channel platform is {mem.modules // ch} per channel: "
                                 f"a {ch} x {mem.capacity_gb // ch:g} GB kit keeps one per channel (full speed, less "
                                 "strain for 24/7 work)", b.ids(*self.categories))]
        if mem.modules < ch:
            return [self.finding(f"{mem.modules} DIMMs fill {mem.modules} of the {ch} memory channels: "
                                 f"{1 - mem.modules / ch:.0%} of the platform's bandwidth left unused; fit {ch}",
                                 b.ids(*self.categories))]
        return []

    def encode(self, m: Encoder):
        m.model.Add(m.attr("memory", lambda k: k.modules) == m.attr("motherboard", memory_channels, unknown=2))


class DimmSpeed(Rule):
    name = "dimm_speed"
    severity = Severity.WARNING
    blocks = False  # a speed derate, not a block: the solver does not avoid it (docs/rules.md)
    categories = ("memory",)
    summary = "four DDR5 DIMMs run below their rated speed (two DIMMs per channel): a memory-speed derate"

    @staticmethod
    def official(cpu) -> int:
        return DDR5_2DPC_MTS.get(cpu.socket, DDR5_4DIMM_OFFICIAL_MTS) if cpu is not None else DDR5_4DIMM_OFFICIAL_MTS

    def check(self, b: Build):
        mem = b.parts["memory"]
        limit = self.official(b.get("cpu"))
        if not (mem.memory_type == "DDR5" and mem.modules >= 4 and mem.speed_mts > limit):
            return []
        return [self.finding(f"{mem.modules} DDR5 DIMMs rated {mem.speed_mts} MT/s run at about {limit} MT/s, the "
                             f"official speed with 2 DIMMs per channel on this platform ({1 - limit / mem.speed_mts:.0%} "
                             "less memory bandwidth; GPU training rarely notices); do not force the rated speed for "
                             "24/7 work", b.ids("memory"))]

    def encode(self, m: Encoder):
        """Advice only: nothing to add to the model."""


def cores_needed(gpu, chips, gpu_count: int, workload: str, precision: str, power_fraction: float = 1.0,
                 model_params: float | None = None) -> int:
    """Cores that keep the input pipeline of `gpu_count` such GPUs fed: at least CORES_PER_GPU per GPU and
    MIN_CORES, and more for faster GPUs (2 + 0.6 per unit of total speedup vs the GTX 1080 Ti)."""
    speed = gpu_speed(chips[gpu.chip], chips, workload, precision, power_fraction, model_params).value
    return max(MIN_CORES, CORES_PER_GPU * gpu_count, math.ceil(2 + CORES_PER_SPEEDUP * speed * gpu_count - 1e-9))


class CpuCoresPerGpu(Rule):
    name = "cpu_cores_per_gpu"
    severity = Severity.WARNING
    categories = ("cpu", "gpu")
    summary = "enough CPU cores to feed the GPUs (4 per GPU, 6 in all, more for faster GPUs)"

    def check(self, b: Build):
        cpu, gpu = b.parts["cpu"], b.parts["gpu"]
        need = cores_needed(gpu, b.chips, b.gpu_count, b.workload, b.precision, b.power_fraction, b.model_params)
        if cpu.cores >= need:
            return []
        return [self.finding(f"{cpu.cores} cores for {b.gpu_count} x {b.chips[gpu.chip].name}; {need} or more keep "
                             "the input pipeline fed", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("cpu", lambda p: p.cores) >= m.attr(
            "gpu", lambda g: cores_needed(g, m.chips, m.gpu_count, m.workload, m.precision, m.power_fraction,
                                          m.model_params)))


class GpuPcieLink(Rule):
    name = "gpu_pcie_link"
    severity = Severity.WARNING
    categories = ("cpu", "gpu")
    summary = "the CPU gives the GPU at least 8 PCIe lanes"

    def check(self, b: Build):
        cpu = b.parts["cpu"]
        if cpu.gpu_pcie_lanes is None:
            return [self.unverified("CPU lanes to the GPU slot", b.ids("cpu"))]
        if cpu.gpu_pcie_lanes >= MIN_GPU_LANES:
            return []
        return [self.finding(f"{cpu.name} runs the GPU at x{cpu.gpu_pcie_lanes}: host-to-GPU transfers get "
                             f"{cpu.gpu_pcie_lanes}/16 of the bandwidth", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("cpu", lambda p: p.gpu_pcie_lanes, unknown=16) >= MIN_GPU_LANES)


class CpuStability(Rule):
    name = "cpu_stability"
    severity = Severity.WARNING
    categories = ("cpu",)
    summary = "no CPU with a known 24/7 degradation issue (Intel 13th/14th gen Vmin shift)"
    _RAPTOR = re.compile(r"\b(?:i[3579]-?)?1[34]\d{3}[A-Z]*\b")

    @classmethod
    def affected(cls, cpu) -> bool:
        """Intel 13th/14th-gen desktop parts of 65 W or more (Intel's statement, hardware-facts §2.4)."""
        return cpu.socket == "LGA1700" and cpu.base_power_w >= 65 and bool(cls._RAPTOR.search(cpu.name))

    def check(self, b: Build):
        cpu = b.parts["cpu"]
        if not self.affected(cpu):
            return []
        return [self.finding(f"{cpu.name} is a 13th/14th-gen Intel part: install microcode 0x12B and Intel Default "
                             "Settings before 24/7 training; a chip already degraded is not repaired by the update",
                             b.ids("cpu"))]

    def encode(self, m: Encoder):
        m.model.Add(m.has("cpu", self.affected, unknown=False) == 0)


RULES = [CpuSocket(), CpuPlatform(), CpuMemoryType(), MemoryType(), MemoryCapacity(), CoolerSocket(), M2Slots(), M2SharesGpuLanes(),
         CoolerCapacity(), RamVsVram(), RamForWorkload(), MemoryPerChannel(), GpuSoftwareSupport(), DimmSpeed(), CpuCoresPerGpu(), GpuPcieLink(), CpuStability()]
