"""Matching retailer listings to catalog parts: tokens that must agree, brand, VRAM, condition, confidence."""

from __future__ import annotations

import pytest

from planner.catalog.models import Cpu, Gpu, Memory
from planner.catalog.match import DEFAULT_THRESHOLD, normalise, score
from planner.prices.match import match_listing

SRC = "test fixture"


def gpu(id_: str, name: str, brand: str, chip: str, vram: float) -> Gpu:
    return Gpu(id=id_, name=name, brand=brand, chip=chip, vram_gb=vram, source=SRC)


PARTS = [
    gpu("gainward-5070ti-phoenix-s", "Gainward GeForce RTX 5070 Ti Phoenix-S", "Gainward", "rtx-5070-ti", 16),
    gpu("asus-5070ti-tuf", "ASUS TUF Gaming GeForce RTX 5070 Ti OC", "ASUS", "rtx-5070-ti", 16),
    gpu("asus-5070-prime", "ASUS Prime GeForce RTX 5070 OC", "ASUS", "rtx-5070", 12),
    gpu("msi-4070s-ventus", "MSI GeForce RTX 4070 SUPER Ventus 2X OC", "MSI", "rtx-4070-super", 12),
    gpu("sapphire-7900xt-pulse", "Sapphire Pulse Radeon RX 7900 XT", "Sapphire", "rx-7900-xt", 20),
    gpu("pny-4060ti-16", "PNY GeForce RTX 4060 Ti 16GB Verto", "PNY", "rtx-4060-ti-16", 16),
    gpu("pny-4060ti-8", "PNY GeForce RTX 4060 Ti 8GB Verto", "PNY", "rtx-4060-ti-8", 8),
    Cpu(id="amd-7800x3d", name="AMD Ryzen 7 7800X3D", brand="AMD", socket="AM5", cores=8, threads=16,
        base_power_w=120, memory_types=["DDR5"], source=SRC),
    Cpu(id="amd-7700x", name="AMD Ryzen 7 7700X", brand="AMD", socket="AM5", cores=8, threads=16,
        base_power_w=105, memory_types=["DDR5"], source=SRC),
    Memory(id="corsair-2x16-6000", name="Corsair Vengeance 32 Go (2 x 16 Go) DDR5 6000 MHz CL30", brand="Corsair",
           memory_type="DDR5", modules=2, module_gb=16, speed_mts=6000, source=SRC),
]


def test_normalise_joins_units_and_splits_glued_models() -> None:
    assert normalise("MSI RTX5070Ti 16G") == ["msi", "rtx", "5070", "ti", "16gb"]
    assert normalise("16 Go GDDR7") == ["16gb", "gddr7"]
    assert "7800x3d" in normalise("Ryzen 7 7800X3D")
    assert "2x16gb" in normalise("2 x 16 Go")


def test_exact_listing_matches_with_high_confidence() -> None:
    m = match_listing("Gainward GeForce RTX 5070 Ti Phoenix-S", PARTS, "gpu")
    assert m.part_id == "gainward-5070ti-phoenix-s" and m.accepted and m.confidence >= 0.9


@pytest.mark.parametrize(
    ("listing", "not_part"),
    [
        ("ASUS Prime GeForce RTX 5070 Ti OC 16GB", "asus-5070-prime"),  # Ti is not the plain 5070
        ("ASUS Prime GeForce RTX 5070 OC 12 Go", "asus-5070ti-tuf"),
        ("MSI GeForce RTX 4070 Ventus 2X OC 12G", "msi-4070s-ventus"),  # no SUPER
        ("Sapphire Pulse Radeon RX 7900 XTX 24GB", "sapphire-7900xt-pulse"),  # XTX is not XT
        ("AMD Ryzen 7 7800X (4.5 GHz)", "amd-7800x3d"),  # X3D must match
    ],
)
def test_tokens_that_must_match(listing: str, not_part: str) -> None:
    assert score(listing, next(p for p in PARTS if p.id == not_part))[0] == 0.0
    m = match_listing(listing, PARTS)
    assert m.part_id != not_part or not m.accepted


def test_plain_listing_does_not_match_ti_part() -> None:
    m = match_listing("ASUS Prime GeForce RTX 5070 OC 12 Go", PARTS, "gpu")
    assert m.part_id == "asus-5070-prime" and m.accepted


def test_x3d_matches_only_x3d() -> None:
    assert match_listing("AMD Ryzen 7 7800X3D (4.2 GHz / 5.0 GHz)", PARTS, "cpu").part_id == "amd-7800x3d"
    assert match_listing("AMD Ryzen 7 7700X Wraith", PARTS, "cpu").part_id == "amd-7700x"


def test_vram_size_must_agree() -> None:
    m16 = match_listing("PNY GeForce RTX 4060 Ti Verto 16 Go GDDR6", PARTS, "gpu")
    m8 = match_listing("PNY GeForce RTX 4060 Ti Verto 8GB", PARTS, "gpu")
    assert m16.part_id == "pny-4060ti-16" and m16.accepted
    assert m8.part_id == "pny-4060ti-8" and m8.accepted
    assert score("PNY GeForce RTX 4060 Ti Verto 16 Go", PARTS[6])[0] == 0.0


def test_brand_must_agree() -> None:
    m = match_listing("MSI GeForce RTX 5070 Ti Ventus 3X OC", PARTS, "gpu")
    assert not m.accepted


def test_used_listing_is_reported_not_used() -> None:
    m = match_listing("Gainward GeForce RTX 5070 Ti Phoenix-S · Occasion", PARTS, "gpu")
    assert m.part_id == "gainward-5070ti-phoenix-s"
    assert m.condition == "used" and not m.accepted and "used" in m.reason
    assert match_listing("Gainward GeForce RTX 5070 Ti Phoenix-S", PARTS, "gpu", condition="refurbished").accepted is False


def test_low_confidence_is_reported_not_used() -> None:
    # Same chip, brand and VRAM as the TUF card, but another product line (PRIME): too unsure.
    m = match_listing("ASUS PRIME GeForce RTX 5070 Ti 16GB GDDR7", PARTS, "gpu")
    assert m.part_id == "asus-5070ti-tuf"
    assert 0 < m.confidence < DEFAULT_THRESHOLD and not m.accepted and "low confidence" in m.reason


def test_complete_pcs_and_accessories_are_rejected() -> None:
    assert not match_listing("PC Gamer LDLC Exemple RTX 5070 Ti", PARTS, "gpu").accepted
    assert not match_listing("Backplate pour Gainward RTX 5070 Ti Phoenix-S", PARTS, "gpu").accepted


def test_memory_capacity_and_speed() -> None:
    ok = match_listing("Corsair Vengeance DDR5 2 x 16 Go 6000 MHz CL30", PARTS, "memory")
    assert ok.part_id == "corsair-2x16-6000" and ok.accepted
    assert not match_listing("Corsair Vengeance DDR5 2 x 16 Go 5600 MHz CL36", PARTS, "memory").accepted
    assert not match_listing("Corsair Vengeance DDR5 2 x 32 Go 6000 MHz CL30", PARTS, "memory").accepted


def test_no_part_in_category() -> None:
    m = match_listing("Seasonic Focus GX-850", PARTS, "psu")
    assert m.part_id is None and not m.accepted


def test_other_product_line_words_block_a_match() -> None:
    # A factory-overclocked "GS" or a "White" edition is another SKU with another price.
    gs = match_listing("Gainward GeForce RTX 5070 Ti Phoenix-S GS", PARTS, "gpu")
    assert gs.part_id == "gainward-5070ti-phoenix-s" and not gs.accepted and "gs" in gs.reason
    assert not match_listing("ASUS TUF Gaming GeForce RTX 5070 Ti 16GB GDDR7 White OC Edition", PARTS, "gpu").accepted
    # Words after the product name proper (a comma, a parenthesis) describe it and do not count.
    long_title = ("ASUS TUF Gaming GeForce RTX 5070 Ti OC 16GB GDDR7 Graphics Card, NVIDIA, Desktop "
                  "(PCIe 5.0, HDMI/DP 2.1, 3.6-slot, Axial-tech Fans)")
    m = match_listing(long_title, PARTS, "gpu")
    assert m.part_id == "asus-5070ti-tuf" and m.accepted
