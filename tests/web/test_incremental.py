"""The overview updated from the change log equals a fresh full analysis, after any write.

The web server keeps its analysis and, after a write, recomputes only the runs the store's
change log names (migration 0020's triggers). Here random writes go in through every
path that changes what the overview shows (new grades, a failed grade replaced by its
retry, grades and labels changed or deleted by hand-written SQL, labels, verdicts, votes,
a run turned infrastructure failure, a new judge), and after each one the updated
analysis, and the overview's HTML served by the long-lived app, must equal what a fresh
analysis and a fresh app give. A write path the log missed leaves the update stale and
fails the comparison.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from lhbench.config import Settings
from lhbench.schema import (
    FailureKind,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    RunStatus,
    TierKind,
    Verdict,
    grade_key,
    verdict_key,
)
from lhbench.store import Store
from lhbench.web.analysis import Analysis, analyse, refresh
from lhbench.web.app import create_app
from tests.conftest import PG_URL, _pg_database
from tests.web.conftest import seed


def _figures(a: Analysis) -> dict[str, str]:
    """Every field of an analysis as exact text (dicts in key order, floats by repr)."""
    out = {}
    for f in fields(a):
        if f.name in ("by_asked", "panel", "_summary", "_options"):
            continue
        value = getattr(a, f.name)
        if isinstance(value, dict):
            value = sorted(
                (repr(k), repr(sorted(v.items()) if isinstance(v, Mapping) else v))
                for k, v in value.items()
            )
        elif isinstance(value, set):
            value = sorted(value)
        elif f.name == "excluded":
            value = (repr(value), value.notes())
        out[f.name] = repr(value)
    return out


Write = Callable[[Store, random.Random], None]


def _grades(store: Store, judge: str = "openai:judge-a") -> list[Any]:
    return [
        g
        for g in store.list_grades(tier=TierKind.PROCESS.value)
        if g.judge.model == judge and g.status == GradeStatus.OK
    ]


def new_grade(store: Store, rng: random.Random) -> None:
    g = rng.choice(_grades(store))
    repeat = 10 + rng.randrange(1000)
    store.save_grades(
        [
            g.model_copy(
                update={
                    "id": f"{g.id}-r{repeat}",
                    "key": grade_key(g.run_id, g.judge.key, g.rubric_hash, "process", repeat),
                    "repeat": repeat,
                    "tier_score": rng.choice([0.0, 0.25, 0.5, 1.0]),
                }
            )
        ]
    )


def retried_grade(store: Store, rng: random.Random) -> None:
    """A failed grade stored, then replaced by its retry (an UPDATE of the same key)."""
    g = rng.choice(_grades(store, "anthropic:judge-b"))
    repeat = 2000 + rng.randrange(1000)
    key = grade_key(g.run_id, g.judge.key, g.rubric_hash, "process", repeat)
    base = {"id": f"{g.id}-x{repeat}", "key": key, "repeat": repeat}
    failed = {"status": GradeStatus.ERROR, "scores": [], "tier_score": None, "error": "timeout"}
    store.save_grades([g.model_copy(update=base | failed)])
    store.save_grades([g.model_copy(update=base | {"tier_score": 0.125})])


def sql_changed_grade(store: Store, rng: random.Random) -> None:
    g = rng.choice(_grades(store, "google-gla:judge-c"))
    with store.engine.begin() as conn:
        conn.execute(
            text("UPDATE grades SET tier_score = :s WHERE key = :k"),
            {"s": rng.random(), "k": g.key},
        )


def sql_deleted_grade(store: Store, rng: random.Random) -> None:
    g = rng.choice(_grades(store))
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM grades WHERE key = :k"), {"k": g.key})


def label(store: Store, rng: random.Random) -> None:
    run = rng.choice(store.list_runs())
    passed = rng.choice([True, False, None])
    undecided: dict[str, Any] = {
        "error": "the sandbox could not start",
        "failure_kind": FailureKind.INFRASTRUCTURE,
    }
    store.save_label(
        Label(
            run_id=run.id,
            passed=passed,
            source="verify:verify.py",
            **(undecided if passed is None else {}),
        )
    )


def sql_deleted_label(store: Store, rng: random.Random) -> None:
    lab = rng.choice(store.list_labels())
    with store.engine.begin() as conn:
        conn.execute(
            text("DELETE FROM labels WHERE run_id = :r AND source = :s"),
            {"r": lab.run_id, "s": lab.source},
        )


def verdict(store: Store, rng: random.Random) -> None:
    run = rng.choice(store.list_runs())
    ident = JudgeIdentity(kind=JudgeKind.AGENT, model="openai:aj")
    repeat = rng.randrange(1000)
    store.save_verdicts(
        [
            Verdict(
                id=f"v-{run.id}-{repeat}",
                run_id=run.id,
                judge=ident,
                verdict=rng.choice(["PASS", "FAIL"]),
                repeat=repeat,
                key=verdict_key(run.id, ident.key, "state", repeat),
            )
        ]
    )


def vote(store: Store, rng: random.Random) -> None:
    runs = store.list_runs()
    a = rng.choice(runs)
    b = rng.choice([r for r in runs if r.task_id == a.task_id and r.id != a.id])
    store.save_vote(
        PreferenceVote(
            id=f"vote-{rng.randrange(10**9)}",
            pack_id=a.pack_id,
            task_id=a.task_id,
            run_a=a.id,
            run_b=b.id,
            left="a",
            winner=rng.choice(["a", "b", "tie"]),
            annotator="random",
            rater_kind=JudgeKind.HUMAN,
        )
    )


def infra_run(store: Store, rng: random.Random) -> None:
    run = rng.choice([r for r in store.list_runs() if r.failure_kind is None])
    store.save_run(
        run.model_copy(
            update={
                "status": RunStatus.FAILED,
                "error": "model endpoint refused the connection",
                "failure_kind": FailureKind.INFRASTRUCTURE,
            }
        )
    )


def new_judge(store: Store, rng: random.Random) -> None:
    ident = JudgeIdentity(kind=JudgeKind.LLM, model=f"openai:judge-{rng.randrange(10**6)}")
    g = rng.choice(_grades(store))
    key = grade_key(g.run_id, ident.key, g.rubric_hash, "process", 0)
    store.save_grades(
        [g.model_copy(update={"id": f"{g.id}-{ident.model}", "judge": ident, "key": key})]
    )


# writes the update must follow without summarising the whole store again
INCREMENTAL: list[Write] = [
    new_grade,
    retried_grade,
    sql_changed_grade,
    sql_deleted_grade,
    label,
    sql_deleted_label,
    verdict,
    vote,
]
WHOLE: list[Write] = [infra_run, new_judge]


def _check(store: Store, tmp: Path, seed_: int) -> None:
    rng = random.Random(seed_)
    settings = Settings(home=tmp, web_public_leaderboard=True)  # type: ignore[call-arg]
    served = TestClient(create_app(store, settings=settings))
    pages = ("/", "/?by=harness", "/?sort=pass")
    for path in pages:
        assert served.get(path).status_code == 200
    a = analyse(store)
    first = _figures(a)
    fulls = []
    original = Store.grade_summary

    def counted(self: Store, *args: Any, **kw: Any) -> Any:
        fulls.append(1)
        return original(self, *args, **kw)

    writes = [*INCREMENTAL * 2, *WHOLE]
    rng.shuffle(writes)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Store, "grade_summary", counted)
        for write in writes:
            write(store, rng)
            before = len(fulls)
            a = refresh(store, a)
            if write in INCREMENTAL:
                assert len(fulls) == before, f"{write.__name__} summarised the whole store"
            fresh = TestClient(create_app(store, settings=settings))
            for path in pages:
                assert served.get(path).text == fresh.get(path).text, (write.__name__, path)
            # the fresh app's own full analysis (made for its first page, from nothing)
            expected = fresh.app.state.web.analysis()  # type: ignore[attr-defined]
            assert _figures(a) == _figures(expected), write.__name__
    # the writes changed what the overview shows
    assert _figures(a) != first
    assert len(a.excluded.infra_runs) >= 1


@pytest.fixture
def sqlite_store(
    tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]
) -> Iterator[Store]:
    db = tmp_path / "copy.db"
    shutil.copy(seeded_template[0], db)
    store = Store.open(f"sqlite:///{db}")
    yield store
    store.close()


@pytest.mark.parametrize("seed_", [0])
def test_updated_overview_equals_a_full_analysis_sqlite(
    sqlite_store: Store, tmp_path: Path, seed_: int
) -> None:
    _check(sqlite_store, tmp_path, seed_)


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set (CI sets it)")
def test_updated_overview_equals_a_full_analysis_postgresql(tmp_path: Path) -> None:
    database = _pg_database()
    store = Store.open(next(database))
    try:
        seed(store)
        _check(store, tmp_path, 2)
    finally:
        store.close()
        database.close()


def test_change_log_names_the_runs_written(sqlite_store: Store) -> None:
    """Each write path logs its run; runs and packs as a whole; nothing for artifacts."""
    store = sqlite_store
    mark = store.change_mark()
    run = store.list_runs()[0]
    store.save_label(Label(run_id=run.id, passed=True, source="verify:verify.py"))
    changes = store.changes_since(mark)
    assert changes.runs == {"labels": {run.id}} and not changes.whole
    store.save_run(run.model_copy(update={"cost_usd": 9.0}))
    changes = store.changes_since(changes.mark)
    assert changes.whole == {"runs"} and not changes.runs
    assert store.changes_since(changes.mark).mark == changes.mark
