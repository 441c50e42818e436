"""Agreement inside a judge panel: pairwise κ, per-dimension κ, Krippendorff's α, variance.

A *rating* is one judge's score of one dimension of one run (LH-Bench: "92 runs, 360
ratings"). Pairwise κ pools all ratings two judges share; per-dimension κ uses only
that dimension's; α treats (run, dimension) as the unit and every judge as a rater.
Only repeat 0 of each judge enters, so repeated grading does not count as agreement.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from lhbench.analysis.stats import Weights, cohen_kappa, krippendorff_alpha, population_variance
from lhbench.schema import Grade, GradeStatus

__all__ = ["PanelAgreement", "panel_agreement"]


@dataclass(frozen=True)
class PanelAgreement:
    """How far a panel's judges agree on one rubric tier."""

    judges: list[str]
    pairwise_kappa: dict[tuple[str, str], float]
    mean_kappa: float
    dimension_kappa: dict[str, float]
    alpha: float
    mean_variance: float
    n_runs: int
    n_ratings: int


def _nanmean(values: Iterable[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return float(np.mean(vals)) if vals else math.nan


def panel_agreement(
    grades: Iterable[Grade], *, levels: list[int], weights: Weights = "quadratic"
) -> PanelAgreement:
    """Agreement of the judges behind ``grades`` (all of one rubric version and tier).

    Args:
        grades: Grades of one rubric tier; failed grades and unscorable dimensions are
            left out.
        levels: The whole scale (e.g. ``[1, 2, 3, 4, 5]``), so unused levels still count.
        weights: κ weights (LH-Bench uses quadratic).
    """
    table: dict[str, dict[tuple[str, str], int]] = defaultdict(dict)
    for g in grades:
        if g.status != GradeStatus.OK or g.repeat != 0:
            continue
        for s in g.scores:
            if s.score is not None:
                table[g.judge.model][(g.run_id, s.dimension_id)] = s.score
    judges = sorted(table)
    units = sorted({u for ratings in table.values() for u in ratings})
    dims = sorted({d for _, d in units})
    pairwise: dict[tuple[str, str], float] = {}
    dim_pairs: dict[str, list[float]] = defaultdict(list)
    for j1, j2 in itertools.combinations(judges, 2):
        shared = [u for u in units if u in table[j1] and u in table[j2]]
        if not shared:
            continue
        pairwise[(j1, j2)] = cohen_kappa(
            [table[j1][u] for u in shared],
            [table[j2][u] for u in shared],
            weights=weights,
            labels=levels,
        )
        for d in dims:
            du = [u for u in shared if u[1] == d]
            if du:
                dim_pairs[d].append(
                    cohen_kappa(
                        [table[j1][u] for u in du],
                        [table[j2][u] for u in du],
                        weights=weights,
                        labels=levels,
                    )
                )
    if len(judges) >= 2 and units:
        data = np.full((len(judges), len(units)), np.nan)
        for i, j in enumerate(judges):
            for k, u in enumerate(units):
                if u in table[j]:
                    data[i, k] = table[j][u]
        alpha = krippendorff_alpha(data, level="ordinal", values=levels)
    else:
        alpha = math.nan
    variances = [
        population_variance([table[j][u] for j in judges if u in table[j]])
        for u in units
        if sum(1 for j in judges if u in table[j]) >= 2
    ]
    return PanelAgreement(
        judges=judges,
        pairwise_kappa=pairwise,
        mean_kappa=_nanmean(pairwise.values()),
        dimension_kappa={d: _nanmean(dim_pairs[d]) for d in dims},
        alpha=alpha,
        mean_variance=float(np.mean(variances)) if variances else math.nan,
        n_runs=len({r for r, _ in units}),
        n_ratings=sum(len(t) for t in table.values()),
    )
