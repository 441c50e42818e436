"""A judge's newest grade: the index seeks give what a GROUP BY over every grade gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from lhbench.store import Store
from lhbench.store.aggregates import _as_datetime
from lhbench.store.tables import GradeRow
from tests.factories import make_grade, make_run


def _grouped(store: Store, excluding: list[str]) -> dict[str, datetime]:
    stmt = select(GradeRow.judge_key, func.max(GradeRow.created_at)).group_by(GradeRow.judge_key)
    if excluding:
        stmt = stmt.where(GradeRow.run_id.not_in(excluding))
    with store.engine.connect() as conn:
        return {k: _as_datetime(at) for k, at in conn.execute(stmt).all()}


def test_newest_grade_per_judge_equals_the_group_by(store: Store) -> None:
    assert store.judge_last_graded() == {}
    t0 = datetime(2026, 5, 1, tzinfo=UTC)
    grades = []
    judges = ["openai:a", "anthropic:b", "google:c", "openai:d"]
    for r in range(12):
        store.save_run(make_run(f"r{r}"))
        for j, judge in enumerate(judges):
            if judge == "openai:d" and r != 7:  # this judge graded one run only
                continue
            grades.append(
                make_grade(
                    f"r{r}",
                    judge,
                    scores=(r % 5 + 1, 3, 4, 2),
                    created_at=t0 + timedelta(minutes=(r * 7 + j * 13) % 50, microseconds=r),
                )
            )
    store.save_grades(grades)
    for excluding in ([], ["r3"], ["r7"], ["r11", "r10", "r9"], [f"r{r}" for r in range(12)]):
        got = store.judge_last_graded(excluding=excluding)
        assert got == _grouped(store, excluding), excluding
    assert len(store.judge_last_graded()) == 4
    # every grade of "openai:d" excluded: that judge is absent, as from the GROUP BY
    assert len(store.judge_last_graded(excluding=["r7"])) == 3
