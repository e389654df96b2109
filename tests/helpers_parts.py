"""Hand-built parts, chips, builds and in-memory catalogs for the rule, checker and solver tests."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable, Optional

from planner.catalog.load import Catalog
from planner.catalog.models import (
    Case, Cooler, Cpu, Gpu, GpuChip, Memory, Motherboard, Offer, Psu, Severity, Storage,
)
from planner.request import Request
from planner.compat.rules import Build

SRC = "test fixture (made up for a unit test)"


def chip(cid: str, **kw: Any) -> GpuChip:
    base = dict(id=cid, name=cid, vendor="NVIDIA", architecture="ada", compute_capability=8.9, launch_year=2022,
                vram_gb=24, memory_type="GDDR6X", mem_bandwidth_gbs=1000, fp32_tflops=80,
                fp16_tensor_tflops_fp32acc=160, has_tensor_cores=True, tdp_w=450, recommended_psu_w=850,
                segment="consumer", source=SRC)
    base.update(kw)
    return GpuChip(**base)


# A chip table of made-up chips; "gtx-1080-ti" is the speed baseline the solver's score divides by.
CHIPS: dict[str, GpuChip] = {
    "gtx-1080-ti": chip("gtx-1080-ti", name="Baseline Pascal 11G", architecture="pascal", compute_capability=6.1,
                         vram_gb=11, memory_type="GDDR5X", mem_bandwidth_gbs=484, fp32_tflops=11.3,
                         fp16_tensor_tflops_fp32acc=None, has_tensor_cores=False, tdp_w=250,
                         recommended_psu_w=600),
    "t-ada": chip("t-ada", name="Test Ada 24G"),
    "t-small": chip("t-small", name="Test Small 12G", vram_gb=12, mem_bandwidth_gbs=500, fp32_tflops=30,
                     fp16_tensor_tflops_fp32acc=60, tdp_w=200, recommended_psu_w=650),
    "t-big": chip("t-big", name="Test Big 32G", architecture="blackwell", compute_capability=12.0, vram_gb=32,
                   mem_bandwidth_gbs=1790, fp32_tflops=105, fp16_tensor_tflops_fp32acc=210, tdp_w=575,
                   recommended_psu_w=1000),
    "t-amd": chip("t-amd", name="Test Radeon 24G", vendor="AMD", architecture="rdna3", compute_capability=None,
                   has_tensor_cores=False, fp16_tensor_tflops_fp32acc=None, tdp_w=355, recommended_psu_w=800),
}


def gpu(**kw: Any) -> Gpu:
    base = dict(id="gpu-test", name="Test GPU", brand="Acme", source=SRC, chip="t-ada", vram_gb=24, length_mm=300,
                slots=3, tgp_w=450, power_12v2x6=1, power_8pin=0, recommended_psu_w=850, cooling="open-air")
    base.update(kw)
    return Gpu(**base)


def cpu(**kw: Any) -> Cpu:
    base = dict(id="cpu-test", name="Test CPU", brand="Acme", source=SRC, socket="AM5", cores=16, threads=32,
                base_power_w=170, package_power_w=230, memory_types=["DDR5"], max_memory_gb=None, gpu_pcie_lanes=16)
    base.update(kw)
    return Cpu(**base)


def board(**kw: Any) -> Motherboard:
    base = dict(id="mb-test", name="Test Board", brand="Acme", source=SRC, socket="AM5", chipset="X870E",
                form_factor="ATX", memory_type="DDR5", dimm_slots=4, max_memory_gb=192, m2_slots=3, pcie_x16_slots=2,
                max_cpu_power_w=230, gpu_slots_x8=2, gpu_slot_pitch=4, first_gpu_slot=1, m2_gen5_shares_gpu=False)
    base.update(kw)
    return Motherboard(**base)


def memory(**kw: Any) -> Memory:
    base = dict(id="mem-test", name="Test Memory", brand="Acme", source=SRC, memory_type="DDR5", modules=2,
                module_gb=32, speed_mts=6000, height_mm=35)
    base.update(kw)
    return Memory(**base)


def storage(**kw: Any) -> Storage:
    base = dict(id="ssd-test", name="Test SSD", brand="Acme", source=SRC, interface="NVMe", form_factor="M.2-2280",
                capacity_gb=2000, pcie_gen=4)
    base.update(kw)
    return Storage(**base)


def cooler(**kw: Any) -> Cooler:
    base = dict(id="cooler-test", name="Test AIO", brand="Acme", source=SRC, type="aio", radiator_mm=360,
                sockets=["AM4", "AM5", "LGA1700", "LGA1851"], cooling_capacity_w=300, fans=3)
    base.update(kw)
    return Cooler(**base)


def air_cooler(**kw: Any) -> Cooler:
    base = dict(id="cooler-air", name="Test Tower", type="air", radiator_mm=None, height_mm=158, fans=2,
                cooling_capacity_w=250, ram_overhang=True, ram_clearance_mm=45)
    base.update(kw)
    return cooler(**base)


def psu(**kw: Any) -> Psu:
    base = dict(id="psu-test", name="Test PSU", brand="Acme", source=SRC, wattage_w=1200, atx_version="3.1",
                connectors_12v2x6=1, connectors_8pin=4, efficiency="gold", form_factor="ATX", length_mm=160,
                cable_12v2x6_w=600)
    base.update(kw)
    return Psu(**base)


def case(**kw: Any) -> Case:
    base = dict(id="case-test", name="Test Case", brand="Acme", source=SRC, form_factors=["EATX", "ATX", "mATX", "ITX"],
                max_gpu_length_mm=400, max_cooler_height_mm=180, max_psu_length_mm=250, expansion_slots=7,
                radiator_front=[240, 280, 360], radiator_top=[240, 360], radiator_rear=[120], intake_cfm=200)
    base.update(kw)
    return Case(**base)


def reference_parts() -> dict[str, Any]:
    """A build every rule accepts with no finding at all (problems, warnings or unverified)."""
    return {"gpu": gpu(), "cpu": cpu(), "motherboard": board(), "memory": memory(), "storage": storage(),
            "cooler": cooler(), "psu": psu(), "case": case()}


def make_build(gpu_count: int = 1, power_fraction: float = 1.0, chips: Optional[dict[str, GpuChip]] = None,
               model_params: Optional[float] = None, **overrides: Any) -> Build:
    """The reference build with some parts replaced (a value of None removes the category)."""
    parts = reference_parts()
    for cat, part in overrides.items():
        if part is None:
            parts.pop(cat, None)
        else:
            parts[cat] = part
    return Build(parts=parts, chips=chips or CHIPS, gpu_count=gpu_count, power_fraction=power_fraction,
                 model_params=model_params)


def offer(part_id: str, price: Any, currency: str = "EUR") -> Offer:
    return Offer(part_id=part_id, price=Decimal(str(price)), currency=currency, retailer="test shop",
                 url=f"https://shop.invalid/{part_id}", observed_on=date(2026, 1, 1), source="estimate",
                 note="made-up test price")


def catalog_of(parts: Iterable[Any], prices: Optional[dict[str, Any]] = None,
               chips: Optional[dict[str, GpuChip]] = None) -> Catalog:
    """An in-memory catalog: every part gets one offer (default EUR 100)."""
    parts = list(parts)
    prices = prices or {}
    by_id = {p.id: p for p in parts}
    assert len(by_id) == len(parts), "duplicate ids in a test catalog"
    return Catalog(data_dir=Path("/nonexistent-test-catalog"), chips=dict(chips or CHIPS), parts=by_id,
                   offers={p.id: [offer(p.id, prices.get(p.id, 100))] for p in parts})


def rules_only(gpu_count: int = 1, power_fraction: float = 1.0, avoid_warnings: bool = False,
               **kw: Any) -> Request:
    """Request that add nothing to the compatibility rules (no budget, storage or NVMe floor; the RAM floor is the
    ram_for_workload rule's)."""
    base = dict(mode="cheapest", min_storage_gb=0, require_nvme=False, avoid_warnings=avoid_warnings,
                gpu_count=gpu_count, power_fraction=power_fraction)
    base.update(kw)
    return Request(**base)


def fixed_picks_feasible(build: Build, avoid_warnings: bool = False, pinned: bool = True) -> bool:
    """Does the CP-SAT model, with one candidate per category (the build's parts), have a solution? The picks are
    pinned by default (unknown data then passes strict rules, as the checker's "unverified" does)."""
    from ortools.sat.python import cp_model

    from planner.solver.currency import to_eur
    from planner.solver.model import build_candidates, build_model

    cat = catalog_of(build.parts.values(), chips=build.chips)
    req = rules_only(build.gpu_count, max(build.power_fraction, 0.5), avoid_warnings,
                     pinned=tuple(p.id for p in build.parts.values()) if pinned else (),
                     precision=build.precision, model_params=build.model_params)
    cands = build_candidates(cat, req, to_eur)
    m, _, _ = build_model(cands.parts, cands, req, cat, with_assumptions=False)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.max_time_in_seconds = 10
    status = solver.Solve(m.model)
    assert status in (cp_model.OPTIMAL, cp_model.FEASIBLE, cp_model.INFEASIBLE), status
    return status != cp_model.INFEASIBLE


def blocking(findings: Iterable[Any]) -> list[Any]:
    """Problems and the warnings the solver avoids by default (not advice-only ones such as a DIMM speed derate)."""
    from planner.compat.rules import RULES_BY_NAME
    return [f for f in findings if f.severity == Severity.PROBLEM
            or (f.severity == Severity.WARNING and RULES_BY_NAME[f.rule].blocks)]


def strict_unknown(findings: Iterable[Any], pinned: Iterable[str] = ()) -> bool:
    """Does a strict rule (safety or fit) lack data on a part the user did not pin? The solver leaves it out."""
    from planner.compat.rules import RULES_BY_NAME
    pins = set(pinned)
    return any(f.severity == Severity.UNVERIFIED and RULES_BY_NAME[f.rule].strict_unknown
               and not set(f.parts) <= pins for f in findings)


def severities(findings: Iterable[Any]) -> set[Severity]:
    return {f.severity for f in findings}


def isolate_cli_env(monkeypatch: Any, tmp_path: Path) -> None:
    """CLI commands read the shipped data/ and no price history: no user price DB leaks into a test."""
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "no-price-history.sqlite"))
