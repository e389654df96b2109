"""The web UI starts from the stored workload profile and says so in the sidebar (issue 32, item 1)."""

from __future__ import annotations

from pathlib import Path

from helpers_app import _isolated, run  # noqa: F401  (_isolated: autouse fixture, PLANNER_HOME = tmp_path/home)


def _sweep(at):
    return next(m for m in at.metric if m.label.startswith("Sweep"))


def test_the_sidebar_starts_from_the_stored_profile_and_says_so(tmp_path: Path) -> None:
    plain = run()
    assert any("default: typical" in c.value for c in plain.sidebar.caption)
    from planner.service import profile

    stored = profile.updated(None, {"model_params": 15e6, "runs": 16, "batch": 8, "seq_len": 512})
    profile.save_profile(stored, tmp_path / "home" / "profile.json")
    at = run()
    assert any("profile: stored in" in c.value for c in at.sidebar.caption)
    assert at.session_state["in_model_m"] == 15.0 and at.session_state["in_runs"] == 16
    speed = next(m for m in at.metric if m.label.startswith("Speed vs a GTX 1080 Ti"))
    assert speed.label.endswith("15 M model")
    assert _sweep(at).label == "Sweep of 16 runs" and _sweep(at).value != _sweep(plain).value
    # a widget still wins over the profile
    at.number_input(key="in_runs").set_value(8)
    run(at)
    assert _sweep(at).label == "Sweep of 8 runs"
