"""Issue 37 items 4-7: an absurd calibration never breaks the planner, parallel calibrations lose nothing, every bad
log or file-system error is one line and exit 2, and the log is streamed."""

from __future__ import annotations

import errno
import json
import multiprocessing
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.cli.common import emit_json
from planner import atomicfile
from planner.errors import PlannerError
from planner.perf import calibration as cal

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def rate_log(path: Path, rate: float, n: int = 20) -> Path:
    path.write_text("step,tokens_per_sec\n" + "".join(f"{i},{rate * (1 + (i % 3) / 100):.6g}\n" for i in range(n)))
    return path


def one_line_error(r) -> str:  # type: ignore[no-untyped-def]
    assert r.exit_code == 2, r.output
    out = r.output.strip()
    assert "\n" not in out and "Traceback" not in out and "internal error" not in out.lower(), out
    return out


@pytest.mark.parametrize("rate", ["1e30", "1.7e308", "1e-300"])
def test_rates_outside_a_physical_band_are_refused(tmp_path, rate: str) -> None:
    r = run("calibrate", str(rate_log(tmp_path / "x.csv", float(rate))), "--gpu", "RTX 4090")
    assert "outside what one GPU can do" in one_line_error(r)
    assert not cal.store_path().exists()


def test_steps_per_run_out_of_range(tmp_path) -> None:
    log = tmp_path / "s.csv"
    log.write_text("step,step_time\n" + "".join(f"{i},0.25\n" for i in range(20)))
    for steps in ("1e15", "1e-9"):
        r = run("calibrate", str(log), "--gpu", "GTX 1080 Ti", "--steps-per-run", steps)
        assert "--steps-per-run" in one_line_error(r)


def _plant(store: cal.Store) -> None:
    path = cal.store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(store.model_dump(mode="json")))


def _m(gpu_id: str, name: str, median: float) -> cal.Measurement:
    return cal.Measurement(gpu_id=gpu_id, gpu_name=name, precision="fp32" if "1080" in name else "amp",
                           unit="tokens/s", median=median, q25=median, q75=median, points=10, warmup_dropped=1,
                           column="tokens_per_sec", how="column", log_file="x.csv", recorded_on="2026-01-01")


def test_absurd_stored_measurements_are_ignored_with_a_warning_and_answers_stay_finite() -> None:
    """A store written before the bounds (1e30 tokens/s) or by hand: speedup, sweep and recommend still answer."""
    from planner.perf.model import load_perf_model

    ids = {n: load_perf_model().resolve(n).id for n in ("GTX 1080 Ti", "RTX 4090", "RTX 3090")}
    _plant(cal.Store(measurements=[_m(ids["GTX 1080 Ti"], "GTX 1080 Ti", 20000.0),
                                   _m(ids["RTX 4090"], "RTX 4090", 1e30),  # out of band
                                   _m(ids["RTX 3090"], "RTX 3090", 20000.0 * 3000)]))  # in band, 3000x the 1080 Ti
    r = run("speedup", "RTX 4090", "RTX 3090", "--json")
    assert r.exit_code == 0, r.output
    assert "NaN" not in r.stdout and "Infinity" not in r.stdout
    rows = json.loads(r.stdout)["results"]
    by = {row["id"]: row for row in rows}
    assert by[ids["RTX 4090"]]["basis"] == "model" and any("outside" in w for w in by[ids["RTX 4090"]]["warnings"])
    assert by[ids["RTX 3090"]]["basis"] == "model" and any("ignored" in w for w in by[ids["RTX 3090"]]["warnings"])
    assert all(0 < row["speedup"] < 100 for row in rows)
    text = run("speedup", "RTX 3090")
    assert text.exit_code == 0 and "Warning: ignored your measurement of RTX 3090" in " ".join(text.output.split())
    s = run("sweep", "RTX 4090", "--runs", "8", "--json")
    assert s.exit_code == 0 and "Infinity" not in s.stdout and "NaN" not in s.stdout
    wall = json.loads(s.stdout)["results"][0]["wall_hours"]["value"]
    assert wall > 0.1


def test_the_json_emitter_refuses_nan_and_infinity(capsys) -> None:
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(PlannerError, match=r"\$\.rows\[1\]\.v is not a finite number"):
            emit_json({"rows": [{"v": 1.0}, {"v": bad}]})
    assert capsys.readouterr().out == ""


def _calibrate_one(args: tuple[str, str, str]) -> tuple[int, str]:
    home, log, gpu = args
    os.environ["PLANNER_HOME"] = home
    r = CliRunner().invoke(app, ["calibrate", log, "--gpu", gpu])
    return r.exit_code, r.output


def test_ten_parallel_calibrations_lose_nothing(tmp_path, home) -> None:
    gpus = ["GTX 1080 Ti", "RTX 2080 Ti", "RTX 3060", "RTX 3070", "RTX 3080", "RTX 3090", "RTX 4070", "RTX 4080",
            "RTX 4090", "RTX 5090"]
    logs = [str(rate_log(tmp_path / f"{i}.csv", 20000 + 1000 * i)) for i in range(len(gpus))]
    with multiprocessing.get_context("fork").Pool(len(gpus)) as pool:
        results = pool.map(_calibrate_one, [(str(home), log, g) for log, g in zip(logs, gpus)])
    assert all(code == 0 for code, _ in results), results
    stored = cal.load_store().measurements
    assert len(stored) == len(gpus) and len({m.gpu_id for m in stored}) == len(gpus)
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]  # no temporary file left behind


def test_a_planted_symlink_is_never_written_through(tmp_path, home) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    home.mkdir(parents=True)
    (home / "calibration.tmp").symlink_to(victim)  # the old fixed temporary name
    r = run("calibrate", str(rate_log(tmp_path / "a.csv", 20000)), "--gpu", "RTX 4090")
    assert r.exit_code == 0, r.output
    assert victim.read_text() == "keep me" and len(cal.load_store().measurements) == 1
    (home / "calibration.json.lock").unlink()
    (home / "calibration.json.lock").symlink_to(victim)  # the lock file itself planted
    r = run("calibrate", str(rate_log(tmp_path / "b.csv", 20000)), "--gpu", "RTX 3090")
    assert "cannot write the calibration store" in one_line_error(r)
    assert victim.read_text() == "keep me"


def test_file_system_errors_on_save_are_one_line(tmp_path, monkeypatch, home) -> None:
    log = str(rate_log(tmp_path / "a.csv", 20000))
    home.parent.mkdir(parents=True, exist_ok=True)
    home.write_text("a file where PLANNER_HOME should be a directory")
    assert "PLANNER_HOME" in one_line_error(run("calibrate", log, "--gpu", "RTX 4090"))
    home.unlink()

    def full(*a, **k):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomicfile.os, "replace", full)
    assert "No space left on device" in one_line_error(run("calibrate", log, "--gpu", "RTX 4090"))
    assert not [p for p in home.iterdir() if p.name.endswith(".tmp")]

    def too_big(*a, **k):  # type: ignore[no-untyped-def]
        raise OSError(errno.EFBIG, "File too large")

    monkeypatch.setattr(atomicfile.os, "fsync", too_big)
    assert "File too large" in one_line_error(run("calibrate", log, "--gpu", "RTX 4090"))


def test_odd_logs_are_one_line_errors_or_read(tmp_path) -> None:
    zero = tmp_path / "zero.csv"
    zero.write_text("step,step_time\n" + "".join(f"{i},0\n" for i in range(20)))
    assert "step time of 0" in one_line_error(run("calibrate", str(zero), "--gpu", "RTX 4090"))
    huge = tmp_path / "huge.csv"
    huge.write_text("step,tokens_per_sec,note\n" + "".join(f"{i},20000,x\n" for i in range(20))
                    + "21,20000," + "y" * 2_000_000 + "\n")
    assert "kB" in one_line_error(run("calibrate", str(huge), "--gpu", "RTX 4090"))
    wide = tmp_path / "wide.csv"  # a 200 kB cell (over csv's 128 kB default) in a column nobody reads
    wide.write_text("step,tokens_per_sec,note\n" + "".join(f"{i},20000,{'z' * 200_000 if i == 3 else 'x'}\n"
                                                           for i in range(20)))
    assert run("calibrate", str(wide), "--gpu", "RTX 4090").exit_code == 0
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"step,tokens_per_sec\r" + b"".join(f"{i},30000\r".encode() for i in range(20)))
    r = run("calibrate", str(cr), "--gpu", "RTX 3090", "--json")
    assert r.exit_code == 0, r.output and json.loads(r.stdout)["stored"]["median"] == 30000
    dup = tmp_path / "dup.csv"
    dup.write_text("step,tokens_per_sec,tokens_per_sec\n" + "".join(f"{i},1,20000\n" for i in range(20)))
    assert "appears twice" in one_line_error(run("calibrate", str(dup), "--gpu", "RTX 4090"))
