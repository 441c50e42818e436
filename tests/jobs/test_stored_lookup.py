"""A grade job over many runs finds what is stored in one query, not one per 500 keys."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

from sqlalchemy import event

from lhbench.jobs import GradeJob
from lhbench.judges import RubricJudge
from lhbench.models import ModelPool
from lhbench.schema import Grade, GradeStatus, Run
from lhbench.store import Store
from tests.factories import make_grade, make_run
from tests.judges.helpers import process_tier, rubric_pack, stub_specs

RUNS = 700  # x 3 judges: 2,100 planned keys, five chunks of 500


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


def _job(store: Store, runs: list[Run]) -> Iterator[GradeJob]:
    rubric, tier = process_tier()

    async def make() -> GradeJob:
        pool = ModelPool(None)
        async with pool.session():
            specs = stub_specs("http://127.0.0.1:9/v1")  # never called: nothing runs here
            judges = [RubricJudge(pool.get(s), s) for s in specs]
            return GradeJob(store, runs, rubric, tier, judges, tasks={})

    yield asyncio.run(make())


def test_stored_grades_of_a_large_plan_are_found_in_one_query(store: Store) -> None:
    store.save_pack(rubric_pack())
    runs = [make_run(f"r{i:04d}", pack_id="figma-mini", pack_hash="") for i in range(RUNS)]
    [job] = list(_job(store, runs))
    units = job.plan()
    keys = [u.key for u in units]
    assert len(keys) == 3 * RUNS
    rubric, tier = job.rubric, job.tier
    # a third of the plan is stored: ok, a parse failure (final) and a transport one (retry)
    stored = []
    for n, u in enumerate(units[: len(units) // 3]):
        p = u.payload
        kw: dict[str, object] = {}
        if n % 10 == 1:
            kw = {"status": GradeStatus.PARSE_ERROR, "error": "bad", "scores": ()}
        elif n % 10 == 2:
            kw = {"status": GradeStatus.ERROR, "error": "503", "retryable": True, "scores": ()}
        g = make_grade(p.run.id, **kw)
        doc = {
            **g.model_dump(),
            "id": f"g{n}",
            "judge": p.judge.identity,
            "rubric_id": rubric.id,
            "rubric_version": rubric.version,
            "rubric_hash": rubric.content_hash,
            "tier": tier.kind,
            "key": u.key,
        }
        if kw:
            doc["tier_score"] = None
        stored.append(Grade.model_validate(doc))
    # grades of the same runs by a judge outside the panel: outside the job's scope
    stored_elsewhere = [make_grade(r.id) for r in runs[:50]]
    store.save_grades([*stored, *stored_elsewhere])
    with _Statements(store) as seen:
        states = job.stored(keys)
    grade_queries = [s for s in seen.sql if "grades" in s.lower()]
    assert len(grade_queries) == 1, grade_queries
    assert states == store.grade_states(keys)  # the same answer as the lookup by key
    assert len(states) == len(stored)
    assert sorted(set(states.values())) == ["final_error", "ok", "retryable"]
