"""The judge panel and the one place a panel's score and cross-judge variance are computed.

LH-Bench: a tier score is Σ wᵢ·sᵢ per judge; the panel score of a run is the mean over the
judges (a judge's repeats averaged first); the spread is the population variance across
judges. The CLI, report and web app all call :func:`panel_scores`.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

from lhbench.schema import Grade, GradeLike, GradeStatus, Rubric, Tier, judge_labels

if TYPE_CHECKING:
    from lhbench.judges.base import Evidence
    from lhbench.judges.rubric import RubricJudge

__all__ = [
    "JudgePanel",
    "PanelResult",
    "RunTierScore",
    "TierKey",
    "judge_labels",
    "noise_floor",
    "panel_score",
    "panel_scores",
    "repeat_sd",
    "tier_keys",
]


class TierKey(NamedTuple):
    """One graded rubric tier at one rubric content."""

    rubric_id: str
    version: str
    tier: str
    rubric_hash: str = ""

    @property
    def title(self) -> str:
        """``rubric v1.2 · process``."""
        return f"{self.rubric_id} v{self.version} · {self.tier}"

    @property
    def slug(self) -> str:
        """A file-name-safe id: ``rubric_version_tier``."""
        return f"{self.rubric_id}_{self.version}_{self.tier}".replace(".", "_")

    def unique_slug(self, keys: list[TierKey]) -> str:
        """The slug, with the content hash added when another key shares it."""
        if sum(1 for k in keys if k.slug == self.slug) > 1 and self.rubric_hash:
            return f"{self.slug}_{self.rubric_hash[:8]}"
        return self.slug


def _key_of(g: GradeLike) -> TierKey:
    return TierKey(g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash)


def tier_keys(grades: Iterable[GradeLike]) -> list[TierKey]:
    """Every rubric tier graded, in a stable order."""
    return sorted({_key_of(g) for g in grades})


@dataclass(frozen=True)
class RunTierScore:
    """One run's score on one rubric tier from a panel.

    ``judge_scores`` averages a judge's repeats; ``mean`` averages judges; ``variance``
    is the population variance across judges (0 with one judge).
    """

    run_id: str
    judge_scores: dict[str, float]
    dimension_means: dict[str, float]
    mean: float
    variance: float


def panel_score(
    run_id: str,
    judge_scores: dict[str, float],
    dimension_means: dict[str, float] | None = None,
) -> RunTierScore:
    """One run's panel score from each judge's (repeat-averaged) tier score.

    The one definition of the panel's mean and cross-judge variance: the report computes
    the judges' scores from grade documents, the web app from the store's per-(run, judge)
    sums, and both end here.
    """
    vals = list(judge_scores.values())
    return RunTierScore(
        run_id=run_id,
        judge_scores=judge_scores,
        dimension_means=dimension_means or {},
        mean=statistics.fmean(vals),
        variance=_pvariance(tuple(sorted(vals))) if len(vals) > 1 else 0.0,
    )


@lru_cache(maxsize=65536)
def _pvariance(vals: tuple[float, ...]) -> float:
    """``statistics.pvariance``, remembered per set of judge scores.

    pvariance is exact (rational arithmetic, then rounded once), so its result does not
    depend on the order of the values; it is also slow (≈ 90 µs for three judges, most
    of the overview's time at 10,000 runs). Judges' scores take few distinct values (means
    of repeats of weighted level scores), so one store's runs share a few thousand sets.
    """
    return statistics.pvariance(vals)


def repeat_sd(n: int, total: float, total_sq: float) -> float:
    """Population SD of one judge's ``n`` repeated tier scores of one run, from their sums.

    The noise floor's unit (LH-Bench): :func:`noise_floor` averages it per judge, the web
    overview per agent, from the store's sums (``total``: Σs, ``total_sq``: Σs²).
    """
    mean = total / n
    return math.sqrt(max(0.0, total_sq / n - mean * mean))


def panel_scores(grades: Iterable[GradeLike], key: TierKey) -> dict[str, RunTierScore]:
    """Run id -> panel score on ``key``, from the grades that hold scores."""
    chosen = [
        g
        for g in grades
        if _key_of(g) == key and g.status == GradeStatus.OK and g.tier_score is not None
    ]
    labels = judge_labels(g.judge for g in chosen)
    per_judge: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    dims: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for g in chosen:
        judge = labels[g.judge.key]
        per_judge[g.run_id][judge].append(g.tier_score)  # type: ignore[arg-type]
        for s in g.scores:
            if s.score is not None:
                dims[g.run_id][s.dimension_id][judge].append(s.score)
    out = {}
    for run_id, judges in per_judge.items():
        jscores = {j: statistics.fmean(v) for j, v in judges.items()}
        dmeans = {
            d: statistics.fmean(statistics.fmean(v) for v in by_judge.values())
            for d, by_judge in dims[run_id].items()
        }
        out[run_id] = panel_score(run_id, jscores, dmeans)
    return out


def noise_floor(grades: Iterable[GradeLike]) -> dict[str, float]:
    """Per judge: mean over runs of the SD of its own repeated tier scores.

    A judge's self-consistency (LH-Bench's noise floor): needs two or more repeats of a
    run; judges without repeats are absent.
    """
    chosen = [g for g in grades if g.status == GradeStatus.OK and g.tier_score is not None]
    labels = judge_labels(g.judge for g in chosen)
    by: dict[tuple[str, str, TierKey], list[float]] = defaultdict(list)
    for g in chosen:
        by[(labels[g.judge.key], g.run_id, _key_of(g))].append(g.tier_score)  # type: ignore[arg-type]
    per_judge: dict[str, list[float]] = defaultdict(list)
    for (judge, _run, _key), scores in by.items():
        if len(scores) >= 2:
            sq = math.fsum(s * s for s in scores)
            per_judge[judge].append(repeat_sd(len(scores), math.fsum(scores), sq))
    return {j: statistics.fmean(v) for j, v in sorted(per_judge.items())}


@dataclass(frozen=True)
class PanelResult:
    """Every judge's grade of one run, the panel mean and the cross-judge variance."""

    run_id: str
    grades: list[Grade]

    def _score(self) -> RunTierScore | None:
        if not self.grades:
            return None
        return panel_scores(self.grades, _key_of(self.grades[0])).get(self.run_id)

    @property
    def scored(self) -> list[Grade]:
        """Grades that hold a tier score (failed and fully unscorable ones are left out)."""
        return [g for g in self.grades if g.status == GradeStatus.OK and g.tier_score is not None]

    @property
    def mean(self) -> float:
        """Panel score: mean of the judges' tier scores (NaN when no judge scored)."""
        s = self._score()
        return s.mean if s else math.nan

    @property
    def variance(self) -> float:
        """Population variance of the judges' tier scores."""
        s = self._score()
        return s.variance if s else math.nan

    def dimension_mean(self, dimension_id: str) -> float:
        """Mean score of one dimension over the judges that scored it."""
        s = self._score()
        return s.dimension_means.get(dimension_id, math.nan) if s else math.nan


class JudgePanel:
    """N judges (default three, from different families) grading the same evidence."""

    def __init__(self, judges: list[RubricJudge]) -> None:
        if not judges:
            raise ValueError("a panel needs at least one judge")
        keys = [j.identity.key for j in judges]
        if len(set(keys)) != len(keys):
            raise ValueError(f"a judge appears twice in the panel: {[j.spec.ref for j in judges]}")
        self.judges = judges

    @property
    def families(self) -> list[str]:
        """The judges' model families."""
        return [j.spec.family for j in self.judges]

    async def grade(
        self, evidence: Evidence, rubric: Rubric, tier: Tier, *, repeat: int = 0
    ) -> PanelResult:
        """Every judge grades concurrently; every grade is returned, failed ones included."""
        from lhbench.judges.base import GradeItem  # pydantic-ai: a report never grades

        item = GradeItem(evidence.run, rubric, tier, repeat, evidence)
        grades = await asyncio.gather(*(j.judge(item) for j in self.judges))
        return PanelResult(run_id=evidence.run.id, grades=list(grades))
