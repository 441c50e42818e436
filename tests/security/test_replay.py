"""A trajectory being replayed carries the attack: its SQL and file operations.

Imported and fixture trajectories come from outside; replaying one must build the state
it describes and nothing else: no file written or read outside the state, no program run.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from lhbench.envs import PostgresDatabases, replay_filesystem, replay_sql
from lhbench.schema import Role, Step, StepKind, Trajectory
from tests.security.helpers import bounded

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")
DUMP = "CREATE TABLE t (a INTEGER);\nINSERT INTO t VALUES (1), (2);\n"


def _traj(*sql: str) -> Trajectory:
    steps = []
    for n, stmt in enumerate(sql):
        steps += [
            Step(
                index=2 * n,
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name="execute_sql",
                tool_call_id=f"c{n}",
                tool_input={"sql": stmt},
            ),
            Step(index=2 * n + 1, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id=f"c{n}"),
        ]
    return Trajectory(run_id="t", steps=steps)


def _sqlite_rows(path: Path) -> list[int]:
    with sqlite3.connect(path) as c:
        return sorted(r[0] for r in c.execute("SELECT a FROM t"))


def test_sqlite_replay_attaching_a_file_elsewhere(tmp_path: Path) -> None:
    target = tmp_path / "planted.db"
    with bounded(60):
        _, report = replay_sql(
            DUMP,
            _traj(
                f"ATTACH DATABASE '{target}' AS o; CREATE TABLE o.x (y)", "INSERT INTO t VALUES (3)"
            ),
            tmp_path / "state" / "s.db",
        )
    assert not target.exists()
    assert report.applied == 1 and len(report.skipped) == 2
    assert _sqlite_rows(tmp_path / "state" / "s.db") == [1, 2, 3]


def test_sqlite_replay_overwriting_the_results_database(tmp_path: Path) -> None:
    store = tmp_path / "lhbench.db"
    store.write_bytes(b"results")
    with bounded(60):
        replay_sql(DUMP, _traj(f"VACUUM INTO '{store}'"), tmp_path / "state" / "s.db")
    assert store.read_bytes() == b"results"


def test_sqlite_replay_crashing_the_replayer(tmp_path: Path) -> None:
    with bounded(60):
        _, report = replay_sql(
            DUMP,
            _traj(
                "SELECT fts3_tokenizer('simple', x'4141414141414141')",
                "SELECT load_extension('/tmp/evil.so')",
                "INSERT INTO t VALUES (4)",
            ),
            tmp_path / "state" / "s.db",
        )
    assert report.applied == 1 and _sqlite_rows(tmp_path / "state" / "s.db") == [1, 2, 4]


def test_sqlite_replay_endless_recursive_statement(tmp_path: Path) -> None:
    endless = (
        "CREATE TABLE big AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) "
        "SELECT n FROM r"
    )
    with bounded(90):
        _, report = replay_sql(
            DUMP, _traj(endless, "INSERT INTO t VALUES (5)"), tmp_path / "state" / "s.db"
        )
    # stopped by the statement deadline or, first, by the replay's file-size limit
    assert report.applied == 1
    assert "interrupted" in report.skipped[0] or "disk I/O error" in report.skipped[0]


def test_filesystem_replay_writing_outside_the_state(tmp_path: Path) -> None:
    steps = []
    for n, path in enumerate(["../escaped.txt", str(tmp_path / "abs.txt"), "ok.txt"]):
        steps += [
            Step(
                index=2 * n,
                role=Role.ASSISTANT,
                kind=StepKind.TOOL_CALL,
                tool_name="write_file",
                tool_call_id=f"w{n}",
                tool_input={"path": path, "content": "x"},
            ),
            Step(index=2 * n + 1, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id=f"w{n}"),
        ]
    with bounded(30):
        report = replay_filesystem(None, Trajectory(run_id="t", steps=steps), tmp_path / "state")
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path / "abs.txt").exists()
    assert report.applied == 1 and (tmp_path / "state" / "ok.txt").read_text() == "x"


@pytest.fixture
def pg():
    if not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    dbs = PostgresDatabases(PG_URL, statement_timeout_ms=2000)
    try:
        yield dbs
    finally:
        dbs.drop_all()


def _pg_rows(url: str) -> list[int]:
    import psycopg

    with psycopg.connect(url) as c:
        return sorted(r[0] for r in c.execute("SELECT a FROM t").fetchall())


def test_postgres_replay_copy_to_program(pg: PostgresDatabases, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    with bounded(60):
        state, report = replay_sql(
            DUMP,
            _traj(f"COPY t TO PROGRAM 'touch {marker}'", "INSERT INTO t VALUES (3)"),
            tmp_path / "unused",
            postgres=pg,
        )
    assert not marker.exists() and report.applied == 1
    assert _pg_rows(state.reader) == [1, 2, 3]


def test_postgres_replay_reading_host_files(pg: PostgresDatabases, tmp_path: Path) -> None:
    import psycopg

    with bounded(60):
        state, report = replay_sql(
            DUMP,
            _traj(
                "CREATE TABLE leak AS SELECT pg_read_file('/etc/passwd') AS x",
                "CREATE TABLE leak2 (x text); COPY leak2 FROM '/etc/passwd'",
                "SELECT lo_import('/etc/passwd')",
            ),
            tmp_path / "unused",
            postgres=pg,
        )
    # every read of a server file was refused; a call is applied whole or not at all, as
    # its server ran it, so the CREATE TABLE beside the refused COPY was rolled back with it
    assert report.applied == 0 and len(report.skipped) == 3
    assert all("permission denied" in s or "must be superuser" in s for s in report.skipped)
    with psycopg.connect(state.url) as c:
        tables = {r[0] for r in c.execute("SELECT tablename FROM pg_tables").fetchall()}
    assert "leak" not in tables and "leak2" not in tables


def test_postgres_replay_granting_itself_superuser(pg: PostgresDatabases, tmp_path: Path) -> None:
    import psycopg

    with bounded(60):
        state, report = replay_sql(
            DUMP,
            _traj(
                "ALTER ROLE CURRENT_USER SUPERUSER",
                "CREATE EXTENSION IF NOT EXISTS dblink",
                "CREATE DATABASE evil",
            ),
            tmp_path / "unused",
            postgres=pg,
        )
    assert report.applied == 0
    with psycopg.connect(state.url) as c:
        assert c.execute(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (False,)


def test_postgres_replay_stalling(pg: PostgresDatabases, tmp_path: Path) -> None:
    with bounded(30):
        _, report = replay_sql(
            DUMP,
            _traj("SELECT pg_sleep(600)", "INSERT INTO t VALUES (3)"),
            tmp_path / "u",
            postgres=pg,
        )
    assert report.applied == 1 and "timeout" in report.skipped[0]
