"""The step writer process against awkward paths, values, failures, signals and leaks."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import lhbench.jobs.imports as imports
from lhbench.ingest import read_records
from lhbench.schema import RunStatus
from lhbench.store import Store
from lhbench.store.bulk import BatchWriteError, StepAppender
from tests.factories import make_run
from tests.ingest.helpers import import_paths
from tests.ingest.test_import_writer import _stream
from tests.store.test_bulk import _boom_at, _rows, _stored


def _append_all(store: Store, run_id: str, rows: list[Any], after: int | None, size: int) -> int:
    store.save_run(make_run(run_id))
    with store.step_appender(run_id, writer_after_rows=after) as out:
        for start in range(0, len(rows), size):
            out.append(rows[start : start + size])
    return out.writer_batches


def _indices(store: Store, run_id: str) -> list[int]:
    return [r[0] for r in _stored(store, run_id)]


@pytest.mark.parametrize(
    "where",
    ["with space é ü/日本.db", "d#x %/n#1%2.db", "file:odd/x.db", "linked-dir/x.db", "link.db"],
)
def test_awkward_store_paths_go_through_the_writer(tmp_path: Path, where: str) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "linked-dir").symlink_to(tmp_path / "real")
    if where == "link.db":
        Store.open(f"sqlite:///{tmp_path / 'real' / 'target.db'}").close()
        (tmp_path / "link.db").symlink_to(tmp_path / "real" / "target.db")
    rows = _rows(300)
    with Store.open(f"sqlite:///{tmp_path / where}") as store:
        assert _append_all(store, "w", rows, 0, 100) == 3
        assert _indices(store, "w") == list(range(300))
    if where == "link.db":  # one database, one WAL: the writer did not open a second file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["link.db", "linked-dir", "real"]


def test_a_relative_store_url_goes_through_the_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Store.open("sqlite:///rel.db") as store:
        assert _append_all(store, "w", _rows(200), 0, 100) == 2
        assert len(_stored(store, "w")) == 200


def test_a_relative_store_after_a_change_of_directory_is_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    with Store.open("sqlite:///rel.db") as store:
        monkeypatch.chdir(tmp_path / "b")
        try:
            _append_all(store, "w", _rows(200), 0, 100)
        finally:
            assert list((tmp_path / "b").iterdir()) == []  # no stray database made
        assert len(_stored(store, "w")) == 200


@pytest.mark.parametrize("url_tail", ["q.db?timeout=5", "file:u.db?uri=true"])
def test_a_url_with_query_parameters_stays_in_process(tmp_path: Path, url_tail: str) -> None:
    with Store.open(f"sqlite:///{tmp_path}/{url_tail}") as store:
        assert _append_all(store, "w", _rows(200), 0, 100) == 0
        assert len(_stored(store, "w")) == 200


_BAD: dict[str, Callable[[list[Any]], None]] = {
    "surrogate": lambda r: r.__setitem__(3, "a\ud800b"),
    "int above 2**63": lambda r: r.__setitem__(9, 2**63),
    "int below -2**63": lambda r: r.__setitem__(9, -(2**63) - 1),
}


@pytest.mark.parametrize("what", list(_BAD))
def test_an_unstorable_value_fails_the_same_batch_in_both_paths(tmp_path: Path, what: str) -> None:
    errors = {}
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        for run_id, after in (("inproc", None), ("writer", 0)):
            rows = [list(r) for r in _rows(300)]
            _BAD[what](rows[150])
            with pytest.raises(Exception) as err:
                _append_all(store, run_id, rows, after, 100)
            errors[run_id] = err.value
            assert _indices(store, run_id) == list(range(100))  # the batch before it, whole
        assert isinstance(errors["writer"], BatchWriteError)
        assert str(errors["inproc"]) in str(errors["writer"])


def test_nul_characters_and_a_50_mib_row_are_stored_alike_in_both_paths(tmp_path: Path) -> None:
    rows = [list(r) for r in _rows(200)]
    rows[50][3] = "a\x00b"
    rows[51][7] = "\x00" * 10
    rows[120][7] = "é" * (25 << 20)  # 50 MiB of UTF-8 in one value
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        assert _append_all(store, "inproc", rows, None, 100) == 0
        assert _append_all(store, "writer", rows, 0, 100) == 2
        got = _stored(store, "writer")
        assert got == _stored(store, "inproc")
        assert got[50][3] == "a\x00b" and len(got[120][7]) == 25 << 20


def _children() -> list[str]:
    me = str(os.getpid())
    out = []
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                if (p / "stat").read_text().rsplit(") ", 1)[1].split()[1] == me:
                    out.append(p.name)
            except (OSError, IndexError):
                pass
    return out


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_fifty_appenders_leave_no_descriptor_thread_or_process(tmp_path: Path) -> None:
    rows = _rows(20)
    with Store.open(f"sqlite:///{tmp_path / 'f.db'}") as store:
        _append_all(store, "warm", rows, 0, 10)  # the pool's connections are open
        fds, threads = len(os.listdir("/proc/self/fd")), threading.active_count()
        for i in range(30):
            _append_all(store, f"ok{i}", rows, 0, 10)
        _boom_at(store, 15)
        for i in range(10):  # the writer fails
            with pytest.raises(BatchWriteError):
                _append_all(store, f"bad{i}", rows, 0, 10)
        for i in range(10):  # the caller fails (the reader, say)
            store.save_run(make_run(f"exc{i}"))
            with (
                pytest.raises(RuntimeError),
                store.step_appender(f"exc{i}", writer_after_rows=0) as o,
            ):
                o.append(rows[:10])
                raise RuntimeError
        assert len(os.listdir("/proc/self/fd")) == fds
        assert threading.active_count() == threads
        assert _children() == []


def test_two_writers_into_one_store_at_once_both_complete(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    Store.open(url).close()
    rows = _rows(6000)
    errors: list[BaseException] = []

    def one(run_id: str) -> None:
        try:
            with Store.open(url, migrate=False) as store:
                _append_all(store, run_id, rows, 1000, 500)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=one, args=(r,)) for r in ("a", "b")]
    for t in threads:
        t.start()
    with Store.open(url, migrate=False) as reader:  # a reader meanwhile (the web server)
        while any(t.is_alive() for t in threads):
            for run in reader.list_runs():
                idx = [s.index for s in reader.get_trajectory(run.id).steps]
                assert idx == list(range(len(idx)))
    for t in threads:
        t.join()
    assert errors == []
    with Store.open(url, migrate=False) as store:
        assert _indices(store, "a") == _indices(store, "b") == list(range(6000))


def test_a_writer_failing_while_the_importer_parses_reports_its_error(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'f.db'}") as store:
        store.save_run(make_run("r"))
        _boom_at(store, 5)
        rows = _rows(40)
        out = store.step_appender("r", writer_after_rows=0)
        out.append(rows[:10])
        assert out._proc is not None
        code = out._proc.wait(timeout=10)  # fails with nothing more sent (the parser is busy)
        with pytest.raises(BatchWriteError) as err:
            out.append(rows[10:])
        out.close(raise_errors=False)
        assert "disk on fire" in str(err.value)
        assert code == 1


def test_sigint_to_the_writer_does_not_stop_the_import(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 'f.db'}") as store:
        store.save_run(make_run("r"))
        rows = _rows(300)
        with store.step_appender("r", writer_after_rows=0) as out:
            out.append(rows[:100])
            assert out._proc is not None
            deadline = time.monotonic() + 10
            while len(_stored(store, "r")) < 100 and time.monotonic() < deadline:
                time.sleep(0.01)  # the writer is running its loop (past its start-up)
            os.kill(out._proc.pid, signal.SIGINT)
            out.append(rows[100:200])
            out.append(rows[200:])
        assert _indices(store, "r") == list(range(300))


def _reader_breaking_at(monkeypatch: pytest.MonkeyPatch, at: int) -> None:
    real = read_records  # what the job calls

    def wrapped(*args: Any, **kw: Any) -> Iterator[Any]:
        for info, rows in real(*args, **kw):

            def broken(rows: Iterator[Any] = rows) -> Iterator[Any]:
                n = 0
                for chunk in rows:
                    yield chunk
                    n += len(chunk)
                    if n >= at:
                        raise RuntimeError("reader broke")

            yield info, broken()

    monkeypatch.setattr(imports, "read_records", wrapped)


def test_a_reader_error_mid_import_fails_the_run_and_keeps_every_row_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _stream(tmp_path / "big.jsonl", 6000)  # 18,000 steps: the third batch goes out
    _reader_breaking_at(monkeypatch, 16_000)
    used: list[int] = []
    close = StepAppender.close

    def spy(self: StepAppender, *, raise_errors: bool = True) -> None:
        close(self, raise_errors=raise_errors)
        used.append(self.writer_batches)

    monkeypatch.setattr(StepAppender, "close", spy)
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        res = import_paths(store, [src])
        assert used and used[0] >= 1
        (error,) = res.failed
        assert "reader broke" in error
        (run,) = store.list_runs()
        assert run.status == RunStatus.FAILED and "reader broke" in (run.error or "")
        idx = [s.index for s in store.get_trajectory(run.id).steps]
        assert idx == list(range(len(idx))) and len(idx) >= 16_000  # nothing read was lost


def test_a_reader_error_after_a_failed_writer_batch_leaves_a_prefix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _stream(tmp_path / "big.jsonl", 6000)
    _reader_breaking_at(monkeypatch, 16_000)  # after the failed batch was sent, before the next
    with Store.open(f"sqlite:///{tmp_path / 'a.db'}") as store:
        _boom_at(store, 12_345)  # in the writer's first batch
        import_paths(store, [src])
        (run,) = store.list_runs()
        assert run.status == RunStatus.FAILED
        idx = _indices(store, run.id)
        assert idx == list(range(len(idx))) and len(idx) < 12_345
        assert "disk on fire" in (run.error or "")


@pytest.mark.parametrize("run_id", ["it's", "a'); DROP TABLE runs; --", "quote '' é 日本 \\ \""])
def test_awkward_run_ids_go_through_the_writer_as_stored_in_process(
    tmp_path: Path, run_id: str
) -> None:
    # the writer names the run by a SQLite literal in its statement's text
    rows = _rows(300)
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        assert _append_all(store, run_id, rows, 0, 100) == 3
        assert _append_all(store, "inproc", rows, None, 100) == 0
        assert _stored(store, run_id) == _stored(store, "inproc")
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM runs").scalar() == 2


def test_a_run_id_with_a_nul_stays_in_process(tmp_path: Path) -> None:
    # a statement's text cannot hold a NUL: no literal, so no writer
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        assert _append_all(store, "a\x00b", _rows(200), 0, 100) == 0
        assert _indices(store, "a\x00b") == list(range(200))
        assert _indices(store, "a") == []


def test_a_run_deleted_while_the_writer_inserts_fails_its_next_batch(tmp_path: Path) -> None:
    # the writer checks the run once per batch, under the batch's write lock: a step never
    # outlives its run, as with SQLite's own check per row
    rows = _rows(400)
    with Store.open(f"sqlite:///{tmp_path / 'v.db'}") as store:
        store.save_run(make_run("gone"))
        out = store.step_appender("gone", writer_after_rows=0)
        with pytest.raises(BatchWriteError, match="FOREIGN KEY constraint failed") as err:
            out.append(rows[:200])
            store.delete_run("gone")  # waits for the batch's lock, if it holds it
            out.append(rows[200:])
            out.close()
        assert "gone" in str(err.value)
        out.close(raise_errors=False)
        assert _stored(store, "gone") == []
        with store.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT count(*) FROM steps").scalar() == 0


@pytest.mark.parametrize("after", [None, 0], ids=["in process", "writer"])
def test_a_batch_that_cannot_be_sent_breaks_the_appender_and_keeps_a_prefix(
    tmp_path: Path, after: int | None
) -> None:
    """A value that neither pickles nor binds (a lock): that batch fails, and so does every
    later one, so the run's stored steps stay a prefix of what was appended."""
    rows = [list(r) for r in _rows(300)]
    rows[150][3] = threading.Lock()
    with Store.open(f"sqlite:///{tmp_path / 'p.db'}") as store:
        store.save_run(make_run("r"))
        with (
            pytest.raises(BatchWriteError),
            store.step_appender("r", writer_after_rows=after) as out,
        ):
            out.append(rows[:100])
            try:
                out.append(rows[100:200])
            except Exception as exc:  # either path's own error, then the appender is broken
                assert out.failure is not None and type(exc).__name__ in out.failure
            out.append(rows[200:])  # never stored after a failed batch
        assert _indices(store, "r") == list(range(100))
