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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from lhbench.schema import Grade, GradeLike, GradeStatus, Rubric, Tier, judge_labels
from lhbench.store.grade_columns import GradeColumns

if TYPE_CHECKING:
    from lhbench.judges.base import Evidence
    from lhbench.judges.rubric import RubricJudge

__all__ = [
    "JudgePanel",
    "PanelResult",
    "PanelScoreTable",
    "RunTierScore",
    "TierKey",
    "grade_columns",
    "judge_labels",
    "noise_floor",
    "panel_score",
    "panel_score_table",
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


def grade_columns(grades: Iterable[GradeLike] | GradeColumns) -> GradeColumns:
    """Grades as columns (:class:`GradeColumns`): what panel scores and agreement read."""
    return grades if isinstance(grades, GradeColumns) else GradeColumns.from_grades(grades)


def _first_seen(codes: NDArray[np.int64]) -> NDArray[np.int64]:
    """The distinct values of ``codes`` in the order they first appear."""
    uniq, first = np.unique(codes, return_index=True)
    return uniq[np.argsort(first, kind="stable")]


def _distinct_rows(matrix: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The distinct rows of a float matrix (NaN equal to NaN) and each row's one."""
    flat = np.ascontiguousarray(matrix).view(np.dtype((np.void, matrix.itemsize * matrix.shape[1])))
    _, first, inverse = np.unique(flat.ravel(), return_index=True, return_inverse=True)
    return matrix[first], inverse.ravel()


@dataclass(frozen=True, eq=False)
class PanelScoreTable:
    """A tier's panel scores as arrays, one row per run (what :class:`RunTierScore` holds).

    ``judge_scores[r, j]`` is judge ``judges[j]``'s repeat-averaged score of run
    ``run_ids[r]`` where ``has_judge[r, j]``; ``dimension_means[r, d]`` the mean over
    judges of dimension ``dimensions[d]`` where ``has_dimension[r, d]``; ``mean`` and
    ``variance`` the panel's (:func:`panel_score`). Judges and dimensions are sorted, as a
    RunTierScore's dicts are. The leaderboard reads these columns; :meth:`scores` gives
    the same figures as RunTierScores.
    """

    run_ids: Sequence[str]
    judges: Sequence[str]
    dimensions: Sequence[str]
    judge_scores: NDArray[np.float64]
    has_judge: NDArray[np.bool_]
    dimension_means: NDArray[np.float64]
    has_dimension: NDArray[np.bool_]
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.run_ids)

    @classmethod
    def of(cls, scores: Sequence[RunTierScore]) -> PanelScoreTable:
        """The table of RunTierScores, in their order (judges and dimensions sorted)."""
        judges = sorted({j for s in scores for j in s.judge_scores})
        dims = sorted({d for s in scores for d in s.dimension_means})
        jcol = {j: c for c, j in enumerate(judges)}
        dcol = {d: c for c, d in enumerate(dims)}
        jscores = np.zeros((len(scores), len(judges)))
        has_j = np.zeros((len(scores), len(judges)), dtype=np.bool_)
        dmeans = np.zeros((len(scores), len(dims)))
        has_d = np.zeros((len(scores), len(dims)), dtype=np.bool_)
        for r, s in enumerate(scores):
            for j, v in s.judge_scores.items():
                jscores[r, jcol[j]] = v
                has_j[r, jcol[j]] = True
            for d, v in s.dimension_means.items():
                dmeans[r, dcol[d]] = v
                has_d[r, dcol[d]] = True
        return cls(
            run_ids=[s.run_id for s in scores],
            judges=judges,
            dimensions=dims,
            judge_scores=jscores,
            has_judge=has_j,
            dimension_means=dmeans,
            has_dimension=has_d,
            mean=np.array([s.mean for s in scores], dtype=np.float64),
            variance=np.array([s.variance for s in scores], dtype=np.float64),
        )

    @classmethod
    def of_judge_matrix(
        cls, run_ids: Sequence[str], judges: Sequence[str], matrix: NDArray[np.float64]
    ) -> PanelScoreTable:
        """The table of runs whose judges' (repeat-averaged) scores are ``matrix``'s rows.

        ``matrix[r, j]``: judge ``judges[j]``'s score of run ``run_ids[r]``, NaN where it has
        none (each row has one at least); judges sorted. No dimension means. Each distinct
        row is scored once by :func:`panel_score`.
        """
        n = len(run_ids)
        distinct, which = _distinct_rows(matrix.reshape(n, len(judges)))
        mean = np.zeros(len(distinct))
        variance = np.zeros(len(distinct))
        for i, row in enumerate(distinct.tolist()):
            s = panel_score("", {judges[j]: v for j, v in enumerate(row) if not math.isnan(v)})
            mean[i], variance[i] = s.mean, s.variance
        return cls(
            run_ids=run_ids,
            judges=judges,
            dimensions=[],
            judge_scores=np.nan_to_num(matrix),
            has_judge=~np.isnan(matrix),
            dimension_means=np.zeros((n, 0)),
            has_dimension=np.zeros((n, 0), dtype=np.bool_),
            mean=mean[which],
            variance=variance[which],
        )

    def take(self, rows: NDArray[np.intp]) -> PanelScoreTable:
        """The runs ``rows`` selects, in that order."""
        return PanelScoreTable(
            run_ids=[self.run_ids[i] for i in rows.tolist()],
            judges=self.judges,
            dimensions=self.dimensions,
            judge_scores=self.judge_scores[rows],
            has_judge=self.has_judge[rows],
            dimension_means=self.dimension_means[rows],
            has_dimension=self.has_dimension[rows],
            mean=self.mean[rows],
            variance=self.variance[rows],
        )

    def scores(self) -> dict[str, RunTierScore]:
        """Run id -> its RunTierScore (runs with the same scores share their dicts)."""
        made: dict[int, RunTierScore] = {}
        out = {}
        rows = np.concatenate(
            [self.has_judge, self.judge_scores, self.has_dimension, self.dimension_means], axis=1
        )
        _, which = _distinct_rows(rows.astype(np.float64))
        for r, w in enumerate(which.tolist()):
            s = made.get(w)
            if s is None:
                jrow, drow = self.judge_scores[r].tolist(), self.dimension_means[r].tolist()
                s = made[w] = RunTierScore(
                    "",
                    {j: jrow[c] for c, j in enumerate(self.judges) if self.has_judge[r, c]},
                    {d: drow[c] for c, d in enumerate(self.dimensions) if self.has_dimension[r, c]},
                    float(self.mean[r]),
                    float(self.variance[r]),
                )
            run_id = self.run_ids[r]
            out[run_id] = RunTierScore(
                run_id, s.judge_scores, s.dimension_means, s.mean, s.variance
            )
        return out


def panel_scores(
    grades: Iterable[GradeLike] | GradeColumns, key: TierKey
) -> dict[str, RunTierScore]:
    """Run id -> panel score on ``key``, from the grades that hold scores.

    Grouped with numpy (:func:`panel_score_table`); the Python arithmetic of
    :func:`panel_score` runs once per distinct set of judge and dimension scores, which a
    panel's runs share.
    """
    return panel_score_table(grades, key).scores()


def panel_score_table(grades: Iterable[GradeLike] | GradeColumns, key: TierKey) -> PanelScoreTable:
    """The panel scores on ``key`` as arrays (:class:`PanelScoreTable`), runs as first graded.

    One pass over the grades' columns (:func:`grade_columns`) groups a judge's repeats of a
    run; each distinct row of judge and dimension scores is scored once by
    :func:`panel_score`, the one definition of the panel's mean and variance.
    """
    cols = grade_columns(grades).of_key(key)
    chosen = cols.take(cols.ok & ~np.isnan(cols.tier_score))
    if not len(chosen):
        return PanelScoreTable.of([])
    order = _first_seen(chosen.judge)
    labels = judge_labels(chosen.judges[int(j)] for j in order)
    names = sorted(set(labels.values()))
    label_of = np.zeros(len(chosen.judges), dtype=np.int64)
    for j in order:
        label_of[j] = names.index(labels[chosen.judges[int(j)].key])
    n_judges = len(names)
    runs = _first_seen(chosen.run)
    run_pos = np.zeros(len(chosen.run_ids), dtype=np.int64)
    run_pos[runs] = np.arange(runs.size)
    # a judge's repeats of a run averaged: one group per (run, judge)
    group = run_pos[chosen.run] * n_judges + label_of[chosen.judge]
    ids, inverse = np.unique(group, return_inverse=True)
    count = np.bincount(inverse).astype(float)
    judge_mean = np.bincount(inverse, weights=chosen.tier_score) / count
    dims, scores = chosen.dimension_matrix()
    scored = ~np.isnan(scores)
    dim_mean = np.full((ids.size, len(dims)), np.nan)
    for c in range(len(dims)):
        n = np.bincount(inverse, weights=scored[:, c], minlength=ids.size)
        total = np.bincount(inverse, weights=np.where(scored[:, c], scores[:, c], 0.0))
        with np.errstate(invalid="ignore", divide="ignore"):
            dim_mean[:, c] = np.where(n > 0, total / np.maximum(n, 1), np.nan)
    # per run: each judge's score, then each judge's mean of each dimension (NaN: none)
    table = np.full((runs.size, n_judges * (1 + len(dims))), np.nan)
    run_of, judge_of = np.divmod(ids, n_judges)
    table[run_of, judge_of] = judge_mean
    for c in range(len(dims)):
        table[run_of, n_judges * (1 + c) + judge_of] = dim_mean[:, c]
    distinct, which = _distinct_rows(table)
    # per distinct row: the judges' scores, the dimensions' means over judges, mean, variance
    n_distinct = len(distinct)
    d_means = np.zeros((n_distinct, len(dims)))
    has_d = np.zeros((n_distinct, len(dims)), dtype=np.bool_)
    mean = np.zeros(n_distinct)
    variance = np.zeros(n_distinct)
    for i, row in enumerate(distinct.tolist()):
        jscores = {names[j]: v for j, v in enumerate(row[:n_judges]) if not math.isnan(v)}
        for c in range(len(dims)):
            vals = [v for v in row[n_judges * (1 + c) : n_judges * (2 + c)] if not math.isnan(v)]
            if vals:
                d_means[i, c], has_d[i, c] = statistics.fmean(vals), True
        s = panel_score("", jscores)
        mean[i], variance[i] = s.mean, s.variance
    j_scores = distinct[:, :n_judges]
    return PanelScoreTable(
        run_ids=[chosen.run_ids[r] for r in runs.tolist()],
        judges=names,
        dimensions=dims,
        judge_scores=np.nan_to_num(j_scores[which]),
        has_judge=~np.isnan(j_scores)[which],
        dimension_means=d_means[which],
        has_dimension=has_d[which],
        mean=mean[which],
        variance=variance[which],
    )


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
