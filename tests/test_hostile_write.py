"""A file the planner cannot write (or read) is one line naming that file, the operation and the option: exit 2.

Read-only directories are real (chmod 0o555) when the tests run as a user; root ignores chmod, so those cases skip
as root and a path under a regular file (which fails for root too) covers the same command.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pytest
import typer

from hostile_cli import assert_one_line_error, run

KINDS = ["read-only", "under-a-file"]


def _writable(d: Path) -> bool:
    """Whether a file can be made in `d` despite its mode (root, or a process allowed to override permissions)."""
    try:
        (d / ".probe").touch()
    except PermissionError:
        return False
    (d / ".probe").unlink()
    return True


@pytest.fixture
def blocked(request, tmp_path: Path):
    """A directory nothing can be written into, of the kind the test is parametrized with."""
    kind = request.param
    if kind == "read-only":
        if os.name != "posix":
            pytest.skip("POSIX permissions")
        d = tmp_path / "read-only"
        d.mkdir()
        d.chmod(0o555)
        if _writable(d):
            d.chmod(0o755)
            pytest.skip("chmod does not stop root (the under-a-file case covers this command)")
        yield d
        d.chmod(0o755)
    else:
        blocker = tmp_path / "a-file"
        blocker.write_text("mine", encoding="utf-8")
        yield blocker / "dir"
        assert blocker.read_text(encoding="utf-8") == "mine"  # the file in the way is left alone


@pytest.fixture(scope="module")
def plan_file(tmp_path_factory) -> Path:
    r = run("recommend", "--budget", "3000", "--json")
    assert r.code == 0, r.text
    p = tmp_path_factory.mktemp("plan") / "plan.json"
    p.write_text(r.out, encoding="utf-8")
    return p


def error_line(r) -> str:
    """The one error line (a note such as 'no public address' may precede it on stderr)."""
    assert r.code == 2, (r.code, r.text[-2000:])
    assert "Traceback" not in r.text and "internal error" not in r.text, r.text[-2000:]
    errors = [ln for ln in r.err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, r.err
    return errors[0]


# ---------------------------------------------------------------- writes


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_share_export_output_that_cannot_be_written(plan_file, blocked):
    line = error_line(run("share", "export", plan_file, "-o", blocked / "build.md"))
    assert "cannot write the export" in line and str(blocked / "build.md") in line and "--output" in line
    assert "cannot read" not in line


def test_share_export_output_in_a_missing_directory(plan_file, tmp_path):
    target = tmp_path / "no-such-dir" / "build.md"
    line = error_line(run("share", "export", plan_file, "-o", target))
    assert "cannot write the export" in line and str(target) in line and "No such file" in line
    assert not (tmp_path / "no-such-dir").exists()  # an export never creates folders the user did not make


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_catalog_generate_out_that_cannot_be_written(blocked):
    """Was an internal error (NotADirectoryError under a file) or 'cannot read' (a read-only folder)."""
    out = blocked / "cat"
    line = error_line(run("catalog", "generate", "--parts", "20", "--out", out))
    assert "cannot write the synthetic catalog" in line and str(out) in line and "--out" in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_catalog_import_out_that_cannot_be_written(blocked, tmp_path):
    from test_import_pcpp import write_dataset

    src = write_dataset(tmp_path / "src")
    line = error_line(run("catalog", "import-pcpp", src, "--out", blocked / "cat"))
    assert "cannot write the catalog" in line and str(blocked / "cat") in line and "--out" in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_profile_set_with_a_planner_home_that_cannot_be_written(blocked, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(blocked))
    line = error_line(run("profile", "set", "--runs", "4"))
    assert "cannot write the workload profile" in line and str(blocked) in line and "PLANNER_HOME" in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_prices_add_to_a_database_that_cannot_be_created(blocked):
    """Was 'is not a usable price database ([Errno 17] File exists ...)': the folder is the problem, not the file."""
    db = blocked / "prices.sqlite"
    line = error_line(run("prices", "add", "gpu-nvidia-rtx3090-fe", "700", "--db", db))
    assert "cannot create the price database" in line and str(db) in line and "--db" in line
    assert "not a usable" not in line


def test_prices_add_to_a_file_that_is_no_database_still_says_so(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(bytes(range(256)) * 8)
    line = error_line(run("prices", "add", "gpu-nvidia-rtx3090-fe", "700", "--db", junk))
    assert "not a usable price database" in line and str(junk) in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_http_cache_in_a_folder_that_cannot_be_written(blocked):
    """`prices refresh` with an unwritable PLANNER_HOME was an internal error (NotADirectoryError) before any fetch."""
    from planner.errors import InputError
    from planner.prices.http_cache import HttpCache

    with pytest.raises(InputError, match="cannot write the HTTP cache") as err:
        HttpCache(blocked / "cache" / "http-cache.sqlite")
    assert "PLANNER_HOME" in str(err.value) and "\n" not in str(err.value)


def test_a_file_in_the_way_is_named_not_file_exists(tmp_path, monkeypatch):
    """mkdir under a file said 'File exists' (EEXIST) for the HTTP cache: now the file in the way is named."""
    from planner.errors import InputError
    from planner.prices.http_cache import HttpCache

    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError) as err:
        HttpCache(tmp_path / "a-file" / "http-cache.sqlite")
    assert f"{tmp_path / 'a-file'} is a file, not a folder" in str(err.value) and "File exists" not in str(err.value)


# ---------------------------------------------------------------- empty paths


@pytest.mark.parametrize("args, option", [
    (["catalog", "generate", "--parts", "20", "--out", ""], "--out"),
    (["catalog", "generate", "--parts", "20", "--out="], "--out"),
    (["check", "gpu-nvidia-rtx5090-fe", "--catalog", ""], "--catalog"),
    (["catalog", "list", "--catalog", ""], "--catalog"),
    (["sweep", "--runs", "8", "--hours", "7", "--build", ""], "--build"),
    (["profile", "set", "--run-vram-log", ""], "--run-vram-log"),
])
def test_an_empty_path_is_refused_not_taken_as_the_current_directory(args, option, tmp_path, monkeypatch):
    """'' reached the command as Path('.'): `catalog generate --out ""` wrote a catalog into the current folder."""
    monkeypatch.chdir(tmp_path)
    r = run(*args)
    assert_one_line_error(r, option, "empty")
    assert list(tmp_path.iterdir()) == []


def test_share_export_to_an_empty_output(plan_file, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = error_line(run("share", "export", plan_file, "-o", ""))
    assert "--output is empty" in line
    assert list(tmp_path.iterdir()) == []


def test_the_current_directory_typed_as_a_dot_still_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = run("catalog", "generate", "--parts", "20", "--out", ".")
    assert r.code == 0, r.text
    assert (tmp_path / "gpu.csv").is_file()


# ---------------------------------------------------------------- reads the commands did not foresee


@pytest.mark.parametrize("option", ["--kernel-log", "--smi-log"])
def test_doctor_watch_side_log_under_a_file(tmp_path, option):
    """Was an internal error (NotADirectoryError): now 'cannot read', naming the file and the option."""
    metrics = tmp_path / "metrics.csv"
    metrics.write_text("step,loss\n1,2.5\n2,2.4\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    bad = tmp_path / "a-file" / "kern.log"
    line = error_line(run("doctor", "watch", metrics, "--once", option, bad))
    assert f"cannot read {bad}" in line and option in line


def test_prices_extract_page_under_a_file(tmp_path):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    bad = tmp_path / "a-file" / "page.html"
    line = error_line(run("prices", "extract", bad))
    assert f"cannot read {bad}" in line and "SOURCE" in line


def _command(
    src: Path = typer.Argument(..., help="in"),
    out: Optional[Path] = typer.Option(None, "--out", help="out"),
    log: Optional[str] = typer.Option(None, "--log", help="a log"),
) -> None:
    """A command shaped like the planner's: one input, one output, one log given as text."""


@pytest.mark.parametrize("errno_name", ["EACCES", "ENOENT", "ENOTDIR", "EROFS"])
def test_the_operation_comes_from_the_option_that_named_the_file(tmp_path, errno_name):
    import errno

    from planner.cli.argcheck import os_error_message

    code = getattr(errno, errno_name)
    kwargs = {"src": tmp_path / "in.csv", "out": tmp_path / "cat", "log": str(tmp_path / "run.log")}
    on = lambda p: OSError(code, os.strerror(code), str(p))  # noqa: E731
    wrote = os_error_message(_command, kwargs, on(tmp_path / "cat" / "offers" / "gpu.csv"))
    assert wrote.startswith(f"cannot write {tmp_path / 'cat' / 'offers' / 'gpu.csv'}: {os.strerror(code)}")
    assert "--out" in wrote
    read = os_error_message(_command, kwargs, on(tmp_path / "in.csv"))
    assert read.startswith("cannot read") and "SRC" in read
    log = os_error_message(_command, kwargs, on(tmp_path / "run.log"))
    assert log.startswith("cannot read") and "--log" in log
    other = os_error_message(_command, kwargs, on(tmp_path / "elsewhere"))  # no option named it: no guess
    assert other.startswith(f"cannot open {tmp_path / 'elsewhere'}")


def test_a_relative_path_matches_the_option_that_named_it(tmp_path, monkeypatch):
    from planner.cli.argcheck import os_error_message

    monkeypatch.chdir(tmp_path)
    msg = os_error_message(_command, {"src": Path("in.csv"), "out": Path("cat"), "log": None},
                           PermissionError(13, "Permission denied", str(tmp_path / "cat" / "x.csv")))
    assert msg.startswith("cannot write") and "--out" in msg


def test_share_import_keep_prices_with_a_planner_home_that_cannot_be_written(tmp_path, monkeypatch):
    """A real posted list (tests/data/real/lists) with prices: each was refused with the same database error, one line
    per price, under a verdict saying 'pass --keep-prices' although it was passed."""
    blocker = tmp_path / "a-file"
    blocker.write_text("mine", encoding="utf-8")
    monkeypatch.setenv("PLANNER_HOME", str(blocker / "home"))
    listing = Path(__file__).parent / "data" / "real" / "lists" / "friend_rtx5090_fr.md"
    r = run("share", "import", listing, "--keep-prices")
    assert r.code == 0, r.text
    flat = " ".join(r.out.split())
    assert "pass --keep-prices" not in flat and "kept none of the list's prices" in flat
    assert flat.count("cannot create the price database") == 1 and "not kept (" in flat


def test_a_missing_directory_is_made_where_the_command_owns_it(tmp_path, monkeypatch):
    """--out, --db and PLANNER_HOME name places the planner keeps: a missing folder is created (unlike share export
    -o, a file the user names, whose missing folder is an error above)."""
    from test_import_pcpp import write_dataset

    missing = tmp_path / "not" / "yet"
    assert run("catalog", "generate", "--parts", "20", "--out", missing / "syn").code == 0
    assert (missing / "syn" / "gpu.csv").is_file()
    assert run("catalog", "import-pcpp", write_dataset(tmp_path / "src"), "--out", missing / "imp").code == 0
    assert (missing / "imp" / "import-report.json").is_file()
    assert run("prices", "add", "gpu-nvidia-rtx3090-fe", "700", "--db", missing / "db" / "p.sqlite").code == 0
    monkeypatch.setenv("PLANNER_HOME", str(missing / "home"))
    assert run("profile", "set", "--runs", "4").code == 0
    assert (missing / "home" / "profile.json").is_file()


def test_doctor_watch_state_under_a_file(tmp_path):
    """Said '... Not a directory; a symbolic link is refused); delete it': there is nothing to delete."""
    metrics = tmp_path / "metrics.csv"
    metrics.write_text("step,loss\n1,2.5\n2,2.4\n", encoding="utf-8")
    (tmp_path / "a-file").write_text("mine", encoding="utf-8")
    line = error_line(run("doctor", "watch", metrics, "--once", "--state", tmp_path / "a-file" / "state.json"))
    assert "a file stands in its path" in line and "--state" in line and "delete it" not in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_doctor_watch_state_that_cannot_be_written(blocked, tmp_path):
    metrics = tmp_path / "metrics.csv"
    metrics.write_text("step,loss\n1,2.5\n2,2.4\n", encoding="utf-8")
    line = error_line(run("doctor", "watch", metrics, "--once", "--state", blocked / "state.json"))
    assert str(blocked / "state.json") in line and "--state" in line


@pytest.mark.parametrize("blocked", KINDS, indirect=True)
def test_calibrate_with_a_planner_home_that_cannot_be_written(blocked, monkeypatch):
    """A real nanoGPT log (tests/data/real/training, issue 110): the measurement is read, then its store cannot be
    written; the line names the store and PLANNER_HOME."""
    monkeypatch.setenv("PLANNER_HOME", str(blocked))
    log = Path(__file__).parent / "data" / "real" / "training" / "nanogpt_issue110_8xA100.log"
    line = error_line(run("calibrate", log, "--gpu", "A100 40GB"))
    assert "cannot write the calibration store" in line and str(blocked) in line and "PLANNER_HOME" in line
