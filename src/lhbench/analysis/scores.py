"""Per-run panel scores: each judge's tier score, their mean and population variance."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lhbench.schema import Grade, GradeStatus

__all__ = ["RunTierScore", "TierKey", "panel_scores", "tier_keys"]

TierKey = tuple[str, str, str]  # rubric id, rubric version, tier


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


def tier_keys(grades: Iterable[Grade]) -> list[TierKey]:
    """Every (rubric, version, tier) graded, in a stable order."""
    return sorted({(g.rubric_id, g.rubric_version, g.tier.value) for g in grades})


def panel_scores(grades: Iterable[Grade], key: TierKey) -> dict[str, RunTierScore]:
    """Run id -> panel score on ``key``, from the grades that hold scores."""
    per_judge: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    dims: dict[str, dict[str, dict[str, list[int]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for g in grades:
        if (g.rubric_id, g.rubric_version, g.tier.value) != key:
            continue
        if g.status != GradeStatus.OK or g.tier_score is None:
            continue
        per_judge[g.run_id][g.judge.model].append(g.tier_score)
        for s in g.scores:
            if s.score is not None:
                dims[g.run_id][s.dimension_id][g.judge.model].append(s.score)
    out = {}
    for run_id, judges in per_judge.items():
        jscores = {j: float(np.mean(v)) for j, v in judges.items()}
        vals = list(jscores.values())
        dmeans = {
            d: float(np.mean([np.mean(v) for v in by_judge.values()]))
            for d, by_judge in dims[run_id].items()
        }
        out[run_id] = RunTierScore(
            run_id=run_id,
            judge_scores=jscores,
            dimension_means=dmeans,
            mean=float(np.mean(vals)),
            variance=float(np.var(vals)) if len(vals) > 1 else 0.0,
        )
    return out
