"""A child process that inserts and commits a run's step rows, batch by batch, in SQLite.

A large import parses on one core; the rows' insert (sqlite3 binds every value with the
GIL held) would take as long again on the same core. ``store.bulk.StepAppender`` hands
the batches of a large import to this process instead, over a pipe, so the two run on two
cores. Each batch is its own transaction, committed in the order sent; the first batch
that fails stops the process (nothing after it is stored, so what is stored is always a
prefix of what was sent), and its error is the last line written to stderr.

This module imports only the standard library: it starts in a few tens of milliseconds,
as a script (``python -I -S _step_writer.py``), without the package around it.

The protocol on stdin: frames of an 8-byte little-endian length and a pickle. The first
frame is the header ``{"db", "sql", "run_id", "ts_index"}``, each later one a list of rows
(``schema.STEP_ROW`` order, timestamps as datetimes); a zero-length frame ends the stream.
``sql`` inserts one row and names the run by a literal (``rows.sqlite_step_insert``): the
rows are inserted as they arrive, their timestamps made text in place, nothing appended.
The pipe is the parent's own: nothing else writes to it.

The steps' foreign key to their run is checked once per batch instead of once per row:
every row of a batch names the same run (the literal in ``sql``), the batch's transaction
takes the write lock before the check (``BEGIN IMMEDIATE``), and no other connection can
delete the run until it commits; SQLite's own check looked the run up again for each row.
"""

from __future__ import annotations

import gc
import os
import pickle
import queue
import signal
import sqlite3
import struct
import sys
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import IO, Any, cast

__all__ = [
    "read_frame",
    "register_adapters",
    "sqlite_step_params",
    "sqlite_timestamp",
    "timestamps_as_text",
    "write_frame",
    "write_pickled",
]

_LEN = struct.Struct("<Q")
_MAX_FRAME = 1 << 40  # a frame longer than this is not one the parent wrote
_QUEUED = 2  # batches read ahead of the insert (each a few MiB)
_CHECKPOINT_EVERY = 5  # commits between passive checkpoints (~25 000 rows)
_CACHE_KIB = 16384  # a batch's pages stay in memory until its commit writes them
_NULL: dict[None, None] = {}
# the steps' foreign key, checked once per batch (see the module's docstring)
_RUN_CHECK = "SELECT 1 FROM runs WHERE id = ?"


def register_adapters() -> None:
    """Bind None and booleans without sqlite3's failed adapter lookup (process-wide).

    sqlite3 binds int, float, str and bytes directly; any other value goes through its
    adapter lookup first, which fails slowly (an AttributeError made, formatted and cleared
    per value). A bulk insert binds millions of NULLs and booleans: these adapters give the
    same values the failed lookup ends with (NULL, 0/1).
    """
    # {}.get(None) is None (bound as NULL), called in C: cheaper than a Python function
    sqlite3.register_adapter(type(None), cast(Callable[[None], None], _NULL.get))
    sqlite3.register_adapter(bool, int)


def sqlite_timestamp(ts: datetime) -> str:
    """An aware datetime as the naive UTC text SQLite keeps (``2026-03-02 10:00:00.500000``)."""
    if ts.tzinfo is UTC:  # what importers hand in: only the "+00:00" to drop
        return ts.isoformat(sep=" ")[:-6]
    return ts.astimezone(UTC).replace(tzinfo=None).isoformat(sep=" ")


def timestamps_as_text(rows: list[Any], ts_index: int) -> None:
    """Each row's timestamp, in place, as the naive UTC text SQLite keeps (a tuple: a list).

    A timestamp is converted once however many rows share it (importers hand the same
    object to every step of a line).
    """
    last: datetime | None = None
    text: str | None = None
    for i, r in enumerate(rows):
        if type(r) is not list:
            r = rows[i] = list(r)
        ts = r[ts_index]
        if ts is not last:
            last = ts
            text = None if ts is None else sqlite_timestamp(ts)
        r[ts_index] = text


def sqlite_step_params(run_id: str, rows: Iterable[Sequence[Any]], ts_index: int) -> list[Any]:
    """Flat step rows as SQLite parameters (timestamps as the naive UTC text SQLite keeps).

    New lists, ``run_id`` last; a timestamp is converted once however many rows share it.
    """
    out: list[Any] = []
    add = out.append
    last: datetime | None = None
    text: str | None = None
    for r in rows:
        ts = r[ts_index]
        if ts is not last:
            last = ts
            text = None if ts is None else sqlite_timestamp(ts)
        p = [*r, run_id]
        p[ts_index] = text
        add(p)
    return out


def write_frame(f: IO[bytes], obj: Any) -> None:
    """One frame: the pickle of ``obj`` (``None``: the zero-length end frame)."""
    write_pickled(f, None if obj is None else pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))


def write_pickled(f: IO[bytes], data: bytes | None) -> None:
    """One frame of bytes pickled already (``None``: the zero-length end frame)."""
    if data is None:
        f.write(_LEN.pack(0))
    else:
        f.write(_LEN.pack(len(data)))
        f.write(data)
    f.flush()


def read_frame(f: IO[bytes]) -> bytes | None:
    """The next frame's bytes; None at the end frame or at the end of the stream."""
    head = f.read(_LEN.size)
    if len(head) < _LEN.size:
        return None  # the parent went away: what was committed stays
    (n,) = _LEN.unpack(head)
    if n == 0:
        return None
    if n > _MAX_FRAME:
        raise ValueError(f"frame of {n} bytes")
    data = f.read(n)
    if len(data) < n:
        return None  # cut off mid-frame: that batch was never whole, so it is not stored
    return data


def _reader(f: IO[bytes], q: queue.Queue[bytes | BaseException | None]) -> None:
    try:
        while (data := read_frame(f)) is not None:
            q.put(data)
        q.put(None)
    except BaseException as exc:
        q.put(exc)


def _checkpoint(db: str, wake: threading.Event, stop: threading.Event) -> None:
    # copies what is committed into the database file without blocking the writer
    uri = "file:" + urllib.parse.quote(db) + "?mode=rw"
    conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None, check_same_thread=False)
    try:
        while True:
            wake.wait()
            wake.clear()
            if stop.is_set():
                return
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()


def main() -> int:
    """Read the header and the batches from stdin; insert and commit each in turn."""
    # the batches are lists of lists, millions of them and no cycles: the cyclic collector
    # would scan them again and again
    gc.disable()
    register_adapters()
    stdin = sys.stdin.buffer
    first = read_frame(stdin)
    if first is None:
        return 0
    head = pickle.loads(first)
    db, sql, run_id, ts_index = head["db"], head["sql"], head["run_id"], head["ts_index"]
    # mode=rw: a file that is not there is an error, never a new empty database
    uri = "file:" + urllib.parse.quote(db) + "?mode=rw"
    conn = sqlite3.connect(uri, uri=True, timeout=30, isolation_level=None)
    # the run's key is checked once per batch, under the batch's write lock (see above)
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own thread
    conn.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
    q: queue.Queue[bytes | BaseException | None] = queue.Queue(_QUEUED)
    threading.Thread(target=_reader, args=(stdin, q), daemon=True).start()
    wake, stop = threading.Event(), threading.Event()
    ckpt = threading.Thread(target=_checkpoint, args=(db, wake, stop), daemon=True)
    ckpt.start()
    commits = 0
    try:
        while True:
            item = q.get()
            if item is None:
                return 0
            if isinstance(item, BaseException):
                raise item
            rows = pickle.loads(item)
            del item
            timestamps_as_text(rows, ts_index)
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute(_RUN_CHECK, (run_id,)).fetchone() is None:
                    # what SQLite's own check says (the parent reports it as the batch's)
                    raise sqlite3.IntegrityError("FOREIGN KEY constraint failed")
                conn.executemany(sql, rows)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            commits += 1
            if commits % _CHECKPOINT_EVERY == 0:
                wake.set()
    finally:
        stop.set()
        wake.set()
        ckpt.join()
        conn.close()


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group: the parent decides; the writer stops at EOF
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        code = main()
    except BaseException as exc:
        # the parent reports this line as the batch's failure
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        code = 1
    # no interpreter shutdown: the reader thread may be blocked in stdin.read() holding its
    # buffer's lock, and finalizing would abort ("Fatal Python error: _enter_buffered_busy")
    os._exit(code)
