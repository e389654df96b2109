"""Power model: the worked examples of hardware-facts §1.7, efficiency interpolation, wall power, circuit limit."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers_parts import cooler, cpu, gpu, make_build, memory
from planner.compat import power
from planner.compat.checker import sizing_for
from planner.compat.rules import power_terms


# ---- §1.7 worked examples ------------------------------------------------------------------------

def test_example_1_rtx4090_9950x() -> None:
    """4090 (450) + 9950X (PPT 230) + ROP 100: P_sus 780; B 840, C 850 -> 1000 W ATX 3.1. The doc's A (975) counts
    the full package power; (A) now sizes for the training load, the CPU at TRAINING_CPU_FRACTION of it."""
    s = power.size_psu([450], 230, dimms=2, drives=1, fans=3, pumps=0, vendor_floor_w=850)
    assert s.rest_w == 100
    assert s.sustained_w == 780
    assert power.required_sustained_w(s.sustained_w) == 975  # the doc's figure, all parts at their limits
    assert s.cpu_training_w == math.ceil(230 * power.TRAINING_CPU_FRACTION - 1e-9) < 230
    assert s.training_w == 450 + s.cpu_training_w + 100
    assert s.required_sustained_w == math.ceil(s.training_w / 0.8 - 1e-9) < 975
    assert power.required_transient_w(450, 330, atx3_native=True) == 840
    assert s.required_atx3_w == max(s.required_sustained_w, 840)  # max(A, B)
    assert s.vendor_floor_w == 850
    assert s.recommended_w == 1000
    assert s.transient_w == 3 * 450 + 330
    assert round(s.sustained_w / s.recommended_w, 2) == 0.78  # "78 % sustained load"


def test_example_2_two_rtx3090() -> None:
    """2x 3090 (350, 8-pin) + 9950X + ROP 120: P_sus 1050; doc A 1313, B (ATX 3.1) 1225; 1350-1500 W in the doc.
    With (A) on the training load (CPU at TRAINING_CPU_FRACTION), B binds and the unit is 1300 W."""
    # ROP 120 = 50 + 5*4 DIMMs + 10*2 drives + 3*5 fans + 15*1 pump
    s = power.size_psu([350, 350], 230, dimms=4, drives=2, fans=5, pumps=1, vendor_floor_w=750)
    assert s.rest_w == 120
    assert s.sustained_w == 1050
    assert power.required_sustained_w(s.sustained_w) == 1313
    assert s.required_sustained_w == power.required_sustained_w(700 + s.cpu_training_w + 120) < 1225
    assert power.required_transient_w(700, 350, atx3_native=True) == 1225
    assert s.required_atx3_w == 1225
    assert s.vendor_floor_w is None  # the NVIDIA floor is a single-GPU figure
    assert s.recommended_w == 1300
    # at the wall about 1167 W at 90 %, below the US 120 V / 15 A continuous limit of 1440 W
    assert round(s.sustained_w / 0.90) == 1167
    assert power.wall_w(s.sustained_w, "gold", s.recommended_w) < power.circuit_limit_w(120, 15) == 1440


def test_example_2_power_limited_to_280w() -> None:
    s = power.size_psu([280, 280], 230, dimms=4, drives=2, fans=5, pumps=1)
    assert s.sustained_w == 910
    assert s.recommended_w == 1200


def test_example_3_gtx1080ti_on_legacy_psu() -> None:
    """1080 Ti (250) + 125 W CPU + ROP 100: P_sus 475; A 594 (-> 600 W); ATX 2.x B 698(.25) -> 700-750 W."""
    s = power.size_psu([250], 125, vendor_floor_w=600)
    assert s.sustained_w == 475
    assert power.required_sustained_w(s.sustained_w) == 594  # the doc's A, the CPU at full package power
    assert s.required_sustained_w == power.required_sustained_w(250 + s.cpu_training_w + 100) < 594
    # 1.47 x 475 = 698.25: the doc rounds it to 698, the smallest whole rating that satisfies it is 699
    assert power.required_transient_w(250, 225, atx3_native=False) == math.ceil(1.47 * 475) == 699
    assert s.required_atx2_w == 699
    assert 700 <= s.recommended_atx2_w <= 750
    # a 600 W legacy unit meets the sustained rule and the NVIDIA floor but not the transient one
    assert 600 >= s.required_sustained_w and 600 >= s.vendor_floor_w and 600 < s.required_atx2_w


def test_example_3_through_the_transient_rule() -> None:
    """The same system as a Build: a 600 W ATX 2.x unit is flagged by psu_transient, not by psu_sustained."""
    from helpers_parts import CHIPS, psu
    from planner.compat.checker import check_build

    b = make_build(gpu=gpu(chip="gtx-1080-ti", vram_gb=11, tgp_w=250, power_12v2x6=0, power_8pin=2,
                           recommended_psu_w=600),
                   cpu=cpu(base_power_w=95, package_power_w=125, cores=8, threads=16),
                   cooler=cooler(type="air", radiator_mm=None, height_mm=150, fans=1),
                   psu=psu(wattage_w=600, atx_version="2.x", connectors_12v2x6=0, connectors_8pin=2),
                   chips=CHIPS)
    t = power_terms(b)
    assert (t.gpu_w, t.cpu_w, t.rest_w, t.sustained_w) == (250, 125, 100, 475)
    rules = {f.rule for f in check_build(b) if f.severity.value == "problem"}
    assert rules == {"psu_transient"}


# ---- the checker's sizing and the rules' power terms agree -----------------------------------------

def test_sizing_matches_rule_terms_for_reference_build() -> None:
    b = make_build()
    s, t = sizing_for(b), power_terms(b)
    assert (s.gpu_w, s.cpu_w, s.rest_w, s.sustained_w) == (t.gpu_w, t.cpu_w, t.rest_w, t.sustained_w)
    assert (s.gpu_w, s.cpu_w, s.rest_w) == (450, 230, 103)  # AIO: 3 radiator fans + 3 case fans + 1 pump


def test_power_limit_scales_gpu_draw() -> None:
    b = make_build(gpu_count=2, power_fraction=0.8)
    assert power_terms(b).gpu_w == 2 * 360


def test_rest_of_platform_floor_and_terms() -> None:
    assert power.rest_of_platform_w(0, 0, 0, 0) == 100
    assert power.rest_of_platform_w(4, 2, 5, 1) == 120
    assert power.rest_of_platform_w(8, 4, 10, 2) == 50 + 40 + 40 + 30 + 30


@settings(max_examples=60, derandomize=True, deadline=None)
@given(gpus=st.lists(st.integers(50, 700), min_size=1, max_size=4), cpu_w=st.integers(35, 300),
       dimms=st.sampled_from([2, 4]), pumps=st.integers(0, 1))
def test_sizing_recommendation_satisfies_every_constraint(gpus, cpu_w, dimms, pumps) -> None:
    s = power.size_psu(gpus, cpu_w, dimms=dimms, pumps=pumps, vendor_floor_w=850 if len(gpus) == 1 else None)
    w = s.recommended_w
    assert w in power.COMMERCIAL_SIZES_W or w % 100 == 0
    assert s.training_w <= 0.8 * w + 1e-9  # (A), on the training load
    assert s.training_w == sum(gpus) + math.ceil(cpu_w * power.TRAINING_CPU_FRACTION - 1e-9) + s.rest_w
    assert s.training_w < s.sustained_w
    if w > power.ATX3_MIN_W:
        assert 3 * sum(gpus) + cpu_w + s.rest_w <= 2 * w  # (B) ATX 3.x
    else:
        assert 1.47 * s.sustained_w <= w + 1e-9
    assert w >= (s.vendor_floor_w or 0)  # (C)
    assert s.recommended_atx2_w >= 1.47 * s.sustained_w - 1e-9
    assert s.recommended_atx2_w >= s.recommended_w  # a legacy unit never needs less


# ---- efficiency, wall power, circuit ---------------------------------------------------------------

@pytest.mark.parametrize("level,points", [
    ("bronze", (0.82, 0.85, 0.82)), ("silver", (0.85, 0.88, 0.85)), ("gold", (0.87, 0.90, 0.87)),
    ("platinum", (0.90, 0.92, 0.89)), ("titanium", (0.92, 0.94, 0.90)),
])
def test_efficiency_at_the_80plus_points(level, points) -> None:
    """hardware-facts §1.5 table: minimum efficiency at 20 / 50 / 100 % load."""
    assert power.efficiency_at(0.2, level) == pytest.approx(points[0])
    assert power.efficiency_at(0.5, level) == pytest.approx(points[1])
    assert power.efficiency_at(1.0, level) == pytest.approx(points[2])


def test_efficiency_interpolates_linearly_between_points() -> None:
    assert power.efficiency_at(0.35, "gold") == pytest.approx(0.885)  # halfway 0.87 -> 0.90
    assert power.efficiency_at(0.75, "gold") == pytest.approx(0.885)  # halfway 0.90 -> 0.87
    assert power.efficiency_at(0.6, "platinum") == pytest.approx(0.92 + (0.89 - 0.92) * 0.2)


def test_efficiency_clamps_outside_the_curve_and_unknown_level() -> None:
    assert power.efficiency_at(0.05, "gold") == pytest.approx(0.87)
    assert power.efficiency_at(1.3, "gold") == pytest.approx(0.87)
    assert power.efficiency_at(0.5, "no-such-level") == power.efficiency_at(0.5, "none")


@settings(max_examples=50, derandomize=True, deadline=None)
@given(load=st.floats(0.0, 1.0), level=st.sampled_from(sorted(power.EFFICIENCY_CURVES)))
def test_efficiency_stays_within_its_points(load, level) -> None:
    lo, mid, hi = power.EFFICIENCY_CURVES[level]
    assert min(lo, mid, hi) - 1e-12 <= power.efficiency_at(load, level) <= max(lo, mid, hi) + 1e-12


def test_wall_power() -> None:
    assert power.wall_w(0, "gold", 1000) == 0.0
    assert power.wall_w(500, "gold", 1000) == pytest.approx(500 / 0.90)  # 50 % load
    assert power.wall_w(780, "gold", 1000) == pytest.approx(780 / (0.90 + (0.87 - 0.90) * 0.28 / 0.5))
    assert power.wall_w(600, "titanium", 1000) < power.wall_w(600, "bronze", 1000)


def test_circuit_limit() -> None:
    assert power.circuit_limit_w() == 2944  # France default: 0.8 x 230 V x 16 A
    assert power.circuit_limit_w(120, 15) == 1440  # US example of §1.7 (E)
    assert power.circuit_limit_w(230, 10) == 1840


def test_round_to_commercial() -> None:
    assert power.round_to_commercial(975) == 1000
    assert power.round_to_commercial(1000) == 1000
    assert power.round_to_commercial(1313) == 1500
    assert power.round_to_commercial(3001) == 3100  # past the largest listed size: next 100 W


def test_memory_and_cooler_count_in_rest_of_platform() -> None:
    four = make_build(memory=memory(modules=4, module_gb=32, speed_mts=3600))
    two = make_build()
    assert power_terms(four).rest_w - power_terms(two).rest_w == 10
