"""The web page: a price given on the Prices tab and a shared list's prices kept on the Share tab are what the
Plan tab prices with; an import keeps the user's own inputs (AppTest)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers_app import _isolated, open_tab, run  # noqa: F401 - the autouse fixture
from tests.test_app import build_frame

FRIEND = (Path(__file__).parent / "data" / "real" / "lists" / "friend_rtx5090_fr.md").read_text(encoding="utf-8")
FE = "gpu-nvidia-rtx5090-fe"


def texts(at) -> str:
    return " ".join(" ".join(str(x.value) for x in group) for group in
                    (at.markdown, at.success, at.caption, at.info, at.warning, at.error))


def import_friend(at):
    at = open_tab(at, "Share")
    at.text_area(key="import_text").set_value(FRIEND)
    at.button(key="import_btn").click()
    return run(at)


def test_an_import_keeps_the_users_inputs_and_asks_before_planning_at_the_lists_prices() -> None:
    at = run()
    at.session_state["in_model_m"] = 160.0
    at.session_state["in_runs_left"] = 3
    at.session_state["in_budget"] = "6500"
    at = run(at)
    at = import_friend(at)
    assert at.session_state["in_model_m"] == 160.0 and at.session_state["in_runs_left"] == 3
    assert at.session_state["in_budget"] == "6500"
    body = texts(at)
    assert "The list's prices against the catalog's" in body
    assert not at.error, [e.value for e in at.error]
    for tab in ("Plan", "Prices", "Cloud vs buy", "Share"):  # every tab keeps them too
        at = open_tab(at, tab)
        assert at.session_state["in_model_m"] == 160.0 and at.session_state["in_runs_left"] == 3
    at = open_tab(at, "Plan")
    gpu = build_frame(at).set_index("Type").loc["Video Card"]
    assert gpu["Price"].startswith("EUR 4 200.00")  # the catalog's until the user chooses the list's
    at = open_tab(at, "Share")
    at.button(key="import_keep_btn").click()
    at = run(at)
    assert "Planning with the list's prices: 8 kept" in texts(at)
    at = open_tab(at, "Plan")
    frame = build_frame(at).set_index("Type")
    assert frame.loc["Video Card", "Price"].startswith("EUR 2 349.00 @ LDLC")
    assert frame.loc["Video Card", "Price kind"] == "from the shared list"
    assert any(i.value.startswith("Planned at 8 prices kept from a shared list") for i in at.info)  # and says so
    assert "4 568.53" in texts(at) or any("4 568.53" in str(m.value) for m in at.metric)


def test_a_price_given_on_the_prices_tab_changes_the_plan_and_can_be_forgotten() -> None:
    at = run()
    at.session_state["in_gpus"] = 1
    at.session_state["in_pinned"] = [FE]
    at = run(at)
    assert build_frame(at).set_index("Type").loc["Video Card", "Price"].startswith("EUR 4 200.00")
    at = open_tab(at, "Prices")
    at.selectbox(key="price_part").set_value(FE)
    at = run(at)
    at.text_input(key="price_give_amount").set_value("900")
    at.text_input(key="price_give_shop").set_value("LDLC")
    next(b for b in at.button if b.label == "Use this price").click()
    at = run(at)
    assert any("not stored" in e.value and "force" in e.value for e in at.error)  # -79 %: held back
    at.text_input(key="price_give_amount").set_value("2 349,00 €")
    next(b for b in at.button if b.label == "Use this price").click()
    at = run(at)
    assert any("Stored 2349.00 EUR at LDLC" in s.value for s in at.success), texts(at)
    at = open_tab(at, "Plan")
    frame = build_frame(at).set_index("Type")
    assert frame.loc["Video Card", "Price"].startswith("EUR 2 349.00 @ LDLC")
    assert frame.loc["Video Card", "Price kind"] == "yours"
    at = open_tab(at, "Prices")
    at.button(key="price_forget").click()
    at = run(at)
    at = open_tab(at, "Plan")
    assert build_frame(at).set_index("Type").loc["Video Card", "Price"].startswith("EUR 4 200.00")


def test_a_link_with_the_senders_measured_speeds_offers_them(tmp_path, monkeypatch) -> None:
    from datetime import date

    from planner.perf.calibration import Measurement, Store, load_store, save_store
    from tests.helpers_app import AppTest, APP

    def m(gpu_id, name, median, precision):
        return Measurement(gpu_id=gpu_id, gpu_name=name, precision=precision, unit="tokens/s", median=median,
                           q25=median * 0.98, q75=median * 1.02, points=200, warmup_dropped=5, column="tps",
                           how="median", log_file="m.csv", recorded_on=date(2026, 11, 20))

    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "sender"))
    save_store(Store(measurements=[m("gtx-1080-ti", "GeForce GTX 1080 Ti", 1000.0, "fp32"),
                                   m("rtx-5080", "GeForce RTX 5080", 5000.0, "amp")]))
    sender = run()
    token = sender.query_params["b"]
    token = token[0] if isinstance(token, list) else token
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "friend"))
    friend = AppTest.from_file(APP, default_timeout=60)
    friend = run(friend, b=token)
    assert any("2 measured speeds from the sender" in i.value for i in friend.info)
    friend.button(key="link_measure_use").click()
    friend = run(friend)
    assert any("Added 2 measured speed(s)" in s.value for s in friend.success)
    assert len(load_store().measurements) == 2


def test_a_price_given_inline_beside_the_plan_changes_it() -> None:
    at = run()
    at.session_state["in_gpus"] = 1
    at.session_state["in_pinned"] = [FE]
    at = run(at)
    at.selectbox(key="plan_give_part").set_value(FE)
    at.text_input(key="plan_give_amount").set_value("2 349,00 €")
    at.text_input(key="plan_give_shop").set_value("LDLC")
    next(b for b in at.tabs[0].button if b.label == "Use this price").click()
    at = run(at)
    frame = build_frame(at).set_index("Type")
    assert frame.loc["Video Card", "Price"].startswith("EUR 2 349.00 @ LDLC")
    assert frame.loc["Video Card", "Price kind"] == "yours"
