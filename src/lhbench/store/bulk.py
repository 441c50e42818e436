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
not copied yet stays in the WAL, as durable as before. On PostgreSQL each batch is
inserted and committed inline.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Self

from lhbench.store.rows import SQLITE_STEP_INSERT, sqlite_step_params

if TYPE_CHECKING:
    from lhbench.store.runs import RunStore

__all__ = ["StepAppender"]

# a checkpoint is started after this many commits (when none is running): ~25 000 rows
_CHECKPOINT_EVERY = 5
# page cache of the appending connection (KiB): a whole batch's pages stay in memory until
# its commit writes them, instead of spilling to the WAL while the batch is inserted
_CACHE_KIB = 16384
_DEFAULT_CACHE = -2000  # SQLite's default cache_size, restored before the connection is pooled


class StepAppender:
    """Adds flat step rows (``schema.STEP_ROW`` order) to one run, batch by batch.

    Use as a context manager (or call ``close``): leaving it waits for the last commit.
    Leaving on an exception still waits, and does not hide that exception.
    """

    def __init__(self, store: RunStore, run_id: str) -> None:
        self._store = store
        self._run_id = run_id
        self._sqlite = store.backend == "sqlite"
        self._conn: Any = None  # the pooled DBAPI connection (SQLite)
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None
        self._ckpt_conn: Any = None  # the checkpoints' own pooled connection
        self._ckpt_pool: ThreadPoolExecutor | None = None
        self._ckpt: Future[Any] | None = None
        self._autocheckpoint: int | None = None  # the connection's own setting, restored
        self._commits = 0
        self.rows = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.close(raise_errors=exc_type is None)

    def append(self, rows: Sequence[Sequence[Any]]) -> None:
        """Insert ``rows`` in a transaction of their own (committed in the background)."""
        if not rows:
            return
        if not self._sqlite:
            self._store.append_step_rows(self._run_id, rows)
            self.rows += len(rows)
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
        assert self._pool is not None
        self._pending = self._pool.submit(raw.commit)
        self.rows += len(rows)
        self._commits += 1
        if self._commits % _CHECKPOINT_EVERY == 0:
            self._checkpoint()

    def _open(self) -> None:
        self._conn = self._store.engine.raw_connection()
        raw = self._conn.driver_connection
        self._autocheckpoint = raw.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        raw.execute("PRAGMA wal_autocheckpoint=0")  # checkpoints run on their own thread
        raw.execute(f"PRAGMA cache_size=-{_CACHE_KIB}")
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

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()  # a failed commit is raised here

    def close(self, *, raise_errors: bool = True) -> None:
        """Wait for the last commit and give the connection back (raising a failed commit)."""
        error: BaseException | None = None
        try:
            self._wait()
        except BaseException as exc:
            error = exc
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


def _passive_checkpoint(raw: Any) -> Any:
    # copies what is committed into the database file without waiting for (or blocking)
    # the writer; the GIL is released while it runs
    return raw.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
