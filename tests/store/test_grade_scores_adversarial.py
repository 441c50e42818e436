"""A grade's stored scores forged by another tool: the report names the grade, never guesses.

``grades.dim_scores`` (migration 0022) is what the report reads of every grade's dimension
scores; where it is NULL, the document's ``scores``. A row written with SQL by another tool
may hold anything there. Each case forges one grade's column directly and checks that
``lhbench report`` fails with :class:`GradeScoresError` naming that grade (id, run, judge)
and what is wrong, in a bounded message, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select, update

from lhbench.store import GradeScoresError, Store
from lhbench.store.tables import GradeRow
from tests.cli.helpers import cli
from tests.factories import make_grade, make_run

_HUGE_LIST = "[" + '["d","1-5",3],' * 200_000 + "5]"

# (attack, forged dim_scores, words the error must hold)
FORGED = [
    ("not_json", '[["design_inspection","1-5",4]', "not JSON"),
    ("not_a_list", '{"design_inspection": 4}', "a JSON dict, not a list"),
    ("a_bare_number", "4", "a JSON int, not a list"),
    ("item_not_a_list", '["design_inspection"]', "item 0 is a JSON str"),
    ("two_values", '[["design_inspection","1-5"]]', "item 0 has 2 values, not 3"),
    ("four_values", '[["design_inspection","1-5",4,1]]', "item 0 has 4 values, not 3"),
    ("dimension_not_text", '[[7,"1-5",4]]', "dimension id 7 is not text"),
    ("unknown_scale", '[["design_inspection","1-10",4]]', 'unknown scale "1-10"'),
    ("scale_not_text", '[["design_inspection",5,4]]', "unknown scale 5"),
    ("score_text", '[["design_inspection","1-5","4"]]', 'score "4"'),
    ("score_bool", '[["design_inspection","binary",true]]', "score true"),
    ("score_float", '[["design_inspection","1-5",4.0]]', "score 4.0"),
    ("score_outside_scale", '[["design_inspection","0-2",5]]', "score 5"),
    ("score_negative", '[["design_inspection","1-5",-1]]', "score -1"),
    ("score_huge_integer", '[["design_inspection","1-5",' + "9" * 30 + "]]", "score 1e+30"),
    ("score_infinite", '[["design_inspection","1-5",1e999]]', "not JSON"),
    ("huge_dimension_id", '[["' + "x" * 1_000_000 + '","nope",4]]', "unknown scale"),
    ("huge_list_bad_at_the_end", _HUGE_LIST, "item 200000 is a JSON int"),
]


def _graded(store: Store) -> tuple[str, str]:
    """Two runs, two judges each; returns the grade to forge and its run."""
    for run_id in ("r1", "r2"):
        store.save_run(make_run(run_id))
    grades = [
        make_grade(run_id, judge, scores)
        for run_id in ("r1", "r2")
        for judge, scores in (("openai:gpt-5.2", (4, 3, 5, 2)), ("anthropic:opus", (3, 3, 4, 2)))
    ]
    assert store.save_grades(grades) == 4
    target = grades[2]
    return target.id, target.run_id


def _forge(store: Store, grade_id: str, **values: Any) -> None:
    with store.engine.begin() as conn:
        conn.execute(update(GradeRow).where(GradeRow.id == grade_id).values(**values))


def _report(store_url: str, out: Path) -> Any:
    return cli("report", "--db", store_url, "--out", str(out))


@pytest.mark.parametrize(("forged", "words"), [f[1:] for f in FORGED], ids=[f[0] for f in FORGED])
def test_a_forged_dim_scores_column_fails_the_report_naming_the_grade(
    store: Store, store_url: str, tmp_path: Path, forged: str, words: str
) -> None:
    grade_id, run_id = _graded(store)
    _forge(store, grade_id, dim_scores=forged)
    started = time.perf_counter()
    with pytest.raises(GradeScoresError) as raised:
        store.grade_columns({})
    assert time.perf_counter() - started < 20
    err = raised.value
    assert (err.grade_id, err.run_id, err.column) == (grade_id, run_id, "dim_scores")
    assert err.judge is not None and err.judge.startswith("openai:gpt-5.2 [")
    assert words in err.problem
    res = _report(store_url, tmp_path / "report")
    assert res.exit_code == 2
    # one line, bounded whatever the column holds, naming the grade, its run and judge
    [line] = res.stderr.strip().splitlines()
    assert len(line) < 700
    assert f"grade {grade_id!r} (run {run_id!r}, judge openai:gpt-5.2 [" in line
    assert words in line and "dim_scores" in line
    assert not (tmp_path / "report" / "report.md").exists()


@pytest.mark.parametrize(
    ("scores", "words"),
    [
        ({"design_inspection": 4}, "a JSON dict, not a list"),
        ([{"dimension_id": "design_inspection", "score": 4}], "item 0 has no scale"),
        ([{"dimension_id": "design_inspection", "scale": "1-5", "score": 9}], "score 9"),
        ([{"scale": "1-5", "score": 9}], "item 0 has no dimension_id"),
    ],
    ids=["scores_not_a_list", "no_scale", "score_outside_scale", "no_dimension"],
)
def test_a_forged_document_read_where_dim_scores_is_null_is_named_too(
    store: Store, store_url: str, tmp_path: Path, scores: Any, words: str
) -> None:
    grade_id, run_id = _graded(store)
    with store.engine.connect() as conn:
        document = conn.execute(
            select(GradeRow.document).where(GradeRow.id == grade_id)
        ).scalar_one()
    _forge(store, grade_id, dim_scores=None, document={**document, "scores": scores})
    with pytest.raises(GradeScoresError) as raised:
        store.grade_columns({})
    assert (raised.value.grade_id, raised.value.column) == (grade_id, "document.scores")
    res = _report(store_url, tmp_path / "report")
    assert res.exit_code == 2
    assert f"grade {grade_id!r} (run {run_id!r}" in res.stderr
    assert "document.scores" in res.stderr and words in res.stderr


def test_valid_columns_and_a_null_column_over_a_valid_document_still_report(
    store: Store, store_url: str, tmp_path: Path
) -> None:
    grade_id, _ = _graded(store)
    before = store.grade_columns({})
    # another tool's row without the compact column: its document's scores, the same
    _forge(store, grade_id, dim_scores=None)
    after = store.grade_columns({})
    # each grade's scores, the same (the lists' order follows a set's: not compared)
    assert [before.score_lists[i] for i in before.scores] == [
        after.score_lists[i] for i in after.scores
    ]
    res = _report(store_url, tmp_path / "report")
    assert res.exit_code == 0, res.stderr
    assert (tmp_path / "report" / "report.md").exists()
