"""Issue 29 items 3 and 10: one bad price-history row (no time zone, dated in the future) is skipped with a
warning by recommend, check, costs, share import and the web UI, never an internal error; rows are validated
on write; a full disk is said in one line and leaves the database as it was."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from hostile_cli import assert_one_line_error, run
from planner.errors import InputError
from planner.prices.store import NewObservation, PriceStore

GPU = "gpu-nvidia-rtx5090-fe"


def obs(price: str = "2199.99", part: str = GPU, **kw) -> NewObservation:
    return NewObservation(part_id=part, retailer="LDLC", price=Decimal(price), currency="EUR", **kw)


def bad_db(tmp_path: Path, observed_at: str) -> Path:
    """A price history whose one trusted row was edited (by hand or an older version) to `observed_at`."""
    db = tmp_path / "prices.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        s.record([obs()], "LDLC")
    conn = sqlite3.connect(db)
    conn.execute("UPDATE observations SET observed_at=?", (observed_at,))
    conn.commit()
    conn.close()
    return db


BAD_TIMES = {"no time zone": "2026-11-30T10:00:00", "in the future": "2999-01-01T00:00:00+00:00"}


@pytest.mark.parametrize("why", list(BAD_TIMES))
def test_a_bad_row_is_skipped_with_a_warning(tmp_path, why):
    db = bad_db(tmp_path, BAD_TIMES[why])
    from planner.prices.store import offers_with_warnings
    offers, warnings = offers_with_warnings(db)
    assert offers == {} and len(warnings) == 1 and why in warnings[0] and "#1" in warnings[0]


@pytest.mark.parametrize("why", list(BAD_TIMES))
@pytest.mark.parametrize("args", [
    ("recommend", "--budget", "4000"),
    ("check", GPU, "cpu-amd-ryzen5-7600"),
    ("costs", "--budget", "4000"),
], ids=["recommend", "check", "costs"])
def test_commands_warn_instead_of_an_internal_error(tmp_path, monkeypatch, why, args):
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(bad_db(tmp_path, BAD_TIMES[why])))
    r = run(*args)
    assert r.code in (0, 1), r.text[-1500:]
    assert "internal error" not in r.text and "Traceback" not in r.text, r.text[-1500:]


@pytest.mark.parametrize("why", list(BAD_TIMES))
def test_share_import_warns_instead_of_an_internal_error(tmp_path, monkeypatch, why):
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(bad_db(tmp_path, BAD_TIMES[why])))
    md = tmp_path / "list.md"
    md.write_text("| Type | Item | Price |\n|---|---|---|\n| GPU | NVIDIA GeForce RTX 5090 Founders Edition | 1 |\n",
                  encoding="utf-8")
    r = run("share", "import", str(md))
    assert r.code == 0 and "internal error" not in r.text, r.text[-1500:]


def test_the_web_ui_loads_the_catalog_past_a_bad_row(tmp_path, monkeypatch):
    AppTest = pytest.importorskip("streamlit.testing.v1").AppTest
    monkeypatch.delenv("PLANNER_DATA_DIR", raising=False)
    monkeypatch.setenv("PLANNER_PRICE_DB", str(bad_db(tmp_path, BAD_TIMES["no time zone"])))
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error)
    assert "failed unexpectedly" not in shown, shown


@pytest.mark.parametrize("when, needle", [
    (datetime(2026, 11, 30, 10, 0), "no time zone"),
    (datetime.now(timezone.utc) + timedelta(days=2), "in the future"),
])
def test_a_row_is_validated_on_write(tmp_path, when, needle):
    with PriceStore(tmp_path / "p.sqlite", shop_currency={}) as s:
        with pytest.raises(InputError, match=needle):
            s.record([obs(observed_at=when)], "LDLC")
        with pytest.raises(InputError, match="finite"):
            s.record([obs("NaN")], "LDLC")
        s.record([obs(observed_at=datetime.now(timezone.utc) + timedelta(minutes=2))], "LDLC")  # clock skew
        assert len(s.history(GPU)) == 1 and s.check()["inconsistent_batches"] == []


# ---------------------------------------------------------------- item 10: disk full


def test_a_full_disk_is_one_line_and_the_database_stays_consistent(tmp_path):
    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        s.record([obs()], "LDLC")
        pages = s._conn.execute("PRAGMA page_count").fetchone()[0]
        s._conn.execute(f"PRAGMA max_page_count = {pages + 1}")  # the disk is full after one more page
        big = [obs(part=f"gpu-{i}", raw_text="x" * 3000) for i in range(40)]
        with pytest.raises(InputError) as err:
            s.record(big, "LDLC")
        message = str(err.value)
        assert "disk" in message and "full" in message and "rollback" not in message and "\n" not in message
        assert not s._conn.in_transaction
        assert s.check() == {"integrity": "ok", "inconsistent_batches": []}
        assert len(s._conn.execute("SELECT * FROM observations").fetchall()) == 1  # nothing of the batch
        s._conn.execute("PRAGMA max_page_count = 1000000")
        assert len(s.record(big[:2], "LDLC")) == 2  # usable again once there is room


def test_prices_confirm_on_a_full_disk_says_so(tmp_path, monkeypatch):
    db = tmp_path / "p.sqlite"
    with PriceStore(db, shop_currency={}) as s:
        row = s.record([obs("3.50")], "LDLC")[0]

    real = sqlite3.Connection.execute

    class Full(sqlite3.Connection):
        def execute(self, sql, *a):  # type: ignore[override]
            if sql.startswith("UPDATE"):
                raise sqlite3.OperationalError("database or disk is full")
            return real(self, sql, *a)

    real_connect = sqlite3.connect
    monkeypatch.setattr(sqlite3, "connect", lambda *a, **kw: real_connect(*a, factory=Full, **kw))
    r = run("prices", "confirm", str(row.id), "--db", str(db), "--force")
    assert_one_line_error(r, "full")
    assert "full" in r.err and "rollback" not in r.err
