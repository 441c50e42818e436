"""A server starts from the overview's snapshot, and never trusts one it did not sign.

A restarted server reads its saved summary (``analysis_snapshots``) and the change log
written since, instead of summarising the store from scratch. Here writes of every kind
go in while no server runs; the next server's first answers must equal a fresh analysis,
its first request must not summarise the whole store when the snapshot is good, and a
forged, corrupt, foreign-version or out-of-date snapshot must be ignored: a full summary,
no crash, and no code from the row run.
"""

from __future__ import annotations

import pickle
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lhbench.config import Settings
from lhbench.store import Store
from lhbench.store.aggregates import AnalysisSnapshot
from lhbench.web.analysis import analyse
from lhbench.web.app import create_app
from lhbench.web.snapshot import Snapshots, _pack
from tests.conftest import PG_URL, _pg_database
from tests.web.conftest import seed
from tests.web.test_incremental import INCREMENTAL, WHOLE, _figures

SECRET = "the server's own secret"
PAGES = ("/", "/?sort=pass", "/runs", "/tasks")


class _Counted:
    """Counts full summaries (each reads every grade through ``grade_summary``)."""

    def __init__(self, mp: pytest.MonkeyPatch) -> None:
        self.n = 0
        original = Store.grade_summary

        def counted(store: Store, *args: Any, **kw: Any) -> Any:
            self.n += 1
            return original(store, *args, **kw)

        mp.setattr(Store, "grade_summary", counted)


def _settings(tmp: Path) -> Settings:
    return Settings(home=tmp, web_public_leaderboard=True)  # type: ignore[call-arg]


def _started(store: Store, tmp: Path) -> TestClient:
    """A server as ``lhbench serve`` starts one (warm, with its secret)."""
    return TestClient(create_app(store, secret=SECRET, settings=_settings(tmp), warm=True))


def _admin(client: TestClient, store: Store) -> None:
    from lhbench.web import add_user

    add_user(store, "boss", "a long enough password", admin=True)
    page = client.get("/login").text
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    r = client.post(
        "/login",
        data={"name": "boss", "password": "a long enough password", "csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303


def _saved(store: Store) -> Snapshots:
    snaps = Snapshots(store, SECRET)
    a = analyse(store)
    assert a._summary is not None
    assert snaps.save(snaps.name(None, None), a._summary) > 0
    return snaps


def _same_as_fresh(client: TestClient, store: Store, tmp: Path, what: str) -> None:
    """The started server's analysis and overview equal a fresh analysis and app's."""
    a = client.app.state.web.analysis()  # type: ignore[attr-defined]
    if a._restoring is not None:
        a._restoring.wait()
    assert _figures(a) == _figures(analyse(store)), what
    fresh = TestClient(create_app(store, settings=_settings(tmp)))
    for path in ("/", "/?sort=pass", "/?by=harness"):
        assert client.get(path).text == fresh.get(path).text, (what, path)


def _check_writes(store: Store, tmp: Path) -> None:
    import random

    rng = random.Random(5)
    with pytest.MonkeyPatch.context() as mp:
        # the snapshot stays the one made before every write (no server saves a newer)
        mp.setattr(Snapshots, "offer", lambda self, analysis: None)
        fulls = _Counted(mp)
        _saved(store)
        first = _figures(analyse(store))
        for write in INCREMENTAL:
            write(store, rng)  # no server runs
            before = fulls.n
            client = _started(store, tmp)
            assert client.get("/").status_code == 200
            # updated from the snapshot, not summarised again
            assert fulls.n == before, write.__name__
            _same_as_fresh(client, store, tmp, write.__name__)
        assert _figures(analyse(store)) != first
        for write in WHOLE:
            _saved(store)
            write(store, rng)
            _same_as_fresh(_started(store, tmp), store, tmp, write.__name__)


@pytest.fixture
def sqlite_store(
    tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]
) -> Iterator[Store]:
    db = tmp_path / "copy.db"
    shutil.copy(seeded_template[0], db)
    store = Store.open(f"sqlite:///{db}")
    yield store
    store.close()


def test_server_started_after_writes_equals_a_fresh_analysis_sqlite(
    sqlite_store: Store, tmp_path: Path
) -> None:
    _check_writes(sqlite_store, tmp_path)


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set (CI sets it)")
def test_server_started_after_writes_equals_a_fresh_analysis_postgresql(
    tmp_path: Path,
) -> None:
    database = _pg_database()
    store = Store.open(next(database))
    try:
        seed(store)
        _check_writes(store, tmp_path)
    finally:
        store.close()
        database.close()


def test_first_request_after_start_reads_the_snapshot_not_every_grade(
    sqlite_store: Store, tmp_path: Path
) -> None:
    store = sqlite_store
    _saved(store)
    with pytest.MonkeyPatch.context() as mp:
        fulls = _Counted(mp)
        client = _started(store, tmp_path)
        _admin(client, store)
        r = client.get("/")
        assert r.status_code == 200 and "runs" in r.text
        a = client.app.state.web.analysis()  # type: ignore[attr-defined]
        # answered from the snapshot's front; its per-run state read on a thread
        assert a._restoring is not None
        for path in PAGES:
            assert client.get(path).status_code == 200, path
        a._restoring.wait()
        # a write after the start updates the restored summary
        INCREMENTAL[0](store, __import__("random").Random(1))
        client.get("/")
        assert fulls.n == 0
    client.cookies.clear()  # compared as the public sees it
    _same_as_fresh(client, store, tmp_path, "after start")


def _resigned(snaps: Snapshots, snap: AnalysisSnapshot, **change: Any) -> AnalysisSnapshot:
    """``snap`` changed and signed again with the server's own key."""
    out = replace(snap, **change)
    mac = snaps._mac(
        out.name, out.mark, out.lhbench_version, out.schema_revision, out.front, out.heavy
    )
    return replace(out, mac=mac)


class _Bomb:
    """A pickle that, if ever loaded, leaves a file behind (the attack's proof)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.path, "code ran"))


@pytest.mark.parametrize(
    "attack",
    [
        "forged_unsigned",
        "signed_by_another_secret",
        "corrupt_byte",
        "foreign_version",
        "foreign_schema",
        "signed_garbage",
        "trimmed_log",
    ],
)
def test_bad_snapshot_is_ignored(attack: str, sqlite_store: Store, tmp_path: Path) -> None:
    store = sqlite_store
    snaps = _saved(store)
    name = snaps.name(None, None)
    good = store.analysis_snapshot(name)
    assert good is not None
    proof = tmp_path / "pwned"
    bomb = _pack(_Bomb(proof))
    bad = {
        "forged_unsigned": lambda: replace(good, front=bomb, heavy=bomb),
        "signed_by_another_secret": lambda: _resigned(
            Snapshots(store, "someone else's secret"), good, front=bomb, heavy=bomb
        ),
        "corrupt_byte": lambda: replace(
            good, heavy=good.heavy[:100] + bytes([good.heavy[100] ^ 1]) + good.heavy[101:]
        ),
        "foreign_version": lambda: _resigned(snaps, good, lhbench_version="0.0.1"),
        "foreign_schema": lambda: _resigned(snaps, good, schema_revision="0019"),
        "signed_garbage": lambda: _resigned(snaps, good, front=b"\x00not zstd", heavy=b"x"),
        "trimmed_log": lambda: good,
    }[attack]()
    store.save_analysis_snapshot(bad)
    if attack == "trimmed_log":
        INCREMENTAL[4](store, __import__("random").Random(3))  # a label
        assert store.trim_changes(store.change_mark(), keep=0)
    assert snaps.restore(None, None) is None
    with pytest.MonkeyPatch.context() as mp:
        fulls = _Counted(mp)
        client = _started(store, tmp_path)
        assert client.get("/").status_code == 200
        assert fulls.n >= 1  # summarised from scratch
    assert not proof.exists()
    _same_as_fresh(client, store, tmp_path, attack)


def test_bomb_would_run_if_unpickled(tmp_path: Path) -> None:
    """The attack above is real: loading its payload without the check writes the file."""
    proof = tmp_path / "pwned"
    pickle.loads(pickle.dumps(_Bomb(proof)))
    assert proof.read_text() == "code ran"


def test_server_saves_a_snapshot_after_a_full_summary(sqlite_store: Store, tmp_path: Path) -> None:
    import time

    store = sqlite_store
    client = _started(store, tmp_path)
    snaps = client.app.state.web.snapshots  # type: ignore[attr-defined]
    snaps.quiet = 0.1
    assert client.get("/").status_code == 200
    name = snaps.name(None, None)
    deadline = time.monotonic() + 60
    while store.analysis_snapshot(name) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    snap = store.analysis_snapshot(name)
    assert snap is not None and snap.mark == store.change_mark()
    assert Snapshots(store, SECRET).restore(None, None) is not None
