"""A step's run: the same rule on both backends (PostgreSQL: statement triggers, 0023).

SQLite keeps the ``steps -> runs`` foreign key; PostgreSQL checks it once per statement
(migration 0023). Each case runs on both and expects what the key did: a step of a
missing run refused with an ``IntegrityError`` naming the key, a deleted run's steps
deleted, a referenced run's id kept. On PostgreSQL also the key's locking: a run being
deleted and a batch of its steps being stored never leave a step without its run.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from lhbench.store import Store
from lhbench.store.bulk import BatchWriteError
from tests.factories import make_run
from tests.store.test_bulk import _rows

_TRIGGERS = [
    "steps_run_check_insert",
    "steps_run_check_update",
    "runs_delete_steps",
    "runs_id_kept",
]
_INSERT = (
    "INSERT INTO steps (run_id, idx, role, kind, content, is_error, metadata) "
    "VALUES (:r, :i, 'agent', 'message', 'x', false, '{}')"
)


@pytest.fixture
def two_runs(store: Store) -> Iterator[Store]:
    store.save_run(make_run("kept"))
    store.save_run(make_run("other"))
    yield store


def _steps(store: Store, run_id: str) -> int:
    with store.engine.connect() as conn:
        return int(
            conn.execute(
                text("SELECT count(*) FROM steps WHERE run_id = :r"), {"r": run_id}
            ).scalar_one()
        )


def test_a_step_of_a_missing_run_is_refused_naming_the_key(two_runs: Store) -> None:
    with pytest.raises(IntegrityError) as err, two_runs.engine.begin() as conn:
        conn.execute(text(_INSERT), [{"r": "kept", "i": 0}, {"r": "gone", "i": 0}])
    if two_runs.backend == "postgresql":  # SQLite's message names no key
        assert "fk_steps_run_id_runs" in str(err.value)
        assert "'gone'" in str(err.value)
    assert _steps(two_runs, "kept") == 0  # the whole statement was undone


def test_a_statement_of_many_runs_with_one_missing_is_refused(two_runs: Store) -> None:
    params = [{"r": r, "i": i} for i in range(50) for r in ("kept", "other")]
    params.insert(37, {"r": "ghost", "i": 0})
    with pytest.raises(IntegrityError), two_runs.engine.begin() as conn:
        conn.execute(text(_INSERT), params)
    with two_runs.engine.begin() as conn:
        conn.execute(text(_INSERT), [p for p in params if p["r"] != "ghost"])
    assert _steps(two_runs, "kept") == _steps(two_runs, "other") == 50


def test_moving_steps_to_a_missing_run_is_refused(two_runs: Store) -> None:
    with two_runs.engine.begin() as conn:
        conn.execute(text(_INSERT), [{"r": "kept", "i": i} for i in range(3)])
    with pytest.raises(IntegrityError), two_runs.engine.begin() as conn:
        conn.execute(text("UPDATE steps SET run_id = 'nowhere' WHERE idx = 1"))
    assert _steps(two_runs, "kept") == 3


def test_a_batch_of_a_missing_run_is_refused_by_the_appender(two_runs: Store) -> None:
    """The importer's path: PostgreSQL's COPY on its thread, SQLite's executemany."""
    # the appender raises the driver's error (SQLite: sqlite3's, PostgreSQL: psycopg's
    # ForeignKeyViolation from the COPY thread), or BatchWriteError from a writer process
    errors = (BatchWriteError, IntegrityError, sqlite3.IntegrityError, psycopg.Error)
    with pytest.raises(errors) as err, two_runs.step_appender("absent") as out:
        out.append(_rows(200))
        out.append(_rows(200))
    assert "foreign key" in str(err.value).lower()
    assert _steps(two_runs, "absent") == 0


def test_deleting_a_run_deletes_its_steps_only(two_runs: Store) -> None:
    with two_runs.step_appender("kept") as out:
        out.append(_rows(120))
    with two_runs.step_appender("other") as out:
        out.append(_rows(30))
    with two_runs.engine.begin() as conn:  # not through delete_run: the key's cascade
        conn.execute(text("DELETE FROM runs WHERE id = 'kept'"))
    assert _steps(two_runs, "kept") == 0
    assert _steps(two_runs, "other") == 30


def test_the_id_of_a_run_with_steps_is_kept(two_runs: Store) -> None:
    with two_runs.engine.begin() as conn:
        conn.execute(text(_INSERT), {"r": "kept", "i": 0})
    with pytest.raises(IntegrityError), two_runs.engine.begin() as conn:
        conn.execute(text("UPDATE runs SET id = 'renamed' WHERE id = 'kept'"))
    with two_runs.engine.begin() as conn:  # a run without steps may change its id
        conn.execute(text("UPDATE runs SET id = 'renamed' WHERE id = 'other'"))
    assert _steps(two_runs, "kept") == 1


def _held(store: Store, sql: str, params: dict[str, object]) -> tuple[threading.Thread, list]:
    """Run ``sql`` on a thread in a transaction (raising or committing into ``out``)."""
    out: list[object] = []

    def go() -> None:
        try:
            with store.engine.begin() as conn:
                conn.execute(text("SET LOCAL lock_timeout = '20s'"))
                conn.execute(text(sql), params)
            out.append("committed")
        except Exception as exc:  # the test reads it
            out.append(exc)

    t = threading.Thread(target=go)
    t.start()
    return t, out


def _waiting_on_a_lock(store: Store, query_start: str) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with store.engine.connect() as conn:
            n = conn.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND starts_with(query, :q)"
                ),
                {"q": query_start},
            ).scalar_one()
        if n:
            return
        time.sleep(0.02)
    raise AssertionError(f"no {query_start!r} waited for a lock")


def test_steps_stored_while_their_run_is_deleted_go_with_it(pg_url: str) -> None:
    """The steps' transaction holds the run's key lock: the delete waits, then removes them."""
    with Store.open(pg_url) as store:
        store.save_run(make_run("r"))
        with store.engine.connect() as conn:
            conn.execute(text(_INSERT), [{"r": "r", "i": i} for i in range(10)])
            deleter, out = _held(store, "DELETE FROM runs WHERE id = :r", {"r": "r"})
            _waiting_on_a_lock(store, "DELETE FROM runs")
            assert out == []
            conn.commit()  # the steps land first; the delete then takes them with the run
        deleter.join(30)
        assert out == ["committed"]
        assert _steps(store, "r") == 0


def test_steps_stored_while_their_run_is_being_deleted_are_refused(pg_url: str) -> None:
    """The run's delete holds its row: the steps' check waits, then finds the run gone."""
    with Store.open(pg_url) as store:
        store.save_run(make_run("r"))
        with store.engine.connect() as conn:
            conn.execute(text("DELETE FROM runs WHERE id = 'r'"))
            inserter, out = _held(store, _INSERT, {"r": "r", "i": 0})
            _waiting_on_a_lock(store, "INSERT INTO steps")
            conn.commit()
        inserter.join(30)
        assert len(out) == 1 and isinstance(out[0], IntegrityError), out
        assert _steps(store, "r") == 0


def test_downgrade_restores_the_key(pg_url: str) -> None:
    from lhbench.store import make_engine, upgrade
    from tests.store.test_migrations import upgrade_down

    engine = make_engine(pg_url)
    upgrade(engine)
    upgrade_down(engine, "0022")
    with engine.connect() as conn:
        keys = conn.execute(
            text("SELECT conname FROM pg_constraint WHERE conrelid = 'steps'::regclass")
        ).scalars()
        assert "fk_steps_run_id_runs" in set(keys)
        assert (
            conn.execute(
                text("SELECT count(*) FROM pg_trigger WHERE tgname = ANY(:names)"),
                {"names": _TRIGGERS},
            ).scalar_one()
            == 0
        )
    upgrade(engine)
    with engine.connect() as conn:
        keys = conn.execute(
            text("SELECT conname FROM pg_constraint WHERE conrelid = 'steps'::regclass")
        ).scalars()
        assert "fk_steps_run_id_runs" not in set(keys)
        assert conn.execute(
            text("SELECT count(*) FROM pg_trigger WHERE tgname = ANY(:names)"), {"names": _TRIGGERS}
        ).scalar_one() == len(_TRIGGERS)
    engine.dispose()
