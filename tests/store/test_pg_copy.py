"""The binary COPY's bytes: psycopg's C row formatter called straight against ``Copy.write_row``."""

from __future__ import annotations

from typing import Any

import pytest

from lhbench.store import Store, pg_copy
from tests.store.test_bulk import _pg_rows


def _both(pg_url: str, rows: list[Any], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    with Store.open(pg_url) as store:
        conn = store.engine.raw_connection()
        try:
            cur = pg_copy.step_copy_cursor(conn.driver_connection)
            fast = pg_copy.copy_data(cur, "run-1", rows)
            with monkeypatch.context() as m:
                m.setattr(pg_copy, "_row_formatter", lambda: None)  # Copy.write_row's path
                slow = pg_copy.copy_data(cur, "run-1", rows)
            cur.close()
        finally:
            conn.close()
    return fast, slow


def test_the_fast_path_is_taken_and_writes_the_bytes_copy_write_row_writes(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert pg_copy._row_formatter() is not None  # the locked psycopg has the C formatter
    # every column type, NULLs, times with offsets, JSON text, NUL characters (sent as they
    # are: the server refuses them, and the batch is built again without them)
    rows = _pg_rows(600)
    assert any("\x00" in v for r in rows for v in r if isinstance(v, str))
    fast, slow = _both(pg_url, rows, monkeypatch)
    assert isinstance(slow, bytes) and slow.startswith(b"PGCOPY\n\xff\r\n\x00")
    assert fast is not None and bytes(fast) == slow
    empty_fast, empty_slow = _both(pg_url, [], monkeypatch)
    assert empty_fast is not None and bytes(empty_fast) == empty_slow  # signature, trailer
