"""PostgreSQL handed to untrusted code, on a server that trusts loopback (as CI's does).

Whoever reaches such a server may log in as any role, ``postgres`` included. These cases
try that from a sandboxed verify script, a raw client behind the forwarder and the judge's
SQL tool, and try to outlast the time limit from inside the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import struct
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from fastmcp import Client
from sqlalchemy.engine import make_url

from lhbench.envs import PostgresDatabases, VerifyError, run_verify
from lhbench.tools import ReadOnlyDatabase, build_sql_server
from tests.security.helpers import bounded

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set")


@dataclass
class Replayed:
    pg: PostgresDatabases
    database: str
    owner_url: str
    reader_url: str


@pytest.fixture(scope="module")
def replayed() -> Iterator[Replayed]:
    """One replayed database, its owner's URL and its reader's, as judges and checks get."""
    assert PG_URL is not None
    pg = PostgresDatabases(PG_URL, statement_timeout_ms=3000)
    try:
        url = pg.clone(pg.template("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1), (2);"))
        database = make_url(url).database or ""
        yield Replayed(pg, database, url, pg.reader_url(database))
    finally:
        pg.drop_all()


def _admin() -> psycopg.Connection:
    assert PG_URL is not None
    return psycopg.connect(PG_URL, autocommit=True)


def _running(role: str, like: str) -> int:
    """How many backends of ``role`` are running a query containing ``like``."""
    with _admin() as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE usename = %s AND state = 'active' "
            "AND query LIKE %s",
            (role, f"%{like}%"),
        ).fetchone()
    return int(row[0]) if row else 0


def _superusers() -> list[str]:
    with _admin() as conn:
        return [r[0] for r in conn.execute("SELECT rolname FROM pg_roles WHERE rolsuper")]


# -- item 4: the role untrusted code uses is lhbench's, not the URL's ----------------------

VERIFY_AS_SUPERUSER = """
import argparse, json, sys
import psycopg
from sqlalchemy.engine import make_url
ap = argparse.ArgumentParser(); ap.add_argument('--db'); url = make_url(ap.parse_args().db)
attempts = [(u, url.database) for u in {users!r}] + [(url.username, 'postgres')]
seen = []
for user, db in attempts:
    try:
        conn = psycopg.connect(host=url.host, port=url.port, user=user, dbname=db,
                               autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        seen.append(f'{{user}}@{{db}}: refused: {{str(exc).strip().splitlines()[-1]}}')
        continue
    try:
        conn.execute("COPY (SELECT 1) TO PROGRAM 'touch {marker}'")
        seen.append(f'{{user}}@{{db}}: COPY TO PROGRAM ran')
    except psycopg.Error as exc:
        seen.append(f'{{user}}@{{db}}: connected; COPY failed: {{exc}}')
    conn.close()
print(json.dumps({{'detail': ' | '.join(seen)}}))
sys.exit(0 if all(': refused: ' in s for s in seen) else 1)
"""


def test_sandboxed_verify_logging_in_as_a_superuser(replayed: Replayed, tmp_path: Path) -> None:
    marker = Path(f"/tmp/lhbench-pg-pwned-{uuid.uuid4().hex}")
    script = tmp_path / "verify.py"
    script.write_text(VERIFY_AS_SUPERUSER.format(users=_superusers(), marker=marker))
    try:
        with bounded(120):
            res = run_verify(script, db_url=replayed.reader_url, timeout=60)
        assert not marker.exists(), "a sandboxed verify script ran a program as a superuser"
        assert res.passed, res.detail
        # the client printed the gate's own reason, not a dropped connection
        assert "not allowed here" in res.detail, res.detail
        assert "database 'postgres' is not allowed" in res.detail, res.detail
    finally:
        marker.unlink(missing_ok=True)


def test_verify_given_a_superuser_url_is_not_run(tmp_path: Path) -> None:
    assert PG_URL is not None
    script = tmp_path / "verify.py"
    script.write_text("import sys\nprint('ran as given')\nsys.exit(0)\n")
    with bounded(60), pytest.raises(VerifyError, match="is a superuser") as refused:
        run_verify(script, db_url=PG_URL, timeout=30)
    assert "not run" in str(refused.value)


def test_sql_tool_started_with_an_admin_url(replayed: Replayed) -> None:
    assert PG_URL is not None
    with bounded(30), pytest.raises(Exception, match="is a superuser") as superuser:
        build_sql_server(PG_URL)
    with bounded(30), pytest.raises(Exception, match="can write to tables") as owner:
        build_sql_server(replayed.owner_url)
    for exc in (superuser.value, owner.value):
        assert type(exc).__name__ == "PgRoleError", exc
        assert "the SQL tool's database URL" in str(exc)


def test_the_replay_reader_passes_the_role_check(replayed: Replayed) -> None:
    from lhbench.envs import require_read_only_url

    require_read_only_url(replayed.reader_url)  # no error: it only reads
    db = ReadOnlyDatabase(replayed.reader_url)
    try:
        assert db.query("SELECT count(*) FROM t")[1] == [(2,)]
    finally:
        db.close()


# -- the gate, spoken to directly ---------------------------------------------------------


@pytest.fixture
def gate(replayed: Replayed, tmp_path: Path) -> Iterator[tuple[object, Path]]:
    """A forwarder gated to the reader, on a Unix socket a libpq client can use."""
    from lhbench.sandbox import Forwarder, PgAccess

    url = make_url(replayed.reader_url)
    sockdir = tmp_path / "s"
    access = PgAccess(url.username or "", replayed.database, statement_s=1.0, grace_s=1.0)
    fwd = Forwarder(
        sockdir / f".s.PGSQL.{url.port or 5432}",
        url.host or "127.0.0.1",
        int(url.port or 5432),
        postgres=access,
    )
    with fwd:
        yield fwd, sockdir


def _through(sockdir: Path, replayed: Replayed, **kw: object) -> psycopg.Connection:
    url = make_url(replayed.reader_url)
    args: dict[str, object] = {
        "host": str(sockdir),
        "port": url.port or 5432,
        "user": url.username,
        "password": url.password,
        "dbname": replayed.database,
        "connect_timeout": 10,
        "autocommit": True,
    }
    args.update(kw)
    return psycopg.connect(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "who",
    ["postgres", "root", "owner", "other_database", "replication"],
)
def test_gate_refuses_every_other_role_and_database(
    gate: tuple[object, Path], replayed: Replayed, who: str
) -> None:
    fwd, sockdir = gate
    kw: dict[str, object] = {
        "postgres": {"user": "postgres"},
        "root": {"user": "root"},
        "owner": {"user": replayed.pg.owner},
        "other_database": {"dbname": "postgres"},
        "replication": {"replication": "database"},
    }[who]
    with bounded(30), pytest.raises(psycopg.OperationalError) as refused:
        _through(sockdir, replayed, **kw)
    text = str(refused.value)
    assert "lhbench:" in text and ("not allowed" in text), text
    assert fwd.gate is not None and fwd.gate.refusals  # type: ignore[attr-defined]


def test_gate_admits_the_reader_over_ssl_negotiation(
    gate: tuple[object, Path], replayed: Replayed
) -> None:
    with bounded(30), _through(gate[1], replayed) as conn:
        reader = make_url(replayed.reader_url).username
        assert conn.execute("SELECT current_user").fetchone() == (reader,)


def test_gate_drops_a_cancel_request_for_a_session_it_did_not_admit(
    gate: tuple[object, Path], replayed: Replayed
) -> None:
    fwd, sockdir = gate
    with _admin() as victim:
        pid = victim.info.backend_pid
        with bounded(30), socket.socket(socket.AF_UNIX) as s:
            s.connect(str(next(sockdir.iterdir())))
            s.sendall(struct.pack("!IIII", 16, 80877102, pid, 12345))
            s.settimeout(5)
            assert s.recv(1) == b""
        assert "did not admit" in " ".join(fwd.gate.refusals)  # type: ignore[attr-defined]


# -- item 6: the statement deadline holds from outside the session ------------------------


def test_judge_sql_lifting_its_own_statement_timeout(replayed: Replayed) -> None:
    db = ReadOnlyDatabase(replayed.reader_url, timeout_s=1.0)
    try:
        t0 = time.monotonic()
        with bounded(30), pytest.raises(Exception, match="timeout") as stopped:
            db.query("SET statement_timeout = 0; SELECT pg_sleep(30), 'lift-timeout'")
        assert time.monotonic() - t0 < 10, "the query ran past the tool's limit"
        assert "1 s timeout" in str(stopped.value)
        assert db.query("SELECT 1")[1] == [(1,)]  # the tool goes on working
    finally:
        db.close()
    assert _running(make_url(replayed.reader_url).username or "", "lift-timeout") == 0


def test_judge_sql_tool_answers_past_the_limit_through_mcp(replayed: Replayed) -> None:
    server = build_sql_server(replayed.reader_url, timeout_s=1.0)

    async def go() -> object:
        async with Client(server) as c:
            return await c.call_tool(
                "query",
                {"sql": "SET statement_timeout = 0; SELECT pg_sleep(30)"},
                raise_on_error=False,
            )

    t0 = time.monotonic()
    with bounded(30):
        res = asyncio.run(go())
    assert time.monotonic() - t0 < 10
    assert res.is_error and "1 s timeout" in res.content[0].text  # type: ignore[attr-defined]


def test_gate_cancels_a_query_that_lifted_its_own_timeout(
    gate: tuple[object, Path], replayed: Replayed
) -> None:
    fwd, sockdir = gate
    with _through(sockdir, replayed) as conn:
        conn.execute("SET statement_timeout = 0")
        t0 = time.monotonic()
        with bounded(30), pytest.raises(psycopg.errors.QueryCanceled):
            conn.execute("SELECT pg_sleep(30)")
        assert time.monotonic() - t0 < 10
        assert conn.execute("SELECT 2").fetchone() == (2,)  # only the query, not the session
    assert fwd.gate.cancels_sent >= 1  # type: ignore[attr-defined]


def test_a_client_killed_mid_query_leaves_no_query_running(
    gate: tuple[object, Path], replayed: Replayed
) -> None:
    from lhbench.sandbox import Forwarder, PgAccess

    url = make_url(replayed.reader_url)
    sockdir = gate[1].parent / "nodeadline"
    access = PgAccess(url.username or "", replayed.database, statement_s=None)
    port = int(url.port or 5432)
    with Forwarder(sockdir / f".s.PGSQL.{port}", url.host or "", port, postgres=access):
        conn = _through(sockdir, replayed)
        conn.execute("SET statement_timeout = 0")
        conn.pgconn.send_query(b"SELECT pg_sleep(60), 'killed-client'")
        time.sleep(0.5)
        assert _running(url.username or "", "killed-client") == 1
        # a sandbox killed at its wall limit: the socket just goes away
        with socket.socket(fileno=os.dup(conn.pgconn.socket)) as sock:
            sock.shutdown(socket.SHUT_RDWR)
        deadline = time.monotonic() + 10
        while _running(url.username or "", "killed-client") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _running(url.username or "", "killed-client") == 0
        with contextlib.suppress(psycopg.Error):
            conn.close()


def test_judge_sql_whose_cancel_is_lost_is_terminated(
    replayed: Replayed, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a cancel that never arrives (dropped on the way, or ignored by the backend)
    monkeypatch.setattr(psycopg.Connection, "cancel_safe", lambda self, **kw: None)
    db = ReadOnlyDatabase(replayed.reader_url, timeout_s=1.0)
    try:
        t0 = time.monotonic()
        with bounded(30), pytest.raises(Exception, match="terminated"):
            db.query("SET statement_timeout = 0; SELECT pg_sleep(30), 'lost-cancel'")
        assert time.monotonic() - t0 < 12
        assert db.query("SELECT 3")[1] == [(3,)]  # reconnected
    finally:
        db.close()
    assert _running(make_url(replayed.reader_url).username or "", "lost-cancel") == 0


# -- lhbench doctor checks it live --------------------------------------------------------


def test_doctor_reports_trust_auth_and_that_the_gate_refuses_it() -> None:
    from tests.cli.helpers import cli

    assert PG_URL is not None
    with bounded(120):
        res = cli("doctor", "--no-self-test", "--postgres", PG_URL, "--json")
    doc = json.loads(res.stdout)
    probes = {p["check"]: p for p in doc["self_test"]}
    assert any(c.startswith(("PostgreSQL trusts", "PostgreSQL checks passwords")) for c in probes)
    for check in (
        "the gate refuses the role 'postgres'",
        "the gate refuses the reader elsewhere",
        "the reader cannot run COPY … TO PROGRAM",
        "the gate cancels a query that turned its statement_timeout off",
        "a superuser URL is refused to untrusted code",
    ):
        assert probes[check]["ok"], probes[check]
    assert "lhbench:" in probes["the gate refuses the role 'postgres'"]["saw"]


def test_gate_closes_a_session_whose_query_outlives_its_cancel(
    gate: tuple[object, Path], replayed: Replayed, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lhbench.sandbox import PgGate

    fwd, sockdir = gate
    # a cancel that does not stop the query (lost, or a backend that does not look)
    monkeypatch.setattr(PgGate, "_send_cancel", lambda self, key: None)
    reader = make_url(replayed.reader_url).username or ""
    with _through(sockdir, replayed) as conn:
        conn.execute("SET statement_timeout = 0")
        t0 = time.monotonic()
        with bounded(30), pytest.raises(psycopg.OperationalError) as closed:
            conn.execute("SELECT pg_sleep(30), 'outlives-cancel'")
        assert time.monotonic() - t0 < 12
        assert "did not stop when cancelled" in str(closed.value), closed.value
    assert fwd.gate.closed_sessions == 1  # type: ignore[attr-defined]
    # the server notices its client is gone (client_connection_check_interval on the role)
    deadline = time.monotonic() + 10
    while _running(reader, "outlives-cancel") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _running(reader, "outlives-cancel") == 0


def test_gate_deadline_is_per_query_and_spares_idle_sessions(
    gate: tuple[object, Path], replayed: Replayed
) -> None:
    fwd, sockdir = gate
    with bounded(60), _through(sockdir, replayed) as conn:
        # three pipelined batches of 0.6 s: each within the 1 s deadline, 1.8 s in all
        with conn.pipeline() as p:
            curs = []
            for i in range(3):
                curs.append(conn.execute("SELECT pg_sleep(0.6), %s", (i,)))
                p.sync()
        assert [c.fetchone()[1] for c in curs] == [0, 1, 2]  # type: ignore[index]
        time.sleep(2.5)  # idle past deadline and grace: an idle session is left alone
        assert conn.execute("SELECT 4").fetchone() == (4,)
    assert fwd.gate.cancels_sent == 0 and fwd.gate.closed_sessions == 0  # type: ignore[attr-defined]
