"""Appending an imported run's steps in batches, each batch its own transaction.

On SQLite one connection is kept for the whole run, and the commit of a batch (writing
its pages to the WAL) runs on a second thread while the importer builds the next batch:
sqlite3 releases the GIL for the whole COMMIT, so the two overlap. A batch is inserted
only once the previous commit has finished, and ``close`` waits for the last one, so when
it returns every batch is committed, in order, exactly as if each had been committed
inline; a failed commit is raised by the next ``append`` or by ``close``.

The checkpoints that copy the WAL into the database file (and sync it) run on a third
thread with a connection of their own, every few batches, instead of inside a commit the
importer would wait for; a checkpoint never blocks a commit (``PASSIVE``), and what it has
not copied yet stays in the WAL, as durable as before.

On PostgreSQL (psycopg) each batch is one binary COPY in a transaction of its own, on one
connection kept for the run. The importer builds the batch's COPY bytes (``store.pg_copy``:
psycopg's C row formatter) and hands them to a second thread, which sends them, waits for
the server to parse and insert them, and commits, while the importer parses the next
batch; that thread holds the GIL only to hand libpq its buffers (0.1 s of CPU for 247k
rows), and the server works in its own process, on the other core. As on SQLite, a batch
is sent only once the previous one is committed, and ``close`` waits for the last. Two
batches may wait for that thread (the one being sent and the next), so a slow batch in
the server (a checkpoint, another client) does not stop the importer at once: with one,
the importer waited 0.33-0.50 s per 200 MB import for commits while the server's CPU
(2.1 s) was below its own. A failed batch (a row the server refuses, a lost connection)
is raised by the first ``append`` after it is known (at most two later) or by ``close``;
nothing after it is sent (the batch queued behind it is dropped unsent). Inline, the
importer waited for the server on every batch: 0.26 of the ``json.loads`` loop on wall,
its 2.2 s of CPU and the server's 2.1 s adding up (docs/performance.md has the figures
with the thread). Its commits do not wait for the WAL to be synced (``synchronous_commit =
off``, on this connection only, reset before it goes back to the pool): a commit waited
4-18 ms for the sync, with the server idle for this run, and the next batch waited for
it. Nothing is lost by it: PostgreSQL writes the WAL in order, so a server crash can only
drop the last batches, whole (what stays is a prefix), and the run is marked imported by a
commit that does wait for the sync, and for everything before it, so a run that lost
batches is still marked partial and is imported again. The connection also gets a larger
``work_mem`` (reset with it): the steps' run check reads each COPY's rows back from its
transition table, which at the default 4 MB went through a temporary file (server CPU for
the 200 MB bench stream 1.34 -> 1.15 s, medians of two runs side by side).

A large import on a SQLite file (past ``writer_after_rows`` rows) hands its later batches
to a writer process (``store._step_writer``) over a pipe: sqlite3 binds every value with
the GIL held, so on a thread the insert would still share the parser's core, while a
process has a core of its own. The batches are pickled as built and written to its pipe
by a thread (at most two waiting for it, as for PostgreSQL's COPYs), so a writer a batch
or two behind does not stop the importer: written inline, the importer waited 0.06-0.09 s
per 64 MB in those writes. The process converts, inserts and commits each batch in order,
a transaction per batch. A batch that fails there stops the writer; the failure is raised
(``BatchWriteError``) by the first ``append`` after the importer learns of it (the queue,
the pipe and the writer's own read-ahead hold a few batches: with small batches it can
be many appends later) or by ``close``, nothing sent after the failed batch is stored
(what is stored stays a prefix of what was appended), and the appender refuses further
batches. If the importing process dies, the writer commits
the batches it received whole and stops (a batch still waiting for the thread is lost
with the importer, like one it had not built yet: the run stays partial). The importer
hands a file of 16 MiB or more read as one run to the writer from its first batch
(``jobs.imports._WRITER_FROM_START``): the process starts while the second batch is read.

Why a second process, measured (``bench/ingest.py --size 200``: a 200 MB Claude Code
stream, 247k steps; CPU seconds, medians of 3 rounds; docs/performance.md): the bare
``json.loads`` loop takes 1.21 s. In one process the reading thread parses (1.5-1.8 s)
and runs the executemany (binding every value with the GIL held, then SQLite's inserts):
2.97 s, so even with a core to spare the import is 0.41 of the loop. No other thread can
take the inserts: sqlite3 releases the GIL around each row's step and must win it back
from the parser for the next row's binds, once per switch interval (5 ms). Handing SQLite
a batch as one JSON text (``json_each``: one hand-over per batch) costs it 1.45 s per
100k rows against executemany's 0.68 s, slower than the parser. With this process the
reading thread takes 2.13 s (parse, pickle) and the writer 1.55 s on the other core: 0.57
(the goal is 0.5). PostgreSQL needs no such process: its server is one already, and its
client releases the GIL while it waits for it. Measured again on a later, slower host
(2026-11-28, loop 1.45 s, 5 rounds each starting on a quiet machine): one process 0.41 of
the loop (reading thread 3.38 s of CPU), with this process 0.51 (reading thread 2.34 s,
writer 1.97 s).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import subprocess
import sys
import tempfile
import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import IO, TYPE_CHECKING, Any, Self

from lhbench.errors import StoreError
from lhbench.store import _step_writer
from lhbench.store.pg_copy import copy_batch, copy_data, step_copy_cursor
from lhbench.store.rows import (
    SQLITE_STEP_INSERT,
    TS_INDEX,
    sqlite_step_insert,
    sqlite_step_params,
)

if TYPE_CHECKING:
    from lhbench.store.runs import RunStore

__all__ = ["BatchWriteError", "StepAppender"]

# a checkpoint is started after this many commits (when none is running): ~25 000 rows
_CHECKPOINT_EVERY = 5
# page cache of the appending connection (KiB): a whole batch's pages stay in memory until
# its commit writes them, instead of spilling to the WAL while the batch is inserted
_CACHE_KIB = 16384
_DEFAULT_CACHE = -2000  # SQLite's default cache_size, restored before the connection is pooled
# rows appended in-process before later batches go to a writer process (a small import
# never starts one; why a process at all: the module's docstring, with the bench's figures)
WRITER_AFTER_ROWS = 10_000
# PostgreSQL: work_mem of the COPY connection, reset before it goes back to the pool
_COPY_WORK_MEM = "64MB"
# batches handed to the background thread at most (the one being sent and the next):
# PostgreSQL's COPYs, or the writer process's frames; the importer goes on building while
# the server or the writer works through a slow batch
_AHEAD = 2


class BatchWriteError(StoreError):
    """A batch given to the writer process failed; nothing appended after it was stored."""


class StepAppender:
    """Adds flat step rows (``schema.STEP_ROW`` order) to one run, batch by batch.

    Use as a context manager (or call ``close``): leaving it waits for the last commit.
    Leaving on an exception still waits, and does not hide that exception.
    """

    def __init__(
        self, store: RunStore, run_id: str, *, writer_after_rows: int | None = WRITER_AFTER_ROWS
    ) -> None:
        self._store = store
        self._run_id = run_id
        self._sqlite = store.backend == "sqlite"
        # PostgreSQL through psycopg: each batch a binary COPY sent on a thread
        self._psycopg = not self._sqlite and store.engine.dialect.driver == "psycopg"
        self._copy_cursors: tuple[Any, Any] = (None, None)
        self._conn: Any = None  # the pooled DBAPI connection (SQLite, or psycopg's)
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        # batches handed to the background thread (PostgreSQL: not yet known committed; the
        # writer process: not yet written to its pipe), oldest first, and the flag that
        # stops the ones queued behind a failed one
        self._queued: deque[Future[None]] = deque()
        self._send_failed = threading.Event()
        self._ckpt_conn: Any = None  # the checkpoints' own pooled connection
        self._ckpt_pool: ThreadPoolExecutor | None = None
        self._ckpt: Future[Any] | None = None
        self._autocheckpoint: int | None = None  # the connection's own setting, restored
        self._commits = 0
        self.rows = 0
        self.writer_batches = 0  # batches handed to the writer process
        # the writer process (None: not started), its stderr, and the file it writes to
        self._writer_after = writer_after_rows
        # whether a writer may be started: a SQLite file that another process can open
        self._may_write = self._sqlite and writer_after_rows is not None and _plain_file(store)
        self._proc: subprocess.Popen[bytes] | None = None
        self._proc_err: IO[bytes] | None = None
        self._writer_ended = False  # the end frame sent
        self._broken: str | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(raise_errors=exc_type is None)

    def append(self, rows: Sequence[Sequence[Any]]) -> None:
        """Insert ``rows`` in a transaction of their own (committed in the background).

        ``rows`` is read until its batch is committed (on PostgreSQL a batch refused for a
        NUL character is built again from it, and up to two batches are queued): do not
        change it before the second append after this one, or before ``close``.
        """
        if not rows:
            return
        if self._broken is not None:
            raise BatchWriteError(self._broken)
        try:
            self._append(rows)
        except BaseException as exc:
            # whatever stopped this batch (a value that neither binds nor pickles, a failed
            # insert, an interrupt) stops every later one: what is stored stays a prefix
            if self._broken is None:
                self._broken = self._reason(f"{type(exc).__name__}: {exc}")
            raise

    def _append(self, rows: Sequence[Sequence[Any]]) -> None:
        if not self._sqlite:
            if self._psycopg:
                self._copy(rows)
            else:  # another DBAPI driver (psycopg2): inline multi-row INSERTs
                self._store.append_step_rows(self._run_id, rows)
            self.rows += len(rows)
            return
        if self._proc is None and self._may_write and self.rows >= (self._writer_after or 0):
            self._start_writer()
        if self._proc is not None:
            self._send(rows)
            self.rows += len(rows)
            self.writer_batches += 1
            return
        params = sqlite_step_params(self._run_id, rows)  # built while the last commit runs
        self._wait()
        if self._conn is None:
            self._open()
        raw = self._conn.driver_connection
        try:
            cur = raw.cursor()
            try:
                cur.executemany(SQLITE_STEP_INSERT, params)  # opens the transaction
            finally:
                cur.close()
        except BaseException:
            raw.rollback()
            raise
        self.rows += len(rows)
        if self._pool is None:  # an in-memory database: its connection stays on this thread
            raw.commit()
            return
        self._pending = self._pool.submit(raw.commit)
        self._commits += 1
        if self._commits % _CHECKPOINT_EVERY == 0:
            self._checkpoint()

    def _copy(self, rows: Sequence[Sequence[Any]]) -> None:
        """PostgreSQL: build the batch's COPY here, send and commit it on the COPY thread."""
        if self._conn is None:
            self._conn = self._store.engine.raw_connection()
            raw = self._conn.driver_connection
            # a batch's commit does not wait for the WAL's sync (see the module's docstring)
            raw.execute("SET synchronous_commit = off")
            # the steps' run check reads each COPY's rows back from its transition table:
            # at the default 4 MB a batch's (about 9 MB) is written to a temporary file and
            # read from it twice, an eighth of the server's time (perf)
            raw.execute(f"SET work_mem = '{_COPY_WORK_MEM}'")
            raw.commit()
            # one cursor lends this thread its dumpers, the other the COPY thread's (a
            # batch refused for a NUL is built again there)
            self._copy_cursors = (step_copy_cursor(raw), step_copy_cursor(raw))
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="lhbench-copy")
        fmt, send = self._copy_cursors
        data = copy_data(fmt, self._run_id, rows)  # built while earlier batches are sent
        # at most _AHEAD batches queued: the oldest committed (or raised) first
        self._wait(keep=_AHEAD - 1)
        assert self._pool is not None
        raw = self._conn.driver_connection
        self._queued.append(
            self._pool.submit(
                _unless_failed, self._send_failed, copy_batch, raw, send, self._run_id, rows, data
            )
        )

    def _start_writer(self) -> None:
        self._wait()  # the batches committed in-process come first
        self._may_write = False  # once: a writer that cannot start is not tried again
        if self._conn is None:
            self._open()
        # the file this connection has open (a relative path was resolved when it opened)
        db = next(
            (
                path
                for _seq, name, path in self._conn.driver_connection.execute("PRAGMA database_list")
                if name == "main"
            ),
            "",
        )
        script = _step_writer.__file__
        if not db or not script or not os.path.isfile(script):
            return  # in-memory, or the package is not on disk as files (a zipapp): in-process
        run = _run_literal(self._conn.driver_connection, self._run_id)
        if run is None:
            return  # an id SQLite cannot name in a statement's text: in-process
        # its stderr goes to a file, not a pipe, which could fill up; closed in _stop_writer
        self._proc_err = tempfile.TemporaryFile()  # noqa: SIM115
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", script],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=self._proc_err,
            )
        except OSError:  # no interpreter to start (an embedded Python): stay in-process
            self._proc_err.close()
            self._proc_err = None
            return
        header = {
            "db": db,
            "sql": sqlite_step_insert(run),
            "run_id": self._run_id,
            "ts_index": TS_INDEX,
        }
        stdin = self._proc.stdin
        assert stdin is not None
        try:  # a few hundred bytes: the pipe takes them before the writer reads
            _step_writer.write_frame(stdin, header)
        except OSError:  # a broken pipe: the writer has stopped already
            self._fail(self._stop_writer() or "the writer process stopped")

    def _send(self, rows: Sequence[Sequence[Any]]) -> None:
        """Pickle a batch here, and write it to the writer's pipe on the background thread.

        The pickling holds the GIL wherever it runs; the write does not, and waits whenever
        the writer is a few batches behind: on the thread, the importer goes on building.
        """
        proc = self._proc
        assert proc is not None and proc.stdin is not None and self._pool is not None
        data = pickle.dumps(rows, protocol=pickle.HIGHEST_PROTOCOL)
        self._wait(keep=_AHEAD - 1)  # a write that failed is raised here (or by close)
        if proc.poll() is not None:  # it stopped on an earlier batch
            self._fail(self._stop_writer() or "the writer process stopped")
        self._queued.append(
            self._pool.submit(
                _unless_failed, self._send_failed, _step_writer.write_pickled, proc.stdin, data
            )
        )

    def _reason(self, reason: str) -> str:
        return (
            f"storing the steps of run {self._run_id!r} failed: {reason}; "
            "the batches appended after the failed one were not stored"
        )

    def _fail(self, reason: str, cause: BaseException | None = None) -> None:
        self._broken = self._reason(reason)
        raise BatchWriteError(self._broken) from cause

    def _stop_writer(self) -> str | None:
        """End the writer's stream, wait for it; its error, if it failed.

        Interrupted (Ctrl-C while a frame waits for a writer that is behind, or while the
        writer commits its last batch), it leaves what it has not done yet to a second call.
        """
        proc = self._proc
        if proc is None:
            return None
        assert proc.stdin is not None
        queued = self._queued
        while queued:  # the frames still queued are written (or dropped) first
            with contextlib.suppress(Exception):  # a failed write: the status says why
                queued[0].result()
            queued.popleft()
        if not self._writer_ended:
            with contextlib.suppress(OSError):  # it has stopped already: its status says why
                _step_writer.write_frame(proc.stdin, None)
            self._writer_ended = True
            with contextlib.suppress(OSError):
                proc.stdin.close()
        code = proc.wait()
        self._proc = None
        err = self._proc_err
        self._proc_err = None
        message = ""
        if err is not None:
            err.seek(0)
            tail = err.read()[-4000:].decode(errors="replace").strip()
            err.close()
            message = tail.splitlines()[-1] if tail else ""
        if code == 0:
            return None
        return message or f"the writer process exited with status {code}"

    def _open(self) -> None:
        self._conn = self._store.engine.raw_connection()
        raw = self._conn.driver_connection
        self._autocheckpoint = raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        raw.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own thread
        raw.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
        if not _in_memory(self._store):
            self._pool = ThreadPoolExecutor(1, thread_name_prefix="lhbench-commit")

    def _checkpoint(self) -> None:
        """Start a checkpoint of the commits so far, unless one is still running."""
        if self._ckpt is not None:
            if not self._ckpt.done():
                return
            self._ckpt.result()  # a failed checkpoint is raised (nothing was lost by it)
        if self._ckpt_conn is None:
            self._ckpt_conn = self._store.engine.raw_connection()
            self._ckpt_pool = ThreadPoolExecutor(1, thread_name_prefix="lhbench-checkpoint")
        assert self._ckpt_pool is not None
        raw = self._ckpt_conn.driver_connection
        self._ckpt = self._ckpt_pool.submit(_passive_checkpoint, raw)

    @property
    def failure(self) -> str | None:
        """Why a batch was not stored (None while every batch was): nothing after it was."""
        return self._broken

    def _wait(self, keep: int = 0) -> None:
        """Wait for the last commit, and for the queued batches until ``keep`` are left.

        The queued batches: PostgreSQL's COPYs, or the frames for the writer's pipe. A
        failed batch is raised (``BatchWriteError``) by the first wait after it is known (on
        PostgreSQL an append at most two later; with a writer process once it has stopped
        on it, see the module's docstring; or ``close``); the batches queued behind it were
        not sent.
        """
        pending, self._pending = self._pending, None
        if pending is not None:
            try:
                pending.result()
            except Exception as exc:  # a failed commit: that batch is lost, and the next
                self._fail(f"{type(exc).__name__}: {exc}", exc)
        queued = self._queued
        # the batches already done first (a failure is raised as soon as it is known), then
        # the oldest waited for until at most ``keep`` are queued
        while queued and (len(queued) > keep or queued[0].done()):
            try:
                queued.popleft().result()
            except _NotSent:
                continue  # behind a failed batch, which was (or is being) raised
            except Exception as exc:
                if self._proc is not None:  # the writer's pipe: its own error says why
                    self._fail(self._stop_writer() or "the writer process stopped", exc)
                self._fail(f"{type(exc).__name__}: {exc}", exc)

    def close(self, *, raise_errors: bool = True) -> None:
        """Wait for the last commit and give the connection back (raising a failed commit)."""
        error: BaseException | None = None
        try:
            self._wait()
        except BaseException as exc:
            error = exc
        if self._proc is not None:
            reason = self._stop_writer()
            if reason is not None and self._broken is None:
                try:
                    self._fail(reason)
                except BatchWriteError as exc:
                    error = error or exc
        if self._ckpt is not None:
            ckpt, self._ckpt = self._ckpt, None
            try:
                ckpt.result()
            except BaseException as exc:
                error = error or exc
        for pool in (self._pool, self._ckpt_pool):
            if pool is not None:
                pool.shutdown(wait=True)
        self._pool = self._ckpt_pool = None
        if self._ckpt_conn is not None:
            ckpt_conn, self._ckpt_conn = self._ckpt_conn, None
            ckpt_conn.close()
        for cur in self._copy_cursors:
            if cur is not None:
                cur.close()
        self._copy_cursors = (None, None)
        if self._conn is not None and not self._sqlite:
            conn, self._conn = self._conn, None
            raw = conn.driver_connection
            try:
                # what the pool's next user gets: the server's own setting
                raw.execute("RESET synchronous_commit")
                raw.execute("RESET work_mem")
                raw.commit()
            except Exception:  # a killed connection is not given back to the pool
                conn.invalidate()
            conn.close()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            try:
                raw = conn.driver_connection
                if raw.in_transaction:  # a failed commit leaves it open: nothing more is kept
                    raw.rollback()
                raw.execute(f"PRAGMA cache_size={_DEFAULT_CACHE}")
                if self._autocheckpoint is not None:
                    raw.execute(f"PRAGMA wal_autocheckpoint={int(self._autocheckpoint)}")
            finally:
                conn.close()
        if error is not None and raise_errors:
            raise error


class _NotSent(Exception):
    """A batch queued behind a failed one: not sent (what is stored stays a prefix)."""


def _unless_failed(failed: threading.Event, send: Any, *args: Any) -> None:
    # the background thread's task (a COPY, a frame to the writer): batches run in the
    # order queued; after a failure none is sent
    if failed.is_set():
        raise _NotSent
    try:
        send(*args)
    except BaseException:
        failed.set()
        raise


def _in_memory(store: RunStore) -> bool:
    url = store.engine.url
    return url.database in (None, "", ":memory:") or url.query.get("mode") == "memory"


def _plain_file(store: RunStore) -> bool:
    """Whether the store is a SQLite file another process can open by its path alone."""
    url = store.engine.url
    db = url.database
    return bool(db) and db != ":memory:" and not (db or "").startswith("file:") and not url.query


def _run_literal(raw: Any, run_id: str) -> str | None:
    """The run's id as a SQLite literal (its own ``quote()``), if it reads back as the id."""
    if "\x00" in run_id:  # a statement's text ends at a NUL
        return None
    (literal,) = raw.execute("SELECT quote(?)", (run_id,)).fetchone()
    if type(literal) is not str:
        return None
    (same,) = raw.execute(f"SELECT {literal} IS ?", (run_id,)).fetchone()
    return literal if same == 1 else None


def _passive_checkpoint(raw: Any) -> Any:
    # copies what is committed into the database file without waiting for (or blocking)
    # the writer; the GIL is released while it runs
    return raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
