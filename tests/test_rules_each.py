"""Every compatibility rule on both sides (passes / fails / unverified), on small hand-built parts."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import pytest

from helpers_parts import (
    CHIPS, air_cooler, blocking, board, case, chip, cooler, cpu, fixed_picks_feasible, gpu, make_build, memory, psu,
    storage, strict_unknown,
)
from planner.compat import power
from planner.compat.checker import check_build
from planner.catalog.models import Severity
from planner.compat.rules import ALL_RULES, RULES_BY_NAME, Build
from planner.perf.speed import gpu_speed

P, W, U = Severity.PROBLEM, Severity.WARNING, Severity.UNVERIFIED

# Parts reused by several cases.
LEGACY_CARD = dict(tgp_w=350, power_12v2x6=0, power_8pin=2, recommended_psu_w=750)  # a 3090-like 8-pin card
BIG_CARD = dict(chip="t-big", vram_gb=32, tgp_w=575, slots=2, recommended_psu_w=1000)  # a 5090-like card
FRONT_ONLY_360 = dict(radiator_front=[360], radiator_top=[240], radiator_rear=[120], max_gpu_length_mm=400)
BOTTOM_ONLY_360 = dict(radiator_front=[], radiator_top=[240], radiator_rear=[120], radiator_bottom=[360],
                       max_gpu_length_mm=400)
TORRENT_LIKE = dict(radiator_front=[240, 280, 360, 420], radiator_top=[], radiator_rear=[120, 140], intake_cfm=200,
                    intake_fans=["front:2x180"])
RAPTOR_CPU = dict(socket="LGA1700", memory_types=["DDR4", "DDR5"], base_power_w=125, package_power_w=253, cores=24,
                  threads=32)
TURING = {**CHIPS, "t-turing": chip("t-turing", name="Test Turing 11G", architecture="turing",
                                    compute_capability=7.5, vram_gb=11)}


TRAIN_CPU = math.ceil(230 * power.TRAINING_CPU_FRACTION - 1e-9)  # the reference CPU while the GPU trains
TRAIN_W = 450 + TRAIN_CPU + 103
TRAIN_NEED = math.ceil(TRAIN_W / 0.8 - 1e-9)


def tr_build(cpu_platform: Optional[str], board_platforms: list[str], chipset: str = "WRX90",
             modules: int = 8) -> Callable[[], Build]:
    """A Threadripper build (sTR5, registered memory) with the CPU's series and the board's accepted list as given."""
    return B(cpu=cpu(socket="sTR5", memory_types=["DDR5-RDIMM"], platform=cpu_platform, base_power_w=350,
                     package_power_w=350, cores=24, threads=48),
             motherboard=board(socket="sTR5", chipset=chipset, memory_type="DDR5-RDIMM", cpu_platforms=board_platforms,
                               max_cpu_power_w=350, dimm_slots=8, max_memory_gb=2048),
             memory=memory(memory_type="DDR5-RDIMM", modules=modules, module_gb=32, speed_mts=5600, height_mm=31.25),
             cooler=cooler(sockets=["sTR5"], cooling_capacity_w=350))


BLOWER_300W = dict(tgp_w=300, slots=2, cooling="blower", recommended_psu_w=None)  # an RTX 6000 Ada-like 16-pin card


def cores_need(chip_id: str, gpu_count: int) -> int:
    """The documented minimum, worked out here: max(6, 4 per GPU, 2 + 0.6 per unit of total speedup)."""
    speed = gpu_speed(CHIPS[chip_id], CHIPS, "transformer", "amp").value
    return max(6, 4 * gpu_count, math.ceil(2 + 0.6 * speed * gpu_count - 1e-9))


@dataclass(frozen=True)
class Case:
    """A build and what one rule must say about it: nothing (severity None) or one finding with these words."""

    id: str
    rule: str
    make: Callable[[], Build]
    severity: Optional[Severity] = None
    words: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()  # part ids the finding must name
    extra: dict[str, Any] = field(default_factory=dict)


def B(**kw: Any) -> Callable[[], Build]:
    return lambda: make_build(**kw)


CASES: list[Case] = [
    # ---- platform --------------------------------------------------------------------------------
    Case("socket-ok", "cpu_socket", B()),
    Case("socket-am4-cpu-on-am5-board", "cpu_socket", B(cpu=cpu(socket="AM4")), P,
         ("Test CPU needs socket AM4 but the board has AM5",), ("cpu-test", "mb-test")),
    Case("platform-am5-needs-no-data", "cpu_platform", B()),  # one platform on the socket: any CPU of it fits
    Case("platform-tr-pro-on-trx50", "cpu_platform", tr_build("threadripper-pro", ["threadripper", "threadripper-pro"],
                                                              chipset="TRX50")),
    Case("platform-tr-on-trx50", "cpu_platform", tr_build("threadripper", ["threadripper", "threadripper-pro"],
                                                          chipset="TRX50")),
    Case("platform-tr-pro-on-wrx90", "cpu_platform", tr_build("threadripper-pro", ["threadripper-pro"])),
    Case("platform-tr-on-wrx90", "cpu_platform", tr_build("threadripper", ["threadripper-pro"]), P,
         ("Test CPU is a Threadripper CPU; the WRX90 board Test Board takes Threadripper PRO only",),
         ("cpu-test", "mb-test")),
    Case("platform-str5-board-lists-nothing", "cpu_platform", tr_build("threadripper", []), U,
         ("CPU series the board takes unknown", "could not be verified"), ("cpu-test", "mb-test")),
    Case("platform-str5-cpu-series-unknown", "cpu_platform", tr_build(None, ["threadripper-pro"]), U,
         ("CPU series (platform) unknown",), ("cpu-test", "mb-test")),
    Case("platform-silent-on-socket-mismatch", "cpu_platform", B(cpu=cpu(socket="AM4"))),  # cpu_socket's finding
    Case("cpu-memtype-ok-lga1700-ddr4", "cpu_memory_type",
         B(cpu=cpu(socket="LGA1700", memory_types=["DDR4", "DDR5"]),
           motherboard=board(socket="LGA1700", memory_type="DDR4"), memory=memory(memory_type="DDR4", speed_mts=3600))),
    Case("cpu-memtype-ddr4-cpu-ddr5-board", "cpu_memory_type", B(cpu=cpu(memory_types=["DDR4"])), P,
         ("Test CPU supports DDR4 but the board is DDR5",), ("cpu-test", "mb-test")),
    Case("memtype-ok", "memory_type", B()),
    Case("memtype-ddr4-kit-ddr5-board", "memory_type", B(memory=memory(memory_type="DDR4", speed_mts=3200)), P,
         ("DDR4 kit does not fit a DDR5 board",), ("mem-test", "mb-test")),
    Case("capacity-ok-at-board-max", "memory_capacity",
         B(memory=memory(modules=4, module_gb=48, speed_mts=3600))),  # 192 GB on a 192 GB board
    Case("capacity-too-many-dimms", "memory_capacity",
         B(memory=memory(modules=4, module_gb=16), motherboard=board(dimm_slots=2)), P,
         ("4 DIMMs but the board has 2 slots",), ("mem-test", "mb-test")),
    Case("capacity-over-board-max", "memory_capacity", B(memory=memory(modules=4, module_gb=64, speed_mts=3600)), P,
         ("256 GB exceeds the board maximum of 192 GB",), ("mem-test", "mb-test")),
    Case("capacity-over-cpu-max", "memory_capacity",
         B(memory=memory(modules=4, module_gb=48, speed_mts=3600), cpu=cpu(max_memory_gb=128)), P,
         ("192 GB exceeds the CPU maximum of 128 GB",), ("mem-test", "cpu-test")),
    Case("capacity-board-max-unknown", "memory_capacity", B(motherboard=board(max_memory_gb=None)), U,
         ("board maximum memory unknown", "could not be verified"), ("mem-test", "mb-test")),
    Case("cooler-socket-ok", "cooler_socket", B()),
    Case("cooler-socket-missing-am5", "cooler_socket", B(cooler=cooler(sockets=["AM4", "LGA1700"])), P,
         ("cooler supports AM4, LGA1700, not AM5",), ("cooler-test", "cpu-test")),
    Case("cooler-socket-unknown", "cooler_socket", B(cooler=cooler(sockets=[])), U,
         ("cooler socket support unknown",), ("cooler-test", "cpu-test")),
    Case("m2-ok", "m2_slots", B()),
    Case("m2-sata-drive-on-board-without-m2", "m2_slots",
         B(motherboard=board(m2_slots=0), storage=storage(interface="SATA", form_factor="2.5"))),
    Case("m2-no-slot", "m2_slots", B(motherboard=board(m2_slots=0)), P,
         ("M.2 drive but the board has 0 M.2 slots",), ("ssd-test", "mb-test")),
    Case("m2lanes-gen4-drive-on-sharing-board", "m2_gpu_lanes",
         B(motherboard=board(m2_gen5_shares_gpu=True), storage=storage(pcie_gen=4))),
    Case("m2lanes-gen5-drive-dedicated-slot", "m2_gpu_lanes",
         B(motherboard=board(m2_gen5_shares_gpu=False), storage=storage(pcie_gen=5))),
    Case("m2lanes-sata-drive-board-unknown", "m2_gpu_lanes", B(motherboard=board(m2_gen5_shares_gpu=None), storage=storage(interface="SATA", form_factor="2.5"))),
    Case("m2lanes-gen5-drive-sharing-board", "m2_gpu_lanes",
         B(motherboard=board(m2_gen5_shares_gpu=True), storage=storage(pcie_gen=5)), W,
         ("PCIe 5.0 M.2 slot takes lanes from the first x16 slot", "the GPU runs at x8"), ("ssd-test", "mb-test")),
    Case("m2lanes-board-unknown", "m2_gpu_lanes", B(motherboard=board(m2_gen5_shares_gpu=None), storage=storage(pcie_gen=5)), U,
         ("the board's M.2 lane sharing unknown",), ("ssd-test", "mb-test")),
    Case("m2lanes-drive-gen-unknown", "m2_gpu_lanes", B(motherboard=board(m2_gen5_shares_gpu=True), storage=storage(pcie_gen=None)), U,
         ("drive PCIe generation",)),
    Case("m2-unknown", "m2_slots", B(motherboard=board(m2_slots=None)), U, ("board M.2 slot count unknown",)),
    Case("x16-single-gpu-not-applicable", "pcie_x16_slots", B(motherboard=board(pcie_x16_slots=1))),
    Case("x16-two-gpus-x8x8", "pcie_x16_slots", B(gpu_count=2)),  # 2 CPU x8 slots 4 apart, 3-slot open-air cards
    Case("x16-second-slot-chipset-x4", "pcie_x16_slots", B(gpu_count=2, motherboard=board(gpu_slots_x8=1)), P,
         ("2 GPUs but the board wires 1 x16-size slot(s) to the CPU at x8 or more",), ("gpu-test", "mb-test")),
    Case("x16-575w-flow-through-one-slot-apart", "pcie_x16_slots",
         B(gpu_count=2, gpu=gpu(slots=2, tgp_w=575, cooling="flow-through"), motherboard=board(gpu_slot_pitch=3)), P,
         ("stacked 2-slot cards need slots 4 positions apart (2 for the card, 2 free for its flow-through cooler",)),
    Case("x16-360w-flow-through-one-slot-apart", "pcie_x16_slots",
         B(gpu_count=2, gpu=gpu(slots=2, tgp_w=360, cooling="flow-through"), motherboard=board(gpu_slot_pitch=3))),
    Case("stacked-flow-through-over-air-cooler", "stacked_exhaust",
         B(gpu_count=2, gpu=gpu(slots=2, tgp_w=360, cooling="flow-through"), motherboard=board(gpu_slot_pitch=3),
           cooler=air_cooler()), W, ("2 flow-through cards", "Test Tower"), ("gpu-test", "cooler-air")),
    Case("stacked-flow-through-with-aio", "stacked_exhaust",
         B(gpu_count=2, gpu=gpu(slots=2, tgp_w=360, cooling="flow-through"), motherboard=board(gpu_slot_pitch=3))),
    Case("stacked-open-air-over-air-cooler", "stacked_exhaust", B(gpu_count=2, cooler=air_cooler())),
    Case("x16-unknown", "pcie_x16_slots", B(gpu_count=2, motherboard=board(gpu_slots_x8=None)), U,
         ("board CPU-wired x8 slot count unknown",), ("mb-test",)),
    Case("x16-open-air-stacked-without-gap", "pcie_x16_slots", B(gpu_count=2, motherboard=board(gpu_slot_pitch=3)), P,
         ("slots are 3 positions apart; stacked 3-slot cards need slots 4 positions apart (3 for the card, 1 free",), ("gpu-test", "mb-test")),
    Case("x16-blowers-stacked-tight", "pcie_x16_slots",
         B(gpu_count=2, gpu=gpu(slots=2, cooling="blower"), motherboard=board(gpu_slot_pitch=2))),
    Case("x16-card-width-unknown", "pcie_x16_slots", B(gpu_count=2, gpu=gpu(slots=None)), U,
         ("GPU slot width unknown",), ("gpu-test",)),
    Case("cpu-lanes-single-gpu-not-applicable", "multi_gpu_cpu_lanes", B(cpu=cpu(gpu_pcie_lanes=8))),
    Case("cpu-lanes-two-gpus-x8x8", "multi_gpu_cpu_lanes", B(gpu_count=2)),  # 16 CPU lanes for graphics
    Case("cpu-lanes-apu-x8-for-two", "multi_gpu_cpu_lanes", B(gpu_count=2, cpu=cpu(gpu_pcie_lanes=8)), P,
         ("2 GPUs need x8 each (16 lanes) from the CPU; Test CPU gives graphics x8 in all",), ("gpu-test", "cpu-test")),
    Case("cpu-lanes-unknown", "multi_gpu_cpu_lanes", B(gpu_count=2, cpu=cpu(gpu_pcie_lanes=None)), U,
         ("CPU lanes for graphics",), ("cpu-test",)),
    Case("case-slots-two-cards-fit", "multi_gpu_case_slots", B(gpu_count=2)),  # slot 1 + 4 + 3 wide = slot 7 of 7
    Case("case-slots-two-cards-short", "multi_gpu_case_slots", B(gpu_count=2, case=case(expansion_slots=6)), P,
         ("2 cards from slot 1, 4 apart, 3 wide reach slot 7; the case has 6",)),
    Case("case-slots-unknown-position", "multi_gpu_case_slots", B(gpu_count=2, motherboard=board(first_gpu_slot=None)),
         U, ("GPU slot position",), ("mb-test",)),
    Case("cooler-capacity-equal", "cooler_capacity", B(cooler=cooler(cooling_capacity_w=230))),
    Case("cooler-capacity-short-ppt-from-tdp", "cooler_capacity",
         B(cpu=cpu(base_power_w=105, package_power_w=None), cooler=cooler(cooling_capacity_w=140)), W,
         ("cooler rated about 140 W for a CPU drawing 142 W sustained",), ("cooler-test", "cpu-test")),
    Case("cooler-capacity-unknown", "cooler_capacity", B(cooler=cooler(cooling_capacity_w=None)), U,
         ("cooler capacity unknown",)),
    Case("ram-equals-vram", "ram_vs_vram", B(memory=memory(module_gb=12))),
    Case("ram-below-vram", "ram_vs_vram", B(memory=memory(module_gb=8)), W,
         ("16 GB of RAM is less than one card's 24 GB of VRAM",), ("mem-test", "gpu-test")),
    # Dettmers: match the largest card; more cards do not by themselves need more (ram_for_workload counts them)
    Case("ram-below-total-vram-two-gpus-passes", "ram_vs_vram", B(gpu_count=2, memory=memory(module_gb=16))),
    Case("ram-workload-one-gpu-floor", "ram_for_workload", B(memory=memory(module_gb=16))),
    Case("ram-workload-below-floor", "ram_for_workload", B(memory=memory(module_gb=8)), W,
         ("16 GB of RAM is less than the about 32 GB the workload needs (1 training process(es) at once",),
         ("mem-test", "gpu-test")),
    # the 2017 thread's shape (tests/data/real/lists): three cards, too little RAM for three training processes
    Case("ram-workload-three-gpus", "ram_for_workload", B(gpu_count=3, memory=memory(module_gb=16)), W,
         ("32 GB of RAM is less than the about 34 GB the workload needs (3 training process(es)",)),
    Case("ram-workload-big-model", "ram_for_workload", B(memory=memory(module_gb=16), model_params=1.5e9), W,
         ("32 GB of RAM is less than the about 46 GB",)),
    Case("software-ada-ok", "gpu_software_support", B()),
    Case("software-turing-sm75-ok", "gpu_software_support",
         B(chips=TURING, gpu=gpu(chip="t-turing", vram_gb=11, tgp_w=250))),
    Case("software-pascal", "gpu_software_support",
         B(gpu=gpu(chip="gtx-1080-ti", vram_gb=11, tgp_w=250, power_12v2x6=0, power_8pin=2, recommended_psu_w=600)), W,
         ("Baseline Pascal 11G (Pascal, sm_61) is no longer targeted by PyTorch's CUDA 12.8+ wheels",), ("gpu-test",)),
    Case("software-amd-rocm", "gpu_software_support", B(gpu=gpu(chip="t-amd", tgp_w=355, recommended_psu_w=800)), W,
         ("Test Radeon 24G needs ROCm",)),
    Case("dimm-speed-4x-at-3600", "dimm_speed", B(memory=memory(modules=4, speed_mts=3600))),
    Case("dimm-speed-2x-at-6400", "dimm_speed", B(memory=memory(modules=2, speed_mts=6400))),
    Case("dimm-speed-4x-at-6000", "dimm_speed", B(memory=memory(modules=4, speed_mts=6000)), W,
         ("4 DDR5 DIMMs rated 6000 MT/s run at about 3600 MT/s", "2 DIMMs per channel"), ("mem-test",)),
    Case("dimm-speed-4x-intel-limit-differs", "dimm_speed",
         B(memory=memory(modules=4, speed_mts=5600), cpu=cpu(**RAPTOR_CPU), motherboard=board(socket="LGA1700")), W,
         ("run at about 4000 MT/s",), ("mem-test",)),
    Case("board-power-ok", "board_cpu_power", B()),
    Case("board-power-a620-class-under-230w-cpu", "board_cpu_power", B(motherboard=board(max_cpu_power_w=88)), P,
         ("Test CPU draws up to 230 W; the X870E board is built for about 88 W",), ("cpu-test", "mb-test")),
    Case("board-power-unknown", "board_cpu_power", B(motherboard=board(max_cpu_power_w=None)), U,
         ("board CPU power class unknown",), ("mb-test",)),
    Case("cores-6-for-1-gpu", "cpu_cores_per_gpu", B(cpu=cpu(cores=6, threads=12))),
    Case("cores-4-for-1-gpu", "cpu_cores_per_gpu", B(cpu=cpu(cores=4, threads=8)), W,
         (f"4 cores for 1 x Test Ada 24G; {cores_need('t-ada', 1)} or more",), ("cpu-test", "gpu-test")),
    Case("cores-8-for-3-gpus", "cpu_cores_per_gpu", B(gpu_count=3, cpu=cpu(cores=8, threads=16)), W,
         (f"8 cores for 3 x Test Ada 24G; {cores_need('t-ada', 3)} or more",)),
    Case("cores-6-for-a-fast-gpu", "cpu_cores_per_gpu", B(gpu=gpu(**BIG_CARD), cpu=cpu(cores=6, threads=12)), W,
         (f"6 cores for 1 x Test Big 32G; {cores_need('t-big', 1)} or more",)),
    Case("lanes-unknown", "gpu_pcie_link", B(cpu=cpu(gpu_pcie_lanes=None)), U,
         ("CPU lanes to the GPU slot unknown",), ("cpu-test",)),
    Case("lanes-x8-ok", "gpu_pcie_link", B(cpu=cpu(gpu_pcie_lanes=8))),
    Case("lanes-x4", "gpu_pcie_link", B(cpu=cpu(gpu_pcie_lanes=4)), W,
         ("Test CPU runs the GPU at x4", "4/16 of the bandwidth"), ("cpu-test", "gpu-test")),
    Case("stability-12th-gen-ok", "cpu_stability", B(cpu=cpu(**RAPTOR_CPU, name="Intel Core i9-12900K"))),
    Case("stability-14th-gen-35w-ok", "cpu_stability",
         B(cpu=cpu(**{**RAPTOR_CPU, "base_power_w": 35}, name="Intel Core i5-14400T"))),
    Case("stability-14900k", "cpu_stability", B(cpu=cpu(**RAPTOR_CPU, name="Intel Core i9-14900K")), W,
         ("Intel Core i9-14900K is a 13th/14th-gen Intel part", "0x12B"), ("cpu-test",)),
    # ---- physical fit ----------------------------------------------------------------------------
    Case("board-matx-in-matx-case", "board_form_factor",
         B(motherboard=board(form_factor="mATX"), case=case(form_factors=["mATX", "ITX"]))),
    Case("board-atx-in-matx-case", "board_form_factor", B(case=case(form_factors=["mATX", "ITX"])), P,
         ("ATX board does not fit the case, which takes mATX, ITX",), ("mb-test", "case-test")),
    Case("length-at-limit", "gpu_length", B(gpu=gpu(length_mm=322), case=case(max_gpu_length_mm=322))),
    Case("length-357.6-in-322", "gpu_length", B(gpu=gpu(length_mm=357.6), case=case(max_gpu_length_mm=322)), P,
         ("card length 357.6 mm exceeds the case maximum of 322 mm",), ("gpu-test", "case-test")),
    Case("length-radiator-on-top-no-loss", "gpu_length",
         B(gpu=gpu(length_mm=350), case=case(**{**FRONT_ONLY_360, "radiator_top": [240, 360]}))),
    Case("length-front-radiator-default-loss", "gpu_length", B(gpu=gpu(length_mm=350), case=case(**FRONT_ONLY_360)), P,
         ("card length 350 mm exceeds the case maximum of 345 mm (case maximum 400 mm less 55 mm for the front "
          "radiator and fans)",), ("gpu-test", "case-test", "cooler-test")),
    Case("length-front-radiator-thicker-than-assumed", "gpu_length",
         B(gpu=gpu(length_mm=340), case=case(**FRONT_ONLY_360), cooler=cooler(radiator_thickness_mm=38)), P,
         ("exceeds the case maximum of 334 mm (case maximum 400 mm less 66 mm",)),
    Case("length-front-radiator-27mm-fits", "gpu_length",
         B(gpu=gpu(length_mm=340), case=case(**FRONT_ONLY_360), cooler=cooler(radiator_thickness_mm=27))),
    Case("length-front-radiator-case-clearance", "gpu_length",
         B(gpu=gpu(length_mm=375), case=case(**FRONT_ONLY_360, front_radiator_clearance_mm=30)), P,
         ("card length 375 mm exceeds the case maximum of 370 mm (case maximum 400 mm less 30 mm",)),
    Case("length-unknown-card", "gpu_length", B(gpu=gpu(length_mm=None)), U,
         ("GPU length or case GPU clearance unknown",)),
    Case("length-unknown-case", "gpu_length", B(case=case(max_gpu_length_mm=None)), U,
         ("GPU length or case GPU clearance unknown",)),
    Case("slots-two-blowers-in-4", "gpu_slots",
         B(gpu_count=2, gpu=gpu(slots=2, cooling="blower"), case=case(expansion_slots=4))),
    Case("slots-3.5-slot-in-3", "gpu_slots", B(gpu=gpu(slots=3.5), case=case(expansion_slots=3)), P,
         ("a 3.5-slot card needs 4 slots but the case has 3",), ("gpu-test", "case-test")),
    Case("slots-two-open-air-3-slot-in-6", "gpu_slots", B(gpu_count=2, gpu=gpu(slots=3), case=case(expansion_slots=6)),
         P, ("2 x 3-slot cards need 7 slots but the case has 6",)),
    Case("slots-unknown", "gpu_slots", B(gpu=gpu(slots=None)), U, ("GPU slot width or case expansion slots unknown",)),
    Case("height-at-limit", "cooler_height",
         B(cooler=air_cooler(height_mm=155), case=case(max_cooler_height_mm=155))),
    Case("height-aio-in-low-case", "cooler_height", B(case=case(max_cooler_height_mm=60))),
    Case("height-168-in-155", "cooler_height", B(cooler=air_cooler(height_mm=168), case=case(max_cooler_height_mm=155)),
         P, ("air cooler height 168 mm exceeds the case maximum of 155 mm",), ("cooler-air", "case-test")),
    Case("height-unknown", "cooler_height", B(cooler=air_cooler(height_mm=None)), U,
         ("cooler height or case cooler clearance unknown",)),
    Case("ramclear-35-under-45", "ram_clearance", B(cooler=air_cooler())),
    Case("ramclear-at-limit", "ram_clearance", B(cooler=air_cooler(ram_clearance_mm=44), memory=memory(height_mm=44))),
    Case("ramclear-no-overhang-tall-kit", "ram_clearance",
         B(cooler=air_cooler(ram_overhang=False, ram_clearance_mm=None), memory=memory(height_mm=44))),
    Case("ramclear-aio-unknown-kit", "ram_clearance", B(memory=memory(height_mm=None))),
    Case("ramclear-44-under-32", "ram_clearance",
         B(cooler=air_cooler(ram_clearance_mm=32), memory=memory(height_mm=44)), P,
         ("44 mm memory modules are taller than the 32 mm clearance",), ("mem-test", "cooler-air")),
    Case("ramclear-kit-unknown", "ram_clearance", B(cooler=air_cooler(), memory=memory(height_mm=None)), U,
         ("memory module height or the air cooler's RAM clearance unknown",), ("mem-test",)),
    Case("ramclear-cooler-unknown", "ram_clearance", B(cooler=air_cooler(ram_clearance_mm=None)), U,
         ("RAM clearance unknown",), ("cooler-air",)),
    Case("ramclear-overhang-unknown", "ram_clearance", B(cooler=air_cooler(ram_overhang=None)), U,
         ("RAM clearance unknown",), ("cooler-air",)),
    # issue 34 item 2: a radiator whose only mount is the GPUs' intake
    Case("intake-radiator-at-the-top", "radiator_in_intake", B(case=case(**{**FRONT_ONLY_360, "radiator_top": [360]}))),
    Case("intake-radiator-front-only", "radiator_in_intake", B(case=case(**FRONT_ONLY_360)), W,
         ("360 mm CPU radiator fits only the front intake", "air tower"), ("cooler-test", "gpu-test", "case-test")),
    Case("intake-radiator-warms-the-gpus-air", "radiator_in_intake", B(case=case(**FRONT_ONLY_360)), W,
         # 230 W of CPU heat through 3 x 40 CFM less 30 % for the fins (84 CFM): 230 / (84 x 0.569) = 4.8 K
         ("warms the air the GPUs breathe by about 5 K (its heat through its ~84 CFM)",)),
    Case("intake-radiator-bottom-only", "radiator_in_intake", B(case=case(**BOTTOM_ONLY_360)), W,
         ("360 mm CPU radiator fits only the bottom intake",)),
    Case("gpu-length-bottom-radiator-takes-no-length", "gpu_length",
         B(case=case(**BOTTOM_ONLY_360), gpu=gpu(length_mm=380))),
    Case("gpu-length-front-radiator-takes-length", "gpu_length",
         B(case=case(**FRONT_ONLY_360), gpu=gpu(length_mm=380)), P, ("less 55 mm for the front radiator",)),
    Case("intake-air-tower-in-a-front-only-case", "radiator_in_intake", B(case=case(**FRONT_ONLY_360),
                                                                          cooler=air_cooler())),
    Case("radiator-front-only-ok", "radiator_mount", B(case=case(**FRONT_ONLY_360))),
    Case("radiator-air-cooler", "radiator_mount",
         B(cooler=air_cooler(), case=case(radiator_front=[], radiator_top=[], radiator_rear=[]))),
    Case("radiator-420-no-mount", "radiator_mount",
         B(cooler=cooler(radiator_mm=420), case=case(radiator_front=[240, 280, 360], radiator_top=[240],
                                                     radiator_rear=[120])), P,
         ("420 mm radiator has no mount in the case (supports top 240; front 240/280/360; rear 120 mm)",),
         ("cooler-test", "case-test")),
    Case("radiator-case-unknown", "radiator_mount",
         B(case=case(radiator_front=[], radiator_top=[], radiator_rear=[])), U, ("case radiator support unknown",)),
    Case("radiator-hybrid-gpu-on-top-ok", "radiator_mount",
         B(gpu=gpu(cooling="hybrid", radiator_mm=240), cooler=air_cooler())),
    Case("radiator-hybrid-gpu-and-aio", "radiator_mount",
         B(gpu=gpu(cooling="hybrid", radiator_mm=240)), P,
         ("360 mm CPU radiator and the card's own 240 mm radiator: this planner fits one radiator per case",),
         ("cooler-test", "gpu-test", "case-test")),
    Case("radiator-hybrid-gpu-no-mount", "radiator_mount",
         B(gpu=gpu(cooling="hybrid", radiator_mm=240), cooler=air_cooler(),
           case=case(radiator_front=[120], radiator_top=[], radiator_rear=[120])), P,
         ("240 mm radiator (the graphics card's own) has no mount in the case (supports front 120; rear 120 mm)",),
         ("cooler-air", "gpu-test", "case-test")),
    Case("psu-fit-sfx-in-sfx-case", "psu_fit",
         B(psu=psu(form_factor="SFX", length_mm=100), case=case(psu_form_factors=["SFX"], max_psu_length_mm=130))),
    Case("psu-fit-too-long", "psu_fit", B(psu=psu(length_mm=200), case=case(max_psu_length_mm=160)), P,
         ("PSU length 200 mm exceeds the case maximum of 160 mm",), ("psu-test", "case-test")),
    Case("psu-fit-atx-in-sfx-case", "psu_fit", B(case=case(psu_form_factors=["SFX"])), P,
         ("ATX PSU does not fit the case, which takes SFX",)),
    Case("psu-fit-length-unknown", "psu_fit", B(psu=psu(length_mm=None)), U, ("PSU length or case PSU clearance",)),
    # issue 34 item 3: an SFX unit in an ATX-only case hangs on a bracket
    Case("bracket-atx-in-atx-case", "psu_bracket", B()),
    Case("bracket-sfx-in-atx-case", "psu_bracket", B(psu=psu(form_factor="SFX", length_mm=100)), W,
         ("SFX PSU in a case that takes ATX units", "SFX-to-ATX bracket"), ("psu-test", "case-test")),
    Case("bracket-sfx-in-sfx-mount", "psu_bracket",
         B(psu=psu(form_factor="SFX", length_mm=100), case=case(psu_form_factors=["ATX", "SFX"]))),
    # ---- power (reference: GPU 450 + CPU 230 + rest 103 = 783 W sustained) -----------------------
    # training load: GPU 450 + CPU 138 (60 % of 230, power.TRAINING_CPU_FRACTION) + rest 103 = 691 W
    Case("sustained-at-80pct", "psu_sustained", B(psu=psu(wattage_w=TRAIN_NEED))),
    Case("sustained-one-watt-short", "psu_sustained", B(psu=psu(wattage_w=TRAIN_NEED - 1)), P,
         (f"sustained training load {TRAIN_W} W (GPU 450 + CPU {TRAIN_CPU}, 60% of its 230 W package power, + rest "
          f"103) is", f"80 % needs at least {TRAIN_NEED} W"), ("psu-test", "gpu-test", "cpu-test")),
    Case("sustained-900w-ok-though-full-cpu-would-need-979", "psu_sustained", B(psu=psu(wattage_w=900))),
    Case("transient-atx31-native-rides-through", "psu_transient",
         B(gpu=gpu(**LEGACY_CARD), cpu=cpu(package_power_w=142), psu=psu(wattage_w=850))),
    Case("transient-atx2-same-build", "psu_transient",
         B(gpu=gpu(**LEGACY_CARD), cpu=cpu(package_power_w=142),
           psu=psu(wattage_w=850, atx_version="2.x", connectors_12v2x6=0)), P,
         ("850 W PSU too small for transients: an ATX 2.x unit has no 200 % excursion guarantee: 1.47 x 595 W sustained needs "
          "at least 875 W",), ("psu-test", "gpu-test", "cpu-test")),
    Case("transient-atx31-without-16pin", "psu_transient",
         B(gpu=gpu(**LEGACY_CARD), cpu=cpu(package_power_w=142), psu=psu(wattage_w=850, connectors_12v2x6=0)), P,
         ("ATX 3.x unit without a native 12V-2x6 cable", "needs at least 875 W")),
    Case("transient-450w-atx3-is-legacy", "psu_transient",
         B(gpu=gpu(chip="t-small", vram_gb=12, tgp_w=120, recommended_psu_w=None),
           cpu=cpu(base_power_w=65, package_power_w=88, cores=8, threads=16), psu=psu(wattage_w=450)), P,
         ("1.47 x 311 W sustained needs at least 458 W",)),
    Case("transient-two-big-cards-atx31", "psu_transient",
         B(gpu_count=2, gpu=gpu(**BIG_CARD), cpu=cpu(base_power_w=65, package_power_w=88, cores=8, threads=16),
           psu=psu(wattage_w=1700, connectors_12v2x6=2)), P,
         ("1700 W PSU too small for transients: GPU excursions of 3 x 1150 W plus 191 W reach 3641 W",
          "200 % of its rating for 100 us, so it needs at least 1821 W")),
    Case("vendor-floor-met", "psu_vendor_floor", B(psu=psu(wattage_w=850))),
    Case("vendor-floor-multi-gpu-not-applicable", "psu_vendor_floor",
         B(gpu_count=2, gpu=gpu(tgp_w=200), psu=psu(wattage_w=800))),
    Case("vendor-floor-card-figure", "psu_vendor_floor", B(gpu=gpu(tgp_w=200), psu=psu(wattage_w=800)), P,
         ("800 W PSU is below the 850 W the GPU vendor recommends for this card",), ("psu-test", "gpu-test")),
    Case("vendor-floor-chip-fallback", "psu_vendor_floor",
         B(gpu=gpu(chip="t-big", vram_gb=32, tgp_w=200, recommended_psu_w=None), psu=psu(wattage_w=900)), P,
         ("900 W PSU is below the 1000 W the GPU vendor recommends",)),
    Case("connectors-native", "gpu_connectors", B()),
    Case("connectors-16pin-320w-via-3-8pins", "gpu_connectors",
         B(gpu=gpu(tgp_w=320), psu=psu(connectors_12v2x6=0, connectors_8pin=3))),
    Case("connectors-575w-no-native", "gpu_connectors",
         B(gpu=gpu(**BIG_CARD), psu=psu(wattage_w=1300, connectors_12v2x6=0, connectors_8pin=4)), P,
         ("1 native 12V-2x6 input(s) needed, the PSU has 0; a 575 W card needs a native cable, no adapter",),
         ("psu-test", "gpu-test")),
    Case("connectors-adapter-short", "gpu_connectors", B(gpu=gpu(tgp_w=320), psu=psu(connectors_12v2x6=0,
                                                                                     connectors_8pin=2)), P,
         ("an adapter would need 3 separate 8-pin cables, the PSU has 2",)),
    Case("connectors-8pin-short", "gpu_connectors", B(gpu=gpu(**{**LEGACY_CARD, "power_8pin": 3}),
                                                      psu=psu(connectors_8pin=2)), P,
         ("3 separate PCIe 8-pin cables needed, the PSU has 2",)),
    Case("connectors-two-8pin-cards", "gpu_connectors", B(gpu_count=2, gpu=gpu(**LEGACY_CARD),
                                                          psu=psu(wattage_w=1600, connectors_8pin=3)), P,
         ("4 separate PCIe 8-pin cables needed, the PSU has 3",)),
    # four 300 W 16-pin cards, a PSU with two native cables: two cards native, two on 2 x 8-pin adapters each
    Case("connectors-two-native-two-adapted", "gpu_connectors",
         B(gpu_count=4, gpu=gpu(**BLOWER_300W), psu=psu(wattage_w=2200, connectors_12v2x6=2, connectors_8pin=4))),
    Case("connectors-two-native-adapters-short", "gpu_connectors",
         B(gpu_count=4, gpu=gpu(**BLOWER_300W), psu=psu(wattage_w=2200, connectors_12v2x6=2, connectors_8pin=3)), P,
         ("4 native 12V-2x6 input(s) needed, the PSU has 2; adapters for the 2 card(s) beyond its native cables would "
          "need 4 separate 8-pin cables, the PSU has 3",), ("psu-test", "gpu-test")),
    Case("connectors-450w-cables-feed-no-575w-card-mixed", "gpu_connectors",
         B(gpu_count=2, gpu=gpu(**BIG_CARD), psu=psu(wattage_w=2200, connectors_12v2x6=2, connectors_8pin=8,
                                                     cable_12v2x6_w=450)), P, ("rated 450 W",)),
    Case("connectors-card-unknown", "gpu_connectors", B(gpu=gpu(power_12v2x6=None, power_8pin=None)), U,
         ("GPU power connectors unknown",)),
    Case("connectors-psu-unknown", "gpu_connectors", B(psu=psu(connectors_8pin=None)), U,
         ("PSU connector counts unknown",)),
    Case("connectors-450w-cable-under-575w-card", "gpu_connectors", B(gpu=gpu(**BIG_CARD), psu=psu(cable_12v2x6_w=450)),
         P, ("16-pin cables are rated 450 W, the card draws up to 575 W",), ("psu-test", "gpu-test")),
    Case("connectors-cable-rating-unknown", "gpu_connectors", B(gpu=gpu(**BIG_CARD), psu=psu(cable_12v2x6_w=None)), U,
         ("PSU 12V-2x6 cable rating unknown",), ("psu-test",)),
    Case("connectors-8pin-card-cable-rating-irrelevant", "gpu_connectors",
         B(gpu=gpu(**LEGACY_CARD), psu=psu(cable_12v2x6_w=None))),
    Case("connectors-450w-cable-fine-for-450w-card", "gpu_connectors", B(psu=psu(cable_12v2x6_w=450))),
    # issue 34 item 4: one DIMM per channel, every channel filled
    Case("dimms-one-per-channel", "memory_per_channel", B()),
    Case("dimms-two-per-channel-on-desktop", "memory_per_channel", B(memory=memory(modules=4, module_gb=32)), W,
         ("4 DIMMs on a 2-channel platform is 2 per channel", "a 2 x 64 GB kit"), ("mem-test", "mb-test")),
    Case("dimms-one-channel-empty", "memory_per_channel", B(memory=memory(modules=1, module_gb=64)), W,
         ("1 DIMMs fill 1 of the 2 memory channels",)),
    Case("dimms-four-on-trx50", "memory_per_channel",
         tr_build("threadripper", ["threadripper", "threadripper-pro"], chipset="TRX50", modules=4)),
    Case("dimms-eight-on-wrx90", "memory_per_channel", tr_build("threadripper-pro", ["threadripper-pro"])),
    Case("dimms-four-on-wrx90", "memory_per_channel", tr_build("threadripper-pro", ["threadripper-pro"], modules=4), W,
         ("4 DIMMs fill 4 of the 8 memory channels", "50%")),
    # issue 34 item 3: a 16-pin card beyond the PSU's native cables runs on an adapter
    Case("adapter-one-card-one-native", "gpu_adapter", B()),
    Case("adapter-two-cards-one-native", "gpu_adapter", B(gpu_count=2), W,
         ("1 of the 2 cards would run on an 8-pin-to-16-pin adapter", "1 native 12V-2x6 cable(s) for 2"),
         ("psu-test", "gpu-test")),
    Case("adapter-two-cards-two-native", "gpu_adapter", B(gpu_count=2, psu=psu(connectors_12v2x6=2))),
    Case("adapter-300w-workstation-cards-ship-with-one", "gpu_adapter", B(gpu_count=2, gpu=gpu(tgp_w=300))),
    Case("adapter-8pin-cards", "gpu_adapter", B(gpu_count=2, gpu=gpu(power_12v2x6=0, power_8pin=2, tgp_w=350))),
    Case("psu-class-atx31-for-575w-card", "psu_class", B(gpu=gpu(**BIG_CARD))),
    Case("psu-class-atx30-for-575w-card", "psu_class", B(gpu=gpu(**BIG_CARD), psu=psu(atx_version="3.0")), W,
         ("a 575 W card on an ATX 3.0 unit",), ("psu-test", "gpu-test")),
    Case("psu-right-sized", "psu_right_sized", B()),  # 1200 W for about 700 W of training load
    Case("psu-2200w-for-700w-oversized", "psu_right_sized", B(psu=psu(wattage_w=2200)), W,
         (f"a 2200 W PSU for {TRAIN_W} W of training load", f"{2 * TRAIN_W} W or less"), ("psu-test", "gpu-test")),
    Case("psu-1000w-floor-for-a-small-card", "psu_right_sized", B(gpu=gpu(tgp_w=150), psu=psu(wattage_w=1000))),
    Case("airflow-ok", "case_airflow", B()),  # 783 W sustained, 200 CFM carries about 1140 W
    Case("airflow-short", "case_airflow", B(case=case(intake_cfm=100)), W,
         ("about 783 W of sustained heat", "removes about 570 W"), ("case-test", "gpu-test", "cpu-test")),
    # issue 34 item 2: a radiator in the intake replaces the fans shipped there and loses ~30 % to its fins
    Case("airflow-torrent-like-as-shipped", "case_airflow", B(case=case(**TORRENT_LIKE), cooler=air_cooler())),
    Case("airflow-torrent-like-front-aio", "case_airflow", B(case=case(**TORRENT_LIKE)), W,
         # 200 CFM - 2 x 100 CFM shipped at the front + 84 CFM through the radiator = 84 CFM: 478 W
         ("with the 360 mm radiator in the front intake (it replaces the 2x180 mm fans shipped there",
          "removes about 478 W")),
    Case("airflow-front-aio-fans-not-recorded", "case_airflow", B(case=case(**{**FRONT_ONLY_360, "intake_cfm": 150})),
         # 150 CFM - 3 x 40 CFM (as many fans as the radiator's) + 84 = 114 CFM: 649 W
         W, ("it replaces the fans there", "removes about 649 W")),
    Case("airflow-front-aio-still-enough", "case_airflow", B(case=case(**FRONT_ONLY_360))),  # 164 CFM: 934 W
    Case("airflow-unknown", "case_airflow", B(case=case(intake_cfm=None)), U, ("case intake airflow unknown",),
         ("case-test",)),
    # a 450 W blower card blows 360 W out of the back: 423 W stays in the case, under the 570 W that 100 CFM removes
    Case("airflow-blower-card-exhausts-most-of-its-heat", "case_airflow",
         B(case=case(intake_cfm=100), gpu=gpu(cooling="blower"))),
    Case("airflow-blower-still-too-much-for-the-case", "case_airflow", B(case=case(intake_cfm=50), gpu=gpu(cooling="blower")),
         W, ("about 423 W of sustained heat in the case (783 W drawn, 360 W blown out by the cards)", "removes about 285 W"),
         ("case-test", "gpu-test", "cpu-test")),
    Case("wall-two-cards", "wall_circuit", B(gpu_count=2, psu=psu(wattage_w=2000, connectors_12v2x6=2))),
    Case("wall-four-600w-cards", "wall_circuit",
         B(gpu_count=4, gpu=gpu(**{**BIG_CARD, "tgp_w": 600}), psu=psu(wattage_w=2800, connectors_12v2x6=4)), P,
         ("about 3141 W at the wall exceeds the 2944 W a 230 V / 16 A circuit carries continuously",),
         ("psu-test", "gpu-test", "cpu-test")),
]


def _of(rule: str, build: Build) -> list:
    return [f for f in check_build(build) if f.rule == rule]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_verdict(case: Case) -> None:
    assert case.rule in RULES_BY_NAME, f"unknown rule {case.rule}"
    found = _of(case.rule, case.make())
    if case.severity is None:
        assert found == [], f"{case.rule} should pass, said: {[f.message for f in found]}"
        return
    assert len(found) == 1, [f.message for f in found]
    f = found[0]
    assert f.rule == case.rule
    assert f.severity == case.severity
    if case.severity != U:
        assert f.severity == RULES_BY_NAME[case.rule].severity
    for words in case.words:
        assert words in f.message, f"{words!r} not in {f.message!r}"
    assert set(case.parts) <= set(f.parts), f.parts


def test_every_rule_has_a_passing_and_a_failing_case() -> None:
    """Adding a rule to ALL_RULES without cases here fails this test."""
    names = {r.name for r in ALL_RULES}
    passing = {c.rule for c in CASES if c.severity is None}
    failing = {c.rule for c in CASES if c.severity in (P, W)}
    assert names - passing == set(), f"rules without a passing case: {sorted(names - passing)}"
    assert names - failing == set(), f"rules without a failing case: {sorted(names - failing)}"
    assert len(names) == len(ALL_RULES), "two rules share a name"


def test_rules_have_summary_and_declared_categories() -> None:
    for rule in ALL_RULES:
        assert rule.summary and rule.categories, rule.name
        assert rule.severity in (P, W), rule.name


def test_reference_build_is_clean() -> None:
    assert check_build(make_build()) == []


FAILING = [c for c in CASES if c.severity in (P, W)]


@pytest.mark.parametrize("case", FAILING, ids=[c.id for c in FAILING])
def test_rule_silent_when_one_of_its_parts_is_missing(case: Case) -> None:
    """A partial build (one of the rule's categories missing) gets no verdict from that rule."""
    full = case.make()
    for missing in RULES_BY_NAME[case.rule].categories:
        parts = {c: p for c, p in full.parts.items() if c != missing}
        partial = Build(parts=parts, chips=full.chips, gpu_count=full.gpu_count, power_fraction=full.power_fraction)
        if RULES_BY_NAME[case.rule].applies(partial):
            # radiator_mount (and radiator_in_intake) still judge a hybrid card's own radiator when no CPU cooler is given
            assert case.rule in ("radiator_mount", "radiator_in_intake") and missing == "cooler", missing
            continue
        assert _of(case.rule, partial) == [], missing


def test_problems_sort_before_warnings_and_unverified() -> None:
    b = make_build(cpu=cpu(socket="AM4", cores=4, threads=8), motherboard=board(max_memory_gb=None))
    order = [f.severity for f in check_build(b)]
    assert order[0] == P and W in order and U in order
    assert order == sorted(order, key=[P, W, U].index)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_solver_encoding_agrees_with_check(case: Case) -> None:
    """The same rule definitions drive CP-SAT: fixing these picks is feasible iff check finds no problem
    (and, with warnings avoided, no warning either)."""
    b = case.make()
    findings = check_build(b)
    problems = [f for f in findings if f.severity == P]
    assert fixed_picks_feasible(b) == (not problems), [f.message for f in problems]
    assert fixed_picks_feasible(b, avoid_warnings=True) == (not blocking(findings)), \
        [f.message for f in blocking(findings)]
    # unknown is not yes: not pinned, a part lacking data a strict rule needs is left out
    assert fixed_picks_feasible(b, pinned=False) == (not problems and not strict_unknown(findings)), \
        [f.message for f in findings]


def test_transient_message_grammar_for_unknown_atx_version() -> None:
    b = make_build(gpu=gpu(**LEGACY_CARD), cpu=cpu(package_power_w=142),
                   psu=psu(wattage_w=850, atx_version=None, connectors_12v2x6=0))
    (f,) = _of("psu_transient", b)
    assert "PSU of unknown ATX version" in f.message
    assert "an PSU" not in f.message


def test_transient_message_names_the_450w_threshold_not_a_missing_cable() -> None:
    b = make_build(gpu=gpu(chip="t-small", vram_gb=12, tgp_w=120, recommended_psu_w=None),
                   cpu=cpu(base_power_w=65, package_power_w=88, cores=8, threads=16), psu=psu(wattage_w=450))
    (f,) = _of("psu_transient", b)
    assert b.parts["psu"].connectors_12v2x6 == 1
    assert "without a native 12V-2x6 cable" not in f.message


def test_a_platform_must_belong_to_the_socket() -> None:
    """A CPU series or a board's accepted series from another socket is a catalog error caught at load time."""
    with pytest.raises(ValueError, match="platform for socket AM5"):
        cpu(platform="threadripper-pro")
    with pytest.raises(ValueError, match="CPU platform for socket sTR5"):
        board(socket="sTR5", memory_type="DDR5-RDIMM", cpu_platforms=["AM5"])
    assert cpu(socket="sTR5", memory_types=["DDR5-RDIMM"]).cpu_platform is None  # unknown, not guessed
    assert board().accepted_platforms == ("AM5",)
