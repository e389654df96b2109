"""One PlanView of PricedLines: written once (solver, checker, share export), read at every file boundary with
strict types and ranges (issue 28 item 2, issue 29 item 8: plan files for `costs --build` / `sweep --build`)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from hostile_cli import assert_one_line_error, run
from planner.catalog.load import load_catalog
from planner.errors import InputError, ShareError
from planner.plan_view import PlanView, PricedLine, read_plan_view
from planner.request import Request

PLAN = Path(__file__).parent / "data" / "costs" / "user-target-build.json"

# A plan as `planner recommend --json` wrote it before PlanView (keys of that version, nothing added since).
OLD_RECOMMEND = {
    "status": "optimal", "solve_seconds": 1.2, "stats": {}, "why_not": None,
    "plans": [{
        "parts": [
            {"category": "gpu", "id": "gpu-nvidia-rtx5090-fe", "name": "NVIDIA GeForce RTX 5090 Founders Edition",
             "quantity": 1, "price": {"amount": "4200.00", "currency": "EUR"}, "retailer": "market estimate",
             "url": None, "price_source": "user research", "price_observed_on": "2026-11-30", "condition": "new",
             "owned": False},
            {"category": "case", "id": "case-fractal-meshify-2", "name": "Fractal Design Meshify 2", "quantity": 1,
             "price": {"amount": "0.00", "currency": "EUR"}, "retailer": None, "url": None, "price_source": "owned",
             "price_observed_on": None, "condition": None, "owned": True},
            {"category": "psu", "id": "psu-corsair-hx1500i-2025", "name": "Corsair HX1500i (2025) ATX 3.1",
             "quantity": 1, "price": {"amount": "400.00", "currency": "EUR"}, "retailer": "market estimate",
             "url": None, "price_source": "estimate", "price_observed_on": "2026-12-01", "condition": "new",
             "owned": False}],
        "total": {"amount": "4600.00", "currency": "EUR"},
        "gpu": {"chip": "rtx-5090", "name": "GeForce RTX 5090", "count": 1, "vram_gb": 32.0},
        "speedup_vs_1080ti": 4.1, "speedup_range": [3.2, 5.0], "speedup_basis": "model",
        "power": {"sustained_w": 905, "transient_w": 1900, "recommended_psu_w": 1200},
        "warnings": [], "unverified": [], "trade_offs": [], "quality_points": 3, "power_limit": 1.0, "notes": [],
        "sweep": {"runs": 8}, "sweep_hours_high": 12.5,  # keys of other versions are ignored at read
    }],
}


@pytest.fixture(scope="module")
def cat():
    return load_catalog()


@pytest.fixture(scope="module")
def solved(cat):
    from planner.solver import recommend

    return recommend(cat, Request.parse(budget="7000", currency="USD", owned=("case-fractal-meshify-2",),
                                        pinned=("case-fractal-meshify-2",)), alternatives=0).plans[0]


def test_a_solved_plan_round_trips_through_its_json(solved) -> None:
    view = solved.view()
    again = read_plan_view(json.loads(json.dumps(solved.to_json())), "plan.json")
    assert again.parts == view.parts  # every line typed and equal: money as Decimal, dates as dates
    assert again.to_json() == view.to_json()  # (speeds are written to 3 decimals)
    assert again.total == solved.total and again.currency == "USD"
    assert all(isinstance(ln.unit_price, Decimal) for ln in again.parts)
    case = again.line("case")
    assert case.owned and case.line_total == 0 and case.label.kind == "owned"


def test_the_three_writers_write_one_line_shape(cat, solved) -> None:
    """Solver, checker and share export price a part with the same writer: same keys, same amount, same currency."""
    from planner.compat.checker import check_parts
    from planner.share import build_from_catalog

    parts = [p for c, p in solved.parts.items() if c != "case"]
    report = check_parts(cat, parts, gpu_count=solved.gpu_count, currency="USD")
    shared = build_from_catalog(cat, [(p.id, solved.gpu_count if p.category == "gpu" else 1) for p in parts],
                                currency="USD")
    from_solver = {ln["id"]: ln for ln in solved.to_json()["parts"]}
    from_check = {ln["id"]: ln for ln in report.to_json()["parts"]}
    from_share = {ln["id"]: ln for ln in shared.to_json()["parts"]}
    for pid in from_check:
        assert from_check[pid] == from_solver[pid] == from_share[pid], pid
        assert from_check[pid]["price"]["currency"] == "USD"  # the checker used to write the offer's raw EUR


def test_an_old_recommend_file_still_loads_and_extra_keys_are_ignored(tmp_path) -> None:
    view = read_plan_view(OLD_RECOMMEND, "old.json")
    assert view.gpu.chip == "rtx-5090" and view.speed.low == 3.2 and view.power.sustained_w == 905
    assert view.total == Decimal("4600.00") and view.line("case").owned
    path = tmp_path / "old.json"
    path.write_text(json.dumps(OLD_RECOMMEND), encoding="utf-8")
    r = run("sweep", "--runs", "8", "--hours", "7", "--build", str(path), "--json")
    assert r.code == 0, r.text
    assert json.loads(r.out)["results"][0]["id"] == "rtx-5090"


def test_a_share_export_reads_as_a_plan(cat) -> None:
    from planner.share import build_from_catalog

    build = build_from_catalog(cat, [("gpu-nvidia-rtx5090-fe", 2), ("cpu-amd-ryzen9-9950x", 1)], owned=("cpu-amd-ryzen9-9950x",))
    view = read_plan_view(build.to_json(with_token=False), "export.json")
    assert view.gpu_count == 2 and view.line("cpu").owned and view.line("cpu").unit_price > 0
    assert view.total == build.total


# ---- issue 29 item 8: the reproducers, through the CLI ---------------------------------------------------

def _plan_with(tmp_path: Path, edit) -> Path:
    data = json.loads(PLAN.read_text(encoding="utf-8"))
    edit(data["plans"][0])
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _gpu(plan: dict) -> dict:
    return next(p for p in plan["parts"] if p["category"] == "gpu")


EDITS = {
    "negative price": (lambda p: _gpu(p)["price"].update(amount="-799"), "must not be negative"),
    "10^29 GPUs": (lambda p: _gpu(p).update(quantity=10 ** 29), "quantity"),
    "quantity as text": (lambda p: _gpu(p).update(quantity="2"), "quantity"),
    "amount as a list": (lambda p: _gpu(p)["price"].update(amount=[1]), "price of"),
    "retailer as a number": (lambda p: _gpu(p).update(retailer=5), "retailer"),
    "owned as text": (lambda p: _gpu(p).update(owned="yes"), "owned"),
    "future price date": (lambda p: _gpu(p).update(price_observed_on="2999-01-01"), "future"),
    "draw as text": (lambda p: p["power"].update(sustained_w="905 W"), "sustained"),
    "negative draw": (lambda p: p["power"].update(sustained_w=-905), "sustained"),
    "parts not a list": (lambda p: p.update(parts={"gpu": 1}), "parts"),
    "a part not an object": (lambda p: p["parts"].append(7), "part #"),
    "unknown category": (lambda p: _gpu(p).update(category="toaster"), "category"),
    "line in another currency": (lambda p: _gpu(p)["price"].update(currency="USD"), "priced in USD"),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_bad_plan_files_are_one_line_for_costs_and_sweep(tmp_path, name) -> None:
    edit, needle = EDITS[name]
    path = _plan_with(tmp_path, edit)
    assert_one_line_error(run("costs", "--runs", "8", "--hours", "7", "--build", str(path)), needle)
    assert_one_line_error(run("sweep", "--runs", "8", "--hours", "7", "--build", str(path)), needle)


def test_the_same_model_guards_share_import(cat) -> None:
    from planner.share import import_build

    data = json.loads(PLAN.read_text(encoding="utf-8"))
    _gpu(data["plans"][0])["price"]["amount"] = "-799"
    with pytest.raises(ShareError, match="must not be negative"):
        import_build(json.dumps(data), cat)


def test_a_costs_plan_with_an_unpriced_part_is_refused(tmp_path) -> None:
    path = _plan_with(tmp_path, lambda p: _gpu(p).update(price=None))
    assert_one_line_error(run("costs", "--runs", "8", "--hours", "7", "--build", str(path)), "no price for")


def test_priced_line_reads_both_shapes() -> None:
    nested = PricedLine.model_validate({"category": "gpu", "id": "g", "price": {"amount": "10", "currency": "usd",
                                                                               "observed_on": "2026-01-02"}})
    flat = PricedLine.model_validate({"category": "gpu", "id": "g", "unit_price": "10", "currency": "USD",
                                      "observed_on": "2026-01-02"})
    assert nested == flat and nested.unit_price == Decimal("10") and nested.name == "g"
    with pytest.raises(InputError, match="price of g"):
        PricedLine.model_validate({"category": "gpu", "id": "g", "price": {"amount": "1e30"}})
    assert isinstance(PlanView().total, Decimal)


# ---- any value at any key: an InputError line or a usable plan ---------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PLAN_KEYS = ["power", "gpu", "speedup_vs_1080ti", "speedup_range", "total", "name", "power_limit",
             "quality_points", "warnings", "notes", "currency", "parts"]
LINE_KEYS = ["category", "id", "name", "quantity", "price", "retailer", "url", "price_source", "price_observed_on",
             "condition", "owned", "chip", "wattage_w", "efficiency", "value", "unit_price", "observed_on"]
values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30) | st.floats()
    | st.text(max_size=12) | st.sampled_from(["1e30", "NaN", "-5", "USD", "2999-01-01", "gold", "gpu", "owned"]),
    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=8), kids, max_size=3),
    max_leaves=10)


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(where=st.sampled_from(["plan", "line"]), key=st.sampled_from(PLAN_KEYS + LINE_KEYS), value=values)
def test_any_value_reads_as_a_plan_or_fails_with_one_line(where, key, value) -> None:
    data = json.loads(json.dumps(OLD_RECOMMEND))
    plan = data["plans"][0]
    (plan if where == "plan" else plan["parts"][0])[key] = value
    try:
        view = read_plan_view(data, "f.json")
    except InputError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("f.json")
        return
    view.to_json(), view.total, [ln.label for ln in view.parts]  # a plan that reads is usable
    assert all(ln.unit_price is None or ln.unit_price >= 0 for ln in view.parts)
    assert all(1 <= ln.quantity <= 8 for ln in view.parts)
