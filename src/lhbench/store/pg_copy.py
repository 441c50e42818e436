"""Step rows into PostgreSQL by binary COPY: the data built in one place, sent in another.

``copy_data`` turns a batch into the bytes of a whole binary COPY (signature, rows,
trailer) with psycopg's own C row formatter, and ``send_copy`` sends such bytes in a COPY
of the connection's open transaction. Split so that an importer builds a batch's bytes
on its own thread while another thread, which needs the GIL only to hand libpq a few
buffers, sends the previous batch and waits for the server (``store.bulk``).

PostgreSQL keeps no NUL character (text) nor an escaped NUL (jsonb), which
``rows.pg_step_params`` replaces. They are rare in transcripts, so a batch is built with
them replaced only once it was refused for one (``copy_data`` gives None when psycopg
refuses it, ``send_copy`` raises the server's ``DataError``; the caller then builds the
batch again from ``pg_step_params`` in a new transaction: nothing is stored twice).
"""

from __future__ import annotations

import contextlib
import functools
import io
from collections.abc import Iterable, Sequence
from typing import Any

from lhbench.store.rows import PG_STEP_COPY, PG_STEP_TYPES, pg_step_params

__all__ = ["copy_batch", "copy_data", "send_copy", "step_copy_cursor"]

# libpq's output buffer takes a whole batch (a few MB) without waiting for the socket:
# the sending thread then waits once, at the end of the COPY, with the GIL released,
# rather than once a megabyte (psycopg's default), each wake-up waiting for the GIL
_NO_FLUSH = 1 << 30


def step_copy_cursor(raw: Any) -> Any:
    """A cursor of the psycopg connection ``raw`` whose dumpers write the steps' COPY.

    Its JSON columns hold JSON text: sent as it is (psycopg's own jsonb dumper would
    encode the text as a JSON string).
    """
    cur = raw.cursor()
    cur.adapters.register_dumper(None, _jsonb_text_dumper())
    return cur


def copy_data(cursor: Any, run_id: str, rows: Iterable[Sequence[Any]]) -> bytes | bytearray | None:
    """The binary COPY of ``rows`` (``schema.STEP_ROW`` order, then ``run_id``) as bytes.

    A bytearray where psycopg's C row formatter is called straight (no copy of the batch).

    ``cursor`` (``step_copy_cursor``) only lends its dumpers: nothing is sent. None when
    psycopg refuses a value (a NUL character in a text column).
    """
    from psycopg import DataError
    from psycopg.copy import Copy, FileWriter

    buf = io.BytesIO()
    copy = Copy(cursor, binary=True, writer=FileWriter(buf))
    copy.set_types(PG_STEP_TYPES)
    fast = _row_formatter()
    try:
        if fast is not None:
            # psycopg's own C row formatter called straight into one buffer: the bytes
            # ``Copy.write_row`` writes, without its two Python calls per row
            fmt, signature, trailer = fast
            tx = copy.formatter.transformer
            out = bytearray(signature)
            for r in rows:
                fmt((*r, run_id), tx, out)
            out += trailer
            return out
        write = copy.write_row
        for r in rows:
            write((*r, run_id))
    except DataError:
        return None
    copy.finish(None)
    return buf.getvalue()


@functools.cache
def _row_formatter() -> tuple[Any, bytes, bytes] | None:
    """The binary row formatter of psycopg, the COPY's signature and trailer (None: not found).

    They are psycopg's internals (``psycopg._copy_base``): if a release moves them,
    ``copy_data`` writes through ``Copy.write_row`` instead, which gives the same bytes
    (``tests/store/test_pg_copy.py`` compares the two).
    """
    try:
        from psycopg import _copy_base
    except ImportError:  # pragma: no cover - another psycopg layout
        return None
    fmt = getattr(_copy_base, "format_row_binary", None)
    signature = getattr(_copy_base, "_binary_signature", None)
    trailer = getattr(_copy_base, "_binary_trailer", None)
    if fmt is None or type(signature) is not bytes or type(trailer) is not bytes:
        return None  # pragma: no cover
    return fmt, signature, trailer


def send_copy(raw: Any, data: bytes | bytearray) -> None:
    """COPY ``data`` (``copy_data``'s) into the steps in ``raw``'s transaction, uncommitted."""
    from psycopg.copy import LibpqWriter

    with raw.cursor() as cur:
        writer = LibpqWriter(cur, flush_threshold=_NO_FLUSH)
        with cur.copy(PG_STEP_COPY, writer=writer) as copy:
            copy.write(data)


def copy_batch(
    raw: Any,
    cursor: Any,
    run_id: str,
    rows: Sequence[Sequence[Any]],
    data: bytes | bytearray | None,
) -> None:
    """Store one batch in one transaction of ``raw``, committed when this returns.

    ``data`` is ``copy_data(cursor, run_id, rows)``, or None when psycopg refused it. On
    any failure the transaction is rolled back (nothing of the batch is stored) and the
    error raised.
    """
    from psycopg import DataError

    try:
        if data is not None:
            try:
                send_copy(raw, data)
                raw.commit()
                return
            except DataError:  # a NUL refused by the server (text or jsonb), or another value
                raw.rollback()
        # NULs replaced; a value refused for another reason is raised from here
        clean = [p[:-1] for p in pg_step_params(run_id, rows)]
        again = copy_data(cursor, run_id, clean)
        if again is None:
            raise DataError(f"a step of run {run_id!r} holds a value PostgreSQL cannot store")
        send_copy(raw, again)
        raw.commit()
    except BaseException:
        with contextlib.suppress(Exception):  # a broken connection: nothing to roll back
            raw.rollback()
        raise


@functools.cache
def _jsonb_text_dumper() -> type[Any]:
    """A psycopg dumper of JSON text as binary jsonb (its version byte, 1, then the text)."""
    from psycopg.adapt import Dumper
    from psycopg.postgres import types
    from psycopg.pq import Format

    class JsonbTextDumper(Dumper):
        oid = types["jsonb"].oid
        format = Format.BINARY

        def dump(self, obj: str) -> bytes:
            return b"\x01" + obj.encode()

    return JsonbTextDumper
