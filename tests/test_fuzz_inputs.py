"""Fuzz the readers behind the commands: tokens, build files and catalog rows fail only with our own errors.

A token reader raises ShareError and nothing else; a build file InputError; a catalog CatalogError; a
catalog that loads is usable by the checker. Bounded for CI: a few hundred cheap examples, no database,
derandomized when CI is set."""

from __future__ import annotations

import os

import csv
import json
import shutil
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import CatalogError, InputError, ShareError
from planner.share import build_from_json, decode_token
from planner.request import Request
from planner.share import token as T

SCALE = float(os.environ.get("PLANNER_FUZZ_SCALE", "1"))  # e.g. 10 for a long local hunt
FAST = settings(max_examples=int(150 * SCALE), deadline=None, database=None,
                derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(10 ** 30), max_value=10 ** 30)
    | st.floats() | st.text(max_size=20)
    | st.sampled_from(["1e30", "NaN", "-5", "9" * 80, "XXX", "usd", "9999-12-31", "=1+1", "[/]"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=15,
)


def wrap(body: bytes) -> str:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = packer.compress(body) + packer.flush()
    return f"{T.TOKEN_VERSION}.{T._b64encode(T._HEADER.pack(zlib.crc32(stream), len(stream)) + stream)}"


INPUT_KEYS = list(Request.model_fields) + ["hours", "model_params_m"]  # v1 spellings too


@FAST
@given(st.one_of(
    st.text(max_size=200),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", max_size=120).map(lambda t: "v1." + t),
    json_values.map(lambda v: wrap(json.dumps(v, allow_nan=True).encode())),
    st.dictionaries(st.sampled_from(INPUT_KEYS), json_values, max_size=4).map(
        lambda i: wrap(json.dumps({"i": i, "p": []}, allow_nan=True).encode())),
    st.binary(max_size=200).map(wrap),
))
def test_tokens_fail_only_with_share_error(token):
    try:
        decode_token(token)
    except ShareError as exc:
        assert "\n" not in str(exc)


def valid_part() -> dict:
    return {"category": "gpu", "id": "gpu-x", "name": "Card", "quantity": 1,
            "price": {"amount": "100.00", "currency": "EUR"}, "retailer": "Shop", "url": None,
            "price_observed_on": "2026-11-02", "price_source": "scraped", "owned": False, "condition": "new"}


@FAST
@given(field=st.sampled_from([*valid_part(), "price.amount", "price.currency", "total", "inputs", "parts"]),
       value=json_values)
def test_build_files_fail_only_with_input_error(field, value):
    from planner.share import to_csv, to_json_text, to_markdown

    part, data = valid_part(), None
    data = {"parts": [part], "total": {"amount": "100.00", "currency": "EUR"}}
    if field.startswith("price."):
        part["price"][field.split(".")[1]] = value
    elif field in ("total", "inputs", "parts"):
        data[field] = value
    else:
        part[field] = value
    try:
        build = build_from_json(data)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    to_markdown(build), to_csv(build), to_json_text(build)  # a build that reads also exports


@pytest.fixture(scope="module")
def small_catalog(tmp_path_factory) -> Path:
    from planner.catalog.load import SHIPPED_DATA_DIR

    dst = tmp_path_factory.mktemp("cat") / "base"
    shutil.copytree(SHIPPED_DATA_DIR, dst, ignore=shutil.ignore_patterns("__pycache__", "*.py", "fx", "calibration"))
    return dst


CELLS = st.one_of(st.text(max_size=15), st.sampled_from(
    ["inf", "-inf", "nan", "1e30", "-1", "0", "9" * 40, "1e-300", "XXX", "usd", "", "9999-12-31", "0001-01-01",
     "2026-02-30", "true", "[/]", "=1+1", "\x00"]))


@settings(FAST, max_examples=int(60 * SCALE))
@given(file=st.sampled_from(["gpu.csv", "psu.csv", "case.csv", "cpu.csv", "offers/gpu.csv", "offers/psu.csv",
                             "gpu_chips.csv"]),
       row=st.integers(min_value=0, max_value=3), column=st.integers(min_value=0, max_value=30), value=CELLS)
def test_catalog_cells_fail_only_with_catalog_error(small_catalog, tmp_path_factory, file, row, column, value):
    from planner.catalog.load import load_catalog
    from planner.compat.checker import check_parts

    root = tmp_path_factory.mktemp("mut")
    shutil.copytree(small_catalog, root, dirs_exist_ok=True)
    path = root / file
    if not path.exists():
        return
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    r = rows[1 + row % (len(rows) - 1)]
    r[column % len(r)] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    try:
        cat = load_catalog(root)
    except CatalogError as exc:
        assert "\n" not in str(exc)
        return
    picks = {}
    for p in cat.parts.values():
        picks.setdefault(p.category, p)
    report = check_parts(cat, list(picks.values()))  # a catalog that loads can be checked and totalled
    assert report.total.amount >= 0


@settings(FAST, max_examples=int(15 * SCALE))
@given(file=st.sampled_from(["gpu.csv", "psu.csv", "case.csv", "cpu.csv", "cooler.csv", "motherboard.csv",
                             "offers/gpu.csv", "offers/psu.csv"]),
       row=st.integers(min_value=0, max_value=3), column=st.integers(min_value=2, max_value=30),
       value=st.one_of(st.integers(min_value=0, max_value=100_000).map(str), st.floats(0, 1e4).map(repr), CELLS))
def test_a_catalog_that_loads_can_be_planned(small_catalog, tmp_path_factory, file, row, column, value):
    """Odd but valid numbers (0 W, 1 mm, 100 000 W) reach the solver: it answers or explains, never crashes."""
    from planner.catalog.load import load_catalog
    from planner.errors import PlannerError
    from planner.solver import recommend

    root = tmp_path_factory.mktemp("plan")
    shutil.copytree(small_catalog, root, dirs_exist_ok=True)
    path = root / file
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    r = rows[1 + row % (len(rows) - 1)]
    r[column % len(r)] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    try:
        cat = load_catalog(root)
        recommend(cat, Request.parse(budget="4000"), time_limit=2)
    except PlannerError as exc:
        assert "\n" not in str(exc)
