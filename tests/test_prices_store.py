"""Price history in SQLite: history, suspect jumps, currency mismatch, confirmation, atomic batches."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from planner.errors import InputError
from planner.catalog.models import Offer
from planner.prices.store import NewObservation, PriceStore, default_path

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=timezone.utc)


def obs(price: str, at: int = 0, part: str = "gpu-a", retailer: str = "LDLC", currency: str = "EUR",
        condition: str = "new") -> NewObservation:
    return NewObservation(part_id=part, retailer=retailer, price=Decimal(price), currency=currency,
                          in_stock=True, url="https://www.ldlc.com/fiche/X.html", route="json-ld",
                          raw_text=f"{price} €", condition=condition, confidence=0.95,
                          observed_at=T0 + timedelta(hours=at))


@pytest.fixture()
def store(tmp_path: Path):
    s = PriceStore(tmp_path / "prices.sqlite")
    yield s
    s.close()


def test_history_keeps_every_observation_in_order(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    store.record([obs("990.00", 24)], "LDLC")
    store.record([obs("1010.00", 48, retailer="Materiel.net")], "Materiel.net")
    h = store.history("gpu-a")
    assert [o.price for o in h] == [Decimal("1000.00"), Decimal("990.00"), Decimal("1010.00")]
    assert all(o.status == "trusted" for o in h)
    assert h[0].observed_at == T0 and h[0].raw_text == "1000.00 €" and h[0].route == "json-ld"
    assert store.history("nothing") == []


def test_price_is_stored_as_exact_decimal_text(store: PriceStore, tmp_path: Path) -> None:
    store.record([obs("1199.95")], "LDLC")
    raw = sqlite3.connect(tmp_path / "prices.sqlite").execute("SELECT price, typeof(price) FROM observations").fetchone()
    assert raw == ("1199.95", "text")


def test_jump_is_suspect_and_not_used(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    [o] = store.record([obs("400.00", 1)], "LDLC")  # -60 %: a misread or a used listing
    assert o.status == "suspect" and "jump" in (o.reason or "")
    latest = store.latest_trusted(now=T0 + timedelta(hours=2))
    assert latest["gpu-a"].price == Decimal("1000.00")


def test_small_move_is_trusted(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    [o] = store.record([obs("1300.00", 1)], "LDLC")  # +30 % < 35 %
    assert o.status == "trusted"


def test_second_reading_confirms_a_suspect_jump(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    [s] = store.record([obs("600.00", 1)], "LDLC")
    [c] = store.record([obs("610.00", 2)], "LDLC")
    assert s.status == "suspect" and c.status == "trusted"
    assert [o.status for o in store.history("gpu-a")] == ["trusted", "trusted", "trusted"]
    assert store.latest_trusted(now=T0 + timedelta(hours=3))["gpu-a"].price == Decimal("610.00")


def test_unconfirmed_when_second_reading_differs(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    store.record([obs("600.00", 1)], "LDLC")
    [o] = store.record([obs("300.00", 2)], "LDLC")
    assert o.status == "suspect"


def test_currency_mismatch_is_suspect(store: PriceStore) -> None:
    [o] = store.record([obs("999.00", 0, currency="USD")], "LDLC")
    assert o.status == "suspect" and "currency USD" in (o.reason or "")
    assert "gpu-a" not in store.latest_trusted()


def test_confirm_api(store: PriceStore) -> None:
    [o] = store.record([obs("999.00", 0, currency="USD")], "LDLC")
    assert store.confirm(o.id).status == "trusted"
    assert store.latest_trusted()["gpu-a"].currency == "USD"
    with pytest.raises(InputError):
        store.confirm(12345)


def test_latest_trusted_is_a_catalog_offer(store: PriceStore) -> None:
    store.record([obs("1000.00", 0), obs("150.00", 0, part="cpu-b")], "LDLC")
    store.record([obs("980.00", 5, retailer="Materiel.net")], "Materiel.net")
    store.record([obs("700.00", 6, condition="used")], "LDLC")
    offers = store.latest_trusted(now=T0 + timedelta(days=2, hours=5))
    a = offers["gpu-a"]
    assert isinstance(a, Offer)
    assert (a.price, a.retailer, a.source, a.condition) == (Decimal("980.00"), "Materiel.net", "scraped", "new")
    assert a.observed_on == (T0 + timedelta(hours=5)).date()
    assert a.note == "json-ld, 2 d old" and a.in_stock is True
    assert offers["cpu-b"].price == Decimal("150.00")
    assert store.latest_trusted(condition="used")["gpu-a"].price == Decimal("700.00")


def test_exception_mid_batch_leaves_nothing(store: PriceStore) -> None:
    store.record([obs("1000.00", 0)], "LDLC")
    with pytest.raises(RuntimeError):
        with store.batch("LDLC", "https://www.ldlc.com/recherche/x/") as b:
            b.add(obs("1001.00", 1))
            b.add(obs("1002.00", 1, part="gpu-b"))
            raise RuntimeError("killed while parsing the next listing")
    assert [o.price for o in store.history("gpu-a")] == [Decimal("1000.00")]
    assert store.history("gpu-b") == []
    assert store.check() == {"integrity": "ok", "inconsistent_batches": []}


_WRITER = textwrap.dedent(
    """
    import sys, time
    from decimal import Decimal
    from planner.prices.store import NewObservation, PriceStore
    store = PriceStore(sys.argv[1])
    for batch in range(1, 100):
        with store.batch("LDLC", f"page-{batch}") as b:
            for i in range(50):
                b.add(NewObservation(part_id=f"p{i}", retailer="LDLC", price=Decimal("100.00") + batch,
                                     currency="EUR", route="selector"))
                if batch == 3 and i == 25:
                    print("MID-BATCH", flush=True)
                    time.sleep(60)
        print(f"DONE {batch}", flush=True)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_refresh_killed_midway_leaves_db_consistent(tmp_path: Path) -> None:
    db = tmp_path / "prices.sqlite"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(db)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line.strip())
            if line.startswith("MID-BATCH"):
                break
        assert lines[:2] == ["DONE 1", "DONE 2"]
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    with PriceStore(db) as s:
        assert s.check() == {"integrity": "ok", "inconsistent_batches": []}
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT COUNT(*) FROM observations").fetchone()[0] == 100  # batches 1 and 2 only
        assert conn.execute("SELECT COUNT(*) FROM batches").fetchone()[0] == 2
        assert {o.price for o in s.history("p0")} == {Decimal("101.00"), Decimal("102.00")}
        s.record([obs("1.00")], "LDLC")  # still writable after the crash


def test_default_path_honours_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PLANNER_PRICE_DB", str(tmp_path / "x.sqlite"))
    assert default_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("PLANNER_PRICE_DB")
    assert default_path().name == "prices.sqlite"


def test_history_cli(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from planner.cli import app

    db = tmp_path / "p.sqlite"
    with PriceStore(db) as s:
        s.record([obs("1000.00", 0)], "LDLC")
        s.record([obs("400.00", 1)], "LDLC")
    res = CliRunner().invoke(app, ["prices", "history", "gpu-a", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["observations"]
    assert [(r["price"], r["status"]) for r in rows] == [("1000.00", "trusted"), ("400.00", "suspect")]
    res = CliRunner().invoke(app, ["prices", "confirm", str(rows[1]["id"]), "--db", str(db), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["status"] == "trusted"
    res = CliRunner().invoke(app, ["prices", "history", "gpu-a", "--db", str(tmp_path / "none.sqlite")])
    assert res.exit_code == 2


def test_a_full_disk_is_said_as_such_and_keeps_the_history(tmp_path) -> None:
    """Issue 29.10: SQLite rolls the transaction back itself when the disk is full; the old code's own ROLLBACK then
    failed with 'cannot rollback - no transaction is active', hiding why. A size limit stands in for the disk."""
    from planner.errors import InputError

    db = tmp_path / "prices.sqlite"
    with PriceStore(db) as store:
        store.record([obs("1000.00", 0)], "LDLC")
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages + 1}")
        many = [obs(f"{1000 + i}.00", 1 + i % 30, part=f"gpu-{i}") for i in range(3000)]
        with pytest.raises(InputError) as err:
            store.record(many, "LDLC")
        assert "full" in str(err.value) and "rollback" not in str(err.value)
        assert not store._conn.in_transaction
    with PriceStore(db) as store:
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [o.price for o in store.history("gpu-a")] == [Decimal("1000.00")]  # the earlier batch is intact
        assert store._conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 1  # nothing of the failed one
        store.record([obs("990.00", 2)], "LDLC")  # and the file still takes writes
