"""Agreement of two binary labellings of the same runs (e.g. a recorded outcome vs a label).

Accuracy is the share of runs both call the same; Cohen's κ corrects it for the agreement
the two base rates give by chance. The κ interval is a percentile bootstrap over runs (or,
with ``clusters``, over whole clusters such as tasks); a resample in which κ is undefined
(both labellings use one and the same class) is left out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lhbench.stats.agreement import cohen_kappa

__all__ = ["LabelAgreement", "label_agreement"]


@dataclass(frozen=True)
class LabelAgreement:
    """Confusion counts (a's outcome first), accuracy, κ and its bootstrap interval."""

    n: int
    both_pass: int
    both_fail: int
    a_pass_b_fail: int
    a_fail_b_pass: int
    accuracy: float
    kappa: float
    kappa_ci: tuple[float, float]
    resamples: int
    undefined_resamples: int
    resampled: str

    @property
    def agree(self) -> int:
        """Runs both labellings call the same."""
        return self.both_pass + self.both_fail


def label_agreement(
    a: Sequence[bool],
    b: Sequence[bool],
    *,
    clusters: Sequence[Any] | None = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> LabelAgreement:
    """Accuracy, Cohen's κ (with a bootstrap CI) and the confusion of ``a`` against ``b``.

    Raises:
        ValueError: lengths differ, nothing to compare, a value is not a bool, or
            ``clusters`` does not match.
    """
    xa, xb = list(a), list(b)
    if len(xa) != len(xb):
        raise ValueError(f"{len(xa)} and {len(xb)} labels; need one pair per run")
    if not xa:
        raise ValueError("no runs to compare")
    if any(not isinstance(v, bool) for v in xa + xb):
        raise ValueError("labels must be True (pass) or False (fail)")
    if clusters is not None and len(clusters) != len(xa):
        raise ValueError(f"{len(clusters)} cluster ids for {len(xa)} runs")
    ia, ib = np.array(xa, dtype=bool), np.array(xb, dtype=bool)
    kappa = cohen_kappa(xa, xb, labels=[False, True])
    rng = np.random.default_rng(seed)
    if clusters is None:
        groups = [np.array([i]) for i in range(len(xa))]
    else:
        ids = list(dict.fromkeys(clusters))
        groups = [np.array([i for i, c in enumerate(clusters) if c == k]) for k in ids]
    stats = []
    for _ in range(n_resamples):
        idx = np.concatenate([groups[g] for g in rng.integers(0, len(groups), len(groups))])
        k = cohen_kappa(ia[idx].tolist(), ib[idx].tolist(), labels=[False, True])
        if not math.isnan(k):
            stats.append(k)
    alpha = (1.0 - confidence) / 2.0
    ci = (
        (float(np.quantile(stats, alpha)), float(np.quantile(stats, 1.0 - alpha)))
        if stats
        else (math.nan, math.nan)
    )
    return LabelAgreement(
        n=len(xa),
        both_pass=int((ia & ib).sum()),
        both_fail=int((~ia & ~ib).sum()),
        a_pass_b_fail=int((ia & ~ib).sum()),
        a_fail_b_pass=int((~ia & ib).sum()),
        accuracy=float((ia == ib).mean()),
        kappa=kappa,
        kappa_ci=ci,
        resamples=n_resamples,
        undefined_resamples=n_resamples - len(stats),
        resampled="runs" if clusters is None else f"{len(groups)} clusters",
    )
