"""SQL environments: a schema + data dump, and a trajectory's statements replayed on a copy.

Replays go into a fresh database, SQLite by default or PostgreSQL when configured. The SQL
tools replayed are the ones agents' database servers offer (``execute_sql``; Supabase's
``apply_migration``; InsForge's ``run-raw-sql``; …), each call whose result was not an
error. On PostgreSQL a call's SQL runs as the server ran it: the whole text in one
simple-protocol query (PostgreSQL parses it: dollar-quoted bodies, explicit transactions),
so a call is applied or skipped whole. The statements come from the trajectory under
evaluation, so they are treated as hostile:

- SQLite: the replay runs in a sandboxed worker that may write only its database's
  directory, on a guarded connection (no ATTACH / VACUUM INTO, no extensions, bounded
  values and time).
- PostgreSQL: each task's dump is loaded once into a template database owned by a
  throwaway non-superuser role, and every replay gets its own database copied from it
  (``CREATE DATABASE … TEMPLATE …``) and runs as that role, with a statement timeout: it
  owns only lhbench's databases and has no superuser rights (no ``COPY … TO PROGRAM``, no
  ``pg_read_file``). Judges and checks get a second login role per database that may only
  ``SELECT``, reads only, and is bounded in time, memory and temporary files. A sandbox
  reaches the server only through a gate that admits that role on that database alone
  (:mod:`lhbench.sandbox.pg_gate`), and the role is checked to only read before untrusted
  code gets it (:mod:`lhbench.envs.pg_guard`).
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import sys
import tempfile
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

from lhbench.envs.filesystem import ReplayReport
from lhbench.schema import REPLAY_REFUSED_KEY, StepKind, Trajectory

if TYPE_CHECKING:
    from lhbench.sandbox import Sandbox, SandboxSession

__all__ = [
    "SQL_TOOLS",
    "PostgresDatabases",
    "ReplayError",
    "SqlState",
    "replay_sql",
    "split_statements",
]

SQL_TOOLS = {"execute_sql", "write_query", "run_sql", "query", "apply_migration", "run-raw-sql"}
# a plain dump's data block, as pg_dump writes it (the rows follow, up to a line "\.")
_COPY_FROM_STDIN = re.compile(r"^COPY\s.+\sFROM\s+stdin\s*;\s*$", re.IGNORECASE)
# psql commands recent pg_dump versions write around a dump; no SQL in them
_PSQL_IGNORED = ("\\restrict", "\\unrestrict")


def split_statements(script: str) -> list[str]:
    """Statements of a SQL script (``;``-separated, quotes respected)."""
    out, buf, quote = [], [], ""
    for ch in script:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
        elif ch in ("'", '"'):
            quote = ch
            buf.append(ch)
        elif ch == ";":
            stmt = "".join(buf).strip()
            if stmt:
                out.append(stmt)
            buf = []
        else:
            buf.append(ch)
    tail = "".join(buf).strip()
    if tail:
        out.append(tail)
    return out


@dataclass(frozen=True)
class SqlState:
    """Where a replayed database lives, and how a reader (judge, check) reaches it.

    ``url`` is the replay's own (owner) connection; ``read_url`` the read-only one that
    judges' tools and verify scripts get.
    """

    url: str
    backend: str
    path: Path | None = None
    read_url: str = ""

    @property
    def reader(self) -> str:
        """The URL to hand to a judge or a check."""
        return self.read_url or self.url


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class PostgresDatabases:
    """Template and per-replay databases on one PostgreSQL server (admin URL given).

    Everything it creates (databases and roles) is dropped by :meth:`drop_all`.
    """

    def __init__(
        self,
        admin_url: str,
        *,
        statement_timeout_ms: int = 5000,
        work_mem: str = "16MB",
        temp_file_limit: str = "64MB",
    ) -> None:
        self.admin_url = make_url(admin_url.replace("postgresql://", "postgresql+psycopg://", 1))
        self._engine = create_engine(
            self.admin_url, isolation_level="AUTOCOMMIT", pool_pre_ping=True
        )
        self.statement_timeout_ms = statement_timeout_ms
        self.work_mem = work_mem
        self.temp_file_limit = temp_file_limit
        self._templates: dict[str, str] = {}
        self._lock = threading.Lock()
        self.created: list[str] = []
        self.roles: list[str] = []
        self.owner = f"lhb_owner_{uuid.uuid4().hex[:10]}"
        self._owner_password = secrets.token_hex(16)
        self._readers: dict[str, tuple[str, str]] = {}
        self._create_role(self.owner, self._owner_password)

    def _create_role(self, name: str, password: str) -> None:
        with self._engine.connect() as conn:
            conn.execute(
                text(
                    f"CREATE ROLE {_quote(name)} LOGIN PASSWORD '{password}' NOSUPERUSER "
                    "NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT"
                )
            )
        self.roles.append(name)

    def _url_for(self, database: str, role: str, password: str) -> URL:
        return self.admin_url.set(database=database, username=role, password=password)

    def _url(self, database: str) -> str:
        """The owner's URL for a database (what replays run as)."""
        url = self._url_for(database, self.owner, self._owner_password)
        return url.render_as_string(hide_password=False).replace("+psycopg", "", 1)

    def _owner_engine(self, database: str) -> object:
        return create_engine(
            self._url_for(database, self.owner, self._owner_password),
            connect_args={"options": f"-c statement_timeout={self.statement_timeout_ms}"},
        )

    def template(self, dump: str) -> str:
        """A template database holding ``dump``, loaded as the owner role (once per dump)."""
        key = hashlib.sha256(dump.encode()).hexdigest()[:16]
        with self._lock:
            if key in self._templates:
                return self._templates[key]
            name = f"lhb_tpl_{key}_{uuid.uuid4().hex[:6]}"
            with self._engine.connect() as conn:
                conn.execute(text(f"CREATE DATABASE {_quote(name)} OWNER {_quote(self.owner)}"))
                conn.execute(text(f"REVOKE ALL ON DATABASE {_quote(name)} FROM PUBLIC"))
            self.created.append(name)
            # the owner role gets the public schema (its copy of template1's), nothing more
            admin = create_engine(self.admin_url.set(database=name), isolation_level="AUTOCOMMIT")
            try:
                with admin.connect() as conn:
                    conn.execute(text(f"ALTER SCHEMA public OWNER TO {_quote(self.owner)}"))
            finally:
                admin.dispose()
            self._load_dump(name, dump)
            self._templates[key] = name
            return name

    def _load_dump(self, database: str, dump: str) -> None:
        """Load a plain SQL dump (statements and ``COPY … FROM stdin`` blocks) as the owner.

        Raises:
            ReplayError: the dump does not load (the failing part named).
        """
        import psycopg

        url = self._url_for(database, self.owner, self._owner_password)
        conninfo = url.render_as_string(hide_password=False).replace("+psycopg", "", 1)
        # the dump is the pack's, not the agent's: loading a large one may take minutes
        with psycopg.connect(conninfo, options="-c statement_timeout=600000") as conn:
            cur = conn.cursor()
            for sql, rows in dump_parts(dump):
                try:
                    if rows is None:
                        cur.execute(sql.encode())  # one simple query: PostgreSQL parses it
                    else:
                        with cur.copy(sql.encode()) as copy:
                            copy.write(rows.encode())
                except psycopg.Error as exc:
                    where = sql.strip().splitlines()[0][:80] if sql.strip() else "(empty)"
                    raise ReplayError(
                        f"the initial database does not load at {where!r}: {exc}"
                    ) from None
            conn.commit()

    def clone(self, template: str) -> str:
        """A fresh database copied from a template, owned by the owner role; its URL."""
        name = f"lhb_run_{uuid.uuid4().hex[:12]}"
        with self._lock, self._engine.connect() as conn:
            conn.execute(
                text(
                    f"CREATE DATABASE {_quote(name)} TEMPLATE {_quote(template)} "
                    f"OWNER {_quote(self.owner)}"
                )
            )
            conn.execute(text(f"REVOKE ALL ON DATABASE {_quote(name)} FROM PUBLIC"))
        self.created.append(name)
        return self._url(name)

    def reader_url(self, database: str) -> str:
        """A login role for one database that may only SELECT, read-only, time-bounded."""
        if database not in self._readers:
            role, password = f"lhb_read_{uuid.uuid4().hex[:10]}", secrets.token_hex(16)
            self._create_role(role, password)
            with self._engine.connect() as conn:
                conn.execute(
                    text(f"GRANT CONNECT ON DATABASE {_quote(database)} TO {_quote(role)}")
                )
                for setting, value in (
                    ("default_transaction_read_only", "on"),
                    ("statement_timeout", str(self.statement_timeout_ms)),
                    ("work_mem", f"'{self.work_mem}'"),
                    ("temp_file_limit", f"'{self.temp_file_limit}'"),
                    ("idle_in_transaction_session_timeout", "'30s'"),
                    # a backend whose client is gone (a killed sandbox) stops mid-query
                    ("client_connection_check_interval", "'2s'"),
                ):
                    conn.execute(text(f"ALTER ROLE {_quote(role)} SET {setting} = {value}"))
            eng = self._owner_engine(database)
            try:
                with eng.begin() as conn:  # type: ignore[attr-defined]
                    conn.execute(text(f"GRANT USAGE ON SCHEMA public TO {_quote(role)}"))
                    conn.execute(
                        text(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {_quote(role)}")
                    )
            finally:
                eng.dispose()  # type: ignore[attr-defined]
            self._readers[database] = (role, password)
        role, password = self._readers[database]
        url = self._url_for(database, role, password)
        return url.render_as_string(hide_password=False).replace("+psycopg", "", 1)

    def drop_all(self) -> None:
        """Drop every database and role this object created."""
        with self._engine.connect() as conn:
            for name in reversed(self.created):
                conn.execute(text(f"DROP DATABASE IF EXISTS {_quote(name)} WITH (FORCE)"))
            for role in reversed(self.roles):
                conn.execute(text(f"DROP ROLE IF EXISTS {_quote(role)}"))
        self.created.clear()
        self.roles.clear()
        self._templates.clear()
        self._readers.clear()
        self._engine.dispose()


def dump_parts(dump: str) -> Iterator[tuple[str, str | None]]:
    r"""A plain SQL dump as ``(sql, None)`` chunks and ``(COPY statement, rows)`` blocks.

    Raises:
        ReplayError: a ``COPY`` block is not closed, or the dump holds a psql command
            (``\connect``, …) that is not SQL.
    """
    sql: list[str] = []
    lines = iter(dump.splitlines(keepends=True))
    for line in lines:
        if _COPY_FROM_STDIN.match(line):
            if "".join(sql).strip():
                yield "".join(sql), None
            sql = []
            rows = []
            for row in lines:
                if row.rstrip("\r\n") == "\\.":
                    break
                rows.append(row)
            else:
                raise ReplayError(f"the dump's {line.strip()[:60]!r} block has no closing \\.")
            yield line.strip().rstrip(";"), "".join(rows)
        elif line.startswith("\\"):
            if not line.startswith(_PSQL_IGNORED):
                raise ReplayError(f"the dump holds a psql command ({line.split()[0]}), not SQL")
        else:
            sql.append(line)
    if "".join(sql).strip():
        yield "".join(sql), None


def _calls(trajectory: Trajectory) -> tuple[list[str], list[str]]:
    """The SQL text of every successful SQL call, and the calls the importer refused."""
    failed = {
        s.tool_call_id for s in trajectory.steps if s.kind == StepKind.TOOL_RESULT and s.is_error
    }
    out, refused = [], []
    for s in trajectory.steps:
        if s.kind != StepKind.TOOL_CALL or s.tool_name not in SQL_TOOLS:
            continue
        if s.tool_call_id in failed:
            continue
        why = (s.metadata or {}).get(REPLAY_REFUSED_KEY)
        if why:
            refused.append(f"step {s.index} {s.tool_name}: {why}")
            continue
        sql = (s.tool_input or {}).get("sql") or (s.tool_input or {}).get("query")
        if isinstance(sql, str) and sql.strip():
            out.append(sql)
    return out, refused


def _statements(trajectory: Trajectory) -> list[str]:
    return [stmt for sql in _calls(trajectory)[0] for stmt in split_statements(sql)]


class ReplayError(RuntimeError):
    """The replay could not build the state (the dump failed, or the worker did)."""


_REPLAY_WORKER = Path(__file__).with_name("replay_worker.py")


def _replay_sqlite(
    dump: str,
    statements: list[str],
    dest: Path,
    sandbox: Sandbox,
    session: SandboxSession | None = None,
) -> ReplayReport:
    from lhbench.sandbox import Limits, policy_for, run_sandboxed_sync, sandbox_env

    if dest.exists():
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    limits = Limits(wall_s=120, cpu_s=120, memory_mb=1024, file_mb=512, processes=16)
    # the replay's inputs beside its output (the run's own directory, which its session
    # shows), removed after; by path with -S: it imports only the standard library
    with tempfile.TemporaryDirectory(prefix=".replay-", dir=dest.parent) as tmp:
        dump_file, stmt_file = Path(tmp) / "dump.sql", Path(tmp) / "statements.json"
        dump_file.write_text(dump, encoding="utf-8")
        stmt_file.write_text(json.dumps(statements), encoding="utf-8")
        argv = [
            sys.executable,
            "-I",
            "-S",
            str(_REPLAY_WORKER),
            str(dest),
            str(dump_file),
            str(stmt_file),
        ]
        if session is not None and session.covers([dest.parent, _REPLAY_WORKER]):
            env = sandbox_env(dest.parent)
            res = session.run(argv, cwd=dest.parent, env=env, limits=limits, write=[dest.parent])
        else:
            policy = policy_for(dest.parent, writable=[dest.parent], limits=limits)
            res = run_sandboxed_sync(sandbox, argv, policy)
    lines = res.text().strip().splitlines()
    try:
        doc = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        doc = {}
    if res.timed_out or not isinstance(doc, dict) or "applied" not in doc:
        why = doc.get("error") if isinstance(doc, dict) else None
        raise ReplayError(
            why
            or f"replay worker {'timed out' if res.timed_out else f'exited {res.returncode}'}: "
            f"{res.text('stderr').strip()[-300:]}"
        )
    return ReplayReport(applied=int(doc["applied"]), skipped=[str(x) for x in doc["skipped"]])


def replay_sql(
    dump: str,
    trajectory: Trajectory,
    dest: Path,
    *,
    postgres: PostgresDatabases | None = None,
    sandbox: Sandbox | None = None,
    session: SandboxSession | None = None,
) -> tuple[SqlState, ReplayReport]:
    """A fresh database with the dump loaded and the trajectory's successful statements run.

    Raises:
        ReplayError: the dump does not load or the replay worker failed.
    """
    calls, refused = _calls(trajectory)
    if postgres is None:
        from lhbench.sandbox import get_sandbox

        statements = [stmt for sql in calls for stmt in split_statements(sql)]
        report = _replay_sqlite(dump, statements, dest, sandbox or get_sandbox(), session)
        report.skipped[:0] = refused
        url = f"sqlite:///{dest}"
        return SqlState(url=url, backend="sqlite", path=dest, read_url=url), report
    import psycopg
    from psycopg.pq import TransactionStatus

    report = ReplayReport(skipped=list(refused))
    url = postgres.clone(postgres.template(dump))
    database = make_url(url).database or ""
    options = f"-c statement_timeout={postgres.statement_timeout_ms}"
    with psycopg.connect(url, autocommit=True, options=options) as conn:
        for sql in calls:
            try:
                conn.execute(sql.encode())  # no parameters: one simple query, as a server runs it
                if conn.info.transaction_status == TransactionStatus.INTRANS:
                    conn.execute(b"COMMIT")  # a call left its BEGIN open: its server committed
                report.applied += 1
            except psycopg.Error as exc:  # a call the agent's run saw succeed fails here
                if conn.info.transaction_status != TransactionStatus.IDLE:
                    conn.execute(b"ROLLBACK")
                first = (str(exc).splitlines() or [type(exc).__name__])[0]
                report.skipped.append(f"{' '.join(sql.split())[:60]}: {first}")
    return SqlState(url=url, backend="postgresql", read_url=postgres.reader_url(database)), report
