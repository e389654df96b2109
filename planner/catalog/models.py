"""Typed records: GPU chips, parts per category, offers, builds. Units live in field names."""

from __future__ import annotations

import math
import re
from datetime import date
from decimal import Decimal
from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from planner.money import KNOWN_CURRENCIES, MAX_AMOUNT
from planner.validation import MAX_MAGNITUDE, not_future, unit_cap
from planner.settings import ChipMaker
from planner.vocab import CATEGORIES, EFFICIENCIES, Category  # noqa: F401 - the one list (kernel); catalog callers import it from here


def _blank_to_none(v: Any) -> Any:
    if isinstance(v, str) and v.strip() == "":
        return None
    return v


def _split_list(v: Any) -> Any:
    """CSV cells hold lists as 'a;b;c'. Empty cell -> empty list."""
    if v is None:
        return []
    if isinstance(v, str):
        return [s.strip() for s in v.split(";") if s.strip()]
    return v


def _bool(v: Any) -> Any:
    if isinstance(v, str):
        s = v.strip().lower()
        if s in ("true", "yes", "1", "y"):
            return True
        if s in ("false", "no", "0", "n"):
            return False
        if s == "":
            return None
    return v


OptInt = Annotated[Optional[int], BeforeValidator(_blank_to_none)]
OptFloat = Annotated[Optional[float], BeforeValidator(_blank_to_none)]
OptStr = Annotated[Optional[str], BeforeValidator(_blank_to_none)]
OptBool = Annotated[Optional[bool], BeforeValidator(_bool)]
StrList = Annotated[list[str], BeforeValidator(_split_list)]
IntList = Annotated[list[int], BeforeValidator(_split_list)]

# sTR4 (Threadripper 1000/2000, X399), sTRX4 (Threadripper 3000, TRX40), sWRX8 (Threadripper PRO 3000/5000, WRX80),
# LGA2011-3 (Haswell-E/Broadwell-E, X99), LGA2066 (Skylake-X, X299), LGA1151 (Skylake..Coffee Lake), SP3 (EPYC 7001-7003):
# older platforms people still build ML boxes on (issue 38)
SOCKETS = ("AM4", "AM5", "LGA1700", "LGA1851", "sTR5", "sTR4", "sTRX4", "sWRX8", "LGA2011-3", "LGA2066", "LGA1151",
           "SP3")
# CPU platforms (series) a socket carries. One platform: any CPU of the socket fits any board of it, no data needed.
# sTR5 carries two (AMD): WRX90 boards take Threadripper PRO only, TRX50 boards take Threadripper and Threadripper PRO.
SOCKET_PLATFORMS: dict[str, tuple[str, ...]] = {
    "AM4": ("AM4",), "AM5": ("AM5",), "LGA1700": ("LGA1700",), "LGA1851": ("LGA1851",),
    "sTR5": ("threadripper", "threadripper-pro"),
    "sTR4": ("sTR4",), "sTRX4": ("sTRX4",), "sWRX8": ("sWRX8",), "LGA2011-3": ("LGA2011-3",),
    "LGA2066": ("LGA2066",), "SP3": ("SP3",),
    # one socket, two platforms that do not mix: Skylake/Kaby Lake CPUs on 100/200-series boards, Coffee Lake (8th/9th
    # gen) on 300-series boards (Intel's chipset support lists; the pins differ in use, not in count)
    "LGA1151": ("LGA1151-skylake-kaby", "LGA1151-coffee-lake"),
}
PLATFORMS: tuple[str, ...] = tuple(dict.fromkeys(p for ps in SOCKET_PLATFORMS.values() for p in ps))


def _platforms_of(socket: str, values: list[str], what: str) -> list[str]:
    """The values as given when each is a platform of `socket`; else a ValueError naming the stranger."""
    return _all_in(values, SOCKET_PLATFORMS[socket], f"{what} for socket {socket}:")


def sole_platform(socket: str) -> Optional[str]:
    """The socket's platform when it has only one (then no data is needed to match CPU and board), else None."""
    ps = SOCKET_PLATFORMS[socket]
    return ps[0] if len(ps) == 1 else None


def _all_in(values: list[str], allowed: tuple[str, ...], what: str) -> list[str]:
    """The list as given when every item is one of `allowed`; else a ValueError naming the first stranger."""
    for v in values:
        if v not in allowed:
            raise ValueError(f"unknown {what} {v!r}; expected one of {', '.join(allowed)}")
    return values


MEMORY_TYPES = ("DDR4", "DDR5", "DDR5-RDIMM")
FORM_FACTORS = ("EEB", "EATX", "ATX", "mATX", "ITX")  # EEB: SSI-EEB, 12 x 13 in (WRX90 workstation boards)
# A case that takes a larger board also takes the smaller ones (same mounting holes): smaller index = larger.
ARCHITECTURES = (
    "maxwell", "pascal", "volta", "turing", "ampere", "ada", "hopper", "blackwell", "gcn4", "rdna2", "rdna3", "rdna4",
    "cdna3",
)


class Record(BaseModel):
    """Base for catalog rows: strict types, no unknown columns, frozen after validation."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    @model_validator(mode="after")
    def _finite_and_bounded(self) -> "Record":
        """Every number is finite and of a size a part can have; a unit in the field name sets its range."""
        for name, value in self.__dict__.items():
            for v in value if isinstance(value, list) else (value,):
                if isinstance(v, bool) or not isinstance(v, (int, float, Decimal)):
                    continue
                if not math.isfinite(v) or abs(v) > MAX_MAGNITUDE:
                    raise ValueError(f"{name} must be a finite number of sane size (got {v})")
                cap = unit_cap(name)
                if cap is not None and not 0 <= v <= cap:
                    raise ValueError(f"{name} {v} is outside 0-{cap:g}, impossible for a part")
        return self


class GpuChip(Record):
    """One GPU chip (SKU) with the performance specs the speed model reads."""

    id: str
    name: str
    aliases: StrList = Field(default_factory=list)
    vendor: ChipMaker
    architecture: Literal[ARCHITECTURES]  # type: ignore[valid-type]
    compute_capability: OptFloat = None
    launch_year: int
    vram_gb: float = Field(gt=0)
    memory_type: str
    mem_bandwidth_gbs: float = Field(gt=0)
    fp32_tflops: float = Field(gt=0)
    fp16_tensor_tflops_fp32acc: OptFloat = None
    fp16_tensor_tflops_fp16acc: OptFloat = None
    has_tensor_cores: bool
    tdp_w: int = Field(gt=0)
    recommended_psu_w: OptInt = None
    segment: Literal["consumer", "workstation", "datacenter"]
    source: str = Field(min_length=1)
    notes: OptStr = None


ChipId = Annotated[str, Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")]


class GpuL2Cache(Record):
    """One row of data/gpu_l2_cache.csv: a chip's L2 cache (the speed model's L2 term), with its source."""

    chip: ChipId
    l2_mb: float = Field(gt=0, le=1024)
    source: str = Field(min_length=1)
    notes: OptStr = None


class GpuAchievedMatmul(Record):
    """One row of data/gpu_achieved_matmul.csv: the fp16 (fp32-accumulate) matrix-multiply rate a chip was measured
    to reach, the speed model's achieved (not datasheet) tensor rate, with its source."""

    chip: ChipId
    fp16_matmul_tflops: float = Field(gt=0, le=10000)
    source: str = Field(min_length=1)
    notes: OptStr = None


class GpuPowerVariant(Record):
    """One row of data/gpu_power_variants.csv: a board that runs a chip's silicon at a lower power than the
    full-power board of the same chip (Max-Q, PCIe A100), with its source."""

    chip: ChipId
    full_power_chip: ChipId
    board_power_w: int = Field(gt=0)
    full_power_w: int = Field(gt=0)
    source: str = Field(min_length=1)
    notes: OptStr = None

    @property
    def power_fraction(self) -> float:
        return self.board_power_w / self.full_power_w


class Part(Record):
    """Common columns of every part category."""

    category: ClassVar[str] = ""
    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str = Field(min_length=1)
    brand: str = Field(min_length=1)
    source: str = Field(min_length=1)
    notes: OptStr = None


LOW_POWER_VARIANT = 0.9  # a card below 90 % of its chip's board power is a variant of it, named so


class Gpu(Part):
    category: ClassVar[str] = "gpu"
    chip: str
    vram_gb: float = Field(gt=0)
    length_mm: OptFloat = Field(default=None, gt=0)
    slots: OptFloat = Field(default=None, gt=0)  # slot width (2, 2.5, 3.5...)
    tgp_w: OptInt = Field(default=None, gt=0)
    power_12v2x6: OptInt = Field(default=None, ge=0)  # 16-pin inputs on the card
    power_8pin: OptInt = Field(default=None, ge=0)  # PCIe 8-pin inputs on the card
    recommended_psu_w: OptInt = None  # board vendor's figure; falls back to the chip's
    # open-air: axial fans blowing onto the board; flow-through: air pushed through the card and out of its back edge
    # (Founders Edition), into whatever sits above; blower: out of the bracket; hybrid: a radiator (liquid)
    cooling: Annotated[Literal["open-air", "flow-through", "blower", "passive", "hybrid", None],
                       BeforeValidator(_blank_to_none)] = None
    radiator_mm: OptInt = None  # hybrid cards: their own radiator needs a case mount

    @model_validator(mode="after")
    def _radiator(self) -> "Gpu":
        if self.cooling == "hybrid" and self.radiator_mm is None:
            raise ValueError("a hybrid-cooled card needs radiator_mm")
        return self

    @property
    def slot_count(self) -> Optional[int]:
        return None if self.slots is None else math.ceil(self.slots - 1e-9)

    def kind_name(self, chip: "GpuChip") -> str:
        """What a plan calls this card: its chip's name, or for a card that runs the chip well below its board power
        (a 300 W Max-Q of a 600 W chip) the chip's name with that power, so the two never read as one GPU."""
        if self.tgp_w and chip.tdp_w and self.tgp_w < LOW_POWER_VARIANT * chip.tdp_w:
            tag = " Max-Q" if "max-q" in self.name.lower() else ""
            return f"{chip.name}{tag}, {self.tgp_w} W"
        return chip.name


class Cpu(Part):
    category: ClassVar[str] = "cpu"
    socket: Literal[SOCKETS]  # type: ignore[valid-type]
    cores: int = Field(gt=0)
    threads: int = Field(gt=0)
    base_power_w: int = Field(gt=0)  # AMD TDP / Intel base power
    package_power_w: OptInt = Field(default=None, gt=0)  # AMD PPT / Intel PL2
    memory_types: StrList
    max_memory_gb: OptInt = None
    pcie_gen: OptInt = None
    gpu_pcie_lanes: OptInt = None  # lanes the CPU gives the GPU slots in all (AM5: 16, x8/x8 for two; 8500G: 4)
    integrated_graphics: OptBool = None
    platform: OptStr = None  # CPU series on a socket with several (sTR5: threadripper / threadripper-pro)

    @model_validator(mode="after")
    def _platform(self) -> "Cpu":
        if self.platform is not None:
            _platforms_of(self.socket, [self.platform], "platform")
        return self

    @property
    def cpu_platform(self) -> Optional[str]:
        """The CPU's platform: as given, else the socket's only one; None = unknown (a multi-platform socket)."""
        return self.platform or sole_platform(self.socket)

    @field_validator("memory_types")
    @classmethod
    def _mem(cls, v: list[str]) -> list[str]:
        return _all_in(v, MEMORY_TYPES, "memory type")

    @property
    def power_w(self) -> int:
        """Sustained package power: PPT/PL2 when known; else AMD's PPT = 1.35 x TDP (hardware-facts §2.2), or
        for Intel an estimate of PL2 = 2 x base power (i9-14900K: 125 -> 253 W, hardware-facts §2.4)."""
        if self.package_power_w:
            return self.package_power_w
        return round(self.base_power_w * (2.0 if self.brand.lower() == "intel" else 1.35))


class Motherboard(Part):
    category: ClassVar[str] = "motherboard"
    socket: Literal[SOCKETS]  # type: ignore[valid-type]
    chipset: str
    form_factor: Literal[FORM_FACTORS]  # type: ignore[valid-type]
    memory_type: Literal[MEMORY_TYPES]  # type: ignore[valid-type]
    dimm_slots: int = Field(gt=0)
    max_memory_gb: OptInt = None
    m2_slots: OptInt = None
    pcie_x16_slots: OptInt = None
    max_cpu_power_w: OptInt = Field(default=None, gt=0)  # sustained CPU package power the board's VRM is built for
    gpu_slots_x8: OptInt = Field(default=None, ge=0)  # x16-size slots with >= 8 CPU lanes each when all are filled
    gpu_slot_pitch: OptInt = Field(default=None, gt=0)  # slot positions between those slots (cards of <= pitch fit)
    first_gpu_slot: OptInt = Field(default=None, gt=0)  # expansion-slot position of the first of them (1 = top)
    m2_gen5_shares_gpu: OptBool = None  # every PCIe 5.0 M.2 slot takes lanes from the first x16 slot (x16 -> x8)
    slot_wiring_source: OptStr = None  # where gpu_slots_x8 was read: the maker's manual or spec page, or a review
    slot_wiring_checked: Optional[date] = None  # when that source was read

    @field_validator("slot_wiring_checked", mode="before")
    @classmethod
    def _checked(cls, v: Any) -> Any:
        return _blank_to_none(v)
    cpu_platforms: StrList = Field(default_factory=list)  # CPU series the board takes (sTR5 WRX90: threadripper-pro)

    @model_validator(mode="after")
    def _platforms(self) -> "Motherboard":
        _platforms_of(self.socket, self.cpu_platforms, "CPU platform")
        return self

    @property
    def accepted_platforms(self) -> tuple[str, ...]:
        """CPU platforms the board takes: as listed, else the socket's only one; () = unknown (several possible)."""
        if self.cpu_platforms:
            return tuple(self.cpu_platforms)
        sole = sole_platform(self.socket)
        return (sole,) if sole else ()


class Memory(Part):
    category: ClassVar[str] = "memory"
    memory_type: Literal[MEMORY_TYPES]  # type: ignore[valid-type]
    modules: int = Field(gt=0)
    module_gb: int = Field(gt=0)
    speed_mts: int = Field(gt=0)
    cas_latency: OptInt = None
    ecc: OptBool = None
    height_mm: OptFloat = Field(default=None, gt=0)  # module height above the board, heat spreader included

    @property
    def capacity_gb(self) -> int:
        return self.modules * self.module_gb


class Storage(Part):
    category: ClassVar[str] = "storage"
    interface: Literal["NVMe", "SATA"]
    form_factor: str  # M.2-2280, 2.5, 3.5
    capacity_gb: int = Field(gt=0)
    pcie_gen: OptInt = None
    read_mbs: OptInt = None

    @property
    def needs_m2(self) -> bool:
        return self.form_factor.upper().startswith("M.2")


class Cooler(Part):
    category: ClassVar[str] = "cooler"
    type: Literal["air", "aio"]
    height_mm: OptFloat = None  # air coolers
    ram_overhang: OptBool = None  # air coolers: does the fin stack or a fan reach over the DIMM slots?
    ram_clearance_mm: OptFloat = Field(default=None, gt=0)  # where it does: the tallest module that fits under it
    radiator_mm: OptInt = None  # AIO: 120/140/240/280/360/420
    radiator_thickness_mm: OptFloat = Field(default=None, gt=0)  # AIO radiator core thickness (fans not counted)
    sockets: StrList
    cooling_capacity_w: OptInt = None  # rough sustained CPU heat it handles
    fans: OptInt = None

    @model_validator(mode="after")
    def _shape(self) -> "Cooler":
        if self.type == "aio" and self.radiator_mm is None:
            raise ValueError("an AIO cooler needs radiator_mm")
        return self


class Psu(Part):
    category: ClassVar[str] = "psu"
    wattage_w: int = Field(gt=0)
    atx_version: Annotated[Literal["2.x", "3.0", "3.1", None], BeforeValidator(_blank_to_none)] = None
    connectors_12v2x6: OptInt = Field(default=None, ge=0)  # native 16-pin cables
    connectors_8pin: OptInt = Field(default=None, ge=0)  # PCIe 8-pin cables
    cable_12v2x6_w: OptInt = Field(default=None, gt=0)  # rating of each native 16-pin cable (600 W or 450 W)
    efficiency: Literal[EFFICIENCIES] = "none"  # type: ignore[valid-type]
    form_factor: Literal["ATX", "SFX", "SFX-L"] = "ATX"
    length_mm: OptFloat = None

    @property
    def is_atx3(self) -> Optional[bool]:
        return None if self.atx_version is None else self.atx_version.startswith("3")


class Case(Part):
    category: ClassVar[str] = "case"
    form_factors: StrList
    max_gpu_length_mm: OptFloat = None
    max_cooler_height_mm: OptFloat = None
    max_psu_length_mm: OptFloat = None
    expansion_slots: OptInt = None
    radiator_front: IntList = Field(default_factory=list)
    radiator_top: IntList = Field(default_factory=list)
    radiator_rear: IntList = Field(default_factory=list)
    radiator_bottom: IntList = Field(default_factory=list)  # an intake position too (fans blow up into the cards)
    front_radiator_clearance_mm: OptFloat = None  # GPU length lost with a front radiator + fans
    psu_form_factors: StrList = Field(default_factory=lambda: ["ATX"])
    intake_cfm: OptFloat = Field(default=None, gt=0)  # intake airflow with the fans it ships with (an estimate)
    # the intake fans fitted as shipped, per position: "front:2x180;bottom:3x140" (empty: not recorded)
    intake_fans: StrList = Field(default_factory=list)

    @field_validator("form_factors")
    @classmethod
    def _ff(cls, v: list[str]) -> list[str]:
        return _all_in(v, FORM_FACTORS, "form factor")

    @field_validator("intake_fans")
    @classmethod
    def _fans(cls, v: list[str]) -> list[str]:
        for item in v:
            if not re.fullmatch(r"(front|bottom|side):[1-9]x(120|140|160|180|200)", item):
                raise ValueError(f"intake fans {item!r}: write position:COUNTxSIZE, e.g. front:2x180 (positions "
                                 "front, bottom, side; sizes 120-200 mm)")
        return v

    def shipped_intake(self, position: str) -> Optional[tuple[int, int]]:
        """(count, size in mm) of the intake fans shipped at `position`, or None when not recorded."""
        for item in self.intake_fans:
            where, fans = item.split(":")
            if where == position:
                count, size = fans.split("x")
                return int(count), int(size)
        return None


PART_TYPES: dict[str, type[Part]] = {
    "gpu": Gpu, "cpu": Cpu, "motherboard": Motherboard, "memory": Memory,
    "storage": Storage, "cooler": Cooler, "psu": Psu, "case": Case,
}
AnyPart = Union[Gpu, Cpu, Motherboard, Memory, Storage, Cooler, Psu, Case]

PRICE_SOURCES = ("user research", "estimate", "scraped", "listed", "owned", "yours", "shared list")
# Prices a person gave (planner prices add; a shared list kept on import): they stand for their part over any other.
PERSON_SOURCES = ("yours", "shared list")


class Offer(Record):
    """A price for a part at a retailer on a date, with where the number comes from."""

    part_id: str
    price: Decimal = Field(gt=0, le=MAX_AMOUNT)
    currency: str = "EUR"  # ISO 4217, in capitals, one the planner has a rate for
    condition: Literal["new", "used", "refurbished"] = "new"
    retailer: str
    url: OptStr = None
    observed_on: date
    source: Literal[PRICE_SOURCES]  # type: ignore[valid-type]
    note: OptStr = None
    in_stock: OptBool = None

    @field_validator("currency")
    @classmethod
    def _iso(cls, v: str) -> str:
        if v not in KNOWN_CURRENCIES:
            raise ValueError("currency must be an ISO 4217 code in capitals with a known rate, such as EUR or USD")
        return v

    @field_validator("observed_on")
    @classmethod
    def _past(cls, v: date) -> date:
        return not_future(v, "observed_on")  # a future date would win the freshness window forever


class Severity(str, Enum):
    PROBLEM = "problem"
    WARNING = "warning"
    UNVERIFIED = "unverified"


class Finding(BaseModel):
    """One verdict of a rule on a build: rule name, severity, message with numbers, parts involved."""

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: Severity
    message: str
    parts: list[str] = Field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "message": self.message, "parts": list(self.parts)}
