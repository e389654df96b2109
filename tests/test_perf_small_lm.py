"""The small-LM validation set: provenance per row, enough within-source pairs, scored without fitting on it."""

import pytest

from planner.errors import CatalogError
from planner.perf.model import load_perf_model
from planner.perf.small_lm import VALIDATION_CSV, load_points, pairs, summary


def test_validation_set_has_points_pairs_and_provenance():
    model = load_perf_model()
    points = load_points(chips=set(model.chips))
    assert len(points) >= 30
    assert all(5e6 <= p.model_params <= 4e8 for p in points)
    ps = pairs(points, model)
    assert len(ps) >= 20
    # every pair compares two runs of one source, model and precision, and the measured ratio is the tokens/s ratio
    for p in ps:
        assert (p.a.source, p.a.workload, p.a.precision) == (p.b.source, p.b.workload, p.b.precision)
        assert p.measured == pytest.approx(p.b.tokens_per_s / p.a.tokens_per_s)
        assert p.low <= p.predicted <= p.high


def test_validation_rows_are_not_calibration_rows():
    from planner.perf.sources import all_rows
    model = load_perf_model()
    fitted = {r.source for r in all_rows(model.chips)}
    assert not fitted & {p.source for p in load_points()}


def test_summary_counts_inside_and_error():
    model = load_perf_model()
    s = summary(pairs(load_points(), model))
    assert 0 < s["median_error"] < 1 and 0 <= s["coverage"] <= 1 and s["median_high_over_low"] > 1


def test_bad_rows_are_refused(tmp_path):
    text = VALIDATION_CSV.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([text[0], text[1].replace("rtx-", "rtx-zz", 1) if "rtx-" in text[1] else text[1],
                              text[2].replace("quadro-rtx-8000", "no-such-card")]) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="unknown chip"):
        load_points(bad, chips=set(load_perf_model().chips))
    header_only = tmp_path / "cols.csv"
    header_only.write_text("source,chip\nx,y\n", encoding="utf-8")
    with pytest.raises(CatalogError, match="missing column"):
        load_points(header_only)
