"""The door's helpers that moved behind use cases or onto result types: each answers as the helper it replaced."""

from __future__ import annotations

import json
from datetime import date, timedelta

import pytest

from planner.service import catalog_key, my_prices, priced_catalog


def test_the_catalog_key_follows_the_price_history_and_the_measurements(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("PLANNER_PRICE_DB", raising=False)
    before = catalog_key()
    root, db, stamps = json.loads(before)
    assert db is None and any(s[0].endswith(".csv") for s in stamps)
    shipped = priced_catalog(before).offer_for("gpu-nvidia-rtx5090-fe")

    my_prices().add("gpu-nvidia-rtx5090-fe", "2 349,00 €", shop="LDLC", day=date.today() - timedelta(days=2))
    priced = catalog_key()
    assert priced != before and json.loads(priced)[1] is not None  # the history now exists: the key names it
    offer = priced_catalog(priced).offer_for("gpu-nvidia-rtx5090-fe")
    assert str(offer.price) == "2349.00" and offer.price != shipped.price  # the catalog it names uses the history

    assert catalog_key() == priced  # nothing changed: the same key (the caches hold)
    from planner.perf.calibration import store_path

    path = store_path()  # your measurements (planner calibrate) change every speed: the key follows the file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"measurements": []}', encoding="utf-8")
    assert catalog_key() != priced


def test_the_speed_model_answers_what_the_perf_commands_and_the_ui_ask_of_it() -> None:
    """The limit sentence, the wall-power estimate and the range note are asked of the PerfModel front ends hold."""
    from planner.perf.limits import limit_of
    from planner.perf.model import RANGE_NOTE
    from planner.perf.sweep import PLATFORM_OVERHEAD_W
    from planner.service import PerfModel, SpeedQueries, speed_model

    queries = speed_model()
    assert isinstance(queries, SpeedQueries)
    model = queries.model
    assert isinstance(model, PerfModel) and speed_model().model is model  # one cached model behind every query
    chip = model.resolve("RTX 4090")
    said = model.limit_of(chip.id, precision="amp", workload="transformer", model_params=1e9).sentence()
    assert said and said == limit_of(model, chip.id, precision="amp", workload="transformer", model_params=1e9).sentence()
    assert PerfModel.wall_power_w(chip, 2, 0.8) == chip.tdp_w * 0.8 * 2 + PLATFORM_OVERHEAD_W
    assert PerfModel.RANGE_NOTE == RANGE_NOTE and "90 %" in model.RANGE_NOTE


def test_the_sweep_and_the_model_assumed_say_themselves() -> None:
    """The sweep report's sentences and the model phrase are methods of the Answer's types (the CLI and the Plan tab
    read them there), worded as planner.service.sweep_report words them."""
    from datetime import datetime, timezone

    from planner.service import AssumedModel, Hours, SweepReport
    from planner.service.sweep_report import finish_sentence, finish_text, hours_text, model_phrase, sweep_report

    start = datetime(2026, 12, 6, 21, 0, tzinfo=timezone.utc)
    sw = SweepReport.estimate(8.0, 6.0, 10.0, runs=8, runs_left=6, baseline_hours=7.0, gpu_count=1, start=start)
    assert sw == sweep_report(8.0, 6.0, 10.0, runs=8, runs_left=6, baseline_hours=7.0, gpu_count=1, start=start)
    assert sw.finish_sentence() == finish_sentence(sw) and sw.finish_sentence().startswith("6 of 8 runs left: about ")
    assert sw.finish_text() == finish_text(sw) and sw.finish_text("high") == finish_text(sw, "high")
    assert sw.shared_sentence() is None  # one run per GPU: nothing to say
    mine = AssumedModel.of("transformer", "amp", 1.3e9)
    assert mine.params_text() == "1.3 B" and mine.phrase() == model_phrase(mine) == "a 1.3 B-parameter transformer (amp)"
    assert AssumedModel.of("cnn", "fp32", None).phrase().endswith(", typical size assumed")
    assert [Hours.text(h) for h in (0.75, 5.2, 74.4)] == [hours_text(h) for h in (0.75, 5.2, 74.4)] == \
        ["45 min", "5.2 h", "3.1 days"]


def test_the_calibration_use_cases_store_list_and_forget(tmp_path, monkeypatch) -> None:
    """`planner calibrate` and the Plan tab's upload share one door: measurements() (calibrate, mine, forget)."""
    from planner.service import measurements, read_training_log, speed_model
    from planner.service.measured import MeasurementStore

    store_of = measurements()
    assert isinstance(store_of, MeasurementStore)
    calibrate, my_calibration, forget_measurements = store_of.calibrate, store_of.mine, store_of.forget
    resolve_baseline_hours = store_of.baseline_hours

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    log = tmp_path / "run.csv"
    log.write_text("epoch,step,throughput/tokens_per_sec\n" + "".join(f"0,{i * 50},{21000 + (i % 3) * 100}\n"
                                                                      for i in range(30)), encoding="utf-8")
    model = speed_model().model
    a, b = model.resolve("RTX 4090"), model.resolve("RTX 3090")
    store, path = my_calibration()
    assert store.measurements == [] and not path.exists()
    done = calibrate(read_training_log(log), a, "amp", "run.csv")
    assert done.path == path and path.exists() and [m.gpu_id for m in done.store.measurements] == [a.id]
    assert done.measurement.median == pytest.approx(21100, rel=0.01) and done.concurrency_gain is None
    calibrate(read_training_log(log), b, "amp", "run.csv")
    both = model.anchored(a.id, baseline=b.id, precision="amp")
    assert both.basis == "measured" and both.estimate.value == pytest.approx(1.0, rel=0.01)  # the same log on both
    assert model.anchored(a.id).basis != "measured"  # no 1080 Ti log: the baseline is not measured
    assert forget_measurements(b.id) == (1, 1, path)  # one card's: the other stays
    assert [m.gpu_id for m in my_calibration()[0].measurements] == [a.id]
    assert forget_measurements() == (1, 0, path)
    assert resolve_baseline_hours(5.0) == (5.0, "given with --hours")
    assert resolve_baseline_hours(None)[1].startswith("assumed")  # no calibrated 1080 Ti run


def test_what_a_share_carries_is_what_mine_lists_and_adopting_is_one_locked_add(tmp_path, monkeypatch) -> None:
    """to_share() is mine()'s measurements (() for a file that does not read, where mine() is one error line), and
    adopt() adds under the store's lock like calibrate(): a measurement written meanwhile is kept, not lost."""
    import threading
    import time

    from planner.errors import InputError
    from planner.perf.calibration import Measurement, Store, add_measurement, store_path, update_store
    from planner.service import measurements

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))

    def measured(gpu_id: str, median: float) -> Measurement:
        return Measurement(gpu_id=gpu_id, gpu_name=gpu_id, precision="amp", unit="tokens/s", median=median,
                           q25=median * 0.97, q75=median * 1.02, points=240, warmup_dropped=10,
                           column="tokens_per_s", how="median of steady steps", log_file="metrics.csv",
                           recorded_on=date(2026, 11, 20))

    store_of = measurements()
    assert store_of.to_share() == () and store_of.mine()[0].measurements == []
    added: list[int] = []

    def meanwhile(current: Store) -> Store:  # another process calibrates while the link is adopted
        adopter = threading.Thread(target=lambda: added.append(store_of.adopt([measured("rtx-3090", 9000.0)])))
        adopter.start()
        time.sleep(0.3)  # the adopter is waiting for the lock now
        meanwhile.thread = adopter  # type: ignore[attr-defined]
        return add_measurement(current, measured("rtx-4090", 21000.0))

    update_store(meanwhile)
    meanwhile.thread.join(10)  # type: ignore[attr-defined]
    assert added == [1]
    assert sorted(m.gpu_id for m in store_of.to_share()) == ["rtx-3090", "rtx-4090"]
    assert store_of.to_share() == tuple(store_of.mine()[0].measurements)
    assert store_of.adopt([measured("rtx-3090", 9500.0)]) == 1  # the same card, precision and unit: replaced
    assert sorted(m.median for m in store_of.to_share()) == [9500.0, 21000.0]
    store_path().write_text("{ not json", encoding="utf-8")
    assert store_of.to_share() == ()  # a share without your speeds, not an error
    with pytest.raises(InputError, match="calibration"):
        store_of.mine()


def test_one_metrics_diagnosis_for_a_file_and_for_a_series_read_already() -> None:
    """diagnose_metrics takes the series the web UI read once (for its windows and loss curve) as well as the file
    the CLI names: the same report either way (metrics_report is no longer a door of its own)."""
    from pathlib import Path

    from planner.service import diagnose

    diagnose_metrics, read_metrics = diagnose().metrics, diagnose().read_metrics

    path = Path(__file__).parent / "data" / "doctor" / "troubled-run.csv"
    from_file = diagnose_metrics(str(path), expected_steps=5000)
    from_series = diagnose_metrics(read_metrics(path.read_bytes()), expected_steps=5000)
    assert from_file.findings and from_series == from_file


def test_the_log_doctor_shows_the_signatures_of_the_functions_it_loads() -> None:
    """Each LogDoctor method states the parameters of the planner.doctor function it forwards to (names, kinds,
    defaults), so help() and a type checker see them instead of *args/**kwargs; `gap` None is the doctor's own gap."""
    import inspect
    from pathlib import Path

    from planner.doctor.diagnose import diagnose_events, diagnose_metrics, training_windows
    from planner.doctor.events import INCIDENT_GAP
    from planner.doctor.metrics_io import read_metrics
    from planner.doctor.smi import read_smi
    from planner.service.doctor import LogDoctor

    doctor = LogDoctor()
    pairs = [(doctor.events, diagnose_events), (doctor.metrics, diagnose_metrics), (doctor.windows, training_windows),
             (doctor.smi, read_smi), (doctor.read_metrics, read_metrics)]
    for method, function in pairs:
        ours, theirs = inspect.signature(method).parameters, inspect.signature(function).parameters
        assert [(p.name, p.kind) for p in ours.values()] == [(p.name, p.kind) for p in theirs.values()], method
        for name, p in ours.items():
            expected = None if name == "gap" else theirs[name].default
            assert p.default == expected, (method.__name__, name)
    log = str(Path(__file__).parent / "data" / "real" / "kernel" / "gpud-46-xid13-109-ctime.dmesg")  # a real dmesg
    default = doctor.events(log)
    assert default == doctor.events(log, gap=INCIDENT_GAP) == diagnose_events(log)
    assert len(doctor.events(log, gap=timedelta(seconds=1)).incidents) > len(default.incidents) == 1


def test_one_speed_use_case_answers_the_speed_questions_of_the_lower_modules() -> None:
    """speed_model() folds seven entry points into one: each method gives what its lower function gives."""
    from planner.perf.speed import gpu_speed
    from planner.service import speed_model
    from planner.service.speed import memory_fit, speedup_rows

    q = speed_model()
    chip = q.model.resolve("RTX 4090")
    e = q.gpu_speed(chip, q.model.chips, "transformer", "amp")
    assert e == gpu_speed(chip, q.model.chips, "transformer", "amp") and e.value > 1  # faster than the 1080 Ti
    rows = q.speedup_rows(["RTX 4090", "RTX 3090"], "gtx-1080-ti", "transformer", "amp", 1.0)
    assert rows == speedup_rows(q.model, ["RTX 4090", "RTX 3090"], "gtx-1080-ti", "transformer", "amp", 1.0)
    s = q.sweep_time(8, 6.0, e, 2)
    assert 0 < s.wall_hours < 8 * 6.0
    assert q.memory_fit(["RTX 4090"], params=1e9).to_json() == memory_fit(["RTX 4090"], params=1e9).to_json()
    assert q.runs_sharing_a_gpu(chip, "amp", None, "1", None) is None


def test_one_profile_use_case_changes_shows_applies_and_forgets(tmp_path, monkeypatch) -> None:
    """profile_store() folds five entry points: what `change` stores, `mine` shows and `apply` runs with; `forget`
    puts the defaults back."""
    from planner.service import profile_store
    from planner.service.profile import ProfileStore

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    store = profile_store()
    assert isinstance(store, ProfileStore) and store.mine()[0] is None
    assert store.apply(model_params=None, workload=None).source == "default"
    prof, path = store.change({"model_params": 3e8, "workload": "cnn"})
    assert path.exists() and store.mine() == (prof, path) and prof.model_params == 3e8
    used = store.apply(model_params=None, workload=None)
    assert used.values == {"model_params": 3e8, "workload": "cnn"} and used.source == "profile"
    assert store.apply(model_params=1e9, workload=None).values["model_params"] == 1e9  # a flag beats the profile
    said, block = store.from_log({"seq_len": 512.0}, "run.csv", save=False)
    assert block["saved"] is False and "512" in said
    assert store.forget() == (True, path) and not path.exists() and store.mine()[0] is None


def test_one_price_book_and_the_verdict_names_its_rentals() -> None:
    """my_prices() holds the five entry points of the user's price rows under their concern's functions, and the
    costs verdict answers rentals_to_show for the rental it names."""
    from planner.costs.verdict import rentals_to_show, verdict
    from planner.service import my_prices
    from planner.service import prices as lower

    book = my_prices()
    assert (book.history, book.confirm, book.add, book.forget, book.keep_list) == (
        lower.part_history, lower.confirm_price, lower.add_price, lower.forget_prices, lower.keep_list_prices)
    options = [{"kind": "rent", "name": n, "gpu": g, "cost_to_finish": c, "hours_to_finish": h}
               for n, g, c, h in (("a", "A100 80GB", "40.00", 10.0), ("b", "A100 40GB", "30.00", 12.0),
                                  ("c", "H100 SXM", "50.00", 6.0), ("d", "RTX 4090", "20.00", 20.0))]
    v = verdict(options, [], runs=8, baseline_hours=7.0, horizon_months=24, currency="EUR")
    assert v.rentals_to_show(options) == rentals_to_show(options, v.rent_option)
    assert v.rentals_to_show(options)[0] == v.rent_option == "d"  # the cheapest to finish comes first
