"""Every shipped data file has a schema (issue 28 item 7): the L2 and power-variant tables are typed records like the
catalog CSVs, perf_params.json is checked before the speed model reads it; a bad row is one CatalogError line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planner.catalog.models import GpuL2Cache, GpuPowerVariant
from planner.errors import CatalogError
from planner.perf.physics import L2_FILE, POWER_VARIANTS_FILE, l2_sizes, load_power_variants
from planner.resources import SHIPPED_DATA_DIR

L2_HEADER = "chip,l2_mb,source,notes\n"
PV_HEADER = "chip,full_power_chip,board_power_w,full_power_w,source,notes\n"


def _csv(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_tables_load_as_records() -> None:
    from planner.catalog.load import load_records

    l2 = load_records(L2_FILE, GpuL2Cache)
    variants = load_records(POWER_VARIANTS_FILE, GpuPowerVariant)
    assert l2 and all(r.source for r in l2) and variants and all(r.source for r in variants)
    assert l2_sizes() == {r.chip: r.l2_mb for r in l2}


@pytest.mark.parametrize("row, needle", [
    ("rtx-4090,abc,src,", "l2_mb"),  # was a ValueError traceback from float()
    ("rtx-4090,-72,src,", "l2_mb"),  # was accepted: a negative cache
    ("rtx-4090,72,,", "source"),  # was accepted: a row without its source
    ("RTX 4090,72,src,", "chip"),
])
def test_bad_l2_rows_are_one_catalog_error(tmp_path, row, needle) -> None:
    with pytest.raises(CatalogError, match=needle):
        l2_sizes.__wrapped__(_csv(tmp_path, L2_HEADER + row + "\n"))


def test_an_l2_chip_given_twice_is_refused(tmp_path) -> None:
    with pytest.raises(CatalogError, match="twice"):
        l2_sizes.__wrapped__(_csv(tmp_path, L2_HEADER + "rtx-4090,72,a,\nrtx-4090,64,b,\n"))


@pytest.mark.parametrize("row, needle", [
    ("rtx-pro-6000-blackwell-maxq,rtx-pro-6000-blackwell,300W,600,src,", "board_power_w"),
    ("rtx-pro-6000-blackwell-maxq,rtx-pro-6000-blackwell,300,0,src,", "full_power_w"),  # was ZeroDivisionError
    ("rtx-pro-6000-blackwell-maxq,rtx-pro-6000-blackwell,300,600,,", "source"),
])
def test_bad_power_variant_rows_are_one_catalog_error(tmp_path, row, needle) -> None:
    with pytest.raises(CatalogError, match=needle):
        load_power_variants(_csv(tmp_path, PV_HEADER + row + "\n"))


@pytest.fixture()
def params_copy(tmp_path) -> Path:
    dst = tmp_path / "perf_params.json"
    shutil.copy(SHIPPED_DATA_DIR / "perf_params.json", dst)
    return dst


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d["params"].update(tensor_efficiency="abc"), "tensor_efficiency"),  # was ValueError from float()
    (lambda d: d["params"].pop("amp_memory_factor"), "amp_memory_factor"),  # was KeyError
    (lambda d: d["params"].update(compute_share={"transformer": 3}), "compute share"),  # was accepted
    (lambda d: d["ranges"]["amd"].update(fp32=[1.5, 0.4]), "low <= high"),  # was accepted: an inverted range
    (lambda d: d.pop("params"), "params"),
])
def test_a_broken_perf_params_file_is_one_catalog_error(params_copy, edit, needle) -> None:
    from planner.perf.model import load_perf_model

    data = json.loads(params_copy.read_text(encoding="utf-8"))
    edit(data)
    params_copy.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CatalogError, match=needle) as err:
        load_perf_model(params_path=params_copy)
    assert "\n" not in str(err.value) and "perf_params.json" in str(err.value)


def test_the_shipped_perf_params_pass_the_schema() -> None:
    from planner.perf.params_file import check_params_file

    doc = check_params_file(json.loads((SHIPPED_DATA_DIR / "perf_params.json").read_text(encoding="utf-8")), "x")
    assert doc.params.compute_share and doc.ranges


def test_fit_write_stores_a_file_the_model_loads_atomically(params_copy, capsys) -> None:
    """`fit --write` / `twopoint --write` go through save_params: the written file loads, no temporary file stays."""
    from planner.perf.fit import save_params
    from planner.perf.model import load_perf_model

    doc = json.loads(params_copy.read_text(encoding="utf-8"))
    doc["fitted_on"] = "a refit"
    target = params_copy.parent / "new" / "perf_params.json"
    assert save_params(doc, target) == 0
    assert f"wrote {target}" in capsys.readouterr().out
    assert load_perf_model(params_path=target).params.meta.get("fitted_on") == "a refit"
    assert [p.name for p in target.parent.iterdir()] == ["perf_params.json"]


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d["params"].update(compute_share={"transformer": 3}), "compute share"),  # the loader would refuse it
    (lambda d: d.update(error={"median": float("nan")}), "not plain JSON"),  # json.dumps wrote NaN, which is no JSON
])
def test_fit_write_refuses_what_the_model_would_not_load(params_copy, capsys, edit, needle) -> None:
    from planner.perf.fit import save_params

    before = params_copy.read_bytes()
    doc = json.loads(before)
    edit(doc)
    assert save_params(doc, params_copy) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and needle in err and "left as it was" in err and "\n" not in err
    assert params_copy.read_bytes() == before
    assert [p.name for p in params_copy.parent.iterdir()] == ["perf_params.json"]


def test_fit_write_to_a_bad_path_is_one_line(tmp_path, params_copy, capsys) -> None:
    from planner.perf.fit import save_params

    blocker = tmp_path / "a-file"
    blocker.write_text("x", encoding="utf-8")
    assert save_params(json.loads(params_copy.read_text(encoding="utf-8")), blocker / "perf_params.json") == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: cannot write the speed parameters") and str(blocker) in err and "\n" not in err
