"""Course-level scores from chapter grades: hand-computed values on a small fixture."""

from __future__ import annotations

import math

import pytest

from lhbench.report import ReportData
from lhbench.report.content import content_scales_section
from lhbench.schema import (
    ChapterGrade,
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Scale,
    TierKind,
    chapter_grade_key,
)
from lhbench.stats.course import course_scores, normalise, tie_share
from tests.factories import make_run

J1 = JudgeIdentity(kind=JudgeKind.LLM, model="judge-1")
J2 = JudgeIdentity(kind=JudgeKind.LLM, model="judge-2")
T_975_DF1 = 12.706204736174696  # scipy.stats.t.ppf(0.975, 1), checked by hand in tables


def _cg(
    run: str,
    chapter: str,
    kind: str,
    scale: Scale,
    scores: list[int] | None,
    judge: JudgeIdentity = J1,
    status: GradeStatus = GradeStatus.OK,
) -> ChapterGrade:
    rubric = f"{kind}-{scale.value}"
    key = chapter_grade_key(run, chapter, judge.key, rubric, scale)
    dims = [
        DimensionScore(dimension_id=f"d{i}", scale=scale, score=s)
        for i, s in enumerate(scores or [])
    ]
    ok = status is GradeStatus.OK
    grade = Grade(
        id=f"g-{key[:12]}",
        run_id=run,
        rubric_id=rubric,
        rubric_version="1",
        rubric_hash=rubric,
        tier=TierKind.OUTPUT,
        judge=judge,
        status=status,
        scores=dims if ok else [],
        tier_score=sum(scores or [0]) / max(1, len(scores or [])) if ok else None,
        raw_output=None if ok else "not json",
        error=None if ok else "did not parse",
        key=key,
    )
    return ChapterGrade(key=key, chapter_id=chapter, scale=scale, kind=kind, grade=grade)


THREE, FIVE = Scale.ZERO_TO_TWO, Scale.ONE_TO_FIVE


def _fixture() -> list[ChapterGrade]:
    return [
        # run r1, 3-point: c1 = (1+.5+1+1+.5+1)/6 = 5/6; c2 = (5*.5+0)/6 = 5/12
        _cg("r1", "c1", "generic", THREE, [2, 1, 2, 2, 1]),
        _cg("r1", "c1", "chapter", THREE, [2]),
        _cg("r1", "c2", "generic", THREE, [1, 1, 1, 1, 1]),
        _cg("r1", "c2", "chapter", THREE, [0]),
        # judge 2 failed one rubric of c2: it does not count for c2, judge 1 still does
        _cg("r1", "c2", "generic", THREE, None, J2, GradeStatus.ERROR),
        _cg("r1", "c2", "chapter", THREE, [2], J2),
        # c3: its chapter rubric did not parse for the only judge: excluded
        _cg("r1", "c3", "generic", THREE, [2, 2, 2, 2, 2]),
        _cg("r1", "c3", "chapter", THREE, None, status=GradeStatus.PARSE_ERROR),
        # run r1, 5-point, one chapter, two judges:
        # J1 (1+.8+.6+1+1+.8)/6 = 5.2/6; J2 all 3/5 = .6; chapter = (5.2/6 + .6)/2
        _cg("r1", "c1", "generic", FIVE, [5, 4, 3, 5, 5]),
        _cg("r1", "c1", "chapter", FIVE, [4]),
        _cg("r1", "c1", "generic", FIVE, [3, 3, 3, 3, 3], J2),
        _cg("r1", "c1", "chapter", FIVE, [3], J2),
        # run r2, 3-point: c1 = 5/12, c2 = 5/6 -> the same course score as r1 (a tie)
        _cg("r2", "c1", "generic", THREE, [1, 1, 1, 1, 1]),
        _cg("r2", "c1", "chapter", THREE, [0]),
        _cg("r2", "c2", "generic", THREE, [2, 1, 2, 2, 1]),
        _cg("r2", "c2", "chapter", THREE, [2]),
    ]


def test_normalisation_follows_the_paper() -> None:
    assert normalise(3, FIVE) == pytest.approx(0.60)  # "3/5 (0.60)"
    assert normalise(1, THREE) == pytest.approx(0.50)  # "1/2 (0.50)"
    with pytest.raises(ValueError, match="outside scale"):
        normalise(6, FIVE)
    with pytest.raises(ValueError, match="binary"):
        normalise(1, Scale.BINARY)


def test_course_scores_by_hand() -> None:
    scores = course_scores(_fixture(), expected={"r2": ["c1", "c2", "c3"]})
    r1 = scores[("r1", THREE)]
    assert r1.chapter_scores == pytest.approx({"c1": 5 / 6, "c2": 5 / 12})
    assert r1.excluded == ("c3",) and r1.n == 2
    assert r1.mean == pytest.approx(0.625)
    # t-interval over two chapters: width = 2 * t(.975, 1) * (s / sqrt 2), s = (5/12)/sqrt 2
    assert r1.ci_width == pytest.approx(2 * T_975_DF1 * (5 / 12) / 2)
    r1_five = scores[("r1", FIVE)]
    assert r1_five.chapter_scores == pytest.approx({"c1": (5.2 / 6 + 0.6) / 2})
    assert r1_five.n == 1 and math.isnan(r1_five.ci_width)
    r2 = scores[("r2", THREE)]
    assert r2.mean == pytest.approx(0.625) and r2.excluded == ("c3",)  # never graded
    ties = tie_share({"r1": r1.mean, "r2": r2.mean})
    assert (ties.ties, ties.pairs, ties.share) == (1, 1, 1.0)
    assert tie_share({"a": 0.5, "b": 0.6, "c": 0.5, "d": math.nan}).share == pytest.approx(1 / 3)


def test_a_failed_grade_is_never_a_score() -> None:
    only_failed = [_cg("r9", "c1", "generic", THREE, None, status=GradeStatus.PARSE_ERROR)]
    [cs] = course_scores(only_failed).values()
    assert cs.n == 0 and cs.excluded == ("c1",) and math.isnan(cs.mean)


def test_report_section_labels_every_figure_with_its_definition_and_n() -> None:
    data = ReportData.build([make_run("r1"), make_run("r2")])
    data.chapter_grades = _fixture()
    sec = content_scales_section(data, ("harness", "model"))
    per_run, per_scale = sec.tables
    assert per_run.columns[2:] == [
        "3-point score", "3-point n", "3-point excluded", "3-point CI width",
        "5-point score", "5-point n", "5-point excluded", "5-point CI width",
    ]  # fmt: skip
    r1 = next(r for r in per_run.rows if r[1] == "r1")
    assert r1[2:6] == pytest.approx([0.625, 2, 1, 2 * T_975_DF1 * (5 / 12) / 2])
    assert r1[7] == 1
    r2 = next(r for r in per_run.rows if r[1] == "r2")
    assert r2[6:] == [None, 0, 0, None]  # r2 has no 5-point grades
    three = per_scale.rows[0]
    assert three[:5] == ["3-point", 2, 1, 1, 1.0]
    five = per_scale.rows[1]
    assert five[:4] == ["5-point", 1, 0, 0] and five[6] == 0  # no CI with n = 1
    notes = " ".join(sec.notes + per_scale.notes)
    for phrase in ("score/5", "score/2", "t-interval", "n = graded chapters", "tie share"):
        assert phrase in notes
    assert "1 chapter score(s) excluded" in notes and "5 used" in notes


def test_report_section_says_when_there_are_no_chapter_grades() -> None:
    sec = content_scales_section(ReportData.build([make_run("r1")]), ("harness",))
    assert sec.empty and "grade-chapters" in sec.empty


def test_grades_with_a_replaced_rubric_are_left_out_as_stale() -> None:
    from lhbench.report.data import current_chapter_grades
    from tests.store.test_chapters import _record

    runs = {r: make_run(r, pack_id="p", task_id="t") for r in ("r1", "r2")}
    # the generic 3-point rubric is current; c1's own 3-point rubric was re-synthesised
    newer = _record(THREE)  # chapter c1, 0-2, content hash "hash-0-2-x"
    grades = [g for g in _fixture() if g.scale is THREE]
    keep, stale = current_chapter_grades(
        grades, runs, {("p", "generic-0-2"): "generic-0-2"}, [newer]
    )
    left_out = [g for g in grades if g not in keep]
    assert stale == len(left_out) == 2  # r1 c1 and r2 c1, their chapter rubric
    assert all(g.kind == "chapter" and g.chapter_id == "c1" for g in left_out)
    # a grade of a run the store does not have is left out too
    _keep, stale_unknown = current_chapter_grades(grades, {}, {}, [])
    assert stale_unknown == len(grades)
