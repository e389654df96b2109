"""A shared link carries the sender's measured speeds (bounded like every token field), and the receiver who
adopts them sees 'measured' where the sender does."""

from __future__ import annotations

import json
from datetime import date

import pytest
from typer.testing import CliRunner

from planner.cli import app
from planner.errors import ShareError
from planner.perf.calibration import Measurement, Store, save_store, store_path
from planner.request import Request
from planner.share.token import MAX_MEASUREMENTS, _pack, decode_token, encode_token


def measured(gpu_id: str, name: str, median: float, precision: str = "amp") -> Measurement:
    return Measurement(gpu_id=gpu_id, gpu_name=name, precision=precision, unit="tokens/s", median=median,
                       q25=median * 0.97, q75=median * 1.02, points=240, warmup_dropped=10, column="tokens_per_s",
                       how="median of steady steps", log_file="metrics.csv", recorded_on=date(2026, 11, 20))


def recommend(*extra: str) -> dict:
    res = CliRunner().invoke(app, ["recommend", "--budget", "7000", "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_the_friend_sees_measured_where_the_sender_does(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "sender"))
    plan0 = recommend()["plans"][0]
    chip, name = plan0["gpu"]["chip"], plan0["gpu"]["name"]
    save_store(Store(measurements=[measured("gtx-1080-ti", "GeForce GTX 1080 Ti", 1000.0, "fp32"),  # no tensor cores
                                   measured(chip, name, 5200.0)]))
    sender = recommend()
    plan = sender["plans"][0]
    assert plan["speedup_basis"].startswith("measured")
    (tmp_path / "plan.json").write_text(json.dumps(sender), encoding="utf-8")
    token = CliRunner().invoke(app, ["share", "export", str(tmp_path / "plan.json"), "--format", "link"]).stdout.strip()
    assert token.startswith("v2.") and len(token) <= 2048

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "friend"))
    assert not recommend()["plans"][0]["speedup_basis"].startswith("measured")
    res = CliRunner().invoke(app, ["share", "import", token])
    assert "2 measured speeds from the sender" in " ".join(res.stdout.split()) and "--use-measurements" in res.stdout
    assert not store_path().exists()  # asked, not assumed
    res = CliRunner().invoke(app, ["share", "import", token, "--use-measurements", "--json"])
    assert json.loads(res.stdout)["measurements_used"] == 2
    friend = recommend()["plans"][0]
    assert friend["gpu"]["chip"] == chip and friend["speedup_basis"] == plan["speedup_basis"]
    assert friend["speedup_vs_1080ti"] == plan["speedup_vs_1080ti"]


def test_measurements_in_a_token_are_bounded_and_validated() -> None:
    many = [measured("gtx-1080-ti", "GeForce GTX 1080 Ti", 1000.0 + i) for i in range(MAX_MEASUREMENTS + 5)]
    state = decode_token(encode_token(Request(), [], many))
    assert len(state.measurements) == MAX_MEASUREMENTS  # the newest ones
    row = ["gtx-1080-ti", "GeForce GTX 1080 Ti", "amp", "tokens/s", 1000.0, 990.0, 1010.0, 100, "2026-11-20", 1]
    for bad, words in ((dict(median=-5.0), "measurement"), (dict(day="2999-01-01"), "future"),
                       (dict(unit="furlongs"), "measurement"), (dict(points=10**9), "out of range")):
        r = list(row)
        keys = ["gpu_id", "name", "precision", "unit", "median", "q25", "q75", "points", "day", "concurrent"]
        for k, v in bad.items():
            r[keys.index(k)] = v
        with pytest.raises(ShareError, match=words):
            decode_token(_pack({"i": {}, "p": [], "m": [r]}))
    with pytest.raises(ShareError, match="at most"):
        decode_token(_pack({"i": {}, "p": [], "m": [row] * (MAX_MEASUREMENTS + 1)}))
