"""A grade's pattern read as its integer code gives the columns its text gives.

``grade_columns`` reads a grade's low-variety columns (rubric, tier, judge, status,
retryable, repeat, version) as one integer where each value is among those sampled
beforehand, else as text (SQLite: one column of either type; PostgreSQL: the code, and
the text where the code is NULL). Both backends, with values the sample did not see.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from lhbench.schema import GradeStatus, TierKind
from lhbench.store import Store, aggregates
from lhbench.store.grade_columns import GradeColumns
from tests.factories import make_grade


def _save(store: Store) -> None:
    grades = []
    for i in range(48):
        grades.append(
            make_grade(
                f"run-{i % 7}",
                judge=("openai:gpt-5.2", "anthropic:claude", "google:gemini")[i % 3],
                scores=() if i % 11 == 0 else (1 + i % 5, 1 + i % 3),
                tier=(TierKind.PROCESS, TierKind.OUTPUT)[i % 2],
                rubric_version=("1.2", "1.3", "2.0")[i % 5 % 3],
                repeat=i % 4,  # 3: not among the values every store may hold
                status=GradeStatus.ERROR if i % 11 == 0 else GradeStatus.OK,
                retryable=i % 22 == 0,
                error="timed out" if i % 11 == 0 else None,
                tier_score=None if i % 11 == 0 else float(i),
            )
        )
    assert store.save_grades(grades) == len(grades)


def _rows(cols: GradeColumns) -> list[tuple[Any, ...]]:
    """Each grade's values, its tables' codes resolved (their order is the read's)."""
    return [
        (
            cols.run_ids[r],
            cols.keys[k],
            cols.judges[j],
            s,
            bool(y),
            "nan" if math.isnan(t) else t,
            p,
            cols.score_lists[c],
        )
        for r, k, j, s, y, t, p, c in zip(
            cols.run.tolist(),
            cols.key.tolist(),
            cols.judge.tolist(),
            cols.status.tolist(),
            cols.retryable.tolist(),
            cols.tier_score.tolist(),
            cols.repeat.tolist(),
            cols.scores.tolist(),
            strict=True,
        )
    ]


def test_coded_patterns_read_as_their_texts(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    _save(store)
    real = store._pattern_coding({})
    assert real is not None  # every value sampled: every row coded
    coded = _rows(store.grade_columns({}))

    # values the sample did not see: the rows holding them are read as text
    def partial(judges: Any) -> Any:
        full = real_coding(judges)
        assert full is not None
        domains = [list(d) for d in full.domains]
        for c in (3, 6, 7):  # a judge, repeat 3, a version: each on some rows only
            dropped = "3" if c == 6 else domains[c][-1]
            domains[c].remove(dropped)
        return aggregates._PatternCoding(
            domains, [len(d) for d in domains], wide=store.engine.dialect.name != "sqlite"
        )

    real_coding = store._pattern_coding
    monkeypatch.setattr(store, "_pattern_coding", partial)
    mixed = _rows(store.grade_columns({}))
    monkeypatch.setattr(store, "_pattern_coding", lambda judges: None)
    texts = _rows(store.grade_columns({}))

    assert len(texts) == 48
    assert {row[6] for row in texts} == {0, 1, 2, 3}
    assert len({row[2] for row in texts}) == 3 and len({row[1] for row in texts}) >= 4
    assert coded == texts
    assert mixed == texts
    # the same in the database's order
    monkeypatch.setattr(store, "_pattern_coding", partial)
    assert _rows(store.grade_columns({}, sort_in_database=True)) == texts
