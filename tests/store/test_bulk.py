"""The bulk step writer: what it stores, when it is committed, what a failure leaves."""

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from sqlalchemy import text

from lhbench.schema import Role, Step, StepKind
from lhbench.store import Store
from lhbench.store.rows import step_record
from tests.factories import make_run, make_trajectory

_IST = timezone(timedelta(hours=5, minutes=30))


def _rows(n: int) -> list[tuple[Any, ...]]:
    """Rows of every shape: NULLs, booleans, JSON, NUL characters, non-UTC and µs times."""
    steps = list(make_trajectory().steps)
    t0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
    for i in range(len(steps), n):
        steps.append(
            Step(
                index=i,
                role=Role.TOOL if i % 3 else Role.ASSISTANT,
                kind=StepKind.TOOL_RESULT if i % 3 else StepKind.MESSAGE,
                content="" if i % 3 else f"step {i} \x00 é",
                tool_call_id=f"t{i}" if i % 3 else None,
                tool_output=f"out {i}" if i % 3 else None,
                is_error=i % 7 == 0,
                exit_code=(i % 5) if i % 2 else None,
                timestamp=None
                if i % 11 == 0
                else (t0 + timedelta(seconds=i // 2, microseconds=i % 4)).astimezone(
                    _IST if i % 4 == 0 else UTC
                ),
                metadata={"message_id": f"m{i // 2}"} if i % 2 else {},
                agent_id="sub-1" if i % 13 == 0 else None,
            )
        )
    return [step_record(s) for s in steps]


def _stored(store: Store, run_id: str) -> list[tuple[Any, ...]]:
    cols = (
        "idx, role, kind, content, tool_name, tool_call_id, tool_input, tool_output, "
        "is_error, exit_code, timestamp, usage, metadata, agent_id"
    )
    with store.engine.connect() as conn:
        return [
            tuple(r)
            for r in conn.execute(
                text(f"SELECT {cols} FROM steps WHERE run_id = :r ORDER BY idx"), {"r": run_id}
            )
        ]


def test_appender_stores_exactly_what_append_step_rows_stores(store: Store) -> None:
    rows = _rows(1200)
    store.save_run(make_run("bulk"))
    store.save_run(make_run("plain"))
    with store.step_appender("bulk") as out:
        for start in range(0, len(rows), 500):
            out.append(rows[start : start + 500])
        out.append([])
    assert out.rows == len(rows)
    store.append_step_rows("plain", rows)
    assert _stored(store, "bulk") == _stored(store, "plain")
    assert len(_stored(store, "bulk")) == 1200
    got = store.get_trajectory("bulk").steps
    assert got == store.get_trajectory("plain").steps
    assert got[8].timestamp == rows[8][10] and got[8].timestamp.tzinfo == UTC  # stored from +05:30


def test_every_batch_is_committed_in_order_and_before_close_returns(store_url: str) -> None:
    rows = _rows(900)
    with Store.open(store_url) as store, Store.open(store_url, migrate=False) as other:
        store.save_run(make_run("bulk"))
        # an append waits for the batch before it (SQLite) or the one two before it
        # (PostgreSQL, which queues two COPYs): those are committed when it returns
        behind = 1 if store.backend == "sqlite" else 2
        with store.step_appender("bulk") as out:
            for k in range(3):
                out.append(rows[300 * k : 300 * (k + 1)])
                seen = len(_stored(other, "bulk"))
                assert seen % 300 == 0  # whole batches: never part of one
                assert 300 * max(0, k + 1 - behind) <= seen <= 300 * (k + 1)
        # left the context: everything committed, seen from another connection
        assert [r[0] for r in _stored(other, "bulk")] == list(range(900))


def test_a_failed_batch_is_raised_and_leaves_the_store_usable(store: Store) -> None:
    rows = _rows(50)
    store.save_run(make_run("bulk"))
    out = store.step_appender("bulk")
    out.append(rows[:20])
    from lhbench.store.bulk import BatchWriteError

    if store.backend == "sqlite":
        with pytest.raises(Exception, match=r"(?i)unique|duplicate"):
            out.append(rows[10:30])  # indices 10..19 again: the whole batch is refused
        # as with a writer process or PostgreSQL: nothing is stored after a failed batch
        with pytest.raises(BatchWriteError, match=r"(?i)unique"):
            out.append(rows[20:])
        out.close()
        assert [r[0] for r in _stored(store, "bulk")] == list(range(20))
    else:  # the COPYs run on a thread: the refusal comes with a later append, or close
        with pytest.raises(BatchWriteError, match=r"(?i)unique|duplicate"):
            out.append(rows[10:30])
            out.append(rows[20:])
            out.close()
        out.close(raise_errors=False)
        assert [r[0] for r in _stored(store, "bulk")] == list(range(20))
    store.save_run(make_run("after"))  # no transaction or lock left behind
    store.append_step_rows("after", rows[:5])
    assert len(_stored(store, "after")) == 5


def test_leaving_on_an_error_commits_what_was_appended_and_keeps_the_error(
    store: Store,
) -> None:
    rows = _rows(40)
    store.save_run(make_run("bulk"))
    with pytest.raises(RuntimeError, match="reader stopped"), store.step_appender("bulk") as out:
        out.append(rows[:25])
        raise RuntimeError("reader stopped")
    assert [r[0] for r in _stored(store, "bulk")] == list(range(25))
    store.append_step_rows("bulk", rows[25:])  # the import's own recovery path still works
    assert len(_stored(store, "bulk")) == 40


def test_new_sqlite_store_has_large_pages_and_binds_none_and_bools_as_before(
    tmp_path: Any,
) -> None:
    import sqlite3

    with Store.open(f"sqlite:///{tmp_path / 'new.db'}") as store, store.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA page_size").scalar() == 16384
    raw = sqlite3.connect(tmp_path / "old.db")
    raw.execute("CREATE TABLE t (x)")  # an existing store keeps its page size
    raw.commit()
    raw.close()
    old = Store.open(f"sqlite:///{tmp_path / 'old.db'}", migrate=False)
    with old, old.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA page_size").scalar() == 4096
        got = conn.exec_driver_sql(
            "SELECT ?, typeof(?), ?, typeof(?)", (None, None, True, False)
        ).one()
    assert tuple(got) == (None, "null", 1, "integer")


def test_many_batches_with_checkpoints_between_leave_every_row_and_the_settings(
    tmp_path: Any,
) -> None:
    rows = _rows(3000)
    with Store.open(f"sqlite:///{tmp_path / 'b.db'}") as store:
        store.save_run(make_run("bulk"))
        with store.engine.connect() as conn:
            before = conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar()
        with store.step_appender("bulk") as out:
            for start in range(0, len(rows), 100):  # 30 commits: checkpoints start between
                out.append(rows[start : start + 100])
        with store.engine.connect() as conn:  # the connection the appender gave back
            assert conn.exec_driver_sql("PRAGMA wal_autocheckpoint").scalar() == before
            assert conn.exec_driver_sql("PRAGMA cache_size").scalar() == -2000
        assert [r[0] for r in _stored(store, "bulk")] == list(range(3000))
    with Store.open(f"sqlite:///{tmp_path / 'b.db'}", migrate=False) as again:
        assert len(_stored(again, "bulk")) == 3000  # all of it in the file, WAL gone
        assert not (tmp_path / "b.db-wal").exists() or (tmp_path / "b.db-wal").stat().st_size == 0


# --- the writer process (large imports on a SQLite file) ---------------------------------


def _file_store(tmp_path: Any, name: str = "w.db") -> Store:
    return Store.open(f"sqlite:///{tmp_path / name}")


def _writer_started(store: Store, first: list[Any]) -> tuple[Any, Any]:
    """An appender of a new run "bulk" whose writer process took ``first``; and the process."""
    store.save_run(make_run("bulk"))
    out = store.step_appender("bulk", writer_after_rows=0)
    out.append(first)
    assert out._proc is not None
    return out, out._proc


def test_writer_process_stores_exactly_what_the_in_process_path_stores(tmp_path: Any) -> None:
    rows = _rows(2400)
    with _file_store(tmp_path) as store:
        for run_id in ("writer", "mixed", "inproc"):
            store.save_run(make_run(run_id))
        for run_id, after in (("writer", 0), ("mixed", 700), ("inproc", None)):
            with store.step_appender(run_id, writer_after_rows=after) as out:
                for start in range(0, len(rows), 400):
                    out.append(rows[start : start + 400])
            assert out.rows == 2400
            # 0: every batch to the writer; 700: the first two in-process; None: never
            assert out.writer_batches == {"writer": 6, "mixed": 4, "inproc": 0}[run_id]
        assert _stored(store, "writer") == _stored(store, "inproc") == _stored(store, "mixed")
        assert len(_stored(store, "writer")) == 2400
        got = store.get_trajectory("writer").steps
        assert got == store.get_trajectory("inproc").steps
        assert got[8].timestamp == rows[8][10] and got[8].timestamp.tzinfo == UTC


def test_memory_and_postgres_stores_never_start_a_writer(store_url: str) -> None:
    url = "sqlite://" if store_url.startswith("sqlite") else store_url  # in-memory SQLite
    with Store.open(url) as store:
        store.save_run(make_run("bulk"))
        with store.step_appender("bulk", writer_after_rows=0) as out:
            out.append(_rows(300))
        assert out.writer_batches == 0
        assert len(_stored(store, "bulk")) == 300


def _boom_at(store: Store, idx: int) -> None:
    # a batch that fails inside the writer: the insert of one step is refused
    with store.engine.begin() as conn:
        conn.exec_driver_sql(
            f"CREATE TRIGGER boom BEFORE INSERT ON steps WHEN NEW.idx = {idx} "
            "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END"
        )


def test_a_batch_failing_in_the_writer_is_raised_and_nothing_after_it_is_stored(
    tmp_path: Any,
) -> None:
    from lhbench.store.bulk import BatchWriteError

    rows = _rows(1000)
    with _file_store(tmp_path) as store:
        store.save_run(make_run("bulk"))
        _boom_at(store, 450)  # in the third batch of 200
        out = store.step_appender("bulk", writer_after_rows=0)
        with pytest.raises(BatchWriteError, match="disk on fire") as err:
            for start in range(0, len(rows), 200):
                out.append(rows[start : start + 200])
            out.close()
        assert "bulk" in str(err.value) and "not stored" in str(err.value)
        with pytest.raises(BatchWriteError):  # no batch is taken after a failure
            out.append(rows[:1])
        out.close(raise_errors=False)
        assert [r[0] for r in _stored(store, "bulk")] == list(range(400))  # a prefix, no gap
        store.save_run(make_run("after"))  # no lock left behind
        store.append_step_rows("after", rows[:5])
        assert len(_stored(store, "after")) == 5


_KILLED_IMPORTER = """
import os, signal, sys, time
from lhbench.store import Store
from tests.store.test_bulk import _rows
from tests.factories import make_run
rows = _rows(6000)
store = Store.open(sys.argv[1])
store.save_run(make_run("bulk"))
out = store.step_appender("bulk", writer_after_rows=0)
for start in range(0, 4000, 500):
    out.append(rows[start : start + 500])
out._wait()  # the batches queued for the pipe are written to it
print(out._proc.pid, flush=True)
time.sleep(0.2)
out._proc.stdin.write(b"\\x00\\x00\\x10\\x00\\x00\\x00\\x00\\x00partial")  # a frame cut off
out._proc.stdin.flush()
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_importer_leaves_the_whole_batches_it_sent_and_no_writer_behind(
    tmp_path: Any,
) -> None:
    import os
    import subprocess
    import sys
    import time
    from pathlib import Path

    url = f"sqlite:///{tmp_path / 'k.db'}"
    proc = subprocess.run(
        [sys.executable, "-c", _KILLED_IMPORTER, url],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )
    assert proc.returncode == -9, proc.stderr
    pid = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 30
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the writer sees its stdin end and stops (it is not our child)
    assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    with Store.open(url, migrate=False) as store:
        assert [r[0] for r in _stored(store, "bulk")] == list(range(4000))  # 8 whole batches
    os.sync()


def _zombie(pid: int) -> bool:
    from pathlib import Path

    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return True


def test_a_writer_behind_holds_the_importer_only_past_two_queued_batches(tmp_path: Any) -> None:
    import os
    import signal
    import threading

    rows = _rows(12_001)
    with _file_store(tmp_path) as store:
        # one row: its frame fits in the pipe
        out, proc = _writer_started(store, rows[:1])
        os.kill(proc.pid, signal.SIGSTOP)  # the writer stops reading

        def two() -> None:
            out.append(rows[1:4001])
            out.append(rows[4001:8001])

        early = threading.Thread(target=two)
        fourth = threading.Thread(target=out.append, args=(rows[8001:],))
        try:
            # each frame is larger than the pipe: the second blocks the background
            # thread's write, the third waits behind it; neither blocks the importer
            early.start()
            early.join(5)
            assert not early.is_alive()
            fourth.start()
            fourth.join(0.5)
            assert fourth.is_alive()  # the fourth waits until the second is written
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        fourth.join(30)
        assert not fourth.is_alive()
        out.close()
        assert [r[0] for r in _stored(store, "bulk")] == list(range(12_001))


def test_ctrl_c_twice_while_close_waits_for_the_writer_loses_and_leaks_nothing(
    tmp_path: Any,
) -> None:
    import os
    import signal
    from pathlib import Path

    def interrupt(*_: Any) -> None:
        raise KeyboardInterrupt

    rows = _rows(8_001)
    with _file_store(tmp_path) as store:
        out, proc = _writer_started(store, rows[:1])
        os.kill(proc.pid, signal.SIGSTOP)  # a writer behind: close waits for it
        out.append(rows[1:4001])  # two frames larger than the pipe, queued
        out.append(rows[4001:])
        before = signal.signal(signal.SIGALRM, interrupt)
        signal.setitimer(signal.ITIMER_REAL, 0.3, 0.3)  # Ctrl-C, again and again
        try:
            with pytest.raises(KeyboardInterrupt):
                out.close()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, before)
            os.kill(proc.pid, signal.SIGCONT)
        assert out._proc is proc  # what close did not finish, the next close does
        out.close()
        assert out.failure is None and proc.poll() == 0
        assert not Path(f"/proc/{proc.pid}").exists() or not _zombie(proc.pid)
        assert [r[0] for r in _stored(store, "bulk")] == list(range(8_001))


def test_a_killed_writer_is_raised_and_what_it_committed_stays_a_prefix(tmp_path: Any) -> None:
    import os
    import signal

    from lhbench.store.bulk import BatchWriteError

    rows = _rows(3000)
    with _file_store(tmp_path) as store:
        out, proc = _writer_started(store, rows[:500])
        os.kill(proc.pid, signal.SIGKILL)
        with pytest.raises(BatchWriteError, match="status -9"):
            for start in range(500, 3000, 500):
                out.append(rows[start : start + 500])
            out.close()
        out.close(raise_errors=False)
        got = [r[0] for r in _stored(store, "bulk")]
        assert got == list(range(len(got))) and len(got) % 500 == 0 and len(got) < 3000


def test_a_failed_background_commit_is_a_batch_write_error_and_stops_the_appender(
    tmp_path: Any,
) -> None:
    import sqlite3
    from concurrent.futures import Future

    from lhbench.store.bulk import BatchWriteError

    rows = _rows(300)
    with _file_store(tmp_path) as store:
        store.save_run(make_run("bulk"))
        out = store.step_appender("bulk", writer_after_rows=None)
        out.append(rows[:100])
        out._wait()
        lost: Future[None] = Future()  # the commit of a batch, failed on the commit thread
        lost.set_exception(sqlite3.OperationalError("disk I/O error"))
        out._pending = lost
        assert out.failure is None
        with pytest.raises(BatchWriteError, match="disk I/O error"):
            out.append(rows[100:200])
        assert out.failure is not None and "disk I/O error" in out.failure
        with pytest.raises(BatchWriteError):  # nothing is taken after the lost batch
            out.append(rows[200:])
        out.close()
        assert [r[0] for r in _stored(store, "bulk")] == list(range(100))


# --- PostgreSQL: steps go in by COPY -----------------------------------------------------


@pytest.fixture
def copies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements psycopg's ``Cursor.copy`` was called with (it still runs them)."""
    import psycopg

    seen: list[str] = []
    real = psycopg.Cursor.copy

    def spy(self: Any, statement: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(str(statement))
        return real(self, statement, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "copy", spy)
    return seen


def _pg_text(store: Store, run_id: str) -> list[str]:
    # each stored row as PostgreSQL prints it: every value's text, NULLs, jsonb as stored
    cols = (
        "idx, role, kind, content, tool_name, tool_call_id, tool_input, tool_output, "
        'is_error, exit_code, "timestamp", usage, metadata, agent_id'
    )
    with store.engine.connect() as conn:
        q = f"SELECT ({cols})::text FROM steps WHERE run_id = :r ORDER BY idx"
        return list(conn.execute(text(q), {"r": run_id}).scalars())


def _pg_rows(n: int) -> list[tuple[Any, ...]]:
    rows = _rows(n)
    # a JSON column with an escaped NUL (jsonb refuses \u0000), a usage document, an
    # exit code, a tool input: every column type the binary COPY must send as PostgreSQL reads it
    extra = Step(
        index=n,
        role=Role.ASSISTANT,
        kind=StepKind.TOOL_CALL,
        tool_name="Bash",
        tool_call_id="c-nul",
        tool_input={"command": "printf 'a\x00b'", "n": 2**40, "f": 0.1, "ok": True},
        exit_code=-3,
        timestamp=datetime(2026, 3, 2, 23, 59, 59, 999999, tzinfo=UTC),
        usage={"input_tokens": 5, "output_tokens": 7},
        metadata={"note": "tab\there\nnewline \\ backslash"},
    )
    return [*rows, step_record(extra)]


def test_postgres_copy_stores_byte_for_byte_what_the_insert_stores(
    pg_url: str, copies: list[str]
) -> None:
    rows = _pg_rows(1200)
    with Store.open(pg_url) as store:
        store.save_run(make_run("copy"))
        store.save_run(make_run("insert"))
        with store.step_appender("copy") as out:
            for start in range(0, len(rows), 250):  # batches with a NUL and without
                out.append(rows[start : start + 250])
        assert copies and all(c.startswith("COPY steps (") for c in copies)
        store._insert_step_rows("insert", rows)  # the multi-row INSERT path
        got = _pg_text(store, "copy")
        assert len(got) == 1201
        assert got == _pg_text(store, "insert")
        assert "a\ufffdb" in got[-1]  # the NUL replaced, as the INSERT path replaces it
        assert store.get_trajectory("copy").steps == store.get_trajectory("insert").steps


def test_a_failing_postgres_copy_batch_leaves_a_prefix_and_the_store_usable(
    pg_url: str, copies: list[str]
) -> None:
    # no NUL characters: each batch is one COPY (a NUL would make it two, see below)
    rows = [
        tuple(v.replace("\x00", "") if isinstance(v, str) else v for v in r) for r in _rows(1000)
    ]
    with Store.open(pg_url) as store:
        store.save_run(make_run("bulk"))
        with store.engine.begin() as conn:
            conn.exec_driver_sql(
                "CREATE FUNCTION boom() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "IF NEW.idx = 450 THEN RAISE EXCEPTION 'disk on fire'; END IF; "
                "RETURN NEW; END $$"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER boom BEFORE INSERT ON steps FOR EACH ROW EXECUTE FUNCTION boom()"
            )
        out = store.step_appender("bulk")
        with pytest.raises(Exception, match="disk on fire"):
            for start in range(0, len(rows), 200):
                out.append(rows[start : start + 200])
        out.close()
        assert len(copies) == 3  # two batches stored, the third refused (and not retried)
        # the two batches before the failing one; nothing of the third (400..449 included)
        assert [r[0] for r in _stored(store, "bulk")] == list(range(400))
        store.save_run(make_run("after"))  # no transaction or lock left behind
        store.append_step_rows("after", rows[:5])
        assert len(_stored(store, "after")) == 5
