"""Read-only SQL tools over MCP.

Queries run on a read-only connection, so a write fails in the database itself (SQLite
``mode=ro`` + ``query_only`` + an authorizer; PostgreSQL read-only transactions under a
SELECT-only role), not by matching the text of the statement. Each statement has a time
limit, and answers are cut by rows, by value length and by total size, saying so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from sqlalchemy.engine import make_url

from lhbench.envs.sqlite_guard import guarded_connection, reset_deadline

__all__ = [
    "MAX_CELL_CHARS",
    "MAX_OUTPUT_CHARS",
    "MAX_ROWS",
    "ReadOnlyDatabase",
    "build_sql_server",
    "format_rows",
]

MAX_ROWS = 200
MAX_CELL_CHARS = 2_000  # one value as shown to the judge
MAX_OUTPUT_CHARS = 64_000  # one tool answer
STATEMENT_TIMEOUT_S = 10.0


class ReadOnlyDatabase:
    """A read-only connection to a SQLite file or PostgreSQL database.

    SQLite goes through :func:`~lhbench.envs.sqlite_guard.guarded_connection` (read-only,
    authorizer, value-size and time limits); PostgreSQL through a read-only session with
    a statement timeout (the replay gives judges a SELECT-only role as well).
    """

    def __init__(self, url: str, *, timeout_s: float = STATEMENT_TIMEOUT_S) -> None:
        parsed = make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
        self.backend = parsed.get_backend_name()
        if self.backend == "sqlite":
            self._conn: Any = guarded_connection(
                Path(parsed.database or ""), read_only=True, timeout_s=timeout_s
            )
        else:
            import psycopg

            conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
            self._conn = psycopg.connect(
                conninfo,
                options=(
                    "-c default_transaction_read_only=on "
                    f"-c statement_timeout={int(timeout_s * 1000)}"
                ),
                autocommit=False,
            )

    def query(
        self, sql: str, max_rows: int = MAX_ROWS
    ) -> tuple[list[str], list[tuple[Any, ...]], bool]:
        """Columns, rows (capped), and whether more rows were left out."""
        if self.backend == "sqlite":
            reset_deadline(self._conn)
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
        return format_rows(cols, rows, more)

    return server


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
