"""Read-only SQL tools over MCP.

Queries run on a read-only connection, so a write fails in the database itself (SQLite
``mode=ro`` + ``query_only``; PostgreSQL read-only transactions), not by matching the
text of the statement.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from sqlalchemy.engine import make_url

__all__ = ["MAX_ROWS", "ReadOnlyDatabase", "build_sql_server"]

MAX_ROWS = 200


_SQLITE_ALLOWED = {
    sqlite3.SQLITE_SELECT,
    sqlite3.SQLITE_READ,
    sqlite3.SQLITE_FUNCTION,
    sqlite3.SQLITE_RECURSIVE,
}


def _sqlite_read_only(
    action: int, arg1: str | None, arg2: str | None, db: str | None, src: str | None
) -> int:
    if action in _SQLITE_ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA and arg2 is None:
        return sqlite3.SQLITE_OK  # reading a pragma, not setting one
    return sqlite3.SQLITE_DENY


class ReadOnlyDatabase:
    """A read-only connection to a SQLite file or PostgreSQL database."""

    def __init__(self, url: str) -> None:
        parsed = make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
        self.backend = parsed.get_backend_name()
        if self.backend == "sqlite":
            self._conn: Any = sqlite3.connect(
                f"file:{parsed.database}?mode=ro", uri=True, check_same_thread=False
            )
            self._conn.execute("PRAGMA query_only = ON")
            # SQLite's authorizer, checked by the engine while it compiles each statement:
            # reads only (mode=ro alone still lets ATTACH create files elsewhere)
            self._conn.set_authorizer(_sqlite_read_only)
        else:
            import psycopg

            conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
            self._conn = psycopg.connect(
                conninfo, options="-c default_transaction_read_only=on", autocommit=False
            )

    def query(
        self, sql: str, max_rows: int = MAX_ROWS
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Columns, rows (capped), and whether more rows were left out."""
        cur = self._conn.cursor()
        try:
            if self.backend != "sqlite":
                cur.execute("BEGIN READ ONLY")
            cur.execute(sql)
            cols = [d[0] for d in cur.description] if cur.description else []
            rows = cur.fetchmany(max_rows + 1) if cur.description else []
        finally:
            self._conn.rollback()
            cur.close()
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


def build_sql_server(url: str, server: MCPServer | None = None) -> MCPServer:
    """An MCP server with read-only access to the database at ``url``.

    With ``server``, the tools are added to that server instead.
    """
    db = ReadOnlyDatabase(url)
    server = server or MCPServer(
        "lhbench-sql", instructions="Read-only SQL access to the environment's database."
    )

    @server.tool()
    def list_tables() -> str:
        """The database's tables."""
        return "\n".join(db.tables()) or "(no tables)"

    @server.tool()
    def describe_table(table: str) -> str:
        """Column names of a table."""
        if table not in db.tables():
            raise ToolError(f"no table named {table!r}")
        cols, _, _ = db.query(f'SELECT * FROM "{table}" LIMIT 0')
        return ", ".join(cols)

    @server.tool()
    def query(sql: str, max_rows: int = 50) -> str:
        """Run a read-only SQL query; at most max_rows rows (capped at 200) are returned."""
        try:
            cols, rows, more = db.query(sql, min(max(max_rows, 1), MAX_ROWS))
        except Exception as exc:  # the database's own refusal, e.g. a write on a read-only one
            msg = str(exc).splitlines()[0]
            raise ToolError(f"query failed (the database is read-only here): {msg}") from None
        out = [" | ".join(cols)] + [
            " | ".join("NULL" if v is None else str(v) for v in r) for r in rows
        ]
        if more:
            out.append(f"[more rows left out: showing the first {len(rows)}]")
        return "\n".join(out)

    return server
