"""SQLite connections that untrusted SQL cannot use to leave their database or stall.

SQLite's authorizer is consulted while each statement compiles: it refuses ``ATTACH``
(which ``VACUUM INTO`` also goes through, and which can create files anywhere),
``DETACH``, pragmas that change state, and functions that reach outside SQL
(``load_extension``, ``fts3_tokenizer``, which leaks a pointer and can crash the process).
A length limit stops ``zeroblob(4e8)`` and friends; a progress handler ends a statement past
its deadline (endless recursive queries). A read-only connection refuses every write too.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "DENIED_FUNCTIONS",
    "MAX_VALUE_BYTES",
    "READ_PRAGMAS",
    "GuardedConnection",
    "guarded_connection",
    "reset_deadline",
]

DENIED_FUNCTIONS = frozenset({"load_extension", "fts3_tokenizer", "readfile", "writefile", "edit"})
# pragmas that only read (without an argument): a judge may look at a schema with them
READ_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "table_list",
        "database_list",
        "collation_list",
        "function_list",
        "user_version",
        "schema_version",
        "page_count",
        "page_size",
        "encoding",
        "integrity_check",
        "quick_check",
    }
)
MAX_VALUE_BYTES = 10 << 20

_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE}
_WRITES = {
    sqlite3.SQLITE_INSERT,
    sqlite3.SQLITE_UPDATE,
    sqlite3.SQLITE_DELETE,
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_VIEW,
    sqlite3.SQLITE_CREATE_TRIGGER,
    sqlite3.SQLITE_DROP_TABLE,
    sqlite3.SQLITE_DROP_INDEX,
    sqlite3.SQLITE_DROP_VIEW,
    sqlite3.SQLITE_DROP_TRIGGER,
    sqlite3.SQLITE_ALTER_TABLE,
    sqlite3.SQLITE_TRANSACTION,
    sqlite3.SQLITE_SAVEPOINT,
    sqlite3.SQLITE_REINDEX,
    sqlite3.SQLITE_ANALYZE,
    sqlite3.SQLITE_CREATE_TEMP_TABLE,
    sqlite3.SQLITE_CREATE_TEMP_INDEX,
    sqlite3.SQLITE_CREATE_TEMP_VIEW,
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
    sqlite3.SQLITE_DROP_TEMP_TABLE,
    sqlite3.SQLITE_DROP_TEMP_INDEX,
    sqlite3.SQLITE_DROP_TEMP_VIEW,
    sqlite3.SQLITE_DROP_TEMP_TRIGGER,
}


Authorizer = Callable[[int, str | None, str | None, str | None, str | None], int]


def _authorizer(read_only: bool) -> Authorizer:
    def check(
        action: int, arg1: str | None, arg2: str | None, db: str | None, _src: str | None
    ) -> int:
        if action in _READS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_FUNCTION:
            return (
                sqlite3.SQLITE_DENY
                if (arg2 or "").lower() in DENIED_FUNCTIONS
                else sqlite3.SQLITE_OK
            )
        if action == sqlite3.SQLITE_PRAGMA:
            # reading a schema pragma is fine; setting any pragma is not
            return (
                sqlite3.SQLITE_OK
                if (arg1 or "").lower() in READ_PRAGMAS and arg2 is None
                else sqlite3.SQLITE_DENY
            )
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return sqlite3.SQLITE_DENY
        if action in _WRITES:
            return sqlite3.SQLITE_DENY if read_only else sqlite3.SQLITE_OK
        return sqlite3.SQLITE_DENY

    return check


class GuardedConnection(sqlite3.Connection):
    """A connection that carries its statement deadline."""

    deadline: float = 0.0
    budget: float = 0.0


def guarded_connection(
    path: Path, *, read_only: bool, timeout_s: float = 10.0, create: bool = False
) -> GuardedConnection:
    """A connection to ``path`` with the authorizer, value-size limit and time limit.

    ``timeout_s`` bounds each statement (reset with :func:`reset_deadline` between
    statements of a long script: the handler reads ``conn.lhbench_deadline``).
    """
    if read_only:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, check_same_thread=False, factory=GuardedConnection
        )
        conn.execute("PRAGMA query_only = ON")
    else:
        if not create and not path.exists():
            raise FileNotFoundError(path)
        conn = sqlite3.connect(path, check_same_thread=False, factory=GuardedConnection)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, MAX_VALUE_BYTES)
    conn.setlimit(sqlite3.SQLITE_LIMIT_ATTACHED, 0)
    assert isinstance(conn, GuardedConnection)
    conn.budget = timeout_s
    conn.deadline = time.monotonic() + timeout_s

    def progress() -> int:
        return 1 if time.monotonic() > conn.deadline else 0

    conn.set_progress_handler(progress, 10_000)
    conn.set_authorizer(_authorizer(read_only))
    return conn


def reset_deadline(conn: GuardedConnection) -> None:
    """Give the next statement its own full time budget."""
    conn.deadline = time.monotonic() + conn.budget
