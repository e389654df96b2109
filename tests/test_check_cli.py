"""`planner check` on the shipped catalog: the user's target build, the five classic mistakes, the JSON
contract, and one-line errors with exit code 2."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from planner.compat import power
from planner.cli import app
from planner.compat.rules.base import power_terms
from planner.compat.rules import Build

REPO = Path(__file__).resolve().parents[1]


pytestmark = pytest.mark.usefixtures("no_price_history")


def pick(cat, category: str, **want: Any) -> Any:
    """The first shipped part of `category` whose attributes (or properties) equal `want`."""
    for p in cat.by_category(category):
        if all(getattr(p, k) == v for k, v in want.items()):
            return p
    pytest.fail(f"the shipped catalog has no {category} with {want}")


@pytest.fixture(scope="module")
def target(cat) -> dict[str, Any]:
    """The user's target build (user-story.md): 5090, 9950X, X870E ATX, 64 GB DDR5-6000, 2 TB NVMe,
    360 mm AIO, 1200 W ATX 3.x, Meshify 2."""
    return {
        "gpu": pick(cat, "gpu", chip="rtx-5090", length_mm=357.6),
        "cpu": cat.get("cpu-amd-ryzen9-9950x"),
        "motherboard": pick(cat, "motherboard", socket="AM5", chipset="X870E", form_factor="ATX"),
        "memory": pick(cat, "memory", memory_type="DDR5", capacity_gb=64, modules=2, speed_mts=6000),
        "storage": pick(cat, "storage", interface="NVMe", capacity_gb=2000),
        "cooler": pick(cat, "cooler", type="aio", radiator_mm=360),
        "psu": pick(cat, "psu", wattage_w=1200, is_atx3=True, form_factor="ATX"),
        "case": cat.get("case-fractal-meshify-2"),
    }


def check(*args: str) -> tuple[int, Any, str]:
    res = CliRunner().invoke(app, ["check", *args])
    data = json.loads(res.stdout) if res.exit_code in (0, 1, 3) and "--json" in args else None
    return res.exit_code, data, res.stderr


def check_build_ids(parts: dict[str, Any], **swap: Any) -> dict[str, Any]:
    ids = [(swap.get(c) or p).id for c, p in parts.items()]
    code, data, err = check(*ids, "--json")
    assert code in (0, 1), err
    assert code == (1 if data["problems"] else 0)  # issue 26 item 9: a script can tell
    return data


def problem(data: dict[str, Any], rule: str) -> dict[str, Any]:
    hits = [p for p in data["problems"] if p["rule"] == rule]
    assert hits, f"no {rule} problem among {[(p['rule'], p['message']) for p in data['problems']]}"
    return hits[0]


# ---- the target build and the JSON contract ----------------------------------------------------------

def test_target_build_is_compatible(target) -> None:
    data = check_build_ids(target)
    assert data["compatible"] is True, data["problems"]
    assert data["problems"] == []


def test_json_contract_shape(cat, target) -> None:
    data = check_build_ids(target)
    assert {"compatible", "problems", "warnings", "power", "total"} <= set(data)
    assert isinstance(data["compatible"], bool)
    for f in data["problems"] + data["warnings"]:
        assert set(f) >= {"rule", "message", "parts"} and isinstance(f["parts"], list)
    pw = data["power"]
    assert all(isinstance(pw[k], int) for k in ("sustained_w", "transient_w", "recommended_psu_w"))
    assert data["total"]["currency"] == "EUR"
    expected = sum(cat.offer_for(p.id).price for p in target.values())
    assert Decimal(data["total"]["amount"]) == expected


def test_power_summary_matches_the_power_model(cat, target) -> None:
    data = check_build_ids(target)
    b = Build(parts=dict(target), chips=cat.chips)
    t = power_terms(b)
    assert data["power"]["sustained_w"] == t.sustained_w
    assert data["power"]["transient_w"] == 3 * t.gpu_w + t.other_w
    rec = data["power"]["recommended_psu_w"]
    assert rec in power.COMMERCIAL_SIZES_W
    assert rec >= power.required_sustained_w(t.sustained_w)
    assert rec >= power.required_transient_w(t.gpu_w, t.other_w, atx3_native=True)
    assert rec <= target["psu"].wattage_w  # the chosen 1200 W unit is enough


def test_owned_part_costs_nothing(cat, target) -> None:
    ids = [p.id for p in target.values()]
    code, data, err = check(*ids, "--owned", target["case"].id, "--json")
    assert code == 0, err
    full = sum(cat.offer_for(p.id).price for p in target.values())
    assert Decimal(data["total"]["amount"]) == full - cat.offer_for(target["case"].id).price


def test_two_identical_gpus_double_the_card_price_and_power(cat, target) -> None:
    ids = [p.id for p in target.values()]
    one = check_build_ids(target)
    code, two, err = check(*ids, "--gpu-count", "2", "--json")
    assert code == 1, err  # problems: exit 1
    gpu_price = cat.offer_for(target["gpu"].id).price
    assert Decimal(two["total"]["amount"]) == Decimal(one["total"]["amount"]) + gpu_price
    t = power_terms(Build(parts=dict(target), chips=cat.chips))
    assert two["power"]["sustained_w"] - one["power"]["sustained_w"] == t.gpu_w
    assert two["compatible"] is False  # two 600 W cards on a 1200 W unit
    assert {"psu_sustained", "psu_transient"} <= {p["rule"] for p in two["problems"]}


def test_exit_code_says_whether_the_build_has_problems(cat, target) -> None:
    """Issue 26 item 9: 0 compatible, 1 problems (human and JSON output alike), 2 bad input."""
    ids = [p.id for p in target.values()]
    assert CliRunner().invoke(app, ["check", *ids]).exit_code == 0
    bad = CliRunner().invoke(app, ["check", *ids, "--gpus", "2"])  # two 575 W cards on a 1200 W unit
    assert bad.exit_code == 1 and "problem" in bad.stdout
    assert CliRunner().invoke(app, ["check", *ids, "--gpus", "2", "--json"]).exit_code == 1
    assert CliRunner().invoke(app, ["check", "no-such-part-xyz"]).exit_code == 2


def test_the_same_gpu_twice_is_two_gpus(cat, target) -> None:
    """Issue 26 item 9: as in a PCPartPicker list, a GPU id given twice means two cards, not an error."""
    ids = [p.id for p in target.values()]
    code, twice, err = check(*ids, target["gpu"].id, "--json")
    _, counted, _ = check(*ids, "--gpus", "2", "--json")
    assert code == 1, err  # the same problems as --gpus 2
    assert twice["total"] == counted["total"] and twice["power"] == counted["power"]
    assert {p["rule"] for p in twice["problems"]} == {p["rule"] for p in counted["problems"]}
    code, _, err = check(*ids, target["gpu"].id, "--gpus", "3", "--json")
    assert code == 2 and "given 2 times" in err
    code, _, err = check(*ids, target["case"].id, "--json")
    assert code == 2 and "given twice" in err  # any other part twice is still a mistake


def test_human_output_shows_verdict_price_date_and_source(target) -> None:
    res = CliRunner().invoke(app, ["check", *[p.id for p in target.values()]])
    assert res.exit_code == 0
    assert "compatible" in res.stdout and "Total" in res.stdout
    assert "user research" in res.stdout or "estimate" in res.stdout or "scraped" in res.stdout


# ---- each classic mistake is flagged by the right rule, with numbers ----------------------------------

def test_9950x_on_am4_board(cat, target) -> None:
    am4 = pick(cat, "motherboard", socket="AM4")
    data = check_build_ids(target, motherboard=am4)
    assert data["compatible"] is False
    p = problem(data, "cpu_socket")
    assert "needs socket AM5 but the board has AM4" in p["message"]
    assert set(p["parts"]) == {target["cpu"].id, am4.id}


def test_long_5090_in_a_322mm_case(cat, target) -> None:
    gpu = target["gpu"]
    case = next(c for c in cat.by_category("case")
                if c.max_gpu_length_mm is not None and 315 <= c.max_gpu_length_mm <= 325)
    data = check_build_ids(target, case=case)
    assert data["compatible"] is False
    p = problem(data, "gpu_length")
    assert f"card length {gpu.length_mm:g} mm exceeds the case maximum of {case.max_gpu_length_mm:g} mm" in p["message"]
    assert "357.6 mm" in p["message"]


def test_5090_on_a_750w_psu_fails_the_transient_rule(cat, target) -> None:
    small = pick(cat, "psu", wattage_w=750, form_factor="ATX", is_atx3=True)
    data = check_build_ids(target, psu=small)
    assert data["compatible"] is False
    p = problem(data, "psu_transient")
    t = power_terms(Build(parts={**target, "psu": small}, chips=cat.chips))
    need = power.required_transient_w(t.gpu_w, t.other_w, atx3_native=True)
    assert p["message"].startswith("750 W PSU too small for transients")
    assert f"3 x {t.gpu_w} W" in p["message"] and f"needs at least {need} W" in p["message"]


def test_5090_on_a_750w_legacy_psu(cat, target) -> None:
    legacy = pick(cat, "psu", wattage_w=750, form_factor="ATX", atx_version="2.x")
    data = check_build_ids(target, psu=legacy)
    p = problem(data, "psu_transient")
    t = power_terms(Build(parts={**target, "psu": legacy}, chips=cat.chips))
    assert f"1.47 x {t.sustained_w} W sustained" in p["message"]
    assert {"psu_sustained", "psu_vendor_floor", "gpu_connectors"} <= {q["rule"] for q in data["problems"]}


def test_ddr4_kit_on_am5_board(cat, target) -> None:
    ddr4 = pick(cat, "memory", memory_type="DDR4")
    data = check_build_ids(target, memory=ddr4)
    assert data["compatible"] is False
    p = problem(data, "memory_type")
    assert "DDR4 kit does not fit a DDR5 board" in p["message"]
    assert set(p["parts"]) == {ddr4.id, target["motherboard"].id}


def test_air_cooler_taller_than_the_case_allows(cat, target) -> None:
    pairs = [(c, k) for c in cat.by_category("cooler") if c.type == "air" and c.height_mm
             for k in cat.by_category("case")
             if k.max_cooler_height_mm and c.height_mm > k.max_cooler_height_mm and "ATX" in k.form_factors
             and (k.max_gpu_length_mm or 0) >= target["gpu"].length_mm]
    assert pairs, "no tall air cooler / ATX case pair in the shipped catalog"
    cooler, case = min(pairs, key=lambda ck: ck[0].height_mm - ck[1].max_cooler_height_mm)
    data = check_build_ids(target, cooler=cooler, case=case)
    assert data["compatible"] is False
    p = problem(data, "cooler_height")
    assert (f"air cooler height {cooler.height_mm:g} mm exceeds the case maximum of "
            f"{case.max_cooler_height_mm:g} mm") in p["message"]


def test_same_air_cooler_fits_the_meshify_2(cat, target) -> None:
    tall = max((c for c in cat.by_category("cooler") if c.type == "air" and c.height_mm), key=lambda c: c.height_mm)
    assert tall.height_mm <= target["case"].max_cooler_height_mm
    data = check_build_ids(target, cooler=tall)
    assert "cooler_height" not in {p["rule"] for p in data["problems"]}


# ---- bad input: exit 2 and one line on stderr -------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from planner.cli import main; main()", *args],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def _one_line_error(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert "Traceback" not in r.stderr + r.stdout
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert r.stdout.strip() == ""
    return lines[0]


def test_unknown_part_exits_2(target) -> None:
    line = _one_line_error(_cli("check", target["cpu"].id, "no-such-part-xyz", "--json"))
    assert "no-such-part-xyz" in line


def test_ambiguous_fragment_lists_candidates(cat) -> None:
    line = _one_line_error(_cli("check", "rtx 5090", "--json"))
    assert "ambiguous" in line
    fives = [g.id for g in cat.by_category("gpu") if g.chip == "rtx-5090"]
    assert sum(i in line for i in fives) >= 2


def test_two_parts_of_one_category_exit_2(cat, target) -> None:
    other = next(c for c in cat.by_category("cpu") if c.id != target["cpu"].id)
    line = _one_line_error(_cli("check", target["cpu"].id, other.id, "--json"))
    assert "two cpu parts" in line


def test_unique_name_fragment_resolves(cat) -> None:
    code, data, err = check("Meshify 2 Compact", "--json")
    assert code == 0, err
    # a lone case has no problem but is a partial build: never "compatible"
    assert data["compatible"] is False and data["verdict"] == "partial" and data["complete"] is False
    assert data["missing"] == ["gpu", "cpu", "motherboard", "memory", "storage", "cooler", "psu"]
    assert data["total"]["amount"] == str(cat.offer_for(
        "case-fractal-meshify-2-compact").price.quantize(Decimal("0.01")))


@pytest.mark.parametrize("args", [["--gpu-count", "9"], ["--power-limit", "0.1"]])
def test_out_of_range_options_exit_2(target, args) -> None:
    code, _, err = check(target["gpu"].id, *args, "--json")
    assert code == 2 and err.strip() and len(err.strip().splitlines()) == 1


def test_check_takes_the_model_size_like_recommend(cat) -> None:
    """Same parts, same inputs, same findings: the core rule reads the model size on both paths."""
    from planner.request import Request
    from planner.solver import recommend

    req = Request(budget=Decimal(7000), gpu_count=1, model_params=3e8, avoid_warnings=False)
    plan = recommend(cat, req).plans[0]
    ids = [p.id for p in plan.parts.values()]
    code, data, err = check(*ids, "--model-params", "3e8", "--json")
    assert code == 0, err
    assert [w["message"] for w in data["warnings"]] == [f.message for f in plan.report.warnings]
    assert data["verdict"] == "compatible" and data["complete"] is True


def test_partial_list_with_a_problem_says_both(target) -> None:
    code, data, err = check(target["gpu"].id, "psu-bequiet-pure-power-11-600", "--json")
    assert code == 1, err  # problems found: exit 1 (issue 26)
    assert data["verdict"] == "incompatible" and data["compatible"] is False
    assert "case" in data["missing"] and "cpu" in data["missing"]
    res = CliRunner().invoke(app, ["check", target["gpu"].id])
    assert "partial build" in res.stdout and "missing" in res.stdout


def test_share_import_checks_with_the_model_size_too(cat) -> None:
    """The same parts and inputs give the same findings through a shared token as through check."""
    from planner.share.importing import import_build
    from planner.request import Request
    from planner.share.token import encode_token

    parts = [(p.id, 1) for p in (cat.get("gpu-nvidia-rtx-pro-6000-blackwell-ws"), cat.get("cpu-amd-ryzen7-7700x"))]
    token = encode_token(Request(model_params=3e9), parts)
    result = import_build(token, cat)
    assert result.report.build.model_params == 3e9
    code, data, err = check(*[i for i, _ in parts], "--model-params", "3e9", "--json")
    assert code == 0, err
    assert [f.message for f in result.report.warnings] == [w["message"] for w in data["warnings"]]


# ---- issue 34 item 1: an unknown fact that decides the build is not "compatible" --------------------------------------

def test_two_gpus_on_a_board_of_unknown_wiring_cannot_be_confirmed(cat) -> None:
    """2 x RTX 5080 on the MSI MAG X870E Tomahawk (second CPU slot wiring unsourced): no rule finds a problem, but the
    verdict is 'unconfirmed', exit 3, naming the unknown facts; the same parts on a board with sourced x8/x8 wiring
    are confirmed."""
    rest = ["cpu-amd-ryzen9-9950x", "mem-gskill-trident-z5-neo-rgb-ddr5-2x32-6000-cl30", "ssd-samsung-990-pro-2tb",
            "cooler-arctic-liquid-freezer-iii-360", "case-fractal-meshify-2-xl"]
    psu = next(p.id for p in cat.by_category("psu") if (p.connectors_12v2x6 or 0) >= 2 and p.wattage_w >= 1300)
    board = "mb-msi-mag-x870e-tomahawk-wifi"
    assert cat.get(board).gpu_slots_x8 is None  # the fact this test is about
    code, data, err = check("gpu-nvidia-rtx5080-fe", "gpu-nvidia-rtx5080-fe", board, psu, *rest, "--json")
    assert code == 3, err
    assert data["verdict"] == "unconfirmed" and data["compatible"] is False and data["problems"] == []
    assert any("x8 slot count unknown" in c for c in data["cannot_confirm"]), data["cannot_confirm"]
    res = CliRunner().invoke(app, ["check", "gpu-nvidia-rtx5080-fe", "gpu-nvidia-rtx5080-fe", board, psu, *rest])
    assert res.exit_code == 3 and "cannot confirm" in res.stdout and "compatible" not in res.stdout.split("Verdict")[1]


def test_a_16pin_card_beyond_the_native_cables_is_said_and_the_solver_avoids_it(cat) -> None:
    """Issue 34 item 3: 2 x RTX 5080 on the MSI MEG Ai1300P (one native 12V-2x6 cable) put one card on an adapter:
    check says so; the solver's 2-GPU plans give every 16-pin card above 300 W its own native cable."""
    from planner.request import Request
    from planner.solver import recommend

    psu = cat.get("psu-msi-meg-ai1300p-pcie5")
    assert psu.connectors_12v2x6 == 1
    parts = ["gpu-nvidia-rtx5080-fe", "gpu-nvidia-rtx5080-fe", "cpu-amd-ryzen9-9950x", "mb-asus-proart-x870e-creator-wifi",
             "mem-gskill-trident-z5-neo-rgb-ddr5-2x32-6000-cl30", "ssd-samsung-990-pro-2tb",
             "cooler-arctic-liquid-freezer-iii-360", psu.id, "case-fractal-meshify-2-xl"]
    code, data, err = check(*parts, "--json")
    assert code in (0, 3), err
    assert any(w["rule"] == "gpu_adapter" and "adapter" in w["message"] for w in data["warnings"]), data["warnings"]
    # the case was the cheapest 12 h plan (2 x RTX 5080 on the Ai1300P); the 2-GPU plans at 7 000 and 10 000 too
    asks = [Request.parse(mode="cheapest", deadline_hours=12)] + [Request.parse(budget=b, gpu_count=2) for b in (7000, 10000)]
    for ask in asks:
        for plan in recommend(cat, ask, alternatives=2, workers=2).plans:
            card, unit = plan.gpu, plan.parts["psu"]
            if card.power_12v2x6:
                assert (unit.connectors_12v2x6 or 0) >= plan.gpu_count * card.power_12v2x6 or card.tgp_w <= 300, (card.id, unit.id)
            assert unit.form_factor == "ATX" or unit.form_factor in plan.parts["case"].psu_form_factors


def test_an_sfx_unit_in_an_atx_only_case_is_a_warning(cat) -> None:
    sfx = next(p for p in cat.by_category("psu") if p.form_factor == "SFX")
    atx_only = next(c for c in cat.by_category("case") if list(c.psu_form_factors) == ["ATX"])
    code, data, err = check("gpu-nvidia-rtx5080-fe", sfx.id, atx_only.id, "--json")
    assert code in (0, 1, 3), err
    assert any(w["rule"] == "psu_bracket" and "bracket" in w["message"] for w in data["warnings"]), data["warnings"]


# ---- issue 34 item 2: the Torrent has no top mount; its front radiator would take the GPUs' intake ------------------

def test_the_torrent_takes_no_aio_and_counts_its_bottom_fans(cat) -> None:
    """The Torrent's only 360 mm mount is the front intake (two 180 mm fans as shipped), so `check` warns on a
    360 mm AIO there and not on an air tower; its intake estimate counts the three 140 mm bottom fans it ships with
    (3 x 50 CFM over the 200 CFM front); and a 2-GPU plan pinned to it gets an air tower, not the AIO."""
    from planner.request import Request
    from planner.solver import recommend

    torrent = cat.get("case-fractal-torrent")
    assert not torrent.radiator_top and 360 in torrent.radiator_front
    assert torrent.intake_cfm >= 200 + 3 * 50
    rest = ["gpu-nvidia-rtx5080-fe", "gpu-nvidia-rtx5080-fe", "cpu-amd-ryzen9-9900x", "mb-asus-proart-x870e-creator-wifi",
            "mem-gskill-trident-z5-neo-rgb-ddr5-2x32-6000-cl30", "ssd-samsung-990-pro-2tb", "psu-corsair-hx1500i-2025",
            torrent.id]
    _, aio, err = check(*rest, "cooler-arctic-liquid-freezer-iii-360", "--json")
    assert any(w["rule"] == "radiator_in_intake" for w in aio["warnings"]), (err, aio["warnings"])
    _, tower, err = check(*rest, "cooler-deepcool-ak620", "--json")
    assert not any(w["rule"] == "radiator_in_intake" for w in tower["warnings"]), (err, tower["warnings"])
    plan = recommend(cat, Request.parse(budget=7000, gpu_count=2, pinned=(torrent.id,)), workers=2).plans[0]
    assert plan.parts["case"].id == torrent.id and plan.parts["cooler"].type != "aio", plan.parts["cooler"].id


def test_the_torrents_front_aio_replaces_its_shipped_fans_in_the_airflow_figure(cat) -> None:
    """Issue 34 item 2: with the 360 mm AIO in the Torrent's front, the two 180 mm fans it ships there give way to the
    radiator's three 120 mm fans behind its fins: the case's heat budget falls from ~1 995 W (350 CFM) to ~1 333 W
    (234 CFM), which two RTX 5090 at stock (about 1 400 W in the case) exceed; the warning says why."""
    from planner.compat.checker import check_parts
    from planner.compat.rules.sustain import case_cooling, case_heat_capacity_w

    torrent = cat.get("case-fractal-torrent")
    assert torrent.shipped_intake("front") == (2, 180) and torrent.shipped_intake("bottom") == (3, 140)
    parts = [cat.get(i) for i in ("gpu-nvidia-rtx5090-fe", "cpu-amd-ryzen9-9900x", "mb-asus-proart-x870e-creator-wifi",
                                  "mem-gskill-trident-z5-neo-rgb-ddr5-2x32-6000-cl30", "ssd-samsung-990-pro-2tb",
                                  "psu-seasonic-prime-px-2200", torrent.id)]
    aio = check_parts(cat, [*parts, cat.get("cooler-arctic-liquid-freezer-iii-360")], gpu_count=2)
    tower = check_parts(cat, [*parts, cat.get("cooler-deepcool-ak620")], gpu_count=2)
    cap, cfm, why = case_cooling(aio.build)
    assert cfm == 234 and cap == 2340 * 57 // 100 < case_heat_capacity_w(torrent) and "2x180 mm" in why
    assert case_cooling(tower.build)[0] == case_heat_capacity_w(torrent)
    airflow = [f.message for f in aio.warnings if f.rule == "case_airflow"]
    assert airflow and "replaces the 2x180 mm fans shipped there" in airflow[0], aio.warnings
    assert not [f for f in tower.warnings if f.rule == "case_airflow"], tower.warnings
