"""Hostile arguments found by walking every command (issue: errors, item 2): each is one line naming the option as
the user typed it, exit 2, never an internal error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hostile_cli import assert_one_line_error, run


# ---------------------------------------------------------------- a model field said as the option that sets it


@pytest.mark.parametrize("args, said, not_said", [
    (["check", "gpu-nvidia-rtx5090-fe", "--gpus", "0"], "--gpus:", "gpu count"),
    (["recommend", "3000", "--deadline-hours", "0"], "--deadline-hours:", "0.016666"),
    (["recommend", "3000", "--cooler", "water"], "--cooler:", "cooler type"),
    (["recommend", "3000", "--min-vram", "-1"], "--min-vram:", "min vram gb"),
    (["recommend", "3000", "--hours", "0"], "--hours:", "baseline hours"),
    (["check", "gpu-nvidia-rtx5090-fe", "--power-limit", "2"], "--power-limit:", "power fraction"),
    (["profile", "set", "--seq", "0"], "--seq:", "seq len"),
    (["profile", "set", "--hours", "-1"], "--hours:", "hours per run"),
])
def test_a_bad_value_names_the_option_typed(args, said, not_said, tmp_path, monkeypatch):
    """Was 'gpu count: Input should be ...' for --gpus and '... >= 0.016666666666666666' for a one-minute bound."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    r = run(*args)
    assert_one_line_error(r, said)
    assert not_said not in r.err


def test_the_field_name_stays_for_a_front_end_without_options():
    """The web UI shows the model's own words: only the CLI rewrites the field into its option."""
    from planner.errors import InputError
    from planner.request import Request

    with pytest.raises(InputError) as err:
        Request.parse(budget="3000", gpu_count=0)
    assert str(err.value).startswith("gpu count:") and err.value.field == "gpu_count"


# ---------------------------------------------------------------- bytes that are not UTF-8


@pytest.mark.parametrize("args, option", [
    (["prices", "add", "gpu-nvidia-rtx3090-fe", "700", "--shop", "\udcff\udcfe"], "--shop"),
    (["prices", "forget", "gpu-nvidia-rtx3090-fe", "--shop", "\udcff"], "--shop"),
    (["check", "gpu-nvidia-rtx5090-fe", "--workload", "\udcffx"], "--workload"),
    (["recommend", "3000", "--exclude-brand", "caf\udce9"], "--exclude-brand"),
    (["doctor", "events", "/nonexistent/\udcff.log"], "FILE"),
])
def test_argument_bytes_that_are_not_utf8(args, option, tmp_path, monkeypatch):
    """A Latin-1 terminal passes 'café' as b'caf\\xe9': Python keeps the byte as a lone surrogate, which sqlite could
    not store (prices add --shop was an internal error, UnicodeEncodeError)."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    if args[0] == "prices":
        args = [*args, "--db", str(tmp_path / "p.sqlite")]
    r = run(*args)
    assert_one_line_error(r, option, "not UTF-8", "LANG=C.UTF-8")


@pytest.mark.skipif(os.name != "posix", reason="POSIX file names are bytes")
def test_a_file_whose_name_is_not_utf8_is_still_read(tmp_path):
    name = tmp_path / "metrics-\udcff.csv"  # the file name b'metrics-\xff.csv'
    with open(os.fsencode(name), "w", encoding="utf-8") as fh:
        fh.write("step,loss\n1,2.5\n2,2.4\n3,2.3\n")
    r = run("doctor", "metrics", name)
    assert r.code == 0, r.text


# ---------------------------------------------------------------- values one command refused and another took


REAL = Path(__file__).parent / "data" / "real"


@pytest.fixture
def metrics_csv(tmp_path) -> Path:
    p = tmp_path / "metrics.csv"
    p.write_text("step,loss,tokens_per_s\n1,2.5,1000\n2,2.4,1001\n3,2.3,999\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("args, needle", [
    (["sweep", "RTX 4090", "--run-vram-gb", "-1"], "--run-vram-gb"),  # recommend refused it, sweep planned with it
    (["sweep", "RTX 4090", "--run-vram-gb", "0"], "--run-vram-gb"),
    (["sweep", "RTX 4090", "--run-vram-gb", "2000"], "--run-vram-gb"),
    (["sweep", "RTX 4090", "--wall-power", "1e15"], "100000"),  # a petawatt PC
    (["memfit", "--params", "1e15"], "1e+13"),  # speedup, sweep and recommend stop at 1e13 parameters
    (["doctor", "smi", str(REAL / "smi" / "cbio-39-table-3-of-4.txt"), "--temp-limit", "-1"], "--temp-limit"),
    (["doctor", "smi", str(REAL / "smi" / "cbio-39-table-3-of-4.txt"), "--temp-limit", "1e15"], "20-130"),
])
def test_values_every_command_now_refuses_alike(args, needle):
    assert_one_line_error(run(*args), needle)


@pytest.mark.parametrize("extra, needle", [
    (["--temp-limit", "0"], "--temp-limit"),  # doctor watch refused it, doctor metrics read every GPU as hot
    (["--temp-limit", "1e15"], "--temp-limit"),
    (["--expected-steps", "0"], "--expected-steps"),  # doctor metrics refused it, the watch took it
    (["--expected-steps", "-1"], "--expected-steps"),
])
@pytest.mark.parametrize("command", [["doctor", "metrics"], ["doctor", "watch"]])
def test_doctor_metrics_and_watch_share_their_bounds(command, extra, needle, metrics_csv):
    args = [*command, metrics_csv, *extra, *(["--once"] if command[1] == "watch" else [])]
    assert_one_line_error(run(*args), needle)


def test_costs_draw_w_of_a_petawatt(tmp_path):
    r = run("recommend", "--budget", "3000", "--json")
    assert r.code == 0, r.text
    plan = tmp_path / "plan.json"
    plan.write_text(r.out, encoding="utf-8")
    assert_one_line_error(run("costs", "--build", plan, "--draw-w", "1e15"), "--draw-w", "100000")
    assert run("costs", "--build", plan, "--draw-w", "450").code == 0


# ---------------------------------------------------------------- an empty argument


@pytest.mark.parametrize("args, name", [
    (["share", "import", ""], "SOURCE"),  # was "error: : no such file, and not a build link or token"
    (["prices", "extract", "  "], "SOURCE"),  # was "error:    is a directory; give a saved page file"
    (["doctor", "watch", "", "--once"], "METRICS_FILE"),  # was "error:  is not a regular file"
    (["doctor", "events", ""], "FILE"),
    (["check", "gpu-nvidia-rtx5090-fe", ""], "PARTS"),  # was "no part matches ''"
    (["prices", "history", ""], "PART"),
    (["recommend", ""], "BUDGET"),  # named as --help shows it (its metavar), not by the Python parameter
    (["speedup", ""], "GPU"),
    (["calibrate", "", "--gpu", "RTX 4090"], "LOG"),
])
def test_an_empty_argument_is_named(args, name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # '' must not become the current folder
    r = run(*args)
    assert_one_line_error(r, f"{name} is empty")
    assert list(tmp_path.iterdir()) == []


def test_costs_owned_part_that_is_not_in_the_plan(tmp_path):
    """Was silently ignored: the build was costed as if nothing were owned."""
    r = run("recommend", "--budget", "3000", "--json")
    assert r.code == 0, r.text
    plan = tmp_path / "plan.json"
    plan.write_text(r.out, encoding="utf-8")
    import json

    cpu = next(p["id"] for p in json.loads(r.out)["plans"][0]["parts"] if p["category"] == "cpu")
    assert_one_line_error(run("costs", "--build", plan, "--owned", "gpu-nvidia-rtx3090-fe"), "--owned",
                          "gpu-nvidia-rtx3090-fe", cpu)
    assert run("costs", "--build", plan, "--owned", cpu).code == 0


@pytest.mark.parametrize("typed, needle", [("nan", "no part matches"), ("", "--owned is empty"),
                                           ("RTX 3090 Founders", "ambiguous")])
def test_profile_owned_parts_are_catalog_parts(typed, needle, tmp_path, monkeypatch):
    """Was stored as typed ('owns nan') and taken as a part by every later answer."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    assert_one_line_error(run("profile", "set", "--owned", typed), "--owned", needle)
    assert not (tmp_path / "profile.json").exists()


def test_profile_owned_name_is_stored_as_its_id(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    r = run("profile", "set", "--owned", "NVIDIA GeForce RTX 3090 Founders Edition", "--owned",
            "gpu-nvidia-rtx3090-fe", "--json")
    assert r.code == 0, r.text
    assert json.loads(r.out)["profile"]["owned"] == ["gpu-nvidia-rtx3090-fe"]


@pytest.mark.parametrize("args, needles", [
    (["burnin", "--gpu", "RTX 4090", "--currency", "nan"], ["--currency", "--budget"]),  # was ignored silently
    (["burnin", "--gpu", "RTX 4090", "--budget", "3000"], ["only one", "--budget and --gpu"]),
])
def test_burnin_says_which_options_clash(args, needles):
    assert_one_line_error(run(*args), *needles)


# ---------------------------------------------------------------- a file of the wrong kind


@pytest.mark.parametrize("kind", ["binary", "utf16"])
def test_doctor_watch_of_a_binary_or_utf16_file(kind, tmp_path):
    """Was 'no metric columns recognised (got ��s t e p , l o s s )'."""
    p = tmp_path / "metrics.csv"
    p.write_bytes(bytes(range(256)) * 8 if kind == "binary" else "step,loss\n1,2.5\n".encode("utf-16"))
    r = run("doctor", "watch", p, "--once")
    assert_one_line_error(r, "metrics.csv", "NUL bytes", "UTF-8")


@pytest.mark.parametrize("special", ["folder", "/dev/zero"])
def test_share_import_of_a_folder_or_device(special, tmp_path):
    """Was 'no such file, and not a build link or token' for a folder that exists."""
    target = tmp_path if special == "folder" else special
    assert_one_line_error(run("share", "import", target), "not a regular file")


def test_a_negative_number_read_as_an_option_says_how_to_give_it(tmp_path, monkeypatch):
    """Was only 'No such option: -5'; with `--` the value reaches the command, which says what is wrong with it."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    assert_one_line_error(run("prices", "add", "gpu-nvidia-rtx3090-fe", "-5"), "no such option: -5", "put -- before")
    assert_one_line_error(run("prices", "add", "--", "gpu-nvidia-rtx3090-fe", "-5"), "price '-5'")
    r = run("recommend", "3000", "--bogus")  # a misspelt option keeps click's own message, without the hint
    assert_one_line_error(r, "--bogus")
    assert "negative number" not in r.err


@pytest.mark.parametrize("args", [["speedup", "a" * 10000], ["check", "a" * 10000], ["costs", "--budget", "9x" * 5000],
                                  ["burnin", "--gpu", "a" * 10000]])
def test_a_pasted_10000_character_argument_is_not_echoed_whole(args):
    """'unknown GPU ...' and 'no part matches ...' echoed all 10 000 characters: the one line filled the terminal."""
    r = run(*args)
    assert_one_line_error(r, "characters)")
    assert len(r.err) < 400


def test_a_part_pinned_and_excluded_is_bad_input_not_nothing_fits():
    """Was exit 1 with 'drop the requirement use ... (pinned)': the request contradicts itself."""
    r = run("recommend", "3000", "--pin", "gpu-nvidia-rtx5090-fe", "--exclude", "NVIDIA GeForce RTX 5090 Founders Edition")
    assert_one_line_error(r, "gpu-nvidia-rtx5090-fe", "both pinned and excluded")


@pytest.mark.parametrize("content, needle", [(bytes(range(256)) * 8, "looks binary"), (b"", "is empty"),
                                             (b"  \n", "is empty")])
def test_prices_extract_of_a_file_that_is_no_page(content, needle, tmp_path):
    """Was exit 0 'no price on this page' for a binary file, /dev/zero or an empty file."""
    p = tmp_path / "page.html"
    p.write_bytes(content)
    assert_one_line_error(run("prices", "extract", p), "page.html", needle)


def test_prices_extract_of_dev_zero():
    assert_one_line_error(run("prices", "extract", "/dev/zero"), "looks binary")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
@pytest.mark.parametrize("args", [["fx", "show"], ["catalog", "list", "--json"]])
def test_output_to_a_full_device_is_one_line_not_a_bug(args, tmp_path):
    """`planner catalog list > /dev/full` said 'internal error (a bug in planner): OSError: [Errno 28]'."""
    import subprocess
    import sys

    env = {**os.environ, "PLANNER_HOME": str(tmp_path)}
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "planner", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, env=env, timeout=120)
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot write (No space left on device)") and "bug" not in lines[0]


@pytest.mark.parametrize("option", ["--kernel-log", "--smi-log", "--state"])
def test_doctor_watch_empty_side_option(option, metrics_csv):
    """'' was dropped silently: the file the user meant was never watched."""
    assert_one_line_error(run("doctor", "watch", metrics_csv, "--once", option, ""), f"{option} is empty")


def test_doctor_watch_side_log_that_does_not_exist_yet_is_said(metrics_csv, tmp_path):
    """A typo in --kernel-log passed unseen (exit 0, no word); a log a logger creates later is still allowed."""
    r = run("doctor", "watch", metrics_csv, "--once", "--kernel-log", tmp_path / "kern-typo.log")
    assert r.code == 0, r.text
    assert "--kernel-log" in r.err and "does not exist yet" in " ".join(r.err.split())


def test_an_exclude_brand_no_part_carries_is_said():
    """'--exclude-brand Zotak' left nothing out and said nothing: the user thought ZOTAC cards were excluded."""
    r = run("recommend", "3000", "--exclude-brand", "Zotak")
    assert r.code == 0, r.text
    flat = " ".join(r.out.split())
    assert "brand 'Zotak' left out nothing" in flat and "Zotac" in flat


def test_exclude_brand_is_read_in_any_case_by_the_capacity_notes_too():
    """The solver compared brands lower-cased, the catalog-gap check exactly: both now agree."""
    from planner.catalog.load import load_catalog
    from planner.request import Request
    from planner.service.capacity import _priced

    cat = load_catalog()
    zotac = [p.id for p in cat.by_category("gpu") if p.brand.lower() == "zotac"]
    assert zotac
    left = {p.id for p in _priced(cat, "gpu", Request.parse(budget="3000", excluded_brands=("zotac",)))}
    assert not left & set(zotac)


@pytest.mark.parametrize("args, option", [
    (["recommend", "3000", "--currency", ""], "--currency"),  # was taken as not given: EUR, unseen
    (["costs", "--budget", "3000", "--provider", ""], "--provider"),  # an empty filter matched every provider
    (["prices", "add", "gpu-nvidia-rtx3090-fe", "700", "--shop", "  "], "--shop"),  # stored as 'you'
    (["check", "gpu-nvidia-rtx5090-fe", "--owned", ""], "--owned"),
    (["recommend", "3000", "--exclude-brand", ""], "--exclude-brand"),
])
def test_an_empty_option_is_named_not_dropped(args, option, tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    if args[0] == "prices":
        args = [*args, "--db", str(tmp_path / "p.sqlite")]
    assert_one_line_error(run(*args), f"{option} is empty")


def test_a_closed_standard_output_is_one_line_and_exit_2_not_an_internal_error() -> None:
    """`planner catalog list >&-`: Python starts with no stdout at all; that was 'internal error (a bug in planner):
    AttributeError'. It is the caller's redirection, said in one line."""
    import subprocess
    import sys

    run = subprocess.run(f"'{sys.executable}' -m planner catalog list >&-", shell=True, capture_output=False,
                         stderr=subprocess.PIPE, text=True, timeout=120)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "standard output is closed" in lines[0] and "internal error" not in run.stderr
