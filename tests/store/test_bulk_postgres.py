"""The PostgreSQL step appender: COPY on a thread, what a failure leaves, what it waits for.

A gate holds a batch in the server: a trigger on the steps that waits (at most 10 s) for
an advisory lock the test holds, so a batch's COPY is still running in the server while
the test looks at what the appender did.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from lhbench.store import Store
from lhbench.store.bulk import BatchWriteError
from tests.factories import make_run
from tests.store.test_bulk import _rows, _stored

_GATE = 4242


def _plain_rows(n: int) -> list[tuple[Any, ...]]:
    # no NUL characters: each batch is one COPY
    return [tuple(v.replace("\x00", "") if isinstance(v, str) else v for v in r) for r in _rows(n)]


@pytest.fixture
def pg(pg_url: str) -> Iterator[Store]:
    with Store.open(pg_url) as store:
        store.save_run(make_run("bulk"))
        yield store


def _gate_at(store: Store, idx: int) -> Any:
    """Make the COPY of the row ``idx`` wait for the test's lock; returns the lock's holder."""
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE FUNCTION gate() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "FOR i IN 1..200 LOOP "
            f"IF pg_try_advisory_xact_lock_shared({_GATE}) THEN RETURN NULL; END IF; "
            "PERFORM pg_sleep(0.05); END LOOP; "
            "RAISE EXCEPTION 'the gate stayed closed'; END $$"
        )
        conn.exec_driver_sql(
            f"CREATE TRIGGER gate AFTER INSERT ON steps FOR EACH ROW WHEN (NEW.idx = {idx}) "
            "EXECUTE FUNCTION gate()"
        )
    holder = store.engine.connect()
    holder.exec_driver_sql(f"SELECT pg_advisory_lock({_GATE})")
    holder.commit()  # the lock is the session's: it outlives the transaction
    return holder


def _open_gate(holder: Any) -> None:
    holder.exec_driver_sql(f"SELECT pg_advisory_unlock({_GATE})")
    holder.commit()
    holder.close()


def _copy_waiting(store: Store) -> int:
    """The pid of the backend whose COPY waits at the gate (waits for it up to 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with store.engine.connect() as conn:
            pid = conn.exec_driver_sql(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
                "AND state = 'active' AND starts_with(query, 'COPY steps') "
                # asleep in the gate's loop: not an earlier batch's COPY, still running
                "AND wait_event = 'PgSleep'"
            ).scalar()
        if pid is not None:
            return int(pid)
        time.sleep(0.02)
    raise AssertionError("no COPY reached the gate")


def test_append_returns_while_the_server_still_stores_the_batch(pg: Store) -> None:
    rows = _plain_rows(300)
    holder = _gate_at(pg, 0)
    out = pg.step_appender("bulk")
    try:
        started = time.monotonic()
        out.append(rows[:100])  # returns with the COPY still in the server, at the gate
        assert time.monotonic() - started < 5  # not the gate's 10 s
        _copy_waiting(pg)
        assert _stored(pg, "bulk") == []  # not committed yet
    finally:
        _open_gate(holder)
    out.append(rows[100:])  # queued behind the first; close waits for both
    out.close()
    assert [r[0] for r in _stored(pg, "bulk")] == list(range(300))
    # the appender's connection went back to the pool with the server's commit setting
    idle = [pg.engine.raw_connection() for _ in range(pg.engine.pool.checkedin())]  # type: ignore[attr-defined]
    try:
        assert idle
        for conn in idle:
            assert conn.driver_connection.execute("SHOW synchronous_commit").fetchone() == ("on",)
            work_mem = "SELECT setting = reset_val FROM pg_settings WHERE name = 'work_mem'"
            assert conn.driver_connection.execute(work_mem).fetchone() == (True,)
    finally:
        for conn in idle:
            conn.close()


def test_a_refused_batch_is_raised_by_a_later_append_and_nothing_after_it_is_stored(
    pg: Store,
) -> None:
    rows = _plain_rows(1000)
    with pg.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.idx = 450 THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW; END $$"
        )
        conn.exec_driver_sql(
            "CREATE TRIGGER boom BEFORE INSERT ON steps FOR EACH ROW EXECUTE FUNCTION boom()"
        )
    out = pg.step_appender("bulk")
    for start in (0, 200, 400):  # the third batch (400..599) is refused in the server
        out.append(rows[start : start + 200])
    # raised by an append at most two after it (two batches may be queued)
    with pytest.raises(BatchWriteError, match="disk on fire"):
        out.append(rows[600:800])
        out.append(rows[800:900])
    assert out.failure is not None and "disk on fire" in out.failure
    with pytest.raises(BatchWriteError):  # no batch is taken after a failure
        out.append(rows[900:])
    out.close()
    assert [r[0] for r in _stored(pg, "bulk")] == list(range(400))
    # the last batch refused: close raises it
    pg.save_run(make_run("last"))
    with pytest.raises(BatchWriteError, match="disk on fire"), pg.step_appender("last") as last:
        last.append(rows[:400])
        last.append(rows[400:500])
    assert [r[0] for r in _stored(pg, "last")] == list(range(400))
    pg.append_step_rows("last", rows[500:505])  # no transaction or lock left behind
    assert len(_stored(pg, "last")) == 405


def test_a_killed_connection_is_raised_and_what_was_committed_stays_a_prefix(
    pg: Store,
) -> None:
    rows = _plain_rows(400)
    holder = _gate_at(pg, 100)
    out = pg.step_appender("bulk")
    try:
        out.append(rows[:100])  # committed
        out.append(rows[100:200])  # held at the gate
        pid = _copy_waiting(pg)
        with pg.engine.connect() as conn:
            assert conn.exec_driver_sql(f"SELECT pg_terminate_backend({pid})").scalar()
        # raised by an append at most two after it (two batches may be queued)
        with pytest.raises(BatchWriteError, match=r"(?i)terminat|connection|closed"):
            out.append(rows[200:300])
            out.append(rows[300:])
        with pytest.raises(BatchWriteError):  # no batch is taken after a failure
            out.append(rows[300:])
        out.close()
    finally:
        _open_gate(holder)
    assert [r[0] for r in _stored(pg, "bulk")] == list(range(100))
    pg.append_step_rows("bulk", rows[100:105])  # the pool gave no dead connection back
    assert len(_stored(pg, "bulk")) == 105


def test_many_small_batches_are_committed_one_transaction_each_in_order(pg: Store) -> None:
    rows = _plain_rows(1500)
    with pg.step_appender("bulk") as out:
        for start in range(0, len(rows), 3):
            out.append(rows[start : start + 3])
    with pg.engine.connect() as conn:
        got = conn.exec_driver_sql(
            "SELECT idx, xmin::text::bigint FROM steps WHERE run_id = 'bulk' ORDER BY idx"
        ).all()
    assert [r[0] for r in got] == list(range(1500))
    xids = [r[1] for r in got]
    # a transaction per batch of three, each later batch in a later transaction
    assert all(xids[i] == xids[i - i % 3] for i in range(1500))
    assert all(xids[i] < xids[i + 3] for i in range(0, 1497, 3))


def test_a_batch_queued_behind_a_failed_one_is_never_sent(pg: Store) -> None:
    # the second batch is held in the server, then refused; the third waits behind it on
    # the COPY thread and must not be sent, though the connection is fine
    rows = _plain_rows(400)
    with pg.engine.begin() as conn:
        conn.exec_driver_sql(
            "CREATE FUNCTION gate_boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "FOR i IN 1..200 LOOP "
            f"IF pg_try_advisory_xact_lock_shared({_GATE}) THEN "
            "RAISE EXCEPTION 'disk on fire'; END IF; "
            "PERFORM pg_sleep(0.05); END LOOP; "
            "RAISE EXCEPTION 'the gate stayed closed'; END $$"
        )
        conn.exec_driver_sql(
            "CREATE TRIGGER gate_boom AFTER INSERT ON steps FOR EACH ROW "
            "WHEN (NEW.idx = 150) EXECUTE FUNCTION gate_boom()"
        )
    holder = pg.engine.connect()
    holder.exec_driver_sql(f"SELECT pg_advisory_lock({_GATE})")
    holder.commit()
    out = pg.step_appender("bulk")
    try:
        out.append(rows[:100])
        out.append(rows[100:200])  # held at the gate
        _copy_waiting(pg)
        out.append(rows[200:300])  # the first committed; this one queued behind the held one
        assert out.failure is None
    finally:
        _open_gate(holder)  # the held batch is refused now
    with pytest.raises(BatchWriteError, match="disk on fire"):
        out.close()
    assert [r[0] for r in _stored(pg, "bulk")] == list(range(100))
    pg.append_step_rows("bulk", rows[100:105])  # the connection went back to the pool usable
    assert len(_stored(pg, "bulk")) == 105


def test_the_third_append_waits_for_the_first_batch_and_no_sooner(pg: Store) -> None:
    # two batches may be queued: the second append returns with the first held in the
    # server; the third waits for the first's commit, so memory and loss stay bounded
    rows = _plain_rows(300)
    holder = _gate_at(pg, 0)
    out = pg.step_appender("bulk")
    third = threading.Thread(target=out.append, args=(rows[200:],))
    try:
        out.append(rows[:100])
        _copy_waiting(pg)
        started = time.monotonic()
        out.append(rows[100:200])  # queued behind the held batch: returns at once
        assert time.monotonic() - started < 5
        third.start()
        third.join(0.5)
        assert third.is_alive()  # still waiting for the first batch
        assert _stored(pg, "bulk") == []
    finally:
        _open_gate(holder)
    third.join(10)
    assert not third.is_alive()
    assert len(_stored(pg, "bulk")) >= 100  # the first batch was committed before it returned
    out.close()
    assert [r[0] for r in _stored(pg, "bulk")] == list(range(300))
