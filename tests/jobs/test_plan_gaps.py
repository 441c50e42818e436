"""A grade job plans only what is not stored ok: no unit, no key per stored grade.

A team's store holds a million grades; ``lhbench judge`` on it must find them all stored
without building a unit and a SHA-256 key for each. The work is bounded without a clock:
how many grade keys the job computes, and how many SQL statements it sends, for a store
that holds every grade (none, and as many for 10 runs as for 200), and for one with gaps
(keys for the runs with a gap only; the same units run as the key-by-key lookup says).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any

import pytest
from sqlalchemy import event

from lhbench.jobs import GradeJob
from lhbench.jobs.runner import JobSummary, Unit, run_job
from lhbench.judges import RubricJudge
from lhbench.models import ModelPool
from lhbench.schema import Grade, GradeStatus, Rubric, Run, Tier
from lhbench.store import Store
from lhbench.testing import ModelStub, rubric_judge_script
from tests.factories import make_grade, make_run
from tests.judges.helpers import process_tier, rubric_pack, seed_runs, stub_specs

NOWHERE = "http://127.0.0.1:9/v1"  # a panel that is never asked: everything is stored


class _Statements:
    """The SQL statements a block sends (cursor executions)."""

    def __init__(self, store: Store) -> None:
        self.engine = store.engine
        self.sql: list[str] = []

    def _seen(self, _conn: object, _cursor: object, statement: str, *_: object) -> None:
        self.sql.append(statement)

    def __enter__(self) -> _Statements:
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)


@pytest.fixture
def key_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every grade key a rubric judge computes (the plan's per-unit cost)."""
    calls: list[str] = []
    real = RubricJudge.key

    def counted(self: RubricJudge, item: Any) -> str:
        key = real(self, item)
        calls.append(key)
        return key

    monkeypatch.setattr(RubricJudge, "key", counted)
    return calls


@functools.cache
def _tier() -> tuple[Rubric, Tier]:
    return process_tier()  # the sample pack, read once


def _stored(unit: Unit[Any], n: int, **kw: object) -> Grade:
    """The grade ``unit`` would make, as stored (ok unless ``kw`` says otherwise)."""
    rubric, tier = _tier()
    p = unit.payload
    g = make_grade(p.run.id, **kw)
    doc = {
        **g.model_dump(),
        "id": f"g{n}-{unit.key[:12]}",
        "judge": p.judge.identity,
        "rubric_id": rubric.id,
        "rubric_version": rubric.version,
        "rubric_hash": rubric.content_hash,
        "tier": tier.kind,
        "repeat": p.repeat,
        "key": unit.key,
    }
    if kw:
        doc["tier_score"] = None
    return Grade.model_validate(doc)


async def _with_job(
    store: Store, runs: list[Run], base_url: str, body: Callable[[GradeJob], Any], **kw: Any
) -> Any:
    rubric, tier = _tier()
    pool = ModelPool(None)
    async with pool.session():
        judges = [RubricJudge(pool.get(s), s) for s in stub_specs(base_url)]
        job = GradeJob(store, runs, rubric, tier, judges, tasks={}, **kw)
        return await body(job)


def _grade(store: Store, runs: list[Run], base_url: str, **kw: Any) -> JobSummary[Any]:
    repeats = kw.pop("repeats", 1)

    async def body(job: GradeJob) -> JobSummary[Any]:
        return await run_job(job, **kw)

    return asyncio.run(_with_job(store, runs, base_url, body, repeats=repeats))  # type: ignore[no-any-return]


def _plan(store: Store, runs: list[Run], base_url: str, **kw: Any) -> list[Unit[Any]]:
    async def body(job: GradeJob) -> list[Unit[Any]]:
        return job.plan()

    return asyncio.run(_with_job(store, runs, base_url, body, **kw))  # type: ignore[no-any-return]


def _fully_stored(store: Store, n: int) -> list[Run]:
    store.save_pack(rubric_pack())
    runs = [make_run(f"r{i:04d}", pack_id="figma-mini", pack_hash="") for i in range(n)]
    store.save_grades([_stored(u, i) for i, u in enumerate(_plan(store, runs, NOWHERE, repeats=2))])
    return runs


def test_a_fully_stored_plan_builds_no_key_and_its_queries_do_not_grow_with_runs(
    tmp_path: Any, key_calls: list[str]
) -> None:
    sent: dict[int, int] = {}
    for n in (10, 200):
        with Store.open(f"sqlite:///{tmp_path / f'{n}.db'}") as store:
            runs = _fully_stored(store, n)
            key_calls.clear()
            with _Statements(store) as seen:
                summary = _grade(store, runs, NOWHERE, repeats=2)
            planned = n * 3 * 2
            assert (summary.planned, summary.skipped, summary.ran) == (planned, planned, 0)
            assert key_calls == []  # main: one key per stored grade (1,200 at 200 runs)
            sent[n] = len(seen.sql)
    assert sent[10] == sent[200] <= 2, sent


def test_a_store_with_gaps_runs_exactly_the_missing_units(
    tmp_path: Any, key_calls: list[str]
) -> None:
    with (
        Store.open(f"sqlite:///{tmp_path / 'gaps.db'}") as store,
        ModelStub(rubric_judge_script()) as stub,
    ):
        runs = seed_runs(store, 10)
        units = _plan(
            store, runs, stub.base_url, repeats=2
        )  # run-major: 6 units (3 judges x 2) per run
        by_run = [units[i : i + 6] for i in range(0, len(units), 6)]
        stored: list[Grade] = []
        for r, mine in enumerate(by_run):
            for j, u in enumerate(mine):
                n = len(stored)
                if (r, j) in ((1, 3), (3, 1)) or r == 2:
                    continue  # a grade missing, the last repeat of a judge, a run never graded
                if (r, j) == (4, 0):  # a parse failure: kept (final)
                    kw: dict[str, Any] = {"status": GradeStatus.PARSE_ERROR, "error": "bad"}
                    stored.append(_stored(u, n, scores=(), **kw))
                elif (r, j) == (5, 2):  # a transport failure: asked again
                    kw = {"status": GradeStatus.ERROR, "error": "503", "retryable": True}
                    stored.append(_stored(u, n, scores=(), **kw))
                elif r == 6:  # a stale judge config: the same models with other settings
                    ident = u.payload.judge.identity
                    stale = ident.model_copy(update={"settings": {**ident.settings, "seed": 7}})
                    assert stale.key != ident.key
                    g = _stored(u, n)
                    stored.append(g.model_copy(update={"judge": stale, "key": f"stale-{u.key}"}))
                else:
                    stored.append(_stored(u, n))
        store.save_grades(stored)
        # what the key-by-key lookup says is left: the oracle
        states = store.grade_states([u.key for u in units])
        todo = {u.key for u in units if states.get(u.key) in (None, "retryable")}
        assert len(todo) == 1 + 6 + 1 + 1 + 6  # missing, never graded, repeat, 503, stale

        key_calls.clear()
        summary = _grade(store, runs, stub.base_url, repeats=2, concurrency=4)
        assert {g.key for g in summary.results} == todo
        assert stub.count == len(todo)
        assert (summary.planned, summary.skipped, summary.kept_failed, summary.retried) == (
            60,
            60 - len(todo),  # stored ok, and the parse failure kept
            1,
            1,
        )
        # keys for the six runs with a gap only (main: all 60)
        assert len(key_calls) == 6 * 6

        # --retry-errors asks the kept parse failure again, and only it
        stub.reset()
        again = _grade(store, runs, stub.base_url, repeats=2, retry_errors=True)
        assert stub.count == 1
        assert (again.retried, again.done, again.skipped) == (1, 1, 59)
        assert [g.key for g in again.results] == [by_run[4][0].key]

        # everything stored now: nothing planned beyond the count, nothing asked
        key_calls.clear()
        stub.reset()
        last = _grade(store, runs, stub.base_url, repeats=2)
        assert (last.planned, last.skipped, last.ran, key_calls, stub.count) == (60, 60, 0, [], 0)
        # a third repeat: only the new repeat's units are built and run
        more = _grade(store, runs, stub.base_url, repeats=3)
        assert stub.count == 30
        assert (more.planned, more.skipped, more.done) == (90, 60, 30)
