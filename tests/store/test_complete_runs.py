"""A run "fully graded" (every grade stored ok): one rule in two forms, SQL and rows in hand.

A grade job plans nothing for a run whose every (judge, repeat) grade of its panel is
stored ok on the rubric content and tier. The store counts them in SQL
(``grade_complete_runs``, a job with no rows read); ``lhbench judge`` counts them on the
panel rows it reads for its figures anyway (``complete_runs``). Both must find the same
runs, whatever a store holds beside the panel's grades.
"""

from __future__ import annotations

from typing import Any

import pytest

from lhbench.schema import Grade, GradeStatus, TierKind
from lhbench.store import Store, complete_runs
from tests.factories import make_grade, make_run

PANEL = ("openai:a", "openai:b")
HASH = "h" * 64


def _grade(run: str, judge: str, repeat: int, **kw: object) -> Grade:
    base: dict[str, Any] = {"rubric_hash": HASH, "repeat": repeat}
    base.update(kw)
    return make_grade(run, judge, **base)


def _failed(run: str, judge: str, repeat: int, *, retryable: bool) -> Grade:
    return _grade(
        run,
        judge,
        repeat,
        scores=(),
        status=GradeStatus.ERROR,
        retryable=retryable,
        error="timeout" if retryable else "refused",
    )


@pytest.mark.parametrize("repeats", [1, 2])
def test_the_sql_and_the_row_forms_find_the_same_complete_runs(store: Store, repeats: int) -> None:
    full = [_grade("full", j, k) for j in PANEL for k in range(repeats)]
    cases = {
        "full": full,
        # one (judge, repeat) missing
        "missing": full[:-1],
        # one stored as a final error, or a retryable one
        "error": [*full[:-1], _failed("error", PANEL[-1], repeats - 1, retryable=False)],
        "retry": [*full[:-1], _failed("retry", PANEL[-1], repeats - 1, retryable=True)],
        # a repeat beyond the plan's, another judge, another content or tier: not counted
        "extra": [*full, _grade("extra", PANEL[0], repeats), _grade("extra", "openai:c", 0)],
        "stale": [_grade("stale", j, k, rubric_hash="s" * 64) for j in PANEL for k in range(2)],
        "tier": [_grade("tier", j, k, tier=TierKind.OUTPUT) for j in PANEL for k in range(2)],
        # the other judges' grades only, as many as the panel's
        "others": [_grade("others", j, k) for j in ("openai:c", "openai:d") for k in range(2)],
    }
    for run, grades in cases.items():
        store.save_run(make_run(run))
        store.save_grades(
            [
                g.model_copy(update={"run_id": run, "id": f"{run}-{g.id}", "key": f"{run}-{g.key}"})
                for g in grades
            ]
        )
    [judge_a] = {g.judge.key for g in full if g.judge.model == PANEL[0]}
    [judge_b] = {g.judge.key for g in full if g.judge.model == PANEL[1]}
    judges = [judge_a, judge_b]
    tier = full[0].tier.value
    by_sql = store.grade_complete_runs(
        rubric_hash=HASH, tier=tier, judge_keys=judges, repeats=repeats
    )
    rows = store.panel_grade_rows(
        rubric_id=full[0].rubric_id,
        rubric_hash=HASH,
        tier=tier,
        judge_keys=judges,
        repeats=repeats,
    )
    by_rows = complete_runs(rows, len(judges) * repeats)
    assert by_sql == by_rows == {"full", "extra"}
