"""Synthetic catalogs of any size, with realistic spec distributions, for benchmarks and property tests."""

from __future__ import annotations

import csv
import random
from datetime import date
from pathlib import Path
from typing import Any, Optional

from planner.atomicfile import fs_error
from planner.catalog.load import SHIPPED_DATA_DIR, load_chips
from planner.catalog.models import CATEGORIES, PART_TYPES

# Made-up fit data for the RAM-clearance rule: kit height by speed, and which tower heights overhang the DIMMs.
SYNTH_RAM_HEIGHT_MM = {3200: 31, 3600: 42, 5600: 35, 6000: 35, 6400: 44}
SYNTH_OVERHANG_HEIGHTS = (155, 165, 168)
SHARE = {"gpu": 0.16, "cpu": 0.08, "motherboard": 0.14, "memory": 0.2, "storage": 0.16, "cooler": 0.08,
         "psu": 0.1, "case": 0.08}
SOCKET_MEM = {"AM5": ["DDR5"], "AM4": ["DDR4"], "LGA1700": ["DDR4", "DDR5"], "LGA1851": ["DDR5"]}
FF = ["ATX", "ATX", "mATX", "ITX", "EATX"]


def _gpu(r: random.Random, i: int, chips: list[Any]) -> tuple[dict, float]:
    chip = r.choice(chips)
    tgp = int(chip.tdp_w * r.choice([1.0, 1.0, 1.05, 1.1]))
    sixteen = 1 if tgp > 300 and chip.vendor == "NVIDIA" else 0
    row = dict(chip=chip.id, vram_gb=chip.vram_gb, length_mm=r.choice([200, 242, 267, 285, 304, 320, 336, 357.6]),
               slots=r.choice([2, 2, 2.5, 3, 3.5]), tgp_w=tgp, power_12v2x6=sixteen,
               power_8pin=0 if sixteen else r.choice([1, 2, 3]), recommended_psu_w=chip.recommended_psu_w or "",
               cooling=r.choice(["open-air", "open-air", "blower"]))
    base = 250 + 12 * chip.fp32_tflops + 8 * chip.vram_gb
    return row, base * r.uniform(0.9, 1.3)


def _row(cat: str, r: random.Random, i: int, chips: list[Any]) -> tuple[dict, float]:
    if cat == "gpu":
        return _gpu(r, i, chips)
    if cat == "cpu":
        sock = r.choice(list(SOCKET_MEM))
        cores = r.choice([6, 8, 12, 16, 20, 24])
        tdp = r.choice([65, 105, 120, 125, 170])
        return dict(socket=sock, cores=cores, threads=cores * 2, base_power_w=tdp, package_power_w="",
                    memory_types=";".join(SOCKET_MEM[sock]), max_memory_gb=r.choice([128, 192, 256]), pcie_gen=5,
                    integrated_graphics=r.choice(["true", "false"])), 80 + 25 * cores + tdp
    if cat == "motherboard":
        sock = r.choice(list(SOCKET_MEM))
        ff = r.choice(FF)
        return dict(socket=sock, chipset="X", form_factor=ff, memory_type=r.choice(SOCKET_MEM[sock]),
                    dimm_slots=2 if ff == "ITX" else r.choice([2, 4, 4]), max_memory_gb=r.choice([96, 128, 192, 256]),
                    m2_slots=r.choice([1, 2, 3, 4]), pcie_x16_slots=r.choice([1, 2, 3]), m2_gen5_shares_gpu="false"), \
            r.uniform(90, 600)
    if cat == "memory":
        mods, gb = r.choice([(2, 16), (2, 32), (2, 48), (2, 64), (4, 32), (4, 48), (2, 8)])
        t = r.choice(["DDR5", "DDR5", "DDR4"])
        speed = r.choice([3200, 3600, 5600, 6000, 6400])
        # module height follows the speed (no draw of its own, so the random stream is unchanged)
        return dict(memory_type=t, modules=mods, module_gb=gb, speed_mts=speed,
                    cas_latency=r.choice([30, 32, 36, 40]), ecc="false",
                    height_mm=SYNTH_RAM_HEIGHT_MM[speed]), mods * gb * r.uniform(2.5, 5)
    if cat == "storage":
        cap = r.choice([500, 1000, 2000, 4000, 8000])
        nvme = r.random() < 0.8
        return dict(interface="NVMe" if nvme else "SATA", form_factor="M.2-2280" if nvme else "2.5",
                    capacity_gb=cap, pcie_gen=r.choice([3, 4, 5]) if nvme else "", read_mbs=""), cap * r.uniform(0.05, 0.12)
    if cat == "cooler":
        aio = r.random() < 0.4
        height = None if aio else r.choice([37, 125, 148, 155, 158, 165, 168])
        overhang = None if aio else height in SYNTH_OVERHANG_HEIGHTS  # derived: no extra draw
        return dict(type="aio" if aio else "air", height_mm="" if aio else height,
                    ram_overhang="" if aio else str(overhang).lower(), ram_clearance_mm=40 if overhang else "",
                    radiator_mm=r.choice([240, 280, 360, 420]) if aio else "",
                    sockets=";".join(r.sample(list(SOCKET_MEM), r.choice([2, 3, 4]))),
                    cooling_capacity_w=r.choice([95, 150, 200, 250, 300]), fans=""), r.uniform(25, 250)
    if cat == "psu":
        w = r.choice([550, 650, 750, 850, 1000, 1200, 1300, 1600])
        atx = r.choice(["2.x", "3.0", "3.1", "3.1"])
        return dict(wattage_w=w, atx_version=atx, connectors_12v2x6=0 if atx == "2.x" else r.choice([1, 1, 2]),
                    connectors_8pin=r.choice([2, 3, 4, 6]), efficiency=r.choice(["bronze", "gold", "platinum", "titanium"]),
                    form_factor="ATX", length_mm=r.choice([140, 150, 160, 180, 200])), w * r.uniform(0.1, 0.3)
    if cat == "case":
        ffs = r.choice(["EATX;ATX;mATX;ITX", "ATX;mATX;ITX", "mATX;ITX", "ITX"])
        return dict(form_factors=ffs, max_gpu_length_mm=r.choice([300, 322, 340, 360, 400, 445]),
                    max_cooler_height_mm=r.choice([70, 155, 165, 170, 185]), max_psu_length_mm=r.choice([160, 180, 220, 250]),
                    expansion_slots=r.choice([3, 4, 7, 7, 8]), radiator_front=r.choice(["240;280;360", "240;360;420", ""]),
                    radiator_top=r.choice(["240;280;360", "240", ""]), radiator_rear="120",
                    front_radiator_clearance_mm="", psu_form_factors="ATX"), r.uniform(50, 250)
    raise ValueError(cat)


def generate(out_dir: Path, n_parts: int, seed: int = 0, chips_dir: Optional[Path] = None) -> Path:
    """Write a synthetic catalog of about n_parts parts (plus one offer each) into out_dir."""
    r = random.Random(seed)
    chips = [c for c in load_chips(chips_dir or SHIPPED_DATA_DIR).values() if c.segment != "datacenter"]
    out = Path(out_dir)
    try:
        _write_all(out, r, chips, n_parts)
    except OSError as exc:  # a read-only, missing or full --out: one line naming it, as the importer says it
        fix = f"check --out {out} is a writable directory with free space"
        raise fs_error(out, exc, "the synthetic catalog", fix) from None
    return out


def _write_all(out: Path, r: random.Random, chips: list[Any], n_parts: int) -> None:
    (out / "offers").mkdir(parents=True, exist_ok=True)
    today = date.today().isoformat()
    for cat in CATEGORIES:
        count = max(2, int(n_parts * SHARE[cat]))
        fields = list(PART_TYPES[cat].model_fields)
        with (out / f"{cat}.csv").open("w", newline="") as fp, (out / "offers" / f"{cat}.csv").open("w", newline="") as fo:
            w = csv.DictWriter(fp, fieldnames=fields)
            wo = csv.writer(fo)
            w.writeheader()
            wo.writerow(["part_id", "price", "currency", "condition", "retailer", "url", "observed_on", "source", "note"])
            for i in range(count):
                row, price = _row(cat, r, i, chips)
                pid = f"syn-{cat}-{i}"
                row.update(id=pid, name=f"Synthetic {cat} {i}", brand=r.choice(["Acme", "Globex", "Initech"]),
                           source="synthetic (planner.catalog.synth)", notes="")
                w.writerow({k: row.get(k, "") for k in fields})
                wo.writerow([pid, f"{price:.2f}", "EUR", "new", "synthetic", "", today, "estimate",
                             "synthetic price for benchmarks"])
