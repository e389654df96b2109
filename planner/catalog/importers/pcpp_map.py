"""Map one PCPartPicker-dataset record to our part columns; missing facts stay empty, derivations say how."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

from planner.catalog.match import ChipNames, chip_key
from planner.catalog.models import FORM_FACTORS, SOCKETS, GpuChip

Row = dict[str, Any]


class Skip(Exception):
    """The record cannot become a part of our catalog; `reason` is counted in the import report."""

    def __init__(self, reason: str, detail: Optional[str] = None):
        super().__init__(reason)
        self.reason, self.detail = reason, detail


@dataclass
class Mapped:
    """Our columns for one record (besides id/source) and the notes saying what was derived or is unknown."""

    row: Row
    notes: list[str]


# ---- shared helpers -------------------------------------------------------------------------

TWO_WORD_BRANDS = ("Western Digital", "Cooler Master", "be quiet!", "Fractal Design", "Lian Li", "Silicon Power",
                   "SK Hynix", "In Win", "Super Flower", "Geometric Future", "PC Cooler", "Mars Gaming")


def brand_of(name: str) -> str:
    """The maker, read from the first word(s) of the listing name (the dataset has no brand field)."""
    for b in TWO_WORD_BRANDS:
        if name.lower().startswith(b.lower() + " ") or name.lower() == b.lower():
            return name[: len(b)]
    return name.split()[0] if name.split() else "unknown"


def num(value: Any) -> Optional[float]:
    """A number from the dataset, None when null or not numeric (ranges are not taken as a number)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return None


def whole(value: Any) -> Optional[int]:
    v = num(value)
    return None if v is None else int(round(v))


# ---- GPU ------------------------------------------------------------------------------------

class ChipIndex:
    """Finds our chip for a dataset `chipset` string through the one chip matcher (planner.catalog.match.ChipNames:
    chip ids, names and aliases), the memory size telling variants apart ('RTX 3060' 8 GB vs 12 GB)."""

    def __init__(self, chips: dict[str, GpuChip]):
        self.chips = chips
        self.names = ChipNames(chips)

    def match(self, chipset: str, memory_gb: Optional[float]) -> GpuChip:
        labels = [chipset] + ([f"{chipset} {memory_gb:g}GB"] if memory_gb is not None else [])
        ids = {i for i in (self.names.find(label) for label in labels) if i is not None}
        if not ids:
            raise Skip("GPU chip not in our chip table", chipset)
        fits = [i for i in sorted(ids) if memory_gb is None or self.chips[i].vram_gb == memory_gb]
        if not fits:
            raise Skip("GPU memory size differs from our chip's (a variant we do not list)", f"{chipset} {memory_gb:g} GB")
        if len(fits) > 1:
            raise Skip("GPU chipset name matches several of our chips")
        return self.chips[fits[0]]


def map_gpu(rec: Row, chips: ChipIndex) -> Mapped:
    chipset = rec.get("chipset")
    if not chipset:
        raise Skip("no chipset")
    memory = num(rec.get("memory"))
    chip = chips.match(str(chipset), memory)
    name = str(rec["name"])
    if chip_key(str(chipset)) not in chip_key(name):
        name = f"{name} ({chipset})"
    notes = [f"chip matched from the dataset chipset '{chipset}' and {memory:g} GB" if memory is not None
             else f"chip matched from the dataset chipset '{chipset}'",
             f"tgp_w = chip reference TDP ({chip.tdp_w} W), the card's own board power is not in the dataset",
             "slot width, power connectors and cooler type unknown (not in the dataset)"]
    length = num(rec.get("length"))
    if length is None:
        notes.append("length unknown")
    return Mapped(dict(name=name, chip=chip.id, vram_gb=memory if memory is not None else chip.vram_gb,
                       length_mm=length, tgp_w=chip.tdp_w), notes)


# ---- CPU ------------------------------------------------------------------------------------

ARCH_SOCKET = {"Zen 5": "AM5", "Zen 4": "AM5", "Zen 3": "AM4", "Raptor Lake Refresh": "LGA1700",
               "Raptor Lake": "LGA1700", "Alder Lake": "LGA1700", "Arrow Lake": "LGA1851"}
# older desktop generations (issue 38): Zen 1/Zen+/Zen 2 Ryzen -> AM4; Skylake/Kaby/Coffee Lake -> LGA1151, except the
# HEDT parts named below; Haswell-E/Broadwell-E (i7-58xx/59xx/68xx/69xx) -> LGA2011-3
OLDER_ARCH_SOCKET = {"Zen 2": "AM4", "Zen+": "AM4", "Zen": "AM4", "Skylake": "LGA1151", "Kaby Lake": "LGA1151",
                     "Coffee Lake": "LGA1151", "Coffee Lake Refresh": "LGA1151"}
HEDT_2066 = re.compile(r"\bi[79]-(?:78|79|98|99|109)\d\dX|\bi[57]-7[67]40X", re.I)  # Skylake-X, Cascade Lake-X, Kaby Lake-X
HEDT_2011_3 = re.compile(r"\bi7-(?:58|59|68|69)\d\dK?X?\b", re.I)  # Haswell-E / Broadwell-E
SOCKET_MEMORY = {"AM5": ["DDR5"], "AM4": ["DDR4"], "LGA1700": ["DDR4", "DDR5"], "LGA1851": ["DDR5"],
                 "LGA1151": ["DDR4"], "LGA2066": ["DDR4"], "LGA2011-3": ["DDR4"], "sTR4": ["DDR4"], "sTRX4": ["DDR4"],
                 "sWRX8": ["DDR4"], "sTR5": ["DDR5"], "SP3": ["DDR4"]}
LGA1151_PLATFORM = {"Skylake": "LGA1151-skylake-kaby", "Kaby Lake": "LGA1151-skylake-kaby",
                    "Coffee Lake": "LGA1151-coffee-lake", "Coffee Lake Refresh": "LGA1151-coffee-lake"}
# Threadripper by model number (AMD's product pages): 1000/2000 series sTR4 (X399), 3000 non-PRO sTRX4 (TRX40),
# PRO 3000WX/5000WX sWRX8 (WRX80), 7000/9000 sTR5 (TRX50; PRO WX parts also WRX90); all with SMT
THREADRIPPER = re.compile(r"\bthreadripper\s+(pro\s+)?(\d)(\d{3})(wx|x)\b", re.I)


def _threadripper(name: str) -> Optional[tuple[str, Optional[str]]]:
    """(socket, platform) of a Threadripper from its model number, or None when the name is not one."""
    m = THREADRIPPER.search(name)
    if not m:
        return None
    pro, gen, suffix = bool(m.group(1)), int(m.group(2)), m.group(4).lower()
    if gen in (1, 2):
        return "sTR4", None
    if gen == 3 and suffix == "x" and not pro:
        return "sTRX4", None
    if gen in (3, 5) and suffix == "wx":
        return "sWRX8", None
    if gen in (7, 9):
        return "sTR5", "threadripper-pro" if suffix == "wx" else "threadripper"
    return None


def _socket_for(name: str, arch: str) -> Optional[str]:
    """The socket of a desktop CPU from its microarchitecture, HEDT parts told apart by their model number."""
    if HEDT_2066.search(name):
        return "LGA2066"
    if HEDT_2011_3.search(name) and arch in ("Haswell", "Broadwell"):
        return "LGA2011-3"
    return ARCH_SOCKET.get(arch) or OLDER_ARCH_SOCKET.get(arch)


def map_cpu(rec: Row) -> Mapped:
    name, arch = str(rec["name"]), rec.get("microarchitecture")
    tr = _threadripper(name)
    if tr is not None:
        return _map_threadripper(rec, name, *tr)
    if re.search(r"threadripper|xeon", name, re.I) or (re.search(r"\bepyc\b", name, re.I)
                                                       and not re.search(r"\bepyc 4\d{3}", name, re.I)):
        raise Skip("workstation/server CPU (socket not derivable)")
    socket = _socket_for(name, str(arch))
    if socket is None:
        raise Skip("socket not derivable from the microarchitecture")
    cores, tdp = _cores_and_tdp(rec)
    notes = [f"socket {socket} derived from microarchitecture '{arch}' (Zen 4/5 desktop -> AM5, Zen 3 -> AM4, "
             "Alder/Raptor Lake -> LGA1700, Arrow Lake -> LGA1851)",
             f"memory types {'/'.join(SOCKET_MEMORY[socket])} derived from the socket"]
    if str(arch) in OLDER_ARCH_SOCKET or socket in ("LGA2066", "LGA2011-3"):
        threads = cores
        notes.append(f"socket {socket} from '{arch}' and the model number; threads unknown (SMT/Hyper-Threading "
                     "varies within these generations, e.g. Ryzen 3 1200 and i5 parts have none): core count kept "
                     "as a lower bound; DDR4 as on these platforms' boards (a few Skylake boards took DDR3L)")
    elif socket in ("AM5", "AM4"):
        threads = 2 * cores
        notes.append("threads = 2 x cores: SMT on every Zen 3/4/5 desktop part (AMD spec, recalled; "
                     "the dataset has no SMT field)")
    elif socket == "LGA1851":
        threads = cores
        notes.append("threads = cores: Arrow Lake has no Hyper-Threading (Intel spec, recalled)")
    else:
        threads = cores
        notes.append("threads unknown (P/E core split not in the dataset): core count kept as a lower bound")
    notes.append(f"base_power_w = dataset TDP {tdp} W; package power (PPT/PL2) unknown, the power model uses "
                 "1.35 x TDP" + (" (Intel PL2 is often higher)" if socket.startswith("LGA") else ""))
    graphics = rec.get("graphics")
    row = dict(socket=socket, cores=cores, threads=threads, base_power_w=tdp, memory_types=SOCKET_MEMORY[socket],
               integrated_graphics=True if graphics else None)
    if socket == "LGA1151":
        row["platform"] = LGA1151_PLATFORM[str(arch)]
        notes.append(f"platform {row['platform']} from '{arch}': Skylake/Kaby Lake CPUs need a 100/200-series board, "
                     "Coffee Lake a 300-series one (same socket)")
    return Mapped(row, notes)


def _cores_and_tdp(rec: Row) -> tuple[int, int]:
    """A CPU record's core count and TDP, both required."""
    cores, tdp = whole(rec.get("core_count")), whole(rec.get("tdp"))
    if not cores:
        raise Skip("no core count")
    if not tdp:
        raise Skip("no TDP")
    return cores, tdp


def _map_threadripper(rec: Row, name: str, socket: str, platform: Optional[str]) -> Mapped:
    cores, tdp = _cores_and_tdp(rec)
    notes = [f"socket {socket} from the Threadripper model number (1000/2000: sTR4, 3000: sTRX4, PRO 3000WX/5000WX: "
             "sWRX8, 7000/9000: sTR5; AMD product pages, recalled)",
             f"memory type {SOCKET_MEMORY[socket][0]} from the socket; threads = 2 x cores (SMT on every Threadripper)",
             f"base_power_w = dataset TDP {tdp} W; package power unknown, the power model uses 1.35 x TDP"]
    row = dict(socket=socket, cores=cores, threads=2 * cores, base_power_w=tdp, memory_types=SOCKET_MEMORY[socket],
               integrated_graphics=False)
    if platform:
        row["platform"] = platform
    return Mapped(row, notes)


# ---- motherboard ----------------------------------------------------------------------------

BOARD_FF = {"ATX": "ATX", "Micro ATX": "mATX", "Mini ITX": "ITX", "EATX": "EATX"}
CHIPSET = re.compile(r"(?<![A-Z0-9])(X870E|X870|B850|B840|X670E|X670|B650E|B650|A620A?|X570S?|B550|A520|B450|X470|"
                     r"Z890|B860|H810|Z790|B760|H770|H610|Z690|B660|H670|W680|Q670|TRX50|WRX90|"
                     r"X399|TRX40|WRX80|X299|X99|C422|Z170|H170|B150|H110|Q170|C236|Z270|H270|B250|Q270|"
                     r"Z370|Z390|H370|B360|B365|H310|Q370|C246|B350|X370|A320)(?![0-9])", re.I)
# LGA1151 boards: the chipset says which CPUs (100/200 series: Skylake/Kaby Lake; 300 series and C246: Coffee Lake)
LGA1151_BOARD = {c: "LGA1151-skylake-kaby" for c in ("Z170", "H170", "B150", "H110", "Q170", "C236", "Z270", "H270",
                                                      "B250", "Q270")}
LGA1151_BOARD.update({c: "LGA1151-coffee-lake" for c in ("Z370", "Z390", "H370", "B360", "B365", "H310", "Q370",
                                                          "C246")})
# the dataset's socket spellings this import maps, with what they mean
BOARD_SOCKET = {"LGA2011-3 Narrow": "LGA2011-3"}  # narrow ILM: the same socket, a narrower cooler mount
DDR4_MARK = re.compile(r"(?<![A-Z0-9])(DDR4|D4)(?![0-9])", re.I)
DDR5_MARK = re.compile(r"(?<![A-Z0-9])(DDR5|D5)(?![0-9])", re.I)


# sockets whose boards this import can map (DDR type, chipset); older modelled sockets (sTR4, X99...) are added by hand
IMPORT_SOCKETS = tuple(s for s in SOCKETS if s in ("AM4", "AM5", "LGA1700", "LGA1851", "sTR5", "sTR4", "sTRX4",
                                                    "sWRX8", "LGA2011-3", "LGA2066", "LGA1151", "SP3"))


def map_motherboard(rec: Row) -> Mapped:
    name, socket = str(rec["name"]), rec.get("socket")
    narrow = socket == "LGA2011-3 Narrow"
    socket = BOARD_SOCKET.get(str(socket), socket)
    if socket not in IMPORT_SOCKETS:
        raise Skip("socket not modelled (dual-socket, pre-2015 or integrated CPU)")
    ff = BOARD_FF.get(str(rec.get("form_factor")))
    if ff is None or ff not in FORM_FACTORS:
        raise Skip("board form factor not modelled")
    slots = whole(rec.get("memory_slots"))
    if not slots:
        raise Skip("no memory slot count")
    notes = []
    if narrow:
        notes.append("LGA2011-3 narrow ILM: a cooler needs narrow-ILM mounting (not checked)")
    if socket in ("AM5", "LGA1851", "sTR5"):
        mem = "DDR5"
        notes.append(f"memory type DDR5 derived from socket {socket}")
    elif socket in ("AM4", "sTR4", "sTRX4", "sWRX8", "LGA2011-3", "LGA2066", "LGA1151", "SP3"):
        mem = "DDR4"
        notes.append(f"memory type DDR4 derived from socket {socket}")
    elif DDR4_MARK.search(name) and not DDR5_MARK.search(name):
        mem = "DDR4"
        notes.append("memory type DDR4 read from the name (LGA1700 boards exist in DDR4 and DDR5)")
    elif DDR5_MARK.search(name) and not DDR4_MARK.search(name):
        mem = "DDR5"
        notes.append("memory type DDR5 read from the name (LGA1700 boards exist in DDR4 and DDR5)")
    else:
        raise Skip("LGA1700 board whose name does not say DDR4 or DDR5")
    chip = CHIPSET.search(name)
    chipset = chip.group(1).upper() if chip else ""
    notes.append(f"chipset {chipset} read from the name" if chip else "chipset unknown")
    notes.append("M.2 and x16 slot counts unknown (not in the dataset)")
    row = dict(socket=socket, chipset=chipset, form_factor=ff, memory_type=mem, dimm_slots=slots,
               max_memory_gb=whole(rec.get("max_memory")))
    if socket == "LGA1151":
        if chipset not in LGA1151_BOARD:
            raise Skip("LGA1151 board whose name does not give its chipset (100/200 and 300 series take different CPUs)")
        row["cpu_platforms"] = LGA1151_BOARD[chipset]
        notes.append(f"CPU platform {row['cpu_platforms']} from chipset {chipset}")
    elif socket == "sTR5" and chipset in ("WRX90", "TRX50"):
        row["cpu_platforms"] = "threadripper-pro" if chipset == "WRX90" else "threadripper;threadripper-pro"
        notes.append(f"CPU platforms from chipset {chipset} (WRX90: PRO only)")
    return Mapped(row, notes)


# ---- memory ---------------------------------------------------------------------------------

# The dataset has no DIMM form factor or registered flag. Vendor part-number schemes (recalled, not re-read) and
# line names reveal many kits a desktop board cannot take; those are skipped. Others may remain (see notes).
REGISTERED = "not a desktop DIMM kit: registered/load-reduced or server memory (part number or name)"
SODIMM = "not a desktop DIMM kit: laptop SO-DIMM (part number or line name)"
NOT_DESKTOP_DIMM = [
    (re.compile(r"\bserver\b", re.I), REGISTERED),
    (re.compile(r"\bM(393|386|321|329)[A-Z]"), REGISTERED),  # Samsung RDIMM/LRDIMM
    (re.compile(r"\bCT(\d+K)?\d+G4[RL]"), REGISTERED),  # Crucial DDR4 RDIMM/LRDIMM
    (re.compile(r"\bKVR\d+[RL]\d"), REGISTERED),  # Kingston ValueRAM registered/load-reduced
    (re.compile(r"\bKSM\d+[RL]"), REGISTERED),  # Kingston Server Premier registered
    (re.compile(r"\bKT[DHL]-(PE|PL|TS)"), REGISTERED),  # Kingston memory for Dell/HPE/Lenovo servers
    (re.compile(r"\bTRA5\d"), REGISTERED),  # V-Color DDR5 R-DIMM (Threadripper kits)
    (re.compile(r"\bfury impact\b", re.I), SODIMM),  # Kingston FURY Impact
    (re.compile(r"\bM(471|474|425)[A-Z]"), SODIMM),  # Samsung SO-DIMM
    (re.compile(r"\bCT(\d+K)?\d+G4S"), SODIMM),  # Crucial DDR4 SO-DIMM
    (re.compile(r"\bCT(\d+K)?\d+G\d{2}C\d{2}S5\b"), SODIMM),  # Crucial DDR5 SO-DIMM (U5 = desktop)
    (re.compile(r"\b(KVR|KCP)\d+S"), SODIMM),  # Kingston ValueRAM / KCP SO-DIMM
]


def map_memory(rec: Row) -> Mapped:
    name = str(rec["name"])
    speed, modules = rec.get("speed"), rec.get("modules")
    if not (isinstance(speed, list) and len(speed) == 2 and isinstance(modules, list) and len(modules) == 2):
        raise Skip("no speed or module layout")
    gen, mts = whole(speed[0]), whole(speed[1])
    if gen not in (4, 5):
        raise Skip("DDR generation not modelled (DDR3 or older)")
    count, size = whole(modules[0]), whole(modules[1])
    if not count or not size or not mts:
        raise Skip("no speed or module layout")
    for pattern, why in NOT_DESKTOP_DIMM:
        if pattern.search(name):
            raise Skip(why)
    cl = whole(rec.get("cas_latency"))
    label = f"DDR{gen}-{mts}" + (f" CL{cl}" if cl else "") + f", {count}x{size} GB"
    notes = [f"type, speed and modules from the dataset 'speed' [{gen}, {mts}] and 'modules' [{count}, {size}]",
             "DIMM form factor (UDIMM/SO-DIMM/RDIMM) and ECC not in the dataset: unverified"]
    return Mapped(dict(name=f"{name} ({label})", memory_type=f"DDR{gen}", modules=count, module_gb=size,
                       speed_mts=mts, cas_latency=cl), notes)


# ---- storage --------------------------------------------------------------------------------

def map_storage(rec: Row) -> Mapped:
    iface, ff, cap = str(rec.get("interface") or ""), rec.get("form_factor"), whole(rec.get("capacity"))
    if not cap:
        raise Skip("no capacity")
    if ff is None:
        raise Skip("no form factor")
    ff = f"{ff:g}" if isinstance(ff, (int, float)) else str(ff)
    gen = None
    if iface.startswith("M.2 PCIe"):
        kind = "NVMe"
        m = re.search(r"PCIe (\d)", iface)
        gen = int(m.group(1)) if m else None
        how = f"NVMe because the interface reads '{iface}'"
    elif iface.startswith("SATA") or iface == "M.2 SATA":
        kind = "SATA"
        how = f"SATA from the interface '{iface}'"
    else:
        raise Skip("interface not modelled (SAS, U.2, mSATA, PCIe card, PATA or none)")
    if kind == "NVMe" and not ff.upper().startswith("M.2"):
        raise Skip("interface not modelled (SAS, U.2, mSATA, PCIe card, PATA or none)")
    drive = rec.get("type")
    what = "SSD" if drive == "SSD" else (f"HDD {drive} rpm" if num(drive) else "drive type unknown")
    name = str(rec["name"])
    size = f"{cap / 1000:g} TB" if cap >= 1000 else f"{cap} GB"
    return Mapped(dict(name=f"{name} ({size} {kind} {ff})", interface=kind, form_factor=ff, capacity_gb=cap,
                       pcie_gen=gen),
                  [how, f"{what}; form factor '{ff}' from the dataset", "read speed unknown"])


# ---- cooler ---------------------------------------------------------------------------------

def map_cooler(rec: Row) -> Mapped:
    size = whole(rec.get("size"))
    common = "socket support and cooling capacity unknown (not in the dataset)"
    if size:
        return Mapped(dict(type="aio", radiator_mm=size, sockets=[]),
                      [f"AIO with a {size} mm radiator: the dataset 'size' is set (radiator size)", common])
    return Mapped(dict(type="air", sockets=[]),
                  ["air cooler: the dataset gives no radiator size; height unknown", common])


# ---- PSU ------------------------------------------------------------------------------------

PSU_FF = {"ATX": "ATX", "SFX": "SFX", "SFX-L": "SFX-L"}
EFFICIENCY = {"plus": "white", "white": "white", "bronze": "bronze", "silver": "silver", "gold": "gold",
              "platinum": "platinum", "titanium": "titanium"}


def atx_version_from_name(name: str) -> tuple[Optional[str], Optional[str]]:
    """ATX 3.x read from the listing name; (version, how) or (None, None) when the name does not say."""
    if re.search(r"ATX\s*3\.1", name, re.I):
        return "3.1", "ATX 3.1 read from the name"
    if re.search(r"ATX\s*3(\.0)?(?![.\d])", name, re.I):
        return "3.0", "ATX 3.x read from the name ('ATX 3' without a revision recorded as 3.0)"
    if re.search(r"PCI-?E\s*5", name, re.I):
        return "3.0", "ATX 3.x inferred from 'PCIe 5' in the name (revision unknown, recorded as 3.0)"
    return None, None


def map_psu(rec: Row) -> Mapped:
    watts = whole(rec.get("wattage"))
    if not watts:
        raise Skip("no wattage")
    ff = PSU_FF.get(str(rec.get("type")))
    if ff is None:
        raise Skip("PSU form factor not modelled (TFX, Flex ATX, ...)")
    eff_raw = rec.get("efficiency")
    eff = EFFICIENCY.get(str(eff_raw).lower()) if eff_raw else None
    notes = [f"form factor {ff} from the dataset type"]
    if eff is None:
        eff = "none"
        notes.append("80 PLUS rating unknown: recorded as 'none' (the most conservative curve)")
    version, how = atx_version_from_name(str(rec["name"]))
    notes.append(how or "ATX version unknown")
    notes.append("connector counts and length unknown (not in the dataset)")
    name = str(rec["name"])
    label = f"{watts} W" if str(watts) not in name else ""
    label = ", ".join(x for x in (label, None if eff == "none" else eff.title()) if x)
    return Mapped(dict(name=f"{name} ({label})" if label else name, wattage_w=watts, atx_version=version,
                       efficiency=eff, form_factor=ff), notes)


# ---- case -----------------------------------------------------------------------------------

def map_case(rec: Row) -> Mapped:
    kind = str(rec.get("type") or "")
    if kind.startswith("ATX"):
        ffs = ["ATX", "mATX", "ITX"]
    elif kind.startswith("MicroATX"):
        ffs = ["mATX", "ITX"]
    elif kind.startswith("Mini ITX"):
        ffs = ["ITX"]
    else:
        raise Skip("case type does not say which boards fit (HTPC or none)")
    notes = [f"board form factors {', '.join(ffs)} derived from the type '{kind}' (E-ATX support not assumed)"]
    if kind.startswith("ATX") or (kind.startswith("MicroATX") and "Tower" in kind):
        psu = ["ATX"]
        notes.append("takes an ATX PSU: derived from the type (ATX case or mATX tower)")
    else:
        psu = []
        notes.append("PSU form factor unknown for this type: ATX units are not assumed to fit")
    notes.append("GPU length, cooler height, PSU length, expansion slots and radiator mounts unknown "
                 "(not in the dataset)")
    return Mapped(dict(form_factors=ffs, psu_form_factors=psu), notes)


MAPPERS: dict[str, Callable[..., Mapped]] = {
    "cpu": map_cpu, "motherboard": map_motherboard, "memory": map_memory,
    "storage": map_storage, "cooler": map_cooler, "psu": map_psu, "case": map_case,
}
