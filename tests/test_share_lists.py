"""Real build lists as people posted them (tests/data/real/lists): each is read as posted, its lines match the right
part, a generic stand-in or nothing (never a lookalike), and every problem its thread established is flagged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from planner.catalog.load import load_catalog
from planner.catalog.match import normalise
from planner.errors import ShareError
from planner.share.importing import import_build
from planner.share.lines import model_tokens
from planner.share.readers import read_list, split_quantity

HERE = Path(__file__).parent / "data" / "real" / "lists"
MANIFEST = json.loads((HERE / "MANIFEST.json").read_text(encoding="utf-8"))
LISTS = MANIFEST["lists"]


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def results(catalog):
    return {name: import_build((HERE / name).read_text(encoding="utf-8"), catalog) for name in LISTS}


def test_at_least_twenty_lists_with_sources() -> None:
    assert len(LISTS) >= 20
    for name, entry in LISTS.items():
        assert (HERE / name).is_file(), name
        src = entry["source"]
        assert src["url"].startswith("https://github.com/") and src["date"][:2] == "20"
        if src["kind"] == "repository file":
            assert re.fullmatch(r"[0-9a-f]{40}", src["commit"]) and src["path"] in src["url"]


def _verdict(m, want: dict, catalog) -> str:
    """'right', 'honest' (unmatched with the right part offered, where the line allows it) or 'wrong', against the
    expectation derived by hand in MANIFEST.json (its 'why' says why)."""
    exp = want["expect"]
    if m.how == "generic" and m.part is not None and m.part.id not in catalog.parts:
        if exp != "generic" and not want.get("or_chip"):
            return "wrong"
        if want.get("or_chip") and getattr(m.part, "chip", None) != want["or_chip"]:
            return "wrong"
        for fact in ("chip", "vram_gb", "capacity_gb", "wattage_w"):
            if fact in want and getattr(m.part, fact, None) != want[fact]:
                return "wrong"
        return "right"
    if m.part is None:
        if exp == "unmatched":
            return "right" if m.note else "wrong"
        if want.get("or_unmatched") and exp in [c[0] for c in m.candidates]:
            return "honest"
        return "wrong"
    return "right" if m.part.id in (exp, want.get("or_part")) else "wrong"


def _verdicts(name: str, result, catalog) -> dict[str, str]:
    got = {str(m.line): m for m in result.lines}
    return {line: (_verdict(got[line], want, catalog) if line in got else "not read")
            for line, want in LISTS[name]["lines"].items()}


@pytest.mark.parametrize("name", sorted(LISTS))
def test_each_list_is_read_as_posted_and_its_lines_match(name: str, results, catalog) -> None:
    entry, result = LISTS[name], results[name]
    assert result.kind == entry["read_as"]
    got = {str(m.line): m for m in result.lines}
    for line, want in entry["lines"].items():
        m = got.get(line)
        assert m is not None, f"{name} line {line} ({want['text']!r}) was not read"
        assert (m.category, m.quantity) == (want["category"], want["quantity"]), f"{name} line {line}"
    verdicts = _verdicts(name, result, catalog)
    wrong = {ln: (entry["lines"][ln]["text"], got[ln].part.id if got[ln].part else None, entry["lines"][ln]["why"])
             for ln, v in verdicts.items() if v != "right" and v != "honest"}
    assert len(verdicts) - len(wrong) >= 0.9 * len(verdicts), f"{name}: not as derived by hand: {wrong}"


def test_overall_rate_against_the_hand_derived_truth(results, catalog) -> None:
    """Across all lists: right or honestly unmatched >= 90 %, and never a catalog part other than the right one."""
    counts = {"right": 0, "honest": 0, "wrong": 0, "not read": 0}
    swaps = []
    for name in LISTS:
        got = {str(m.line): m for m in results[name].lines}
        for line, v in _verdicts(name, results[name], catalog).items():
            counts[v] += 1
            m = got.get(line)
            if v == "wrong" and m is not None and m.part is not None and not m.generic:
                swaps.append((name, line, m.part.id))
    total = sum(counts.values())
    print(f"\nhand-derived truth, {total} part lines in {len(LISTS)} lists: {counts} -> "
          f"{(counts['right'] + counts['honest']) / total:.1%} right or honestly unmatched")
    assert (counts["right"] + counts["honest"]) >= 0.9 * total, counts
    assert not swaps, swaps


@pytest.mark.parametrize("name", sorted(LISTS))
def test_no_lookalike_swap(name: str, results, catalog) -> None:
    """A catalog part taken for a line carries no model token the line lacks (NH-D15 G2 for 'NH-D15', SN850X for
    'WD Black 4TB', 870 EVO for '850 EVO', X870E for 'X670E'), and its capacity is the line's."""
    for m in results[name].lines:
        if m.part is None or m.generic or m.how == "picked":
            continue
        line = set(normalise(m.text))
        tokens = {t for t in model_tokens(m.part.name) if not (m.category == "memory" and re.fullmatch(r"\d{4}", t))}
        if m.category == "gpu":  # a board is taken for its chip number and maker's line words
            tokens = {t for t in tokens if re.fullmatch(r"\d{4}", t)}
        assert tokens <= line | set(model_tokens(m.text)), f"{name} line {m.line}: {m.part.id} for {m.text!r}"


@pytest.mark.parametrize("name", sorted(n for n, e in LISTS.items() if e["problems"]))
def test_every_established_problem_is_flagged(name: str, results) -> None:
    report = results[name].report
    assert report is not None, f"{name}: nothing was checked"
    flagged = {f.rule for f in report.problems + report.warnings}
    for problem in LISTS[name]["problems"]:
        assert flagged & set(problem["rules"]), f"{name}: not flagged: {problem['what']} (flagged: {sorted(flagged)})"


def test_unmatched_lines_offer_candidates(results) -> None:
    m = next(m for m in results["wensheng-html-2017.html"].lines if m.text == "Samsung 850 EVO 500GB SSD")
    assert m.part is None and "ssd-samsung-870-evo-1tb" in [c[0] for c in m.candidates]
    payload = results["wensheng-html-2017.html"].to_json()
    assert any(u["candidates"] for u in payload["unmatched"])


def test_a_pick_replaces_a_line_and_a_bad_pick_is_one_clear_error(catalog) -> None:
    text = (HERE / "falcon-table-2018.md").read_text(encoding="utf-8")
    picked = import_build(text, catalog, picks={10: "case-phanteks-enthoo-pro-2-server"})
    m = next(m for m in picked.lines if m.line == 10)
    assert m.part.id == "case-phanteks-enthoo-pro-2-server" and m.how == "picked"
    with pytest.raises(ShareError, match="no such part id"):
        import_build(text, catalog, picks={10: "case-nope"})
    with pytest.raises(ShareError, match="no part on that line"):
        import_build(text, catalog, picks={999: "case-phanteks-enthoo-pro-2-server"})


# ---------------------------------------------------------------- forms and quantities, one example each

BBCODE = """[url=https://pcpartpicker.com/list/AbCd]PCPartPicker Part List[/url]
[b]CPU:[/b] [url=https://pcpartpicker.com/product/x1]AMD Ryzen 9 9950X 4.3 GHz 16-Core Processor[/url]  ($549.99 @ Amazon)
[b]Video Card:[/b] [url=https://pcpartpicker.com/product/x6]NVIDIA Founders Edition GeForce RTX 5090 32 GB Video Card[/url]  ($1999.99 @ Best Buy)
[b]Power Supply:[/b] [url=https://pcpartpicker.com/product/x8]Corsair RM1000x (2024) 1000 W 80+ Gold Certified Fully Modular ATX Power Supply[/url]
[b]Total:[/b] $2549.98
"""
PAGE_COPY = ("Component\tSelection\tBase\tPrice\n"
             "CPU\tAMD Ryzen 9 9950X 4.3 GHz 16-Core Processor\t$549.99\t$549.99\n"
             "Video Card\tNVIDIA Founders Edition GeForce RTX 5090 32 GB Video Card\t$1999.99\t$1999.99\n")


def test_bbcode_and_copied_page_text_are_read(catalog) -> None:
    for text in (BBCODE, PAGE_COPY):
        result = import_build(text, catalog)
        ids = {m.part.id for m in result.lines if m.part is not None}
        assert {"cpu-amd-ryzen9-9950x", "gpu-nvidia-rtx5090-fe"} <= ids, text[:40]


@pytest.mark.parametrize("text,name,qty", [
    ("2x RTX 3090", "RTX 3090", 2), ("RTX 3090 x2", "RTX 3090", 2), ("RTX 4090 (x4)", "RTX 4090", 4),
    ("x4: https://amzn.to/x", "https://amzn.to/x", 4), ("Dual RTX 3090", "RTX 3090", 2),
    ("2x16GB DDR5-6000", "2x16GB DDR5-6000", 1), ("Patriot Viper Steel DDR4 32GB *4", "Patriot Viper Steel DDR4 32GB", 4),
])
def test_quantities_as_written(text: str, name: str, qty: int) -> None:
    assert split_quantity(text)[:2] == (name, qty)


def test_qty_column_and_labelled_rows() -> None:
    form, rows = read_list((HERE / "bjpl-4x4090-2025.md").read_text(encoding="utf-8"))
    by = {r.label: r for r in rows}
    assert form == "markdown" and by["GPU"].quantity == 4 and by["RAM"].quantity == 8
    assert "PSU Secondary" in by and "Storage (OS)" in by


@pytest.mark.parametrize("line,category,want", [
    ("Noctua NH-D15", "cooler", None),  # the catalog holds only the G2
    ("Noctua NH-D15 G2", "cooler", "cooler-noctua-nh-d15-g2"),
    ("WD Black 4TB", "storage", None),  # a hard drive in 2017, not the SN850X
    ("WD Black SN850X 4TB", "storage", "ssd-wd-black-sn850x-4tb"),
    ("Nvidia 3090 Founders Edition", "gpu", "gpu-nvidia-rtx3090-fe"),
    ("RTX 3090", "gpu", "generic"),  # no board named: the chip's figures, said as generic
    ("2TB SATA SSD", "storage", "generic"),
    ("Crucial 96GB kit", "memory", "generic"),
    ("Samsung 990 Pro 1TB", "storage", "ssd-samsung-990-pro-1tb"),  # capacity picks the row
])
def test_matching_keys_on_the_model_token_then_capacity(catalog, line: str, category: str, want) -> None:
    result = import_build(f"{category}: {line}\n", catalog)
    m = result.lines[0]
    if want is None:
        assert m.part is None or m.generic
    elif want == "generic":
        assert m.generic and "generic" in m.note
    else:
        assert m.part is not None and m.part.id == want and m.confidence and m.confidence >= 0.5


def test_cli_prints_lines_candidates_and_power_and_takes_picks(tmp_path, monkeypatch) -> None:
    from typer.testing import CliRunner

    from planner.cli import app

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    path = str(HERE / "wensheng-html-2017.html")
    out = runner.invoke(app, ["share", "import", path])
    assert out.exit_code == 0, out.output
    assert "--pick 61=ssd-samsung-870-evo-1tb" in out.output.replace("\n", " ").replace("  ", " ") or \
        "ssd-samsung-870-evo-1tb" in out.output
    assert "Power: 3 x" in out.output.replace("\n", " ")
    picked = runner.invoke(app, ["share", "import", path, "--json", "--pick", "61=ssd-samsung-870-evo-1tb"])
    assert picked.exit_code == 0
    data = json.loads(picked.output)
    assert any(m["line"] == 61 and m["how"] == "picked" for m in data["matched"])
    bad = runner.invoke(app, ["share", "import", path, "--pick", "61:x"])
    assert bad.exit_code == 2 and "LINE=PART_ID" in bad.output


def test_a_hard_drive_line_is_never_an_ssd_and_the_drive_is_offered(catalog, results) -> None:
    wd = next(m for m in results["wensheng-html-2017.html"].lines if m.text == "WD Black 4TB")
    assert wd.part is None and "hdd-wd-black-4tb" in [c[0] for c in wd.candidates]
    hdd = import_build('Storage: WD Black 4TB 3.5" 7200RPM hard drive\n', catalog).lines[0]
    assert hdd.part is not None and hdd.part.id == "hdd-wd-black-4tb"


def test_identical_twin_rows_resolve_to_one_said_as_twins(catalog) -> None:
    import copy

    cat = copy.copy(catalog)
    cat.parts = dict(catalog.parts)
    case = catalog.parts["case-corsair-4000d-airflow"]
    cat.parts["case-corsair-4000d-airflow-2"] = case.model_copy(update={"id": "case-corsair-4000d-airflow-2"})
    m = import_build("Case: Corsair 4000D Airflow ATX Mid Tower Case\n", cat).lines[0]
    assert m.part is not None and m.part.id.startswith("case-corsair-4000d-airflow") and m.how == "twin"
    assert "twin" in m.note


@pytest.mark.parametrize("category,line,want", [
    # a name without a model token is named by its maker, a distinctive word and the category's identifying facts
    ("memory", "Corsair Vengeance 2x48GB DDR5-6000", "mem-corsair-vengeance-ddr5-2x48-6000-cl30"),
    ("memory", "Corsair Vengeance 96GB", "generic"),  # no speed: the 6000 or 6400 kit, not said
    ("memory", "Corsair Vengeance 2x48GB DDR5-6600", "generic"),  # another speed: another kit
    ("storage", "WD Black 4TB HDD", "hdd-wd-black-4tb"),
    ("storage", "WD Black 4TB", None),  # kind not stated and the maker's line spans HDDs and NVMe SSDs
    ("storage", "Samsung 870 EVO 1TB hard drive", "generic"),  # the kind disagrees with the SSD row: not it
    ("case", "Fractal Torrent", "case-fractal-torrent"),
    ("cooler", "Arctic Liquid Freezer III", None),  # which radiator: not said
    ("psu", "be quiet! Dark Power 1000W", "generic"),  # Dark Power 12 or 13: the generation is not said
    ("psu", "be quiet! Dark Power 13 1000W", "psu-bequiet-dark-power-13-1000"),
    ("psu", "be quiet! Pure Power 12M 850W", "psu-bequiet-pure-power-12m-850"),  # the row spells it "12 M"
    ("psu", "be quiet! Pure Power 12M 1000W", "generic"),  # no 1000 W unit of that line in the catalog
    ("cpu", "AMD Ryzen", None), ("motherboard", "ASUS ProArt", None),  # words alone never name a CPU or a board
])
def test_identifying_words_and_facts_per_category(catalog, category: str, line: str, want) -> None:
    m = import_build(f"{category}: {line}\n", catalog).lines[0]
    if want is None:
        assert m.part is None, m.part.id
    elif want == "generic":
        assert m.generic, (m.part.id if m.part else None)
    else:
        assert m.part is not None and m.part.id == want and not m.generic


def test_facts_read_from_a_line() -> None:
    from planner.share.lines import _line_facts, installed_gb, stated_vram

    assert installed_gb("60Gi total, 42Gi available") == (64, 60.0)
    assert installed_gb("125Gi total, 92Gi available") == (128, 125.0)
    assert installed_gb("16 GB RAM") is None  # what a person states is taken as stated
    assert stated_vram("NVIDIA GeForce RTX 3080 (20480 MiB)") == 20
    assert stated_vram("NVIDIA GeForce RTX 5090 (32607 MiB)") == 32
    assert stated_vram("PNY RTX 4090 24GB XLR8") == 24 and stated_vram("RTX 3090") is None
    assert _line_facts("Corsair Vengeance DDR5 96GB 6000", "memory")["speed"] == 6000
    assert _line_facts("Corsair Vengeance DDR5 96GB", "memory")["speed"] is None
    assert _line_facts('WD Blue 1TB 3.5" 7200RPM', "storage")["kind"] == "hdd"
    assert _line_facts("Kingston NV2 1 TB M.2-2280 NVME", "storage")["kind"] == "ssd"
    assert _line_facts("Arctic Liquid Freezer III 360", "cooler")["radiator"] == 360


@pytest.mark.parametrize("category,line", [
    ("motherboard", "ASUS PRIME X299-A II"),  # the catalog holds the PRIME X299-A: another board
    ("motherboard", "Asus ROG Zenith Extreme Alpha"),  # the sTR4 board, not the Zenith II (sTRX4)
    ("cooler", "Arctic Liquid Freezer 360"),  # II or III: the generation is not said
])
def test_a_generation_numeral_on_one_side_only_is_another_product(catalog, category: str, line: str) -> None:
    m = import_build(f"{category}: {line}\n", catalog).lines[0]
    assert m.part is None or m.generic, m.part.id
