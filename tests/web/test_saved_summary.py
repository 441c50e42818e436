"""A restarted server loads what its last summary read instead of reading every row again.

The whole summary at 1,000,000 grades spends most of its time in the database's sums,
and a restarted one reading every run, label and verdict; the server saves them (signed
arrays and JSON, :func:`lhbench.web.front.save_summary`) and its next start loads them
and brings them up to date with the change log, as a running server does after a write.
Whatever was written between the two starts, the figures must be those of a fresh full
analysis; an edited, foreign, oversized or garbled file, or one the change log can no
longer bring up to date, is ignored and the store summarised as before.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lhbench.store import Store
from lhbench.web import create_app
from lhbench.web import front as web_front
from lhbench.web.analysis import SavedSummary, analyse
from lhbench.web.auth import LoginPolicy
from lhbench.web.front import load_summary, save_summary, summary_path
from tests.conftest import PG_URL, _pg_database
from tests.web.conftest import PASSWORD, seed, settings
from tests.web.test_analysis import _disturb
from tests.web.test_incremental import INCREMENTAL, WHOLE, _figures, label, new_grade

SECRET = "s1"


@pytest.fixture(params=["sqlite", "postgresql"])
def store(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    seeded_template: tuple[Path, dict[str, list[str]]],
) -> Iterator[Store]:
    if request.param == "sqlite":
        db = tmp_path / "copy.db"
        shutil.copy(seeded_template[0], db)
        with Store.open(f"sqlite:///{db}") as s:
            _disturb(s)  # an infrastructure failure, a stale label, a failed grade
            yield s
        return
    if not PG_URL:
        pytest.skip("LHBENCH_TEST_PG_URL is not set (CI sets it; see .ci/run)")
    database = _pg_database()
    s = Store.open(next(database))
    try:
        seed(s)
        _disturb(s)
        yield s
    finally:
        s.close()
        database.close()


def _refuse_grade_sums(mp: pytest.MonkeyPatch) -> None:
    """Fail on a read of every grade, run, label or verdict (what the saved summary holds)."""

    def refuse(self: Store, *a: Any, **k: Any) -> Any:
        raise AssertionError("every grade was summed again")

    def refuse_all(name: str) -> Any:
        original = getattr(Store, name)

        def read(self: Store, run_ids: Any = None) -> Any:
            if run_ids is None:
                raise AssertionError(f"every row was read again ({name})")
            return original(self, run_ids)

        return read

    mp.setattr(Store, "grade_summary", refuse)
    mp.setattr(Store, "run_facts", refuse_all("run_facts"))
    mp.setattr(Store, "label_facts", refuse_all("label_facts"))
    mp.setattr(Store, "verdict_facts", refuse_all("verdict_facts"))


def _saved(store: Store, path: Path) -> Any:
    """A full analysis, its grade cells saved at ``path``."""
    return analyse(store, save=lambda state: save_summary(path, SECRET, store, state))


def _loaded(store: Store, path: Path) -> Any:
    return analyse(store, load=lambda: load_summary(path, SECRET, store))


def test_saved_cells_brought_up_to_date_equal_a_full_analysis(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "grades.bin"
    _saved(store, path)
    fresh = _figures(analyse_fresh(store))
    with pytest.MonkeyPatch.context() as mp:
        _refuse_grade_sums(mp)
        # at the same mark: the saved cells as they are
        assert _figures(_loaded(store, path)) == fresh
    rng = random.Random(5)
    # every kind of write the change log names, between the save and the next start
    for write in INCREMENTAL:
        write(store, rng)
    with pytest.MonkeyPatch.context() as mp:
        fresh = _figures(analyse_fresh(store))
        _refuse_grade_sums(mp)
        loaded = _loaded(store, path)
    assert _figures(loaded) == fresh
    # and a running server's updates after it follow as from a full analysis
    from lhbench.web.analysis import refresh

    new_grade(store, rng)
    label(store, rng)
    assert _figures(refresh(store, loaded)) == _figures(analyse_fresh(store))


def analyse_fresh(store: Store) -> Any:
    return analyse(store)


@pytest.mark.parametrize("write", WHOLE, ids=lambda w: w.__name__)
def test_a_write_the_log_cannot_follow_sums_every_grade_again(
    store: Store, tmp_path: Path, write: Any
) -> None:
    path = tmp_path / "grades.bin"
    _saved(store, path)
    write(store, random.Random(3))
    calls: list[int] = []
    original = Store.grade_summary

    def counted(self: Store, *a: Any, **k: Any) -> Any:
        calls.append(1)
        return original(self, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Store, "grade_summary", counted)
        loaded = _loaded(store, path)
    assert calls == [1]
    assert _figures(loaded) == _figures(analyse_fresh(store))


def _client(store: Store, tmp: Path, **kw: Any) -> TestClient:
    c = TestClient(
        create_app(
            store,
            secret=SECRET,
            settings=settings(tmp),
            login_policy=LoginPolicy(floor_s=0.0),
            front_dir=tmp / "fronts",
            **kw,
        )
    )
    token = c.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    r = c.post(
        "/login",
        data={"name": "boss", "password": PASSWORD, "csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    return c


def _overview(c: TestClient) -> list[str]:
    import re

    out = []
    for path in ("/", "/?sort=pass", "/?sort=elo", "/?sort=aj", "/?sort=tier:0", "/runs"):
        r = c.get(path)
        assert r.status_code == 200, path
        out.append(re.sub(r'name="csrf_token" value="[^"]*"', "", r.text))
    return out


def test_restart_then_write_then_overview_equals_a_fresh_app(store: Store, tmp_path: Path) -> None:
    first = _client(store, tmp_path)
    _overview(first)
    assert summary_path(tmp_path / "fronts", store).exists()
    rng = random.Random(11)
    label(store, rng)  # written while no server runs
    with pytest.MonkeyPatch.context() as mp:
        _refuse_grade_sums(mp)
        restarted = _client(store, tmp_path)
        _overview(restarted)
        # a write right after the start, and the overview after it
        new_grade(store, rng)
        label(store, rng)
        after = _overview(restarted)
    assert after == _overview(_client(store, tmp_path / "fresh"))


def _saved_file(store: Store, tmp_path: Path) -> Path:
    path = tmp_path / "grades.bin"
    _saved(store, path)
    assert load_summary(path, SECRET, store) is not None
    return path


def _resigned(path: Path, body: bytes) -> None:
    import hashlib
    import hmac

    mac = hmac.new(web_front._grades_key(SECRET), body, hashlib.sha256).hexdigest()
    path.write_bytes(mac.encode() + b"\n" + body)


# signed files whose fact lines are not what a summary wrote
_FORGED_FACTS = (
    "signed run id a number",
    "signed label passed a string",
    "signed fields of different lengths",
    "signed tag set out of range",
    "signed facts missing",
    "signed nested deep",
    "signed status unknown",
    "signed tokens past 64 bits",
    "signed run named twice",
    "signed tag key twice",
    "signed tags amplified",
)


@pytest.mark.parametrize(
    "forge",
    [
        "flipped cell",
        "unsigned",
        "other secret",
        "garbage",
        "truncated",
        "oversized",
        "front file",
        "signed garbage",
        "signed index out of range",
        "signed other store",
        "signed other code",
        *_FORGED_FACTS,
    ],
)
def test_an_edited_foreign_or_hostile_file_is_ignored(
    store: Store, tmp_path: Path, forge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _saved_file(store, tmp_path)
    raw = path.read_bytes()
    _sig, _, body = raw.partition(b"\n")
    head, _, data = body.partition(b"\n")
    secret = SECRET
    if forge == "flipped cell":
        path.write_bytes(raw[:-3] + bytes([raw[-3] ^ 1]) + raw[-2:])
    elif forge == "unsigned":
        path.write_bytes(body)
    elif forge == "other secret":
        secret = "s2"
    elif forge == "garbage":
        path.write_bytes(b"\x80\x04\x95 not ours \n\x00" * 100)
    elif forge == "truncated":
        path.write_bytes(raw[: len(raw) // 2])
    elif forge == "oversized":
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(web_front, "MAX_SUMMARY_BYTES", len(raw) - 1)
            assert load_summary(path, secret, store) is None
        return
    elif forge == "front file":
        # the overview's front, signed with the same secret, is not grade cells
        c = _client(store, tmp_path)
        c.get("/")
        fronts = list((tmp_path / "fronts").glob("overview-*.json"))
        assert fronts
        shutil.copy(fronts[0], path)
    elif forge == "signed garbage":
        _resigned(path, b'{"tag": 1}\n\x00\x01')
    elif forge == "signed index out of range":
        # a run index past the run list: never an IndexError, never a wrong run
        _resigned(path, head + b"\n" + b"\xff\xff\xff\x7f" + data[4:])
    elif forge in _FORGED_FACTS:
        # well signed, and the facts not what a summary wrote: never a figure, never raised
        lines = body.split(b"\n", 1 + web_front._FACT_LINES)
        facts, rest = [json.loads(x) for x in lines[1:-1]], lines[-1]
        runs = len(web_front._RUN_FIELDS)
        raw: dict[int, bytes] = {}
        if forge.endswith("number"):
            facts[0][0] = 7  # a run's id
        elif forge.endswith("string"):
            facts[runs + 3 + 2][0] = "yes"  # a label's outcome
        elif forge.endswith("lengths"):
            facts[-2].pop()  # a verdict's outcome
        elif forge.endswith("range"):
            facts[runs + 1][0] = -1  # a run's tag set: Python would read the last one
        elif forge.endswith("missing"):
            facts.pop()
        elif forge.endswith("deep"):
            raw[0] = b"[" * 200_000 + b"]" * 200_000
        elif forge.endswith("unknown"):
            facts[6][0] = "bogus"  # a run's status
        elif forge.endswith("bits"):
            facts[9][0] = 10**30  # a run's input tokens
        elif forge.endswith("twice") and "run" in forge:
            facts[0][1] = facts[0][0]
        elif forge.endswith("twice"):
            facts[runs + 2][0] = [["skill", "a"], ["skill", "b"]]
        else:  # one tag set of many pairs for every run: a dict of them per run
            monkeypatch.setattr(web_front, "_MAX_TAG_PAIRS", 10_000)
            facts[runs + 2][0] = [[f"k{i}", "v"] for i in range(10_000)]
            facts[runs + 1] = [0] * len(facts[runs + 1])
        text = [raw.get(i, json.dumps(f).encode()) for i, f in enumerate(facts)]
        _resigned(path, b"\n".join([head, *text, rest]))
    elif forge == "signed other store":
        _resigned(path, head.replace(b'"store": "', b'"store": "x') + b"\n" + data)
    else:
        _resigned(path, head.replace(b'"format": ', b'"format": 9') + b"\n" + data)
    assert load_summary(path, secret, store) is None
    # the analysis made over it is the full one
    assert _figures(analyse(store, load=lambda: load_summary(path, secret, store))) == _figures(
        analyse_fresh(store)
    )


def test_a_trimmed_log_makes_the_saved_cells_unusable(store: Store, tmp_path: Path) -> None:
    path = _saved_file(store, tmp_path)
    state = load_summary(path, SECRET, store)
    assert isinstance(state, SavedSummary)
    label(store, random.Random(1))
    # another reader cut the log past the saved mark: what was written is unknown
    assert store.trim_changes(store.change_mark(), keep=0)
    calls: list[int] = []
    original = Store.grade_summary

    def counted(self: Store, *a: Any, **k: Any) -> Any:
        calls.append(1)
        return original(self, *a, **k)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Store, "grade_summary", counted)
        loaded = analyse(store, load=lambda: state)
    assert calls == [1]
    assert _figures(loaded) == _figures(analyse_fresh(store))


def test_a_restart_takes_the_agents_rows_from_a_valid_front(store: Store, tmp_path: Path) -> None:
    """The front saved at the store's mark: the rows are the front's, not computed again.

    The grade cells are older (saved by the first server's full summary, before a write
    its refresh then followed): they are brought up to date, the rows taken as saved.
    """
    from lhbench.web.analysis import _Summary

    first = _client(store, tmp_path)
    _overview(first)
    label(store, random.Random(4))
    before = _overview(first)
    fresh = _figures(analyse_fresh(store))
    rows: list[str] = []
    original = _Summary._row

    def counted(self: _Summary, label: str, run_ids: list[str]) -> Any:
        rows.append(label)
        return original(self, label, run_ids)

    with pytest.MonkeyPatch.context() as mp:
        _refuse_grade_sums(mp)
        mp.setattr(_Summary, "_row", counted)
        restarted = _client(store, tmp_path)
        state = restarted.app.state.web.analysis()  # type: ignore[attr-defined]
        assert rows == []  # every row the front's
        assert _figures(state) == fresh
        assert _overview(restarted) == before
        # a write right after the start: its agent's row computed, the rest kept
        rng = random.Random(2)
        label(store, rng)
        after = _overview(restarted)
        assert 1 <= len(rows) < len(state.agents)
    assert after == _overview(_client(store, tmp_path / "fresh"))


def test_a_database_restored_or_made_again_at_the_same_url_never_uses_the_old_file(
    tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]
) -> None:
    """The file is of a database, not of a URL: another database there is summarised whole.

    Restored from a copy taken before the file was saved, the store's log is behind the
    file's mark; made again, its log has marks of its own, which reach the file's with
    other writes (before the database's identity was in the tag: wrong figures, or a
    ``KeyError`` for a judge the new store never saw).
    """
    db, path = tmp_path / "s.db", tmp_path / "summary.bin"
    shutil.copy(seeded_template[0], db)
    url = f"sqlite:///{db}"
    rng = random.Random(8)
    with Store.open(url) as s:
        for _ in range(4):
            label(s, rng)
            new_grade(s, rng)
        _saved(s, path)
        saved_mark = s.change_mark()
    calls: list[int] = []
    original = Store.grade_summary

    def counted(self: Store, *a: Any, **k: Any) -> Any:
        calls.append(1)
        return original(self, *a, **k)

    # restored: the copy taken before the writes, then written to below the saved mark
    shutil.copy(seeded_template[0], db)
    with Store.open(url) as s, pytest.MonkeyPatch.context() as mp:
        label(s, rng)
        assert s.change_mark() < saved_mark
        mp.setattr(Store, "grade_summary", counted)
        assert _figures(_loaded(s, path)) == _figures(analyse_fresh(s))
        assert len(calls) == 2  # the loaded one summed every grade, as the fresh one
    # made again (seeded, then written to past the saved mark), and made again empty
    for seeded in (True, False):
        db.unlink()
        with Store.open(url) as s:
            if seeded:
                seed(s)
                while s.change_mark() <= saved_mark:
                    label(s, rng)
            assert load_summary(path, SECRET, s) is None
            assert _figures(_loaded(s, path)) == _figures(analyse_fresh(s))
