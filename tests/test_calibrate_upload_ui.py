"""Issue 32 item 5: in the web UI, upload a training log, name the card, store it; list and clear the measurements;
the Plan says "measured" or "re-anchored on ..." for the card it shows."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.perf import calibration as cal

from helpers_app import _isolated, run  # noqa: F401  (_isolated: autouse fixture)

REAL = Path(__file__).parent / "data" / "real" / "training"


class _Upload:
    """What st.file_uploader returns: a name and the bytes."""

    def __init__(self, path: Path) -> None:
        self.name, self._data = path.name, path.read_bytes()

    def getvalue(self) -> bytes:
        return self._data


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.success]
                     + [e.value for e in at.error])


def test_store_list_and_clear_through_the_page(tmp_path) -> None:
    from ui import pages_calibrate

    # the upload widget cannot be driven by AppTest: the page's own store function gets the file it would
    line = pages_calibrate._store_upload(_Upload(REAL / "mlx_issue557_mixtral_lora.log"), "RTX 4090", "auto",
                                         None, None)
    assert "Stored" in line and "MLX stdout" in line and "tokens/s" in line
    assert [m.gpu_name for m in cal.load_store().measurements] == ["GeForce RTX 4090"]
    at = run()
    page = texts(at)
    assert "GeForce RTX 4090 (amp): 84 tokens/s" in page and "mixtral" in page  # listed in the expander
    at.button(key="cal_clear").click()
    at = run(at)
    assert cal.load_store().measurements == [] and "No measurement stored yet." in texts(at)


def test_a_bad_upload_is_one_line(tmp_path) -> None:
    from planner.errors import InputError
    from ui import pages_calibrate

    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nworld\n")
    try:
        pages_calibrate._store_upload(_Upload(bad), "RTX 4090", "auto", None, None)
    except InputError as exc:
        assert "\n" not in str(exc) and "nanoGPT" in str(exc)
    else:
        raise AssertionError("a file of no known format was stored")


def test_the_plan_says_measured_or_re_anchored_on_the_card(tmp_path) -> None:
    at = run()
    card = next(m for m in at.metric if m.label.startswith("Speed vs a GTX 1080 Ti"))
    assert card is not None
    before = texts(at)
    assert "re-anchored on your GeForce" not in before and "measured:" not in before
    from planner.perf.calibration_log import LogReading
    from planner.perf.model import load_perf_model

    m = load_perf_model()
    store = cal.Store()
    # the 1080 Ti and an RTX 3090 measured: every other card on the page is re-anchored on the 3090
    for chip, rate in (("gtx-1080-ti", 21000.0), ("rtx-3090", 21000.0 * 3.0)):
        reading = LogReading("tokens/sec", "tokens/s", 50, 5, rate, rate * 0.99, rate * 1.01, "column 'tokens/sec'")
        store = cal.add_measurement(store, cal.measurement_from(reading, m.chips[chip], "fp32" if chip == "gtx-1080-ti"
                                                                 else "amp", f"{chip}.csv"))
    cal.save_store(store)
    at = run(at)
    after = texts(at)
    assert "re-anchored on your GeForce RTX 3090 measurement" in after or "measured:" in after


def test_an_absurd_store_does_not_break_the_plan_tab() -> None:
    """Issue 37 item 4: a 1e30 tokens/s measurement (stored before the bounds) failed the Plan tab for everyone."""
    import json

    from planner.perf.model import load_perf_model

    m = load_perf_model()
    rows = []
    for chip, rate in (("gtx-1080-ti", 21000.0), ("rtx-5090", 1e30), ("rtx-5080", 21000.0 * 5000)):
        rows.append({"gpu_id": chip, "gpu_name": m.chips[chip].name, "precision": "fp32" if chip == "gtx-1080-ti"
                     else "amp", "unit": "tokens/s", "median": rate, "q25": rate, "q75": rate, "points": 10,
                     "warmup_dropped": 1, "column": "tokens/sec", "how": "column", "log_file": f"{chip}.csv",
                     "recorded_on": "2026-12-01"})
    path = cal.store_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"version": 1, "measurements": rows}))
    at = run()  # asserts no exception
    assert not at.error, [e.value for e in at.error]
    speed = next(mm for mm in at.metric if mm.label.startswith("Speed vs a GTX 1080 Ti")).value
    assert 0.5 < float(speed.rstrip("x")) < 100


def test_the_page_fills_the_profile_from_what_the_log_states(tmp_path) -> None:
    """The same offer as `planner calibrate --save-profile`: offered unticked, filled when ticked, stored values kept."""
    from planner.service import profile as P
    from ui import pages_calibrate

    log = _Upload(REAL / "mlxlm_pr330_A100_cuda.log")
    line = pages_calibrate._store_upload(log, "A100 SXM4 80GB", "auto", None, None)
    assert "The log states: 3.21 B parameters" in line and 'ticking "Fill my profile"' in line
    assert P.load_profile() is None
    P.save_profile(P.updated(None, {"model_params": 15e6}))
    line = pages_calibrate._store_upload(log, "A100 SXM4 80GB", "auto", None, None, save_profile=True)
    assert "Profile: filled 9.9 GiB per run" in line and "kept your model_params" in line
    prof = P.load_profile()
    assert prof.model_params == 15e6 and prof.run_vram_gb == pytest.approx(9.86, abs=0.01)
    at = run()
    assert not at.exception and at.checkbox(key="cal_save_profile").value is False
