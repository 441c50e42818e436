"""Significance and effect sizes: exact binomial test, Kruskal–Wallis, Cohen's h."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from lhbench.stats.intervals import _as_1d

__all__ = ["BinomialResult", "KruskalResult", "binomial_test", "cohens_h", "kruskal_wallis"]


@dataclass(frozen=True)
class BinomialResult:
    """An exact two-sided binomial test, with k, n and the tie rule it used."""

    k: int
    n: int
    p_value: float
    share: float
    ties: str


def binomial_test(k: int, n: int, *, p: float = 0.5, ties: str = "excluded") -> BinomialResult:
    """Exact two-sided binomial test of k successes in n against ``p``.

    ``ties`` only labels the result: say whether tied votes were dropped from n.
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    from scipy import stats as sps  # ~0.5 s to import: only when a test is asked for

    res = sps.binomtest(k, n, p=p, alternative="two-sided")
    return BinomialResult(k=k, n=n, p_value=float(res.pvalue), share=k / n, ties=ties)


def cohens_h(p1: float, p2: float) -> float:
    """Cohen's h effect size between two proportions: 2·asin√p1 − 2·asin√p2."""
    for p in (p1, p2):
        if not 0 <= p <= 1:
            raise ValueError(f"proportions must lie in [0, 1], got {p}")
    return 2 * math.asin(math.sqrt(p1)) - 2 * math.asin(math.sqrt(p2))


@dataclass(frozen=True)
class KruskalResult:
    """Kruskal–Wallis H test (tie-corrected)."""

    statistic: float
    p_value: float
    degenerate: bool


def kruskal_wallis(*groups: ArrayLike) -> KruskalResult:
    """Kruskal–Wallis H across groups (e.g. winner quality ratings per agent).

    When every value is identical the test is undefined (scipy gives NaN or raises,
    by version); we return H = 0, p = 1 with ``degenerate=True``: no evidence of a
    difference.
    """
    arrays = [_as_1d(g, "group") for g in groups]
    if len(arrays) < 2:
        raise ValueError("Kruskal–Wallis needs at least two groups")
    if np.unique(np.concatenate(arrays)).size == 1:
        return KruskalResult(statistic=0.0, p_value=1.0, degenerate=True)
    from scipy import stats as sps

    res = sps.kruskal(*arrays)
    return KruskalResult(
        statistic=float(res.statistic), p_value=float(res.pvalue), degenerate=False
    )
