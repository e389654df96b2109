"""Build-quality points: what keeps a machine alive through months of unattended runs (weights in docs/solver.md).

The solver maximises these after sweep speed and before cost, so money left in the budget goes to the PSU
class, board and cooler headroom, case airflow and storage, and only stays unspent when nothing improves.
`points()` is the reference (checked against the CP-SAT encoding by brute force in the tests).
"""

from __future__ import annotations

from typing import Any

from planner.compat.rules.base import Build, Encoder, power_terms
from planner.compat.rules.sustain import case_heat_capacity_w
from planner.compat.rules.platform import memory_channels

HEADROOM = (5, 4)  # 25 % above the sustained load: numerator, denominator
PSU_CLASS_POINTS = {"3.1": 4, "3.0": 2}  # with a native 12V-2x6 cable; ATX 2.x or no native cable: 0
EFFICIENCY_POINTS = {"gold": 1, "platinum": 2, "titanium": 2}
BOARD_HEADROOM_POINTS = 3
COOLER_HEADROOM_POINTS = 3
CASE_HEADROOM_POINTS = 3
BIG_STORAGE_GB, BIG_STORAGE_POINTS = 4000, 1
FULL_LINK_LANES, FULL_LINK_POINTS = 16, 2  # the GPU on a full x16 link, not the x8 of an APU (8700G)
# DDR5 channels by chipset (AMD platform pages, recalled: TRX50 4-channel, WRX90 8-channel RDIMM, one DIMM per channel
# on the boards in data/); every other board in the catalog is a dual-channel desktop platform (AM4, AM5, LGA1700,
# LGA1851). A workstation kit that leaves channels empty halves (or quarters) the memory bandwidth the board was
# bought for.
CHANNELS_FILLED_POINTS = 1
# The training load at most 60 % of the PSU's rating (hardware-facts §1.7: "soft objective: load P_sus/W near 0.5-0.6";
# 80 PLUS efficiency peaks at 50 % load, and a unit run near its limit for months runs hot and loud). Rule (A) already
# caps the load at 80 %; this point is what a builder pays a little more for.
PSU_HEADROOM, PSU_LOAD_POINTS = (5, 3), 2  # rating >= 5/3 x the training load, i.e. load <= 60 %


def psu_points(psu: Any) -> int:
    native = (psu.connectors_12v2x6 or 0) >= 1
    return (PSU_CLASS_POINTS.get(psu.atx_version or "", 0) if native else 0) + EFFICIENCY_POINTS.get(psu.efficiency, 0)


def cpu_points(cpu: Any) -> int:
    return FULL_LINK_POINTS if (cpu.gpu_pcie_lanes or 0) >= FULL_LINK_LANES else 0


def board_class_known(board: Any) -> bool:
    """The board's VRM power class is known (the board_power rule then holds the CPU within it); a known class earns
    the points whatever CPU sits on it, so a dearer, lower-power CPU of the same speed earns nothing (issue 26)."""
    return board.max_cpu_power_w is not None


def board_cpu_w(board: Any) -> int:
    """The CPU heat the cooler and case points are judged against: the board's CPU power class (what the machine is built
    to run), not the chosen CPU's package power, so a lower-power, dearer CPU earns no points (issue 26)."""
    return board.max_cpu_power_w or 0


def storage_points(drive: Any) -> int:
    return BIG_STORAGE_POINTS if drive.capacity_gb >= BIG_STORAGE_GB else 0


def _headroom(capacity: Any, load: Any, ratio: tuple[int, int] = HEADROOM) -> Any:
    """capacity >= ratio x load (plain numbers, or CP-SAT expressions for the constraint); no capacity: no headroom."""
    return capacity is not None and ratio[1] * capacity >= ratio[0] * load


def points(b: Build) -> int:
    """Quality points of a complete build."""
    p, power = b.parts, power_terms(b)
    total = psu_points(p["psu"]) + storage_points(p["storage"]) + cpu_points(p["cpu"])
    total += BOARD_HEADROOM_POINTS * board_class_known(p["motherboard"])
    total += COOLER_HEADROOM_POINTS * _headroom(p["cooler"].cooling_capacity_w, p["motherboard"].max_cpu_power_w or 0)
    total += CASE_HEADROOM_POINTS * _headroom(case_heat_capacity_w(p["case"]),
                                              power.gpu_w + board_cpu_w(p["motherboard"]) + power.rest_w)
    total += CHANNELS_FILLED_POINTS * (p["memory"].modules >= memory_channels(p["motherboard"]))
    total += PSU_LOAD_POINTS * psu_load_ok(p["psu"].wattage_w, power.training_w)  # the unit's real load
    return total


def psu_load_ok(rating_w: int, training_w: int) -> bool:
    """Is the training load at most 60 % of the PSU's rating?"""
    return _headroom(rating_w, training_w, PSU_HEADROOM)


def max_points() -> int:
    return (max(PSU_CLASS_POINTS.values()) + max(EFFICIENCY_POINTS.values()) + BIG_STORAGE_POINTS + FULL_LINK_POINTS
            + BOARD_HEADROOM_POINTS + COOLER_HEADROOM_POINTS + CASE_HEADROOM_POINTS + CHANNELS_FILLED_POINTS
            + PSU_LOAD_POINTS)


def encode(m: Encoder) -> Any:
    """The same points as a linear expression: per-part terms plus one literal per headroom bonus, each
    allowed only when its headroom holds (maximising sets it whenever it can)."""
    total = m.attr("psu", psu_points) + m.attr("storage", storage_points) + m.attr("cpu", cpu_points)
    total = total + BOARD_HEADROOM_POINTS * m.has("motherboard", board_class_known, unknown=False)
    for name, weight, cap, load, ratio in (
        ("cooler_headroom", COOLER_HEADROOM_POINTS, m.attr("cooler", lambda c: c.cooling_capacity_w, unknown=0),
         m.attr("motherboard", lambda p: p.max_cpu_power_w or 0), HEADROOM),
        ("case_headroom", CASE_HEADROOM_POINTS, m.attr("case", case_heat_capacity_w, unknown=0),
         m.power()["gpu_w"] + m.attr("motherboard", lambda b: b.max_cpu_power_w or 0) + m.power()["rest_w"], HEADROOM),
        ("psu_load", PSU_LOAD_POINTS, m.attr("psu", lambda s: s.wattage_w), m.power()["training_w"], PSU_HEADROOM),
    ):
        lit = m.bool_var(name)
        m.model.Add(_headroom(cap, load, ratio)).OnlyEnforceIf(lit)
        total = total + weight * lit
    filled = m.bool_var("channels_filled")
    m.model.Add(m.attr("memory", lambda k: k.modules) >= m.attr("motherboard", memory_channels)).OnlyEnforceIf(filled)
    return total + CHANNELS_FILLED_POINTS * filled
