"""Sharing: permalink tokens (round trip, size, tampering), Markdown/CSV/JSON exports, imports, CLI exit codes."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import stat
import struct
import subprocess
import sys
import zlib
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from planner import share as S
from planner.request import Request
from planner.catalog.load import Catalog, load_chips
from planner.cli import app
from planner.errors import ShareError
from planner.catalog.models import Case, Cooler, Cpu, Gpu, Memory, Motherboard, Offer, Psu, Storage
from planner.catalog.synth import generate

SRC = "test fixture (made-up catalog rows for the sharing tests)"
DAY = date(2026, 11, 2)


def _offer(pid: str, price: str, url: str | None = None) -> Offer:
    return Offer(part_id=pid, price=Decimal(price), retailer="Shop FR", url=url, observed_on=DAY, source="scraped")


@pytest.fixture(scope="module")
def cat() -> Catalog:
    """A small in-memory catalog with realistic names, so PCPartPicker-style names can be matched."""
    c = dict(brand="", source=SRC)
    parts = [
        Gpu(id="gpu-asus-tuf-5090", name="ASUS TUF Gaming GeForce RTX 5090 32GB GDDR7 OC Edition", brand="ASUS",
            source=SRC, chip="rtx-5090", vram_gb=32, length_mm=348, slots=3.6, tgp_w=600, power_12v2x6=1, power_8pin=0),
        Gpu(id="gpu-msi-4090", name="MSI GeForce RTX 4090 Gaming X Trio 24G", brand="MSI", source=SRC,
            chip="rtx-4090", vram_gb=24, length_mm=337, slots=3.2, tgp_w=450, power_12v2x6=1, power_8pin=0),
        Cpu(id="cpu-9950x", name="AMD Ryzen 9 9950X", brand="AMD", source=SRC, socket="AM5", cores=16, threads=32,
            base_power_w=170, package_power_w=230, memory_types=["DDR5"]),
        Cpu(id="cpu-9950x3d", name="AMD Ryzen 9 9950X3D", brand="AMD", source=SRC, socket="AM5", cores=16,
            threads=32, base_power_w=170, package_power_w=230, memory_types=["DDR5"]),
        Cpu(id="cpu-14900k", name="Intel Core i9-14900K", brand="Intel", source=SRC, socket="LGA1700", cores=24,
            threads=32, base_power_w=125, package_power_w=253, memory_types=["DDR4", "DDR5"]),
        Motherboard(id="mb-proart-x870e", name="ASUS ProArt X870E-Creator WiFi", brand="ASUS", source=SRC,
                    socket="AM5", chipset="X870E", form_factor="ATX", memory_type="DDR5", dimm_slots=4,
                    m2_slots=4, pcie_x16_slots=3),
        Memory(id="mem-2x32", name="Corsair Vengeance DDR5-6000 CL30 64 GB (2x32 GB)", brand="Corsair", source=SRC,
               memory_type="DDR5", modules=2, module_gb=32, speed_mts=6000, cas_latency=30),
        Memory(id="mem-2x16", name="Corsair Vengeance DDR5-6000 CL30 32 GB (2x16 GB)", brand="Corsair", source=SRC,
               memory_type="DDR5", modules=2, module_gb=16, speed_mts=6000, cas_latency=30),
        Storage(id="ssd-990-2tb", name="Samsung 990 Pro 2 TB", brand="Samsung", source=SRC, interface="NVMe",
                form_factor="M.2-2280", capacity_gb=2000, pcie_gen=4),
        Storage(id="ssd-990-1tb", name="Samsung 990 Pro 1 TB", brand="Samsung", source=SRC, interface="NVMe",
                form_factor="M.2-2280", capacity_gb=1000, pcie_gen=4),
        Cooler(id="cool-lf3-360", name="Arctic Liquid Freezer III 360", brand="Arctic", source=SRC, type="aio",
               radiator_mm=360, sockets=["AM5", "LGA1700"], cooling_capacity_w=300),
        Psu(id="psu-rm1200x", name="Corsair RM1200x Shift (2024)", brand="Corsair", source=SRC, wattage_w=1200,
            atx_version="3.1", connectors_12v2x6=1, connectors_8pin=4, efficiency="gold", length_mm=180),
        Case(id="case-meshify-2", name="Fractal Design Meshify 2", brand="Fractal Design", source=SRC,
             form_factors=["EATX", "ATX", "mATX", "ITX"], max_gpu_length_mm=445, max_cooler_height_mm=185,
             max_psu_length_mm=250, expansion_slots=7, radiator_front=[240, 280, 360, 420], radiator_top=[240, 360]),
    ]
    del c
    prices = {"gpu-asus-tuf-5090": "2999", "gpu-msi-4090": "1899", "cpu-9950x": "489", "cpu-9950x3d": "649",
              "cpu-14900k": "449", "mb-proart-x870e": "449", "mem-2x32": "229", "mem-2x16": "119",
              "ssd-990-2tb": "169", "ssd-990-1tb": "99", "cool-lf3-360": "119", "psu-rm1200x": "239",
              "case-meshify-2": "139"}
    offers = {pid: [_offer(pid, p, f"https://shop.example/{pid}" if pid.startswith("gpu") else None)]
              for pid, p in prices.items()}
    return Catalog(data_dir=Path("."), chips=load_chips(), parts={p.id: p for p in parts}, offers=offers)


FULL = [("gpu-asus-tuf-5090", 1), ("cpu-9950x", 1), ("mb-proart-x870e", 1), ("mem-2x32", 1), ("ssd-990-2tb", 1),
        ("cool-lf3-360", 1), ("psu-rm1200x", 1), ("case-meshify-2", 1)]


# ---------------------------------------------------------------- tokens

def test_token_round_trip_restores_inputs_and_parts(cat: Catalog) -> None:
    inputs = Request(budget="4500", currency="USD", precision="fp32", runs=12, baseline_hours=6.5, model_params=15e6,
                           owned=("cpu-9950x",), excluded=("gpu-msi-4090",), excluded_brands=("Intel",),
                           cooler_type="aio", gpu_count=2, power_fraction=0.8, used="none", alternatives=1)
    token = S.encode_token(inputs, [("gpu-asus-tuf-5090", 2), ("cpu-9950x", 1)])
    assert token.startswith("v2.") and len(token) <= S.MAX_TOKEN_CHARS
    state = S.decode_token(token, cat)
    assert state.inputs == inputs
    assert state.parts == (("gpu-asus-tuf-5090", 2), ("cpu-9950x", 1))
    # a pasted link works as well as the bare token
    assert S.decode_token(S.permalink(token, "https://planner.example/app"), cat) == state


ids = st.from_regex(r"[a-z][a-z0-9-]{0,40}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.tuples(ids, st.integers(1, 8)), max_size=12),
       budget=st.decimals(min_value=1, max_value=100_000, places=2),
       runs=st.integers(1, 10_000), owned=st.lists(ids, max_size=6))
def test_token_round_trip_property(parts, budget, runs, owned) -> None:
    inputs = Request(budget=budget, runs=runs, owned=tuple(owned))
    token = S.encode_token(inputs, parts)
    assert len(token) <= S.MAX_TOKEN_CHARS
    state = S.decode_token(token)
    assert state.inputs == inputs and list(state.parts) == [tuple(p) for p in parts]


def test_a_large_realistic_build_fits_in_2kb_and_an_absurd_one_is_refused() -> None:
    long_ids = [f"gpu-asus-rog-astral-geforce-rtx-5090-32gb-oc-edition-{i}" for i in range(12)]
    inputs = Request(owned=tuple(long_ids[:6]), excluded=tuple(long_ids[6:]), excluded_brands=("MSI", "Zotac"))
    token = S.encode_token(inputs, [(f"part-{c}-with-a-fairly-long-identifier", 1) for c in "abcdefgh"])
    assert len(token) <= S.MAX_TOKEN_CHARS
    import random
    rnd = random.Random(7)  # incompressible ids make the token grow past the limit
    noisy = ["".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(60)) for _ in range(40)]
    with pytest.raises(ShareError, match="link"):
        S.encode_token(Request(excluded=tuple(noisy)), [])


def _token(body: bytes, *, crc: int | None = None, length: int | None = None) -> str:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(body) + packer.flush()
    head = struct.pack(">IH", zlib.crc32(stream) if crc is None else crc, len(stream) if length is None else length)
    return "v1." + base64.urlsafe_b64encode(head + stream).decode().rstrip("=")


def test_v1_links_from_before_the_one_request_still_open() -> None:
    """v1 tokens named the run length `hours`, the model size in millions and defaulted the budget to 7 000."""
    body = json.dumps({"i": {"hours": 6.5, "model_params_m": 15, "runs": 6}, "p": [["gpu-x", 1]]}).encode()
    state = S.decode_token(_token(body))
    assert state.inputs.budget == Decimal("7000.00") and state.inputs.baseline_hours == 6.5
    assert state.inputs.model_params == pytest.approx(15e6) and state.inputs.runs == 6
    cheap = json.dumps({"i": {"mode": "cheapest"}, "p": []}).encode()
    assert S.decode_token(_token(cheap)).inputs.budget is None
    with pytest.raises(ShareError, match="not valid"):
        S.decode_token(_token(json.dumps({"i": {"hours": -1}, "p": []}).encode()))


def test_every_single_character_change_is_caught() -> None:
    token = S.encode_token(Request(runs=9), [("gpu-x", 1), ("cpu-y", 1)])
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for i in range(3, len(token)):
        for ch in alphabet[:: 7]:
            if ch == token[i]:
                continue
            with pytest.raises(ShareError):
                S.decode_token(token[:i] + ch + token[i + 1:])


def test_truncated_token_says_truncated() -> None:
    token = S.encode_token(Request(), [("gpu-x", 1), ("cpu-y", 1)])
    for cut in (4, 12, len(token) - 5):
        with pytest.raises(ShareError, match="truncated"):
            S.decode_token(token[:-cut])


def test_oversized_token_and_zip_bomb_are_refused() -> None:
    with pytest.raises(ShareError, match="2048 limit"):
        S.decode_token("v1." + "A" * 3000)
    bomb = b'{"p":[],"i":{}}' + b" " * (1024 * 1024)  # 1 MB of spaces compresses to about 1 KB
    token = _token(bomb)
    assert len(token) <= S.MAX_TOKEN_CHARS
    with pytest.raises(ShareError, match="inflates beyond 64 KB"):
        S.decode_token(token)


@pytest.mark.parametrize("token, message", [
    ("v3.AAAA", "unknown build token version 'v3'"),
    ("hello", "not a planner build token"),
    ("v1.abc$def", "outside base64url"),
])
def test_unknown_version_and_garbage(token: str, message: str) -> None:
    with pytest.raises(ShareError, match=message.replace("$", r"\$")):
        S.decode_token(token)


def test_valid_checksum_but_wrong_content_is_refused() -> None:
    with pytest.raises(ShareError, match="not JSON"):
        S.decode_token(_token(b"\xff\xfe not json"))
    with pytest.raises(ShareError, match="unexpected fields"):
        S.decode_token(_token(b'{"p":[],"x":1}'))
    with pytest.raises(ShareError, match="malformed part"):
        S.decode_token(_token(b'{"p":[["gpu-x",99]]}'))
    with pytest.raises(ShareError, match="runs"):
        S.decode_token(_token(b'{"i":{"runs":0},"p":[]}'))


def test_unknown_part_id_is_named(cat: Catalog) -> None:
    token = S.encode_token(Request(), [("gpu-asus-tuf-5090", 1), ("gpu-does-not-exist", 1)])
    with pytest.raises(ShareError, match="'gpu-does-not-exist'"):
        S.decode_token(token, cat)
    S.decode_token(token)  # without a catalog the token itself is fine


# ---------------------------------------------------------------- exports

def test_markdown_export_has_the_pcpartpicker_shape(cat: Catalog) -> None:
    parts = [("gpu-asus-tuf-5090", 2)] + FULL[1:]
    build = S.build_from_catalog(cat, parts, inputs=Request(gpu_count=2))
    md = S.to_markdown(build, link="https://planner.example/?b=v1.x", today=date(2026, 11, 30)).splitlines()
    assert md[0] == "Type|Item|Price" and md[1] == ":----|:----|:----"
    assert md[2] == "**CPU** | AMD Ryzen 9 9950X | EUR 489.00 @ Shop FR (scraped 2026-11-02, 28 d old)"
    gpu_rows = [r for r in md if r.startswith("**Video Card**")]
    assert gpu_rows == ["**Video Card** | [ASUS TUF Gaming GeForce RTX 5090 32GB GDDR7 OC Edition]"
                        "(https://shop.example/gpu-asus-tuf-5090) | EUR 2 999.00 @ Shop FR (scraped 2026-11-02, 28 d old)"] * 2
    assert " | **Total** | **EUR 7 831.00**" in md  # 2 x 2999 + the rest
    assert any("seen at shops 2026-11-02" in r and "kinds: scraped" in r for r in md)
    assert md[-1].startswith(" | Generated by planner on 2026-11-30: [open this build](https://planner.example/?b=v1.x)")


def test_csv_and_json_exports(cat: Catalog) -> None:
    build = S.build_from_catalog(cat, FULL, inputs=Request(owned=("cpu-9950x",)), owned=("cpu-9950x",))
    rows = list(csv.DictReader(io.StringIO(S.to_csv(build))))
    assert tuple(rows[0]) == S.CSV_COLUMNS
    cpu = next(r for r in rows if r["id"] == "cpu-9950x")
    assert cpu["owned"] == "true" and cpu["line_total"] == "0.00" and cpu["unit_price"] == "489.00"
    assert rows[-1]["type"] == "Total" and rows[-1]["line_total"] == "4343.00"
    data = json.loads(S.to_json_text(build))
    assert data["schema"] == "planner.build/2" and data["total"] == {"amount": "4343.00", "currency": "EUR"}
    assert data["price_dates"] == ["2026-11-02"] and data["inputs"]["owned"] == ["cpu-9950x"]
    assert S.decode_token(data["token"], cat).parts == tuple(FULL[i] for i in (1, 5, 2, 3, 4, 0, 7, 6))


def test_build_from_recommend_output_and_bad_json() -> None:
    plan = {"parts": [{"category": "gpu", "id": "g", "name": "G", "quantity": 2,
                       "price": {"amount": "100.00", "currency": "EUR"}, "retailer": "R", "url": None,
                       "price_source": "estimate", "price_observed_on": "2026-11-30", "owned": False}],
            "total": {"amount": "200.00", "currency": "EUR"}}
    build = S.build_from_json({"status": "optimal", "plans": [plan]})
    assert build.total == Decimal("200.00") and build.parts() == [("g", 2)]
    with pytest.raises(ShareError, match="no plan"):
        S.build_from_json({"plans": []})
    with pytest.raises(ShareError, match="unknown build schema"):
        S.build_from_json({"schema": "planner.build/9", "parts": []})
    with pytest.raises(ShareError, match="quantity"):
        S.build_from_json({"parts": [{"category": "gpu", "id": "g", "quantity": 40}]})


# ---------------------------------------------------------------- imports

PCPP = """[PCPartPicker Part List](https://pcpartpicker.com/list/AbCdEf)

Type|Item|Price
:----|:----|:----
**CPU** | [AMD Ryzen 9 9950X 4.3 GHz 16-Core Processor](https://pcpartpicker.com/product/x1) | $549.99 @ Amazon
**CPU Cooler** | [ARCTIC Liquid Freezer III 360 A-RGB 48.8 CFM Liquid CPU Cooler](https://pcpartpicker.com/product/x2) | $99.99 @ Amazon
**Motherboard** | [Asus ProArt X870E-CREATOR WIFI ATX AM5 Motherboard](https://pcpartpicker.com/product/x3) | $479.99 @ Newegg
**Memory** | [Corsair Vengeance 64 GB (2 x 32 GB) DDR5-6000 CL30 Memory](https://pcpartpicker.com/product/x4) | $204.99 @ Amazon
**Storage** | [Samsung 990 Pro 2 TB M.2-2280 PCIe 4.0 X4 NVME Solid State Drive](https://pcpartpicker.com/product/x5) | $169.99 @ Amazon
**Video Card** | [Asus TUF GAMING OC GeForce RTX 5090 32 GB Video Card](https://pcpartpicker.com/product/x6) | $2999.99 @ B&H
**Video Card** | [Asus TUF GAMING OC GeForce RTX 5090 32 GB Video Card](https://pcpartpicker.com/product/x6) | $2999.99 @ B&H
**Case** | [Fractal Design Meshify 2 ATX Mid Tower Case](https://pcpartpicker.com/product/x7) | $149.99 @ Amazon
**Power Supply** | [Seasonic PRIME TX-1600 1600 W 80+ Titanium Certified Fully Modular ATX Power Supply](https://pcpartpicker.com/product/x8) | $499.99 @ Amazon
**Monitor** | [Dell S2721DGF 27.0" 2560 x 1440 165 Hz Monitor](https://pcpartpicker.com/product/x9) | $299.99 @ Dell
 | *Prices include shipping, taxes, rebates, and discounts* |
 | **Total** | **$8454.90**
 | Generated by [PCPartPicker](https://pcpartpicker.com) 2025-11-30 10:00 EST-0500 |
"""


def test_pcpartpicker_markdown_import_matches_checks_and_prices(cat: Catalog) -> None:
    result = S.import_build(PCPP, cat)
    assert result.kind == "markdown"
    got = {m.part.id: m.quantity for m in result.matched if not m.generic}
    assert got == {"cpu-9950x": 1, "cool-lf3-360": 1, "mb-proart-x870e": 1, "mem-2x32": 1, "ssd-990-2tb": 1,
                   "gpu-asus-tuf-5090": 2, "case-meshify-2": 1}
    # a power supply the catalog lacks is checked by the wattage its line states, said as generic, never swapped
    psu = next(m for m in result.matched if m.category == "psu")
    assert psu.generic and psu.part.wattage_w == 1600 and "not in the catalog" in psu.note
    assert psu.text == "Seasonic PRIME TX-1600 1600 W 80+ Titanium Certified Fully Modular ATX Power Supply"
    assert not result.unmatched
    assert any("monitor" in n.lower() for n in result.notes)
    assert result.inputs.gpu_count == 2
    assert result.report is not None and result.report.build.gpu_count == 2
    # priced with the catalog's offers: 2 x 2999 + 489 + 119 + 449 + 229 + 169 + 139
    assert result.build.total == Decimal("7592.00")
    payload = result.to_json()
    assert payload["check"]["compatible"] in (True, False)
    assert any(m["generic"] and m["category"] == "psu" for m in payload["matched"])


def test_fuzzy_matching_does_not_confuse_close_models(cat: Catalog) -> None:
    assert S.match_part(cat, "AMD Ryzen 9 9950X3D 4.3 GHz 16-Core Processor", "cpu").part.id == "cpu-9950x3d"
    assert S.match_part(cat, "Samsung 990 Pro 1 TB M.2-2280 NVME", "storage").part.id == "ssd-990-1tb"
    assert S.match_part(cat, "Corsair Vengeance 32 GB (2 x 16 GB) DDR5-6000 CL30", "memory").part.id == "mem-2x16"
    miss = S.match_part(cat, "Corsair Vengeance 96 GB (2 x 48 GB) DDR5-6000 CL30", "memory")
    assert miss.part is None and miss.note
    assert S.match_part(cat, "MSI GAMING X TRIO GeForce RTX 4090 24 GB Video Card", "gpu").part.id == "gpu-msi-4090"
    assert S.match_part(cat, "MSI GAMING X TRIO GeForce RTX 4090 Ti 24 GB", "gpu").part is None  # variant word
    assert S.match_part(cat, "Gigabyte GAMING X TRIO GeForce RTX 4090 24 GB", "gpu").part is None  # other brand
    # words in parentheses (revision, part number) are optional
    psu = S.match_part(cat, "Corsair RM1200x SHIFT 1200 W 80+ Gold Certified Fully Modular ATX Power Supply", "psu")
    assert psu.part.id == "psu-rm1200x" and psu.how == "fuzzy"


def test_our_markdown_round_trips_with_owned_parts(cat: Catalog) -> None:
    inputs = Request(owned=("cpu-9950x",))
    build = S.build_from_catalog(cat, FULL, inputs=inputs, owned=inputs.owned)
    result = S.import_build(S.to_markdown(build), cat)
    assert sorted(result.parts()) == sorted(FULL)
    assert result.inputs.owned == ("cpu-9950x",)
    assert result.build.total == build.total


def test_json_and_token_imports(cat: Catalog) -> None:
    build = S.build_from_catalog(cat, FULL, inputs=Request(runs=3))
    from_json = S.import_build(S.to_json_text(build), cat)
    assert from_json.kind == "json" and sorted(from_json.parts()) == sorted(FULL) and from_json.inputs.runs == 3
    from_link = S.import_build(S.permalink(build.token()), cat)
    assert from_link.kind == "token" and sorted(from_link.parts()) == sorted(FULL)


def test_the_shared_build_carries_what_front_ends_ask_of_it(cat: Catalog) -> None:
    """The door's helpers live on the result types: a SharedBuild reads JSON, prices catalog parts and makes its
    link; the import result totals its list and names the measured speeds its token carried."""
    build = S.SharedBuild.from_catalog(cat, FULL, inputs=Request(runs=3))
    assert build == S.build_from_catalog(cat, FULL, inputs=Request(runs=3))
    assert S.SharedBuild.from_json(json.loads(S.to_json_text(build))).parts() == build.parts()
    state = S.SharedState.from_token(build.token(), cat)
    assert sorted(state.parts) == sorted(FULL) and state.inputs.runs == 3
    assert S.SharedState(state.inputs, (), ()).token() == S.encode_token(state.inputs, [])
    assert S.SharedState.from_token(S.SharedState(state.inputs, (), ()).token()).parts == ()
    link = build.permalink("https://planner.example/?tab=share")
    assert link == "https://planner.example/?tab=share&b=" + build.token()
    assert S.import_build(link, cat).list_total is None  # a link carries no shop prices
    md = "Type|Item|Price\n:--|:--|:--\n**CPU** | AMD Ryzen 9 9950X | €500.00\n**Case** | Lian Li A3 | €90.50\n"
    posted = S.import_build(md, cat)
    assert posted.list_total == (sum((p.amount for p in posted.list_prices), Decimal(0)), "EUR")
    assert posted.list_total[0] >= Decimal("500.00")


@pytest.mark.parametrize("text, message", [
    ("", "nothing to import"),
    ("just some words\nover two lines", "not a build link"),
    ("{not json", "invalid"),
    ("Type|Item|Price\n:--|:--|:--\n", "no part rows"),
])
def test_import_errors_are_one_line_share_errors(cat: Catalog, text: str, message: str) -> None:
    with pytest.raises(ShareError, match=message) as info:
        S.import_build(text, cat)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------- CLI


@pytest.fixture()
def synth_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The CLI on a generated catalog; a plan file built from one part per category."""
    root = generate(tmp_path / "cat", 40, seed=3)
    monkeypatch.setenv("PLANNER_DATA_DIR", str(root))
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "none.sqlite"))
    plan = {"parts": [{"category": c, "id": f"syn-{c}-0", "name": f"Synthetic {c} 0", "quantity": 1,
                       "price": {"amount": "10.00", "currency": "EUR"}} for c in ("gpu", "cpu", "psu")],
            "total": {"amount": "30.00", "currency": "EUR"}}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps({"status": "optimal", "plans": [plan]}))
    return {"plan": path, "tmp": tmp_path}


def test_cli_export_every_format_and_import_back(synth_env: dict) -> None:
    runner = CliRunner()
    outputs = {}
    for fmt in ("md", "csv", "json", "link"):
        res = runner.invoke(app, ["share", "export", "--build", str(synth_env["plan"]), "--format", fmt,
                                  "--base-url", "https://planner.example/"])
        assert res.exit_code == 0, res.output
        outputs[fmt] = res.stdout
    assert outputs["md"].startswith("Type|Item|Price")
    assert outputs["link"].startswith("https://planner.example/?b=v2.")
    assert json.loads(outputs["json"])["schema"] == "planner.build/2"
    res = runner.invoke(app, ["share", "export", "--build", str(synth_env["plan"]), "--format", "csv", "--json"])
    wrapped = json.loads(res.stdout)
    assert res.exit_code == 0 and wrapped["content"] == outputs["csv"] and wrapped["token"].startswith("v2.")
    md_file = synth_env["tmp"] / "build.md"
    md_file.write_text(outputs["md"])
    for source in (str(md_file), outputs["link"].strip()):
        res = runner.invoke(app, ["share", "import", source, "--json"])
        assert res.exit_code == 0, res.output
        data = json.loads(res.stdout)
        assert sorted(m["id"] for m in data["matched"]) == ["syn-cpu-0", "syn-gpu-0", "syn-psu-0"]
        assert data["check"]["total"]["currency"] == "EUR"


@pytest.mark.parametrize("args, message", [
    (["share", "import", "v1.AAAAAAAAAA"], "build token"),
    (["share", "import", "v7.abcdef"], "unknown build token version"),
    (["share", "import", "missing-file.md"], "no such file"),
    (["share", "export", "--build", "PLAN", "--format", "pdf"], "unknown format"),
    (["share", "export", "--build", "missing.json"], "cannot read"),
    (["share", "export"], "give the build to export"),
    (["share", "export", "PLAN", "--build", "other.json"], "two builds given"),
])
def test_cli_errors_exit_2_with_one_line(synth_env: dict, args: list[str], message: str) -> None:
    args = [str(synth_env["plan"]) if a == "PLAN" else a for a in args]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_cli_link_to_unknown_part_fails_cleanly_in_a_real_process(synth_env: dict) -> None:
    token = S.encode_token(Request(), [("gpu-not-in-catalog", 1)])
    proc = subprocess.run([sys.executable, "-c", "from planner.cli import main; main()", "share", "import", token],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "gpu-not-in-catalog" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_export_takes_the_build_file_as_an_argument_too(synth_env: dict) -> None:
    runner = CliRunner()
    by_option = runner.invoke(app, ["share", "export", "--build", str(synth_env["plan"]), "--format", "csv"])
    by_argument = runner.invoke(app, ["share", "export", str(synth_env["plan"]), "--format", "csv"])
    assert by_argument.exit_code == 0, by_argument.output
    assert by_argument.stdout == by_option.stdout != ""


@pytest.mark.parametrize("where", ["missing-dir/build.md", "a-file/build.md", "a-dir"])
def test_cli_export_to_a_bad_output_path_is_one_line_and_writes_nothing(synth_env: dict, where: str) -> None:
    tmp = synth_env["tmp"]
    (tmp / "a-file").write_text("mine", encoding="utf-8")
    (tmp / "a-dir").mkdir()
    before = sorted(p.relative_to(tmp) for p in tmp.rglob("*"))
    res = CliRunner().invoke(app, ["share", "export", str(synth_env["plan"]), "--format", "md", "-o", str(tmp / where),
                                   "--base-url", "https://planner.example/"])
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert "cannot write the export" in res.stderr and where in res.stderr and "--output" in res.stderr
    assert sorted(p.relative_to(tmp) for p in tmp.rglob("*")) == before  # no directory made, no temporary file left
    assert (tmp / "a-file").read_text(encoding="utf-8") == "mine"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_cli_export_file_gets_the_permissions_a_plain_write_would(synth_env: dict) -> None:
    """Written atomically, yet not the private 0600 of a temporary file: a page meant for a web server stays readable
    by it (a new file: 0666 less the umask; an existing file keeps its mode)."""
    runner = CliRunner()
    new, kept = synth_env["tmp"] / "new.md", synth_env["tmp"] / "kept.md"
    kept.write_text("old", encoding="utf-8")
    kept.chmod(0o640)
    old_umask = os.umask(0o022)
    try:
        for out in (new, kept):
            res = runner.invoke(app, ["share", "export", str(synth_env["plan"]), "--format", "md", "-o", str(out),
                                      "--base-url", "https://planner.example/"])
            assert res.exit_code == 0, res.output
            assert out.read_text(encoding="utf-8").startswith("Type|Item|Price")
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o644
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640


def test_one_kit_bought_several_times_is_one_set_of_modules(cat: Catalog) -> None:
    """3 x a 2 x 32 GB kit on a list is checked as one 6-module set (the kit is copied, never edited in place)."""
    from planner.share.importing import Match, _memory_total

    kit = cat.parts["mem-2x32"]
    notes: list[str] = []
    merged = _memory_total([Match("memory", "3 x the kit", 3, kit, "name")], notes)
    assert len(merged) == 1 and merged[0].quantity == 1
    assert merged[0].part.id == "mem-2x32-x3" and merged[0].part.modules == 3 * kit.modules == 6
    assert merged[0].part.name.startswith("3 x ") and kit.id == "mem-2x32" and kit.modules == 2
    assert notes == ["memory: 3 x mem-2x32 read as one set of 6 modules"]


@pytest.mark.skipif(os.name != "posix", reason="symbolic links")
def test_cli_export_through_a_link_writes_the_linked_file(synth_env: dict) -> None:
    """-o LINK writes the file the link points at (as a plain write does) and leaves the link a link."""
    target, link = synth_env["tmp"] / "site" / "build.md", synth_env["tmp"] / "build.md"
    target.parent.mkdir()
    target.write_text("old", encoding="utf-8")
    link.symlink_to(target)
    res = CliRunner().invoke(app, ["share", "export", str(synth_env["plan"]), "--format", "md", "-o", str(link),
                                   "--base-url", "https://planner.example/"])
    assert res.exit_code == 0, res.output
    assert link.is_symlink() and target.read_text(encoding="utf-8").startswith("Type|Item|Price")
    assert [p.name for p in target.parent.iterdir()] == ["build.md"]
