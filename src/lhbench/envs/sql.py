"""SQL environments: a schema + data dump, and a trajectory's statements replayed on a copy.

Replays go into a fresh database, SQLite by default or PostgreSQL when configured.

On PostgreSQL each task's dump is loaded once into a template database; every replay then
gets its own database with ``CREATE DATABASE … TEMPLATE …`` (a file-level copy).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from lhbench.envs.filesystem import ReplayReport
from lhbench.schema import StepKind, Trajectory

__all__ = ["SQL_TOOLS", "PostgresDatabases", "SqlState", "replay_sql", "split_statements"]

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
    """Where a replayed database lives: a SQLite file, or a PostgreSQL URL."""

    url: str
    backend: str
    path: Path | None = None


class PostgresDatabases:
    """Template and per-replay databases on one PostgreSQL server (admin URL given)."""

    def __init__(self, admin_url: str) -> None:
        self.admin_url = make_url(admin_url.replace("postgresql://", "postgresql+psycopg://", 1))
        self._engine = create_engine(
            self.admin_url, isolation_level="AUTOCOMMIT", pool_pre_ping=True
        )
        self._templates: dict[str, str] = {}
        self._lock = threading.Lock()
        self.created: list[str] = []

    def _url(self, name: str) -> str:
        return self.admin_url.set(database=name).render_as_string(hide_password=False)

    def template(self, dump: str) -> str:
        """A template database holding ``dump`` (made once per distinct dump)."""
        key = hashlib.sha256(dump.encode()).hexdigest()[:16]
        with self._lock:
            if key in self._templates:
                return self._templates[key]
            name = f"lhb_tpl_{key}_{uuid.uuid4().hex[:6]}"
            with self._engine.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
            self.created.append(name)
            eng = create_engine(self._url(name))
            with eng.begin() as conn:
                for stmt in split_statements(dump):
                    conn.execute(text(stmt))
            eng.dispose()
            self._templates[key] = name
            return name

    def clone(self, template: str) -> str:
        """A fresh database copied from a template; returns its URL."""
        name = f"lhb_run_{uuid.uuid4().hex[:12]}"
        with self._lock, self._engine.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}" TEMPLATE "{template}"'))
        self.created.append(name)
        return self._url(name)

    def drop_all(self) -> None:
        """Drop every database this object created."""
        with self._engine.connect() as conn:
            for name in reversed(self.created):
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        self.created.clear()
        self._templates.clear()
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


def replay_sql(
    dump: str, trajectory: Trajectory, dest: Path, *, postgres: PostgresDatabases | None = None
) -> tuple[SqlState, ReplayReport]:
    """A fresh database with the dump loaded and the trajectory's successful statements run."""
    report = ReplayReport()
    statements = _statements(trajectory)
    if postgres is None:
        if dest.exists():
            dest.unlink()
        dest.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(dest)
        try:
            conn.executescript(dump)
            for stmt in statements:
                try:
                    conn.execute(stmt)
                    report.applied += 1
                except sqlite3.Error as exc:
                    report.skipped.append(f"{stmt[:60]}: {exc}")
            conn.commit()
        finally:
            conn.close()
        return SqlState(url=f"sqlite:///{dest}", backend="sqlite", path=dest), report
    url = postgres.clone(postgres.template(dump))
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
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
    return SqlState(url=url, backend="postgresql"), report
