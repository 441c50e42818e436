"""Significance and effect sizes: exact binomial test, Kruskal–Wallis, Cohen's h."""

from __future__ import annotations

import math
from collections.abc import Callable
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
    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1], got {p}")
    return BinomialResult(k=k, n=n, p_value=_two_sided_p(k, n, p), share=k / n, ties=ties)


# scipy.stats.binomtest's two-sided p-value, step for step, over the binomial functions
# scipy.stats.binom itself calls (scipy.special's ufuncs, with rv_discrete's handling of the
# support's ends): importing scipy.stats takes most of a second, a report's largest import.
# tests/stats/test_stats.py checks it equal to scipy.stats.binomtest, bit for bit.


def _pmf(x: float, n: int, p: float) -> float:
    from scipy.special import _ufuncs

    if not (0 <= x <= n and x == math.floor(x)):
        return 0.0
    return min(max(float(_ufuncs._binom_pmf(x, n, p)), 0.0), 1.0)


def _cdf(x: float, n: int, p: float) -> float:
    from scipy.special import _ufuncs

    k = math.floor(x)
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return min(max(float(_ufuncs._binom_cdf(k, n, p)), 0.0), 1.0)


def _sf(x: float, n: int, p: float) -> float:
    from scipy.special import _ufuncs

    k = math.floor(x)
    if k < 0:
        return 1.0
    if k >= n:
        return 0.0
    return min(max(float(_ufuncs._binom_sf(k, n, p)), 0.0), 1.0)


def _search(a: Callable[[float], float], d: float, lo: float, hi: float) -> float:
    """The i in [lo, hi] with a(i) <= d < a(i + 1) (``a`` ascending on the range)."""
    while lo < hi:
        mid = lo + (hi - lo) // 2
        midval = a(mid)
        if midval < d:
            lo = mid + 1
        elif midval > d:
            hi = mid - 1
        else:
            return mid
    return lo if a(lo) <= d else lo - 1


def _two_sided_p(k: int, n: int, p: float) -> float:
    d = _pmf(k, n, p)
    rerr = 1 + 1e-7
    if k == p * n:
        return 1.0
    if k < p * n:
        ix = _search(lambda x: -_pmf(x, n, p), -d * rerr, math.ceil(p * n), n)
        y = n - ix + int(d * rerr == _pmf(ix, n, p))
        pval = _cdf(k, n, p) + _sf(n - y, n, p)
    else:
        ix = _search(lambda x: _pmf(x, n, p), d * rerr, 0, math.floor(p * n))
        y = ix + 1
        pval = _cdf(y - 1, n, p) + _sf(k - 1, n, p)
    return min(1.0, pval)


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
