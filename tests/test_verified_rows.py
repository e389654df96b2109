"""The verified-rows register (issue 34 item 8): every register row names its source and date, and every part of
the default plans is either in the register or marked "unverified" in the plan itself (text, JSON, exports)."""

from __future__ import annotations

import json
import shutil
from datetime import date
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.catalog.load import load_catalog
from planner.catalog.verified import REGISTER_FILE, load_register
from planner.cli import app
from planner.errors import CatalogError
from planner.plan_view import UNVERIFIED_MARK

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUDGETS = ("1500", "7000", "25000")  # a small, the headline and a large plan (docs/solver.md's table)

pytestmark = pytest.mark.usefixtures("no_price_history")


def test_every_register_row_names_a_source_address_a_past_date_and_a_catalog_part(cat) -> None:
    register = load_register(REPO / "data")
    assert register, "data/verified_rows.csv is shipped and not empty"
    for pid, row in register.items():
        assert pid in cat.parts, f"{pid}: not a catalog part"
        assert row.sources() and all(s.startswith(("http://", "https://")) for s in row.sources()), pid
        assert row.read_on <= date.today(), pid
        assert row.facts.strip(), pid


def test_the_2022_prime_tx_1600_no_longer_carries_an_atx31_id(cat) -> None:
    for p in cat.by_category("psu"):
        if "atx31" in p.id:
            assert p.atx_version == "3.1", f"{p.id} is ATX {p.atx_version} but its id says atx31"
    old = cat.parts["psu-seasonic-prime-tx-1600-ssr-1600tr-2022"]
    assert old.atx_version == "2.x" and old.cable_12v2x6_w == 450 and "SSR-1600TR" in old.name
    new = cat.parts["psu-seasonic-prime-tx-1600-ssr-1600tr2"]
    assert "SSR-1600TR2" in new.name  # the exact SKU named
    # its retail listings call it ATX 3.0; ATX 3.1 was never read on Seasonic's sheet: the lower claim is kept
    assert new.atx_version == "3.0"


def test_a_register_row_without_an_address_or_with_a_future_date_is_refused(tmp_path) -> None:
    (tmp_path / REGISTER_FILE).write_text("part_id,facts,source_url,read_on,verdict,notes\n"
                                          "psu-x,length,maker page (not recorded),2026-01-01,confirmed,\n")
    with pytest.raises(CatalogError, match="source_url"):
        load_register(tmp_path)
    (tmp_path / REGISTER_FILE).write_text("part_id,facts,source_url,read_on,verdict,notes\n"
                                          "psu-x,length,https://example.org/a,2999-01-01,confirmed,\n")
    with pytest.raises(CatalogError, match="future"):
        load_register(tmp_path)


@pytest.fixture(scope="module")
def plans() -> dict[str, dict]:
    out = {}
    for budget in DEFAULT_BUDGETS:
        res = CliRunner().invoke(app, ["recommend", budget, "--json"])
        assert res.exit_code == 0, res.output
        out[budget] = json.loads(res.stdout)
    return out


def test_every_part_of_the_default_plans_is_in_the_register_or_marked_unverified(plans, cat) -> None:
    register = load_register(REPO / "data") or {}
    marked = 0
    for budget, data in plans.items():
        for plan in data["plans"]:
            for line in plan["parts"]:
                row = register.get(line["id"])
                passes = row is not None and row.passes
                assert line["verified"] is passes, (budget, line["id"])
                marked += not passes
    assert marked, "some default rows are still unverified: the test must see the mark"


def test_the_text_plan_marks_exactly_the_unverified_rows(plans) -> None:
    res = CliRunner().invoke(app, ["recommend", "7000"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    first = plans["7000"]["plans"][0]
    table = res.stdout.split("Speed:")[0]
    rows = table.splitlines()
    for line in first["parts"]:
        # a narrow terminal wraps a row over several lines: the row is its first line plus the lines whose type cell
        # is blank (the next part's row starts with its own type)
        i = next(i for i, r in enumerate(rows) if line["name"][:12] in r)
        row = rows[i]
        j = i + 1
        while j < len(rows) and rows[j].startswith("│") and rows[j][1:].split("│")[0].strip() == "":
            row += " " + rows[j]
            j += 1
        assert (UNVERIFIED_MARK in " ".join(row.split())) is (not line["verified"]), line["name"]
    assert "data/verified_rows.csv" in res.stdout  # the mark is explained once


def test_the_markdown_export_marks_unverified_rows() -> None:
    from planner.service import SharedBuild
    from planner.share import to_markdown

    cat = load_catalog(REPO / "data")
    build = SharedBuild.from_catalog(cat, [("mb-asus-proart-x870e-creator-wifi", 1), ("case-lianli-a3-matx", 1)])
    md = to_markdown(build).splitlines()
    assert UNVERIFIED_MARK not in next(r for r in md if "ProArt" in r)
    assert UNVERIFIED_MARK in next(r for r in md if "A3-mATX" in r)


def test_a_catalog_without_a_register_marks_nothing(tmp_path) -> None:
    data = tmp_path / "data"
    shutil.copytree(REPO / "data", data)
    (data / REGISTER_FILE).unlink()
    cat = load_catalog(data)
    assert cat.register is None and cat.verified("case-fractal-torrent") is None


def test_the_web_ui_build_table_marks_unverified_rows() -> None:
    from planner.service import SharedBuild
    from ui.view import build_rows

    cat = load_catalog(REPO / "data")
    from planner.catalog.verified import NOT_READ

    rows = build_rows(SharedBuild.from_catalog(cat, [("cpu-amd-ryzen9-9900x", 1), ("cpu-amd-ryzen5-7600x", 1),
                                               ("psu-corsair-hx1500i-2025", 1)]), cat)
    specs = {r["id"]: r["Specs"] for r in rows}
    assert specs == {"cpu-amd-ryzen9-9900x": "checked", "cpu-amd-ryzen5-7600x": f"unverified: {NOT_READ}",
                     "psu-corsair-hx1500i-2025": f"unverified: {cat.register['psu-corsair-hx1500i-2025'].unsettled}"}


# ---- issue 34 item 8, third round: every row of every default plan is in the register; the rest say what is missing

ALL_BUDGETS = ("1500", "3000", "5000", "7000", "10000", "15000", "25000", "40000")
# since RAM follows one card's VRAM (issue 34 item 4) the default plans reach the RTX PRO 6000 Max-Q and the
# 4 x 32 GB RDIMM kit themselves (they needed the RAM-vs-VRAM warning accepted before)
PROFILES = {"default": [], "README user": ["--model-params", "15e6"]}


@pytest.fixture(scope="module")
def every_default_plan() -> list[tuple[str, str, dict]]:
    out = []
    for name, extra in PROFILES.items():
        for budget in ALL_BUDGETS:
            res = CliRunner().invoke(app, ["recommend", budget, "--json", *extra])
            assert res.exit_code == 0, res.output
            out.append((name, budget, json.loads(res.stdout)["plans"][0]))
    return out


# searched for on 2026-12-06 without finding a maker's page, review or spec entry: the plan says "never read"
KNOWN_UNREAD = {"cooler-noctua-nh-u14s-tr5-sp6", "mem-kingston-server-premier-ddr5-4x64-5600-rdimm",
                "mem-kingston-server-premier-ddr5-8x32-5600-rdimm", "mem-kingston-server-premier-ddr5-4x32-5600-rdimm"}


def test_every_row_of_every_default_plan_was_read_against_a_dated_source(every_default_plan) -> None:
    register = load_register(REPO / "data") or {}
    unread = {line["id"] for name, budget, plan in every_default_plan for line in plan["parts"]
              if line["id"] not in register}
    assert unread <= KNOWN_UNREAD, f"default-plan rows never read against a source: {sorted(unread - KNOWN_UNREAD)}"


def test_an_unverified_row_of_a_plan_names_the_fact_still_to_check(every_default_plan) -> None:
    register = load_register(REPO / "data") or {}
    seen = 0
    for name, budget, plan in every_default_plan:
        for line in plan["parts"]:
            row = register.get(line["id"])
            if row is None:  # never read: the plan says so instead of a fact
                from planner.catalog.verified import NOT_READ

                assert line["verified"] is False and line["unverified_what"] == NOT_READ, (name, budget, line["id"])
            elif row.passes:
                assert line["verified"] is True and "unverified_what" not in line, (name, budget, line["id"])
            else:
                seen += 1
                assert line["verified"] is False and line["unverified_what"] == row.unsettled, (name, budget, line["id"])
    assert seen, "the test must see an unverified row (the 7 000 plan's PSU is one)"


def test_the_headline_psu_names_its_sku_and_what_is_unconfirmed(every_default_plan) -> None:
    psu = next(p for n, b, plan in every_default_plan if (n, b) == ("default", "7000")
               for p in plan["parts"] if p["category"] == "psu")
    assert psu["id"] != "psu-seasonic-prime-tx-1600-ssr-1600tr2", "an ATX 3.0 listing no longer wins on an ATX 3.1 claim"
    if not psu["verified"]:
        assert "12V-2x6" in psu["unverified_what"], psu  # the fact that decides the 2-GPU build, named


def test_an_unconfirmed_row_without_the_missing_fact_is_refused(tmp_path) -> None:
    (tmp_path / REGISTER_FILE).write_text("part_id,facts,source_url,read_on,verdict,unsettled,notes\n"
                                          "psu-x,length,https://example.org/a,2026-01-01,unconfirmed,,\n")
    with pytest.raises(CatalogError, match="unsettled"):
        load_register(tmp_path)


def test_a_part_missing_from_the_register_says_it_was_never_read(tmp_path) -> None:
    from planner.catalog.verified import NOT_READ, unverified_what

    register = load_register(REPO / "data")
    assert unverified_what(register, "cpu-amd-ryzen5-7600x") == NOT_READ
    assert unverified_what(register, "cpu-amd-ryzen9-9900x") is None
    assert unverified_what(None, "cpu-amd-ryzen5-7600x") is None  # no register: nothing to say


def test_the_markdown_export_says_what_is_still_to_check() -> None:
    from planner.service import SharedBuild, export_build

    cat = load_catalog(REPO / "data")
    md = export_build(SharedBuild.from_catalog(cat, [("psu-seasonic-prime-tx-1600-ssr-1600tr2", 1),
                                               ("cpu-amd-ryzen9-9900x", 1)]), "md")
    todo = [r for r in md.splitlines() if "still to check" in r]
    assert len(todo) == 1 and "SSR-1600TR2" in todo[0] and "12V-2x6" in todo[0]


def squeeze(text: str) -> str:
    return "".join(text.split())


def test_check_names_what_is_still_to_check_on_each_unverified_row() -> None:
    parts = ["gpu-nvidia-rtx5080-fe", "cpu-amd-ryzen9-9900x", "mb-asus-proart-x870e-creator-wifi",
             "mem-gskill-flare-x5-ddr5-2x16-6000-cl30", "ssd-wd-black-sn850x-4tb",
             "cooler-arctic-liquid-freezer-iii-360", "psu-seasonic-prime-tx-1600-ssr-1600tr2", "case-fractal-torrent"]
    register = load_register(REPO / "data")
    text = CliRunner().invoke(app, ["check", *parts], env={"COLUMNS": "200"})
    assert text.exit_code in (0, 1), text.output
    # the console may wrap a long line anywhere (its width is the terminal's): compare without whitespace
    todo = [squeeze(t) for t in text.stdout.split("still to check")[1:]]
    open_rows = [p for p in parts if not register[p].passes]
    assert len(todo) == len(open_rows) == 1 and squeeze(register[open_rows[0]].unsettled) in todo[0]
    js = CliRunner().invoke(app, ["check", *parts, "--json"])
    lines = {ln["id"]: ln for ln in json.loads(js.stdout)["parts"]}
    assert lines["psu-seasonic-prime-tx-1600-ssr-1600tr2"]["unverified_what"] == register[open_rows[0]].unsettled
    assert "unverified_what" not in lines["case-fractal-torrent"]  # a passing row says nothing


# what a passing row must have settled, by category (docs/rules.md "Verified rows"): words its facts must name
MUST_SETTLE = {
    "psu": (("ATX",), ("12V-2x6", "12VHPWR", "16-pin"), ("mm",)),
    "gpu": (("length", "mm"), ("slot",), ("tgp", "TDP", " W"), ("flow-through", "blower", "open-air")),
    "motherboard": (("m2", "M.2"), ("slot",)),
    "case": (("slot",), ("fan",), ("radiator",)),
    "cpu": (("cores",), ("TDP", "base power")),
}


def test_a_passing_row_settled_the_facts_its_rules_decide_on(cat) -> None:
    register = load_register(REPO / "data")
    checked = 0
    for pid, row in register.items():
        need = MUST_SETTLE.get(cat.parts[pid].category)
        if not row.passes or need is None:
            continue
        checked += 1
        for words in need:
            assert any(w in row.facts for w in words), (pid, words, row.facts)
    assert checked >= 15


def test_recommend_names_what_is_still_to_check_on_each_unverified_row_of_its_plan() -> None:
    """The plan itself (not only `check` and the exports) says which fact of each unverified row is still open."""
    register = load_register(REPO / "data")
    js = json.loads(CliRunner().invoke(app, ["recommend", "--budget", "7000", "--json"]).stdout)
    text = CliRunner().invoke(app, ["recommend", "--budget", "7000"], env={"COLUMNS": "400"}).stdout
    # each "<name>: still to check: <fact>", compared without whitespace (the console wraps at its width)
    chunks = [squeeze(t) for t in text.split("still to check")]
    open_rows = [p for p in js["plans"][0]["parts"] if p.get("unverified_what")]
    assert open_rows, "the EUR 7 000 plan rests on no unverified row: pick a request that does"
    assert len(chunks) - 1 == len(open_rows)
    for p in open_rows:
        said = register[p["id"]].unsettled if p["id"] in register else p["unverified_what"]
        assert any(before.endswith(squeeze(p["name"]) + ":") and after.startswith(":" + squeeze(said))
                   for before, after in zip(chunks, chunks[1:])), p["id"]


def test_check_does_not_call_unverified_rows_verified() -> None:
    """A list every rule passes but that rests on rows not yet re-read says so in its verdict, not "every rule
    verified" (the rows are still marked below it)."""
    js = json.loads(CliRunner().invoke(app, ["recommend", "--budget", "7000", "--json"]).stdout)
    plan = js["plans"][0]
    ids, n = [p["id"] for p in plan["parts"]], plan["gpu"]["count"]
    unverified = [p for p in plan["parts"] if p.get("verified") is False]
    assert unverified, "the EUR 7 000 plan rests on no unverified row: pick a request that does"
    out = squeeze(CliRunner().invoke(app, ["check", *ids, "--gpus", str(n)]).stdout)
    assert squeeze("every rule verified") not in out
    if "warning(s)" not in out and "problem(s)" not in out:  # today's plan: no warning at its own GPU count
        assert squeeze(f"{len(unverified)} part row(s) are not yet re-read") in out
