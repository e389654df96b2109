"""Issue 16 reproducers at the command line: markup, numbers, files, catalogs, money. One line, exit 2."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from hostile_cli import assert_one_line_error, run


@pytest.fixture(autouse=True)
def _isolated(no_price_history):
    """Shipped data only, no user price history."""


@pytest.fixture
def catalog_copy(tmp_path: Path) -> Path:
    from planner.catalog.load import SHIPPED_DATA_DIR

    dst = tmp_path / "cat"
    shutil.copytree(SHIPPED_DATA_DIR, dst, ignore=shutil.ignore_patterns("__pycache__", "*.py", "fx", "calibration"))
    return dst


def set_cell(path: Path, column: str, value: str, row: int = 0) -> str:
    """Write `value` into `column` of data row `row`; returns that row's id (or part_id)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    reader = list(csv.DictReader(ln for ln in lines if ln.strip() and not ln.startswith("#")))
    reader[row][column] = value
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(reader[0].keys()))
        w.writeheader()
        w.writerows(reader)
    return reader[row].get("id") or reader[row].get("part_id")


# ---------------------------------------------------------------- Rich markup


@pytest.mark.parametrize("args", [
    ["check", "[/]"],
    ["catalog", "validate", "--catalog", "[/]"],
    ["check", "[link=http://evil.example]x[/link]"],
    ["recommend", "--budget", "[/]"],
])
def test_markup_in_arguments_prints_as_text(args):
    r = run(*args)
    assert_one_line_error(r)
    assert "[/" in r.err or "[link=" in r.err  # the text the user typed, shown as typed


def test_markup_in_a_part_name_prints_as_itself(catalog_copy, monkeypatch):
    from planner.cli.common import console

    monkeypatch.setattr(console, "size", (400, 50))  # wide enough that no cell wraps
    set_cell(catalog_copy / "gpu.csv", "name", "Evil [/] [link=http://evil.example]card[/link] [bold]x")
    r = run("catalog", "list", "--catalog", catalog_copy, "--category", "gpu")
    assert r.code == 0, r.text
    flat = "".join(ch for ch in r.out if not ch.isspace() and ch not in "│┃")  # table cells wrap
    assert "Evil[/]" in flat and "[link=http://evil.example]card[/link]" in flat


def test_markup_in_a_pasted_markdown_item(tmp_path):
    md = tmp_path / "list.md"
    md.write_text("Type|Item|Price\n:----|:----|:----\n**CPU** | Foo [/] bar | EUR 1.00\n", encoding="utf-8")
    r = run("share", "import", md)
    assert r.code in (0, 2), r.text
    assert "Traceback" not in r.text and "MarkupError" not in r.text
    assert "Foo [/] bar" in " ".join(r.out.split()) or "Foo [/] bar" in r.err


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize("args, needle", [
    (["recommend", "--budget", "7000", "--min-vram", "1e308"], "--min-vram"),
    (["recommend", "--budget", "7000", "--deadline-hours", "1e-300"], "deadline"),
    (["recommend", "--budget", "7000", "--min-vram", "nan"], "--min-vram"),
    (["recommend", "--budget", "7000", "--hours", "inf"], "--hours"),
    (["recommend", "--budget", "1e30"], "budget"),
    (["recommend", "--budget", "9" * 5000], "budget"),
    (["recommend", "--budget", "7000", "--max-wall-w", "9" * 30], "--max-wall-w"),
    (["memfit", "--params", "15e6", "--act-mb-per-sample", "nan"], "--act-mb-per-sample"),
    (["memfit", "--params", "1e308"], "--params"),
    (["memfit", "--params", "15e6", "--act-mb-per-sample", "0"], "activation size"),
    (["costs", "--runs", "8", "--hours", "7", "--budget", "7000", "--draw-w", "nan"], "--draw-w"),
    (["check", "gpu-nvidia-rtx5090-fe", "--power-limit", "nan"], "--power-limit"),
    (["check", "gpu-nvidia-rtx5090-fe", "--gpu-count", "99999999999999999999999"], "--gpus"),  # --gpu-count is the old spelling of --gpus
])
def test_numbers_that_cannot_be_true(args, needle):
    assert_one_line_error(run(*args), needle)


# ---------------------------------------------------------------- files


def _write_export(tmp_path: Path) -> Path:
    r = run("recommend", "--budget", "7000", "--json")
    assert r.code == 0, r.text
    p = tmp_path / "plan.json"
    p.write_text(r.out, encoding="utf-8")
    return p


@pytest.mark.parametrize("kind", ["utf16", "latin1", "binary"])
def test_catalog_in_another_encoding_is_one_line(catalog_copy, kind):
    path = catalog_copy / "cpu.csv"
    text = path.read_text(encoding="utf-8").replace("Ryzen", "Ryzén")
    raw = {"utf16": text.encode("utf-16"), "latin1": text.encode("latin-1", "replace"),
           "binary": bytes(range(256)) * 64}[kind]
    path.write_bytes(raw)
    for cmd in (["catalog", "validate"], ["catalog", "list"], ["recommend", "--budget", "7000"],
                ["check", "gpu-nvidia-rtx5090-fe"]):
        assert_one_line_error(run(*cmd, "--catalog", catalog_copy), "cpu.csv")


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "folder"])
def test_devices_and_folders_as_input_files(tmp_path, special):
    target = str(tmp_path) if special == "folder" else special
    assert_one_line_error(run("share", "export", "--build", target))
    assert_one_line_error(run("share", "import", target)) if special != "/dev/null" else None
    assert_one_line_error(run("costs", "--runs", "8", "--hours", "7", "--build", target))


def test_device_as_catalog_file(catalog_copy):
    (catalog_copy / "cpu.csv").unlink()
    (catalog_copy / "cpu.csv").symlink_to("/dev/zero")
    assert_one_line_error(run("catalog", "validate", "--catalog", catalog_copy), "cpu.csv")


def test_json_nested_100000_deep(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert_one_line_error(run("share", "export", "--build", deep), "nested")
    assert_one_line_error(run("costs", "--runs", "8", "--hours", "7", "--build", deep), "nested")
    assert_one_line_error(run("sweep", "--runs", "8", "--hours", "7", "--build", deep), "nested")


HOSTILE_FIELDS = [
    ("price.amount", "1e30"), ("price.amount", "-5"), ("price.amount", "NaN"), ("total", "abc"),
    ("retailer", 5), ("url", 5), ("price_source", ["x"]), ("name", {"a": 1}), ("price_observed_on", 7),
    ("condition", ["used"]), ("quantity", "2"), ("id", ["x"]), ("price.currency", "XXX"),
]


@pytest.mark.parametrize("field, value", HOSTILE_FIELDS)
@pytest.mark.parametrize("fmt", ["md", "csv", "json", "link"])
def test_hostile_build_file_exports(tmp_path, field, value, fmt):
    plan_path = _write_export(tmp_path) if not (tmp_path / "plan.json").exists() else tmp_path / "plan.json"
    data = json.loads(plan_path.read_text(encoding="utf-8"))
    part = data["plans"][0]["parts"][0]
    if field == "total":
        data["plans"][0]["total"] = value
    elif field.startswith("price."):
        part["price"][field.split(".")[1]] = value
    else:
        part[field] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    r = run("share", "export", "--build", bad, "--format", fmt)
    assert r.code in (0, 2), r.text
    assert "Traceback" not in r.text
    if field in ("price.amount", "retailer", "url", "price_source", "name", "price_observed_on", "condition",
                 "quantity", "id", "price.currency") :
        assert_one_line_error(r)


# ---------------------------------------------------------------- catalogs and money


@pytest.mark.parametrize("file, column, value, needle", [
    ("gpu.csv", "length_mm", "inf", "length_mm"),
    ("gpu.csv", "length_mm", "nan", "length_mm"),
    ("gpu.csv", "length_mm", "-300", "length_mm"),
    ("psu.csv", "wattage_w", "1e30", "wattage_w"),
    ("psu.csv", "wattage_w", "9" * 40, "wattage_w"),
    ("offers/gpu.csv", "currency", "XXX", "currency"),
    ("offers/gpu.csv", "currency", "", "currency"),
    ("offers/gpu.csv", "currency", "usd", "currency"),
    ("offers/gpu.csv", "observed_on", "9999-12-31", "future"),
    ("offers/gpu.csv", "price", "1e30", "price"),
    ("offers/gpu.csv", "price", "Infinity", "price"),
])
def test_catalog_rows_that_cannot_be_true(catalog_copy, file, column, value, needle):
    set_cell(catalog_copy / file, column, value)
    for cmd in (["catalog", "validate"], ["recommend", "--budget", "7000"]):
        assert_one_line_error(run(*cmd, "--catalog", catalog_copy), needle)


def test_catalog_validate_exits_2_on_invariant_problems(catalog_copy):
    offers = catalog_copy / "offers" / "case.csv"
    lines = offers.read_text(encoding="utf-8").splitlines(keepends=True)
    offers.write_text(lines[0], encoding="utf-8")  # every case loses its price: an invariant, not a row error
    r = run("catalog", "validate", "--catalog", catalog_copy)
    assert r.code == 2, r.text
    assert "no offer" in r.text and "Traceback" not in r.text


def test_check_converts_offers_before_adding(catalog_copy):
    """An offer of 150000 JPY is not 150000 EUR: check and recommend agree on the converted total."""
    gpu_id = set_cell(catalog_copy / "offers" / "gpu.csv", "currency", "JPY")
    set_cell(catalog_copy / "offers" / "gpu.csv", "price", "150000")
    r = run("check", gpu_id, "--catalog", catalog_copy, "--json")
    assert r.code == 0, r.text
    report = json.loads(r.out)
    total = report["total"]
    amount = float(total["amount"] if isinstance(total, dict) else str(total).split()[-1].replace(" ", ""))
    from planner.fx import load_rates

    rates = load_rates()
    assert amount != 150000.0
    assert amount == pytest.approx(150000 / float(rates.rates["JPY"]), rel=0.01)


# ---------------------------------------------------------------- the boundary: bad input 2, bug 1


def test_an_internal_error_is_exit_1_with_one_line_and_a_traceback_with_debug(monkeypatch):
    import planner.cli.check as check_cli

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug [/] here")

    monkeypatch.setattr(check_cli, "check", broken)
    r = run("check", "gpu-nvidia-rtx5090-fe")
    assert r.code == 1 and "Traceback" not in r.text
    lines = [ln for ln in r.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "internal error" in lines[0] and "ZeroDivisionError" in lines[0]
    assert "a bug [/] here" in lines[0] and "--debug" in lines[0]
    with pytest.raises(ZeroDivisionError):  # --debug (anywhere on the line) lets the traceback through
        run("check", "gpu-nvidia-rtx5090-fe", "--debug")


def test_usage_errors_are_one_line_exit_2():
    for args in (["recommend", "--bogus"], ["check"], ["recommend", "--runs", "abc", "--budget", "7000"]):
        assert_one_line_error(run(*args), "--help")


@pytest.mark.parametrize("args", [["prices", "history", "[/]"], ["prices", "confirm", "99999999999999999999999"]])
def test_price_commands_get_the_same_boundary(args):
    """The price path validates its own input; markup and huge integers are caught before it."""
    assert_one_line_error(run(*args))
