"""Course-level scores of the programmatic-content environment: the one place they are defined.

LH-Bench grades each chapter with the generic rubrics and the chapter's own rubrics, on a
3-point (0/1/2) or a 5-point (1-5) scale, normalises the scores to [0, 1] and reports, per
agent, the mean over courses with a 95% bootstrap CI over courses (paper §8.3, Table 6); it
derives pairwise outcomes from chapter scores and sets them against human chapter-level
preferences (§8.6, Table 10, App. J). Here:

- **normalised criterion score** = ``score / 5`` on the 5-point scale (the paper's
  "3/5 (0.60)") and ``score / 2`` on the 3-point scale (``1/2 = 0.50``);
- **chapter score** (one run, one chapter, one scale) = mean over the judges that graded
  every rubric of the chapter of [the mean of that judge's normalised criterion scores over
  all those rubrics' scored criteria (a judge's repeats pooled)]. A chapter for which no
  judge has an ok grade on every one of its rubrics (each judge failed — parse failure or
  error — or lacks at least one rubric) is *excluded*, and counted, as is an expected
  chapter with no grade at all when the caller names the expected chapters;
- **course score** of a run = mean of its chapter scores over the graded chapters;
- **agent score** (Table 6) = mean over courses of the agent's course score (its runs of a
  course averaged, so every course weighs once); **CI** = 95% percentile bootstrap over
  courses (1,000 resamples); n = courses;
- **chapter-level comparison** = two runs of different agents on the same course, compared
  on one chapter both have a score for: A wins if its chapter score is higher, a tie if the
  two are equal (|Δ| ≤ 1e-9); **tie share** = ties / comparisons;
- **matched comparison** = a human chapter-level vote whose two runs both have a score for
  that chapter on the scale; its VLM outcome is the chapter-score comparison. Over matched
  comparisons: **win rate** (Table 10) = (wins + ties/2) / comparisons the agent is in;
  **agreement** (App. J) = share where human and scores give the same outcome (both ties
  included), with nominal Cohen's κ over the 3-class outcome (A wins, B wins, tie), per agent
  pair and overall.

lhbench also reports a run's course score with a 95% t-interval over its chapters (mean ±
t₀.₉₇₅,ₙ₋₁ · s/√n, s with ddof = 1): its own figure, not the paper's.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

from lhbench.schema import ChapterGrade, GradeStatus, Scale
from lhbench.stats.intervals import bootstrap_ci, t_ci
from lhbench.stats.preference import OutcomeAgreement, WinRate, outcome_agreement, win_rates

__all__ = [
    "AGENT_SCORE_DEFINITION",
    "AGREEMENT_DEFINITION",
    "CHAPTER_SCORE_DEFINITION",
    "CI_DEFINITION",
    "COMPARISON_DEFINITION",
    "COURSE_SCORE_DEFINITION",
    "EXCLUSION_DEFINITION",
    "MATCHED_DEFINITION",
    "NORMALISATION",
    "RUN_CI_DEFINITION",
    "TIE_DEFINITION",
    "WIN_RATE_DEFINITION",
    "AgentCourseScore",
    "ChapterComparison",
    "CourseScore",
    "PairAgreement",
    "TieShare",
    "agent_scores",
    "chapter_comparisons",
    "chapter_outcome",
    "comparison_win_rates",
    "course_scores",
    "human_vlm_agreement",
    "matched_comparisons",
    "normalise",
    "tie_share",
]

NORMALISATION = "score/5 on the 5-point scale, score/2 on the 3-point scale"
CHAPTER_SCORE_DEFINITION = (
    "chapter score = mean over judges of the mean normalised criterion score "
    "(generic + chapter rubrics)"
)
COURSE_SCORE_DEFINITION = "course score of a run = mean of its chapter scores over graded chapters"
EXCLUSION_DEFINITION = (
    "excluded = chapters for which no judge has an ok grade on every one of their rubrics"
)
AGENT_SCORE_DEFINITION = (
    "score = mean over courses of the agent's course score (its runs of a course averaged)"
)
CI_DEFINITION = "95% percentile bootstrap over courses (1,000 resamples); n = courses"
RUN_CI_DEFINITION = "95% t-interval over the run's chapter scores (ddof=1), width = hi - lo"
COMPARISON_DEFINITION = (
    "chapter-level comparison = two runs of different agents on the same course, on one "
    "chapter both have a score for; higher chapter score wins, equal (|diff| <= 1e-9) ties"
)
TIE_DEFINITION = "tie share = tied comparisons / comparisons"
MATCHED_DEFINITION = (
    "matched = human chapter-level votes whose two runs both have a score for that chapter "
    "on the scale; the scores' outcome is compared with the human's"
)
WIN_RATE_DEFINITION = (
    "win rate = (wins + ties/2) / matched comparisons the agent is in (LH-Bench Table 10)"
)
AGREEMENT_DEFINITION = (
    "agreement = share of matched comparisons where human and scores give the same outcome "
    "(A wins, B wins, tie); κ = nominal Cohen's κ over those three outcomes (LH-Bench App. J)"
)
_TIE_EPS = 1e-9


def normalise(score: float, scale: Scale) -> float:
    """A criterion score on ``scale`` mapped to [0, 1] (see :data:`NORMALISATION`).

    Raises:
        ValueError: a binary scale, or a score outside the scale's range.
    """
    if scale is Scale.BINARY:
        raise ValueError("chapter rubrics are on the 3-point or the 5-point scale, not binary")
    if not scale.low <= score <= scale.high:
        raise ValueError(f"score {score} is outside scale {scale.value}")
    return score / scale.high


@dataclass(frozen=True)
class CourseScore:
    """One run's course score on one scale, with its chapters and the interval over them."""

    run_id: str
    scale: Scale
    chapter_scores: dict[str, float]
    excluded: tuple[str, ...] = ()
    mean: float = math.nan
    ci: tuple[float, float] = (math.nan, math.nan)

    @property
    def n(self) -> int:
        """Chapters the course score averages."""
        return len(self.chapter_scores)

    @property
    def ci_width(self) -> float:
        """Width of the 95 % t-interval over chapters (NaN when n < 2)."""
        lo, hi = self.ci
        return hi - lo


Outcome = Literal["a", "b", "tie"]


@dataclass(frozen=True)
class TieShare:
    """Tied chapter-level comparisons out of all, on one scale."""

    ties: int
    pairs: int

    @property
    def share(self) -> float:
        """The share of tied comparisons (NaN with none)."""
        return self.ties / self.pairs if self.pairs else math.nan


def course_scores(
    grades: Iterable[ChapterGrade],
    *,
    expected: Mapping[str, Iterable[str]] | None = None,
) -> dict[tuple[str, Scale], CourseScore]:
    """(run id, scale) -> course score, from chapter grades (see module for definitions).

    Args:
        grades: Chapter grades, failed ones included (they decide exclusions).
        expected: Run id -> the chapters its course should have; a chapter with no grade
            at all on a scale the run was graded on is then excluded too.
    """
    # (run, scale, chapter) -> judge -> rubric hash -> [ok?, normalised criterion scores]
    by: dict[tuple[str, Scale, str], dict[str, dict[str, list[float] | None]]] = defaultdict(
        lambda: defaultdict(dict)
    )
    for cg in grades:
        g = cg.grade
        cell = by[(g.run_id, cg.scale, cg.chapter_id)][g.judge.key]
        prior = cell.get(g.rubric_hash, [])
        if g.status != GradeStatus.OK or g.tier_score is None or prior is None:
            cell[g.rubric_hash] = None  # a failed grade: this judge did not grade the chapter
            continue
        prior.extend(normalise(s.score, cg.scale) for s in g.scores if s.score is not None)
        cell[g.rubric_hash] = prior
    rubric_sets: dict[tuple[str, Scale, str], set[str]] = {
        k: {h for per in judges.values() for h in per} for k, judges in by.items()
    }
    chapters: dict[tuple[str, Scale], dict[str, float]] = defaultdict(dict)
    excluded: dict[tuple[str, Scale], list[str]] = defaultdict(list)
    for (run_id, scale, chapter), judges in sorted(by.items()):
        needed = rubric_sets[(run_id, scale, chapter)]
        judge_means = []
        for per in judges.values():
            if set(per) != needed or any(v is None for v in per.values()):
                continue
            values = [x for v in per.values() if v is not None for x in v]
            if values:
                judge_means.append(statistics.fmean(values))
        if judge_means:
            chapters[(run_id, scale)][chapter] = statistics.fmean(judge_means)
        else:
            excluded[(run_id, scale)].append(chapter)
    keys = set(chapters) | set(excluded)
    for run_id, scale in keys:
        for chapter in (expected or {}).get(run_id, ()):
            if (run_id, scale, chapter) not in by:
                excluded[(run_id, scale)].append(chapter)
    out = {}
    for key in sorted(keys):
        scores = chapters.get(key, {})
        values = list(scores.values())
        out[key] = CourseScore(
            run_id=key[0],
            scale=key[1],
            chapter_scores=dict(sorted(scores.items())),
            excluded=tuple(sorted(excluded.get(key, []))),
            mean=statistics.fmean(values) if values else math.nan,
            ci=t_ci(values) if len(values) >= 2 else (math.nan, math.nan),
        )
    return out


@dataclass(frozen=True)
class AgentCourseScore:
    """One agent's score on one scale (LH-Bench Table 6): the mean over its courses."""

    group: str
    scale: Scale
    course_scores: dict[Hashable, float]
    chapters: int
    runs: int
    mean: float
    ci: tuple[float, float]

    @property
    def n(self) -> int:
        """Courses the score averages (the bootstrap's units)."""
        return len(self.course_scores)

    @property
    def half_width(self) -> float:
        """Half the CI's width (the paper's ``±``)."""
        return (self.ci[1] - self.ci[0]) / 2


def agent_scores(
    scores: Mapping[tuple[str, Scale], CourseScore],
    *,
    group_of: Mapping[str, str],
    course_of: Mapping[str, Hashable],
    n_resamples: int = 1000,
    seed: int = 0,
) -> dict[tuple[str, Scale], AgentCourseScore]:
    """(agent, scale) -> Table 6's score, from runs' course scores (see module).

    Args:
        scores: (run id, scale) -> the run's course score (:func:`course_scores`).
        group_of: Run id -> its agent (e.g. ``harness / model``); other runs are left out.
        course_of: Run id -> its course (e.g. (pack, task)).
        n_resamples: Bootstrap resamples over courses.
        seed: Bootstrap seed.
    """
    cells: dict[tuple[str, Scale], dict[Hashable, list[CourseScore]]] = defaultdict(
        lambda: defaultdict(list)
    )
    for (run_id, scale), cs in scores.items():
        if cs.n and run_id in group_of and run_id in course_of:
            cells[(group_of[run_id], scale)][course_of[run_id]].append(cs)
    out = {}
    for (group, scale), by_course in sorted(cells.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        per_course = {c: statistics.fmean(r.mean for r in runs) for c, runs in by_course.items()}
        values = list(per_course.values())
        mean = statistics.fmean(values)
        lo, hi = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
        out[(group, scale)] = AgentCourseScore(
            group=group,
            scale=scale,
            course_scores=per_course,
            chapters=sum(r.n for runs in by_course.values() for r in runs),
            runs=sum(len(runs) for runs in by_course.values()),
            mean=mean,
            # a percentile bound can miss the mean by a rounding error on tied data
            ci=(min(lo, mean), max(hi, mean)),
        )
    return out


def chapter_outcome(score_a: float, score_b: float) -> Outcome:
    """The outcome of two chapter scores: ``a`` or ``b`` for the higher, ``tie`` when equal."""
    if abs(score_a - score_b) <= _TIE_EPS:
        return "tie"
    return "a" if score_a > score_b else "b"


@dataclass(frozen=True)
class ChapterComparison:
    """Two runs of different agents compared on one chapter: by scores, and by a human."""

    run_a: str
    run_b: str
    chapter: str
    group_a: str
    group_b: str
    scores: Outcome
    human: Outcome | None = None


def chapter_comparisons(
    chapter_scores: Mapping[str, Mapping[str, float]],
    *,
    group_of: Mapping[str, str],
    course_of: Mapping[str, Hashable],
) -> list[ChapterComparison]:
    """Every chapter-level comparison on one scale.

    Each pair of runs of different agents on the same course, on each chapter both have a
    score for.

    Args:
        chapter_scores: Run id -> chapter id -> chapter score (one scale).
        group_of: Run id -> its agent.
        course_of: Run id -> its course.
    """
    by_course: dict[Hashable, list[str]] = defaultdict(list)
    for run_id in sorted(chapter_scores):
        if run_id in group_of and run_id in course_of:
            by_course[course_of[run_id]].append(run_id)
    out = []
    for runs in by_course.values():
        for a, b in combinations(runs, 2):
            if group_of[a] == group_of[b]:
                continue
            for chapter in sorted(set(chapter_scores[a]) & set(chapter_scores[b])):
                out.append(
                    ChapterComparison(
                        a,
                        b,
                        chapter,
                        group_of[a],
                        group_of[b],
                        chapter_outcome(chapter_scores[a][chapter], chapter_scores[b][chapter]),
                    )
                )
    return out


def matched_comparisons(
    votes: Iterable[tuple[str, str, str, Outcome]],
    chapter_scores: Mapping[str, Mapping[str, float]],
    *,
    group_of: Mapping[str, str],
) -> tuple[list[ChapterComparison], int]:
    """Human chapter-level votes matched with the scores' outcome on one scale.

    Args:
        votes: (run a, run b, chapter id, human outcome) per vote; each vote is one
            comparison (two votes on one pair and chapter are two comparisons).
        chapter_scores: Run id -> chapter id -> chapter score (one scale).
        group_of: Run id -> its agent.

    Returns:
        The matched comparisons, and how many votes could not be matched (a run or its
        chapter score missing on this scale, or two runs of one agent).
    """
    out, unmatched = [], 0
    for a, b, chapter, human in votes:
        sa = chapter_scores.get(a, {}).get(chapter)
        sb = chapter_scores.get(b, {}).get(chapter)
        ga, gb = group_of.get(a), group_of.get(b)
        if sa is None or sb is None or ga is None or gb is None or ga == gb:
            unmatched += 1
            continue
        out.append(ChapterComparison(a, b, chapter, ga, gb, chapter_outcome(sa, sb), human))
    return out, unmatched


def tie_share(comparisons: Sequence[ChapterComparison], *, human: bool = False) -> TieShare:
    """Tied comparisons by the scores (or, with ``human``, by the human) out of all."""
    outcomes = [c.human if human else c.scores for c in comparisons]
    return TieShare(sum(1 for o in outcomes if o == "tie"), len(outcomes))


def comparison_win_rates(
    comparisons: Sequence[ChapterComparison], *, human: bool = False
) -> dict[str, WinRate]:
    """Every agent's record over the comparisons, by the scores or by the human."""
    return win_rates(
        (c.group_a, c.group_b, (c.human or "") if human else c.scores) for c in comparisons
    )


@dataclass(frozen=True)
class PairAgreement:
    """Human vs scores on the matched comparisons of one agent pair (or all: ``pair`` None)."""

    pair: tuple[str, str] | None
    result: OutcomeAgreement


def human_vlm_agreement(comparisons: Sequence[ChapterComparison]) -> list[PairAgreement]:
    """Agreement and κ per agent pair (sorted), then overall (LH-Bench App. J, Table 16)."""
    by_pair: dict[tuple[str, str], list[ChapterComparison]] = defaultdict(list)
    for c in comparisons:
        if c.human is not None:
            g1, g2 = sorted((c.group_a, c.group_b))
            by_pair[(g1, g2)].append(c)
    rows = []
    every = [c for cs in by_pair.values() for c in cs]
    for pair, cs in [*sorted(by_pair.items()), (None, every)]:
        if cs:
            rows.append(
                PairAgreement(
                    pair,
                    outcome_agreement(
                        [c.human for c in cs if c.human is not None], [c.scores for c in cs]
                    ),
                )
            )
    return rows
