"""Course-level scores from chapter grades: hand-computed values on a small fixture."""

from __future__ import annotations

import math

import pytest

from lhbench.reporting import ReportData
from lhbench.reporting.content import content_scales_section
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
from lhbench.stats.course import course_scores, normalise
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


def test_a_failed_grade_is_never_a_score() -> None:
    only_failed = [_cg("r9", "c1", "generic", THREE, None, status=GradeStatus.PARSE_ERROR)]
    [cs] = course_scores(only_failed).values()
    assert cs.n == 0 and cs.excluded == ("c1",) and math.isnan(cs.mean)


def test_report_section_labels_every_figure_with_its_definition_and_n() -> None:
    # r1 and r2: two agents on one course (same pack and task)
    data = ReportData.build([make_run("r1"), make_run("r2", harness="codex", model="openai:x")])
    data.chapter_grades = _fixture()
    sec = content_scales_section(data, ("harness", "model"))
    agents, per_run, per_scale = sec.tables
    assert agents.slug == "content_course_scores" and "LH-Bench Table 6" in agents.title
    assert agents.columns[1:7] == [
        "3-point score", "3-point ci_low", "3-point ci_high", "3-point ±",
        "3-point courses", "3-point chapters",
    ]  # fmt: skip
    assert "lhbench's figure, not in LH-Bench" in per_run.title
    assert per_run.columns[2:] == [
        "3-point score", "3-point n", "3-point excluded", "3-point t-CI width",
        "5-point score", "5-point n", "5-point excluded", "5-point t-CI width",
    ]  # fmt: skip
    r1 = next(r for r in per_run.rows if r[1] == "r1")
    assert r1[2:6] == pytest.approx([0.625, 2, 1, 2 * T_975_DF1 * (5 / 12) / 2])
    assert r1[7] == 1
    r2 = next(r for r in per_run.rows if r[1] == "r2")
    assert r2[6:] == [None, 0, 0, None]  # r2 has no 5-point grades
    # 3-point: r1 and r2 share chapters c1 and c2 (c3 is excluded for both): two
    # comparisons, none tied (5/6 vs 5/12, 5/12 vs 5/6), though the course scores tie
    three = per_scale.rows[0]
    assert three[:5] == ["3-point", 2, 0, 0.0, 0]
    five = per_scale.rows[1]
    assert five[:4] == ["5-point", 0, 0, None]  # only r1 has 5-point grades
    notes = " ".join(sec.notes + agents.notes + per_run.notes + per_scale.notes)
    for phrase in ("score/5", "score/2", "t-interval", "bootstrap over courses", "tie share"):
        assert phrase in notes
    assert "n = courses" in notes and "chapter-level comparison" in notes
    assert "1 chapter score(s) excluded" in notes and "5 used" in notes
    assert "import-votes" in notes  # no human votes: says what would give Table 10


def test_report_section_says_when_there_are_no_chapter_grades() -> None:
    sec = content_scales_section(ReportData.build([make_run("r1")]), ("harness",))
    assert sec.empty and "grade-chapters" in sec.empty


def test_grades_with_a_replaced_rubric_are_left_out_as_stale() -> None:
    from lhbench.reporting.data import current_chapter_grades
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


# --- LH-Bench Table 6: per agent, mean over courses, bootstrap CI over courses -----------


def _flat(run: str, chapter: str, scale: Scale, score: int) -> list[ChapterGrade]:
    """A chapter whose every criterion got ``score`` (so its chapter score is score/top)."""
    return [
        _cg(run, chapter, "generic", scale, [score] * 5),
        _cg(run, chapter, "chapter", scale, [score]),
    ]


def test_table6_is_a_mean_over_courses_with_a_bootstrap_ci_over_courses() -> None:
    from lhbench.stats import bootstrap_ci
    from lhbench.stats.course import agent_scores

    # agent A: course k1 one chapter (score 2/2), run twice (2/2 and 0/2: course score .5);
    # course k2 three chapters at 1/2 (.5); course k3 one chapter at 0/2 (0)
    grades = [
        *_flat("a1", "c1", THREE, 2),
        *_flat("a1b", "c1", THREE, 0),
        *[g for ch in ("c1", "c2", "c3") for g in _flat("a2", ch, THREE, 1)],
        *_flat("a3", "c1", THREE, 0),
        *_flat("b1", "c1", THREE, 2),
    ]
    scores = course_scores(grades)
    group_of = {"a1": "A", "a1b": "A", "a2": "A", "a3": "A", "b1": "B"}
    course_of = {"a1": "k1", "a1b": "k1", "a2": "k2", "a3": "k3", "b1": "k1"}
    table6 = agent_scores(scores, group_of=group_of, course_of=course_of)
    a = table6[("A", THREE)]
    assert a.course_scores == pytest.approx({"k1": 0.5, "k2": 0.5, "k3": 0.0})
    assert a.n == 3 and a.runs == 4 and a.chapters == 6
    # each course weighs once: not the mean over the six chapters (2.5/6) nor over runs
    assert a.mean == pytest.approx(1 / 3)
    assert a.ci == pytest.approx(bootstrap_ci([0.5, 0.5, 0.0], n_resamples=1000, seed=0))
    assert a.ci[0] <= a.mean <= a.ci[1] and a.half_width == pytest.approx((a.ci[1] - a.ci[0]) / 2)
    b = table6[("B", THREE)]
    assert (b.n, b.mean, b.ci) == (1, 1.0, (1.0, 1.0))


# --- ties among chapter-level comparisons of the same course -----------------------------


def test_ties_are_counted_over_chapter_comparisons_of_the_same_course() -> None:
    from lhbench.stats.course import chapter_comparisons, tie_share

    chapter_scores = {
        "a1": {"c1": 0.5, "c2": 1.0},  # agent A, course k1
        "b1": {"c1": 0.5, "c2": 0.5, "c3": 1.0},  # agent B, course k1: c3 has no match
        "a2": {"c1": 0.5},  # agent A, course k2: B has no run of k2
        "a3": {"c1": 0.5, "c2": 1.0},  # agent A again on k1: never compared with A
    }
    group_of = {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}
    course_of = {"a1": "k1", "a2": "k2", "a3": "k1", "b1": "k1"}
    comps = chapter_comparisons(chapter_scores, group_of=group_of, course_of=course_of)
    assert sorted((c.run_a, c.run_b, c.chapter, c.scores) for c in comps) == [
        ("a1", "b1", "c1", "tie"),
        ("a1", "b1", "c2", "a"),
        ("a3", "b1", "c1", "tie"),
        ("a3", "b1", "c2", "a"),
    ]
    ties = tie_share(comps)
    assert (ties.ties, ties.pairs, ties.share) == (2, 4, 0.5)


# --- LH-Bench Table 10 and App. J: humans vs the chapter scores on matched comparisons ----


def test_win_rates_and_agreement_on_matched_chapter_comparisons() -> None:
    from sklearn.metrics import cohen_kappa_score

    from lhbench.stats.course import (
        comparison_win_rates,
        human_vlm_agreement,
        matched_comparisons,
    )

    chapter_scores = {
        "a": {"c1": 0.8, "c2": 0.4, "c3": 0.6},
        "b": {"c1": 0.6, "c2": 0.4, "c3": 0.9},
        "g": {"c1": 0.6, "c2": 0.2},
    }
    group_of = {"a": "A", "b": "B", "g": "G"}
    votes = [
        ("a", "b", "c1", "a"),  # scores: a (0.8 > 0.6): agree
        ("a", "b", "c2", "a"),  # scores: tie: disagree
        ("b", "a", "c3", "a"),  # scores: a (b 0.9 > a 0.6): agree
        ("a", "g", "c1", "b"),  # scores: a: disagree
        ("g", "a", "c2", "tie"),  # scores: b (a 0.4 > g 0.2): disagree
        ("b", "g", "c1", "tie"),  # scores: tie: agree
        ("b", "g", "c3", "a"),  # g has no c3 score: not matched
    ]
    matched, unmatched = matched_comparisons(votes, chapter_scores, group_of=group_of)
    assert unmatched == 1 and len(matched) == 6
    human = comparison_win_rates(matched, human=True)
    scores = comparison_win_rates(matched)
    # ties credited half (LH-Bench Table 10): A in 5 comparisons, human: wins 2 (a-b c1,
    # c2) + b-a c3 is a win for b, a-g c1 a win for g, g-a c2 a tie -> (2 + 0.5) / 5
    assert human["A"].games == 5 and human["A"].rate_ties_half == pytest.approx(2.5 / 5)
    # scores: A wins a-b c1, a-g c1, g-a c2; ties a-b c2; loses b-a c3 -> (3 + 0.5) / 5
    assert scores["A"].rate_ties_half == pytest.approx(3.5 / 5)
    assert scores["G"].rate_ties_half == pytest.approx(0.5 / 3)
    rows = {r.pair: r.result for r in human_vlm_agreement(matched)}
    overall = rows[None]
    h = [c.human for c in matched]
    v = [c.scores for c in matched]
    assert overall.n == 6 and overall.raw_agreement == pytest.approx(3 / 6)
    assert overall.kappa == pytest.approx(cohen_kappa_score(h, v, labels=["a", "b", "tie"]))
    assert (overall.ties_first, overall.ties_second) == (2, 2)  # human ties, score ties
    ab = rows[("A", "B")]
    assert (ab.n, ab.raw_agreement) == (3, pytest.approx(2 / 3))
    assert set(rows) == {("A", "B"), ("A", "G"), ("B", "G"), None}


def test_table10_published_win_rates_credit_ties_half() -> None:
    # LH-Bench Table 10 (n = 275: Claude in 92 + 92 comparisons, Codex and Gemini in 92 + 91
    # each). With ties credited half, the win rates times games sum to the comparisons (each
    # gives out one point); with ties won by neither they would sum to 275 - 36 human ties.
    games = {"claude": 184, "codex": 183, "gemini": 183}
    for column in ({"claude": 0.815, "codex": 0.342, "gemini": 0.342},  # human
                   {"claude": 0.668, "codex": 0.339, "gemini": 0.492},  # VLM 3-pt
                   {"claude": 0.690, "codex": 0.331, "gemini": 0.478}):  # VLM 5-pt  # fmt: skip
        points = sum(column[a] * games[a] for a in games)
        assert points == pytest.approx(275, abs=1.0)
