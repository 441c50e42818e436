"""Course-level scores of the programmatic-content environment: the one place they are defined.

LH-Bench grades each chapter with the generic rubrics and the chapter's own rubrics, on a
3-point (0/1/2) or a 5-point (1-5) scale, normalises the scores to [0, 1] and reports the
course-level mean over chapters (paper §8.3, Table 6). Here:

- **normalised criterion score** = ``score / 5`` on the 5-point scale (the paper's
  "3/5 (0.60)") and ``score / 2`` on the 3-point scale (``1/2 = 0.50``);
- **chapter score** (one run, one chapter, one scale) = mean over the judges that graded
  every rubric of the chapter of [the mean of that judge's normalised criterion scores over
  all those rubrics' scored criteria (a judge's repeats pooled)]. A chapter for which no
  judge has an ok grade on every one of its rubrics (each judge failed — parse failure or
  error — or lacks at least one rubric) is *excluded*, and counted, as is an expected
  chapter with no grade at all when the caller names the expected chapters;
- **course score** = mean of the chapter scores over the graded chapters (n = their count);
- **CI** = 95 % t-interval over the chapter scores (mean ± t₀.₉₇₅,ₙ₋₁ · s/√n, s with
  ddof = 1); its width is ``hi - lo`` (undefined for n < 2);
- **tie share** = pairs of runs whose course scores are equal (|Δ| ≤ 1e-9) over all pairs.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from lhbench.schema import ChapterGrade, GradeStatus, Scale
from lhbench.stats.intervals import t_ci

__all__ = [
    "CHAPTER_SCORE_DEFINITION",
    "CI_DEFINITION",
    "COURSE_SCORE_DEFINITION",
    "EXCLUSION_DEFINITION",
    "NORMALISATION",
    "TIE_DEFINITION",
    "CourseScore",
    "TieShare",
    "course_scores",
    "normalise",
    "tie_share",
]

NORMALISATION = "score/5 on the 5-point scale, score/2 on the 3-point scale"
CHAPTER_SCORE_DEFINITION = (
    "chapter score = mean over judges of the mean normalised criterion score "
    "(generic + chapter rubrics)"
)
COURSE_SCORE_DEFINITION = "course score = mean of chapter scores over graded chapters"
EXCLUSION_DEFINITION = (
    "excluded = chapters for which no judge has an ok grade on every one of their rubrics"
)
CI_DEFINITION = "95% t-interval over chapter scores (ddof=1), width = hi - lo"
TIE_DEFINITION = "tie share = pairs of runs with equal course score (|diff| <= 1e-9) / all pairs"
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


@dataclass(frozen=True)
class TieShare:
    """Tied pairs of runs out of all pairs, on one scale."""

    ties: int
    pairs: int
    tied: list[tuple[str, str]] = field(default_factory=list)

    @property
    def share(self) -> float:
        """The share of tied pairs: ties / pairs (NaN with fewer than two runs)."""
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


def tie_share(scores: Mapping[str, float]) -> TieShare:
    """Pairs of runs (run id -> course score) whose scores are equal; unscored runs left out."""
    ties = []
    runs = sorted(r for r, s in scores.items() if not math.isnan(s))
    for a, b in combinations(runs, 2):
        if abs(scores[a] - scores[b]) <= _TIE_EPS:
            ties.append((a, b))
    return TieShare(len(ties), len(runs) * (len(runs) - 1) // 2, ties)
