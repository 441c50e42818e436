"""SQL environments: a schema + data dump, and a trajectory's statements replayed on a copy.

Replays go into a fresh database, SQLite by default or PostgreSQL when configured. The
statements come from the trajectory under evaluation, so they are treated as hostile:

- SQLite: the replay runs in a sandboxed worker that may write only its database's
  directory, on a guarded connection (no ATTACH / VACUUM INTO, no extensions, bounded
  values and time).
- PostgreSQL: each task's dump is loaded once into a template database owned by a
  throwaway non-superuser role, and every replay gets its own database copied from it
  (``CREATE DATABASE … TEMPLATE …``) and runs as that role, with a statement timeout: it
  owns only lhbench's databases and has no superuser rights (no ``COPY … TO PROGRAM``, no
  ``pg_read_file``). Judges and checks get a second login role per database that may only
  ``SELECT``, reads only, and is bounded in time, memory and temporary files.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sys
import tempfile
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import create_engine, text
from sqlalchemy.engine import URL, make_url

from lhbench.envs.filesystem import ReplayReport
from lhbench.schema import StepKind, Trajectory

if TYPE_CHECKING:
    from lhbench.sandbox import Sandbox

__all__ = [
    "SQL_TOOLS",
    "PostgresDatabases",
    "ReplayError",
    "SqlState",
    "replay_sql",
    "split_statements",
]

SQL_TOOLS = {"execute_sql", "write_query", "run_sql", "query"}


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
            eng = self._owner_engine(name)
            try:
                with eng.begin() as conn:  # type: ignore[attr-defined]
                    for stmt in split_statements(dump):
                        conn.execute(text(stmt))
            finally:
                eng.dispose()  # type: ignore[attr-defined]
            self._templates[key] = name
            return name

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


def _statements(trajectory: Trajectory) -> list[str]:
    failed = {
        s.tool_call_id for s in trajectory.steps if s.kind == StepKind.TOOL_RESULT and s.is_error
    }
    out = []
    for s in trajectory.steps:
        if (
            s.kind == StepKind.TOOL_CALL
            and s.tool_name in SQL_TOOLS
            and s.tool_call_id not in failed
        ):
            sql = (s.tool_input or {}).get("sql") or (s.tool_input or {}).get("query")
            if isinstance(sql, str):
                out.extend(split_statements(sql))
    return out


class ReplayError(RuntimeError):
    """The replay could not build the state (the dump failed, or the worker did)."""


def _replay_sqlite(dump: str, statements: list[str], dest: Path, sandbox: Sandbox) -> ReplayReport:
    from lhbench.sandbox import Limits, policy_for, run_sandboxed_sync

    if dest.exists():
        dest.unlink()
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lhbench-replay-") as tmp:
        dump_file, stmt_file = Path(tmp) / "dump.sql", Path(tmp) / "statements.json"
        dump_file.write_text(dump, encoding="utf-8")
        stmt_file.write_text(json.dumps(statements), encoding="utf-8")
        policy = policy_for(
            dest.parent,
            writable=[dest.parent],
            readable=[Path(tmp)],
            limits=Limits(wall_s=120, cpu_s=120, memory_mb=1024, file_mb=512, processes=16),
        )
        argv = [
            sys.executable,
            "-m",
            "lhbench.envs.replay_worker",
            str(dest),
            str(dump_file),
            str(stmt_file),
        ]
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
) -> tuple[SqlState, ReplayReport]:
    """A fresh database with the dump loaded and the trajectory's successful statements run.

    Raises:
        ReplayError: the dump does not load or the replay worker failed.
    """
    statements = _statements(trajectory)
    if postgres is None:
        from lhbench.sandbox import get_sandbox

        report = _replay_sqlite(dump, statements, dest, sandbox or get_sandbox())
        url = f"sqlite:///{dest}"
        return SqlState(url=url, backend="sqlite", path=dest, read_url=url), report
    report = ReplayReport()
    url = postgres.clone(postgres.template(dump))
    database = make_url(url).database or ""
    eng = create_engine(
        url.replace("postgresql://", "postgresql+psycopg://", 1),
        connect_args={"options": f"-c statement_timeout={postgres.statement_timeout_ms}"},
    )
    try:
        for stmt in statements:
            try:
                with eng.begin() as c:
                    c.execute(text(stmt))
                report.applied += 1
            except Exception as exc:  # a statement the agent's run also saw fail
                report.skipped.append(f"{stmt[:60]}: {str(exc).splitlines()[0]}")
    finally:
        eng.dispose()
    return SqlState(url=url, backend="postgresql", read_url=postgres.reader_url(database)), report
