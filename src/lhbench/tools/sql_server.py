"""Read-only SQL tools over MCP.

Queries run on a read-only connection, so a write fails in the database itself (SQLite
``mode=ro`` + ``query_only`` + an authorizer; PostgreSQL read-only transactions under a
SELECT-only role), not by matching the text of the statement. On PostgreSQL the tool
refuses to start when the URL's role is a superuser or can write
(:func:`~lhbench.envs.pg_guard.check_read_only_role`). Each statement has a time limit kept
from outside the session (a query may ``SET statement_timeout = 0`` for itself): past it
the tool cancels the query, and if it still runs, terminates its backend and reconnects.
Answers are cut by rows, by value length and by total size, saying so.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy.engine import make_url

from lhbench.envs.pg_guard import check_read_only_role
from lhbench.envs.sqlite_guard import guarded_connection, reset_deadline
from lhbench.tools.registry import McpTools, Registrar, ToolFailure

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_OUTPUT_CHARS",
    "MAX_ROWS",
    "QueryTimeout",
    "ReadOnlyDatabase",
    "add_sql_tools",
    "build_sql_server",
    "format_rows",
]

MAX_ROWS = 200
MAX_CELL_CHARS = 2_000  # one value as shown to the judge
MAX_OUTPUT_CHARS = 64_000  # one tool answer
STATEMENT_TIMEOUT_S = 10.0
DEADLINE_MARGIN_S = 0.25
CANCEL_GRACE_S = 2.0  # a cancelled query this long still running: its backend is terminated


class QueryTimeout(RuntimeError):
    """A query ran past the tool's limit and was stopped from outside its session."""


class ReadOnlyDatabase:
    """A read-only connection to a SQLite file or PostgreSQL database.

    SQLite goes through :func:`~lhbench.envs.sqlite_guard.guarded_connection` (read-only,
    authorizer, value-size and time limits); PostgreSQL through a read-only session under
    a role checked to only read, each query watched by a timer that cancels it at the
    limit and terminates its backend if the cancel did not stop it.

    Raises:
        PgRoleError: the PostgreSQL URL's role is a superuser or can write.
    """

    def __init__(self, url: str, *, timeout_s: float = STATEMENT_TIMEOUT_S) -> None:
        parsed = make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
        self.backend = parsed.get_backend_name()
        self.timeout_s = timeout_s
        self.stopped = 0  # queries stopped at the limit (cancelled or terminated)
        if self.backend == "sqlite":
            self._conn: Any = guarded_connection(
                Path(parsed.database or ""), read_only=True, timeout_s=timeout_s
            )
        else:
            self._conninfo = parsed.set(drivername="postgresql").render_as_string(
                hide_password=False
            )
            self._conn = self._pg_connect()
            try:
                check_read_only_role(self._conn, "the SQL tool's database URL")
            except Exception:
                self._conn.close()
                raise

    def _pg_connect(self) -> Any:
        import psycopg

        return psycopg.connect(
            self._conninfo,
            options=(
                "-c default_transaction_read_only=on "
                f"-c statement_timeout={int(self.timeout_s * 1000)}"
            ),
            autocommit=False,
            connect_timeout=10,
        )

    def _terminate(self, pid: int) -> None:
        """End a backend that ignored its cancel; drop our socket if even that fails."""
        import psycopg

        with (
            contextlib.suppress(psycopg.Error),
            psycopg.connect(self._conninfo, autocommit=True, connect_timeout=5) as admin,
        ):
            # a role may terminate its own backends: no admin connection is needed
            admin.execute("SELECT pg_terminate_backend(%s, 2000)", (pid,))
        # (already gone when the terminate worked: psycopg says the connection is lost)
        with contextlib.suppress(Exception):
            fd = os.dup(self._conn.fileno())
            with socket.socket(fileno=fd) as sock:
                sock.shutdown(socket.SHUT_RDWR)

    def _watched(self, cur: Any, sql: str, max_rows: int) -> list[Any]:
        """Run ``sql`` under the tool's own deadline (cancel, then terminate)."""
        done = threading.Event()
        stopped: list[str] = []
        pid = self._conn.info.backend_pid

        def watchdog() -> None:
            # a little after the session's own statement_timeout, which fires first unless
            # the query turned it off
            if done.wait(self.timeout_s + DEADLINE_MARGIN_S):
                return
            stopped.append("cancelled")
            with contextlib.suppress(Exception):
                self._conn.cancel_safe(timeout=CANCEL_GRACE_S)
            if done.wait(CANCEL_GRACE_S):
                return
            stopped.append("terminated")
            self._terminate(pid)

        timer = threading.Thread(target=watchdog, daemon=True, name="lhbench-sql-deadline")
        timer.start()
        try:
            cur.execute("BEGIN READ ONLY")
            cur.execute(sql)
            rows = cur.fetchmany(max_rows + 1) if cur.description else []
        except Exception:
            if stopped:
                raise QueryTimeout(self._stopped_message(stopped)) from None
            raise
        finally:
            done.set()
            timer.join()
        if stopped:  # it finished just as the deadline came: its answer is not trusted
            raise QueryTimeout(self._stopped_message(stopped))
        return list(rows)

    def _stopped_message(self, stopped: list[str]) -> str:
        self.stopped += 1
        how = (
            "cancelled; its backend did not stop and was terminated"
            if len(stopped) > 1
            else ("cancelled")
        )
        return f"the query ran past the tool's {self.timeout_s:g} s timeout and was {how}"

    def query(
        self, sql: str, max_rows: int = MAX_ROWS
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Columns, rows (capped), and whether more rows were left out.

        Raises:
            QueryTimeout: the query ran past the limit (PostgreSQL; SQLite raises its own).
        """
        if self.backend == "sqlite":
            reset_deadline(self._conn)
            cur = self._conn.cursor()
            try:
                cur.execute(sql)
                cols = [d[0] for d in cur.description] if cur.description else []
                rows = cur.fetchmany(max_rows + 1) if cur.description else []
            finally:
                self._conn.rollback()
                cur.close()
            return cols, [tuple(r) for r in rows[:max_rows]], len(rows) > max_rows
        if self._conn.closed:
            self._conn = self._pg_connect()
        cur = self._conn.cursor()
        try:
            rows = self._watched(cur, sql, max_rows)
            cols = [d[0] for d in cur.description] if cur.description else []
        finally:
            with contextlib.suppress(Exception):
                self._conn.rollback()
            with contextlib.suppress(Exception):
                cur.close()
            if self._conn.broken:
                with contextlib.suppress(Exception):
                    self._conn.close()
        return cols, [tuple(r) for r in rows[:max_rows]], len(rows) > max_rows

    def tables(self) -> list[str]:
        """User tables."""
        if self.backend == "sqlite":
            q = (
                "SELECT name FROM sqlite_master WHERE type='table' "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        else:
            q = (
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_schema='public' ORDER BY table_name"
            )
        return [r[0] for r in self.query(q, 10_000)[1]]

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()


def build_sql_server(
    url: str, server: MCPServer | None = None, *, timeout_s: float = STATEMENT_TIMEOUT_S
) -> MCPServer:
    """An MCP server with read-only access to the database at ``url``.

    With ``server``, the tools are added to that server instead. ``timeout_s`` bounds each
    query's wall time.

    Raises:
        PgRoleError: the PostgreSQL URL's role is a superuser or can write.
    """
    from mcp.server.mcpserver import MCPServer

    db = ReadOnlyDatabase(url, timeout_s=timeout_s)
    server = server or MCPServer(
        "lhbench-sql", instructions="Read-only SQL access to the environment's database."
    )
    add_sql_tools(db, McpTools(server))
    return server


def add_sql_tools(db: ReadOnlyDatabase, server: Registrar) -> None:
    """Register the read-only SQL tools over ``db`` on ``server``."""

    @server.tool()
    def list_tables() -> str:
        """The database's tables."""
        return "\n".join(db.tables()) or "(no tables)"

    @server.tool()
    def describe_table(table: str) -> str:
        """Column names of a table."""
        if table not in db.tables():
            raise ToolFailure(f"no table named {table!r}")
        cols, _, _ = db.query(f'SELECT * FROM "{table}" LIMIT 0')
        return ", ".join(cols)

    @server.tool()
    def query(sql: str, max_rows: int = 50) -> str:
        """Run a read-only SQL query; at most max_rows rows (capped at 200) are returned."""
        try:
            cols, rows, more = db.query(sql, min(max(max_rows, 1), MAX_ROWS))
        except QueryTimeout as exc:
            raise ToolFailure(f"query stopped: {exc}") from None
        except Exception as exc:  # the database's own refusal, e.g. a write on a read-only one
            msg = str(exc).splitlines()[0]
            raise ToolFailure(f"query failed (the database is read-only here): {msg}") from None
        return format_rows(cols, rows, more)


def _cell(value: object) -> str:
    text = "NULL" if value is None else str(value)
    if len(text) > MAX_CELL_CHARS:
        return f"{text[:MAX_CELL_CHARS]}…[value cut: {len(text)} characters]"
    return text


def format_rows(cols: list[str], rows: list[tuple[Any, ...]], more: bool) -> str:
    """Rows as text for a judge, within :data:`MAX_OUTPUT_CHARS`, saying what was cut."""
    out = [" | ".join(cols)]
    size = len(out[0])
    for shown, r in enumerate(rows):
        line = " | ".join(_cell(v) for v in r)
        if size + len(line) + 1 > MAX_OUTPUT_CHARS:
            out.append(
                f"[output cut at {MAX_OUTPUT_CHARS} characters: showing {shown} of "
                f"{len(rows)}{'+' if more else ''} rows]"
            )
            return "\n".join(out)
        out.append(line)
        size += len(line) + 1
    if more:
        out.append(f"[more rows left out: showing the first {len(rows)}]")
    return "\n".join(out)
