"""Issue 29 item 4: the quarantine cannot be walked. Plausibility is anchored on the catalog price and other
shops' readings, not the shop's last reading; `prices confirm` outside the sane range needs --force."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from hostile_cli import assert_one_line_error, run
from planner.errors import InputError
from planner.prices.store import PriceStore, NewObservation

GPU = "gpu-nvidia-rtx5090-fe"
REF = Decimal("2199.99")  # the catalog's own price for the card
T0 = datetime(2026, 11, 1, 9, 0, tzinfo=timezone.utc)


def obs(price, day: int = 0, shop: str = "LDLC", reference=REF) -> NewObservation:
    return NewObservation(part_id=GPU, retailer=shop, price=Decimal(str(price)), currency="EUR", category="gpu",
                          reference=reference, observed_at=T0 + timedelta(days=day))


def test_the_same_wrong_price_twice_stays_suspect(tmp_path):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        assert s.record([obs(2199.99)], "LDLC")[0].status == "trusted"
        rows = [s.record([obs("429.99", day=d)], "LDLC")[0] for d in (1, 2, 3)]
        assert [r.status for r in rows] == ["suspect"] * 3
        assert "catalog price" in (rows[-1].reason or "")
        assert s.latest_trusted()[GPU].price == Decimal("2199.99")


def test_34_percent_steps_cannot_drift_the_price(tmp_path):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        s.record([obs(2199.99)], "LDLC")
        price = Decimal("2199.99")
        for day in range(1, 8):
            price = (price * Decimal("0.66")).quantize(Decimal("0.01"))
            s.record([obs(price, day=day)], "LDLC")
        assert s.latest_trusted()[GPU].price >= REF * Decimal("0.5")


def test_other_shops_anchor_the_price_when_there_are_some(tmp_path):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        s.record([obs(2100, shop="A", reference=None)], "A")
        s.record([obs(2150, shop="B", reference=None)], "B")
        s.record([obs(2200, shop="C", reference=None)], "C")
        wrong = [s.record([obs(538.5, day=d, shop="C", reference=None)], "C")[0] for d in (1, 2)]
        assert [w.status for w in wrong] == ["suspect", "suspect"] and "median" in (wrong[0].reason or "")
        assert s.record([obs(1990, day=3, shop="C", reference=None)], "C")[0].status == "trusted"


def test_a_real_move_inside_the_band_is_still_learnt(tmp_path):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        s.record([obs(2199.99)], "LDLC")
        first = s.record([obs(1399.99, day=1)], "LDLC")[0]  # -36 %: waits for a second reading
        second = s.record([obs(1399.99, day=2)], "LDLC")[0]
        assert first.status == "suspect" and second.status == "trusted"


def test_confirm_outside_the_sane_range_needs_force(tmp_path):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        row = s.record([obs("3.50")], "LDLC")[0]
        assert row.status == "suspect"
        with pytest.raises(InputError, match=r"outside the sane range .*--force"):
            s.confirm(row.id, category_of=lambda pid: "gpu")
        assert s.latest_trusted() == {}
        assert s.confirm(row.id, category_of=lambda pid: "gpu", force=True).status == "trusted"


def test_prices_confirm_cli_says_force(tmp_path, no_price_history):
    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        row = s.record([obs("3.50")], "LDLC")[0]
        ok = s.record([obs("1500", shop="B")], "B")[0]
    r = run("prices", "confirm", str(row.id), "--db", str(db))
    assert_one_line_error(r, "--force")
    assert "--force" in r.err and "sane range" in r.err
    assert run("prices", "confirm", str(row.id), "--db", str(db), "--force").code == 0
    assert run("prices", "confirm", str(ok.id), "--db", str(db)).code == 0  # inside the range: no --force
