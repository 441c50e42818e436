"""Confidence intervals: bootstrap (plain and clustered), t over repeats, proportions.

Bootstrap CIs are percentile intervals; clustered resampling draws whole clusters (LH-Bench
resamples tasks). Degenerate data (every value equal) gives the degenerate interval (x, x),
not NaN. With fewer than :data:`MIN_CLUSTERS` clusters a bootstrap CI says little: callers
print :func:`few_clusters_note` beside it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "MIN_CLUSTERS",
    "ProportionResult",
    "bootstrap_ci",
    "few_clusters_note",
    "pass_rate",
    "proportion",
    "t_ci",
    "t_interval",
    "wilson_interval",
]

MIN_CLUSTERS = 5


def few_clusters_note(n_clusters: int, what: str = "tasks") -> str | None:
    """A warning for a clustered bootstrap over too few clusters (None when enough)."""
    if n_clusters >= MIN_CLUSTERS:
        return None
    return (
        f"warning: the bootstrap resamples only {n_clusters} {what} (< {MIN_CLUSTERS}); "
        "its CI understates the uncertainty"
    )


def _as_1d(values: ArrayLike, what: str = "values") -> NDArray[np.float64]:
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {x.shape}")
    if x.size == 0:
        raise ValueError(f"{what} is empty")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} holds NaN or infinite entries")
    return x


def _apply_rows(statistic: Callable[..., Any], samples: NDArray[np.float64]) -> NDArray[np.float64]:
    try:
        out = np.asarray(statistic(samples, axis=1), dtype=float)
        if out.shape == (samples.shape[0],):
            return out
    except TypeError:
        pass
    return np.array([float(statistic(row)) for row in samples])


def bootstrap_ci(
    values: ArrayLike,
    *,
    clusters: Sequence[Any] | None = None,
    statistic: Callable[..., Any] = np.mean,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval.

    With ``clusters`` (e.g. the task of each run), whole clusters are resampled with
    replacement and every value of a drawn cluster is kept, as LH-Bench's "1,000
    resamples over tasks" does. Seeded, so the same call gives the same interval.

    Raises:
        ValueError: empty or non-finite values, mismatched clusters, bad settings.
    """
    x = _as_1d(values)
    if n_resamples < 1:
        raise ValueError("n_resamples must be at least 1")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    rng = np.random.default_rng(seed)
    if clusters is None:
        idx = rng.integers(0, x.size, size=(n_resamples, x.size))
        stats = _apply_rows(statistic, x[idx])
    else:
        cl = list(clusters)
        if len(cl) != x.size:
            raise ValueError(f"{len(cl)} cluster ids for {x.size} values")
        uniq = {c: i for i, c in enumerate(dict.fromkeys(cl))}
        codes = np.fromiter((uniq[c] for c in cl), dtype=np.intp, count=len(cl))
        n_cl = len(uniq)
        pick = rng.integers(0, n_cl, size=(n_resamples, n_cl))
        if statistic is np.mean:
            sums = np.bincount(codes, weights=x, minlength=n_cl)
            counts = np.bincount(codes, minlength=n_cl).astype(float)
            stats = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
        else:
            groups = [x[codes == c] for c in range(n_cl)]
            stats = np.array(
                [float(statistic(np.concatenate([groups[c] for c in row]))) for row in pick]
            )
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(stats, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


def t_ci(
    values: ArrayLike, confidence: float = 0.95, *, bounds: tuple[float, float] | None = None
) -> tuple[float, float]:
    """Mean ± t-quantile · s/√n (s with ddof=1): AJ-Bench's CI over repeated runs.

    Returns (NaN, NaN) for a single value, where the interval is undefined. ``bounds``
    clips the interval to the range the statistic can take (a rate's ``(0, 1)``): with few
    repeats the symmetric interval can reach past it.
    """
    x = _as_1d(values)
    if x.size < 2:
        return math.nan, math.nan
    mean = float(x.mean())
    sem = float(x.std(ddof=1) / math.sqrt(x.size))
    if sem == 0.0:
        return mean, mean
    lo, hi = t_interval(confidence, x.size - 1, loc=mean, scale=sem)
    if bounds is not None:
        lo, hi = max(float(lo), bounds[0]), min(float(hi), bounds[1])
    return float(lo), float(hi)


@dataclass(frozen=True)
class ProportionResult:
    """k of n, with a confidence interval for the proportion."""

    k: int
    n: int
    rate: float
    ci: tuple[float, float]
    method: str


def proportion(
    k: int, n: int, *, confidence: float = 0.95, method: str = "wilson"
) -> ProportionResult:
    """k/n with a Wilson (default) or exact Clopper–Pearson interval."""
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    if method not in ("wilson", "exact"):
        raise ValueError(f"method must be 'wilson' or 'exact', not {method!r}")
    if method == "wilson":
        ci = wilson_interval(k, n, confidence)
    else:
        from scipy import stats as sps  # ~0.5 s to import: only for the exact interval

        res = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method=method)
        ci = (float(res.low), float(res.high))
    return ProportionResult(k=k, n=n, rate=k / n, ci=ci, method=method)


# scipy.stats costs about half a second to import, a report's largest import; the two
# intervals every report computes are scipy.stats' own formulas over scipy.special's
# functions (tests/stats/test_stats.py checks them equal to scipy.stats, bit for bit).


def t_interval(confidence: float, df: int, *, loc: float, scale: float) -> tuple[float, float]:
    """``scipy.stats.t.interval(confidence, df, loc, scale)``: its t quantiles × scale + loc.

    The same arithmetic as scipy's ``rv_continuous.ppf`` (``stdtrit(df, q) * scale + loc``)
    (NaN outside ``df > 0`` and ``scale > 0``), without importing scipy.stats.
    """
    if not 0.0 <= confidence <= 1.0:
        raise ValueError(f"confidence must lie in [0, 1], got {confidence}")
    if not (df > 0 and scale > 0):
        return math.nan, math.nan  # scipy's answer outside the distribution's arguments
    from scipy.special import stdtrit

    q1 = (1.0 - confidence) / 2
    q2 = (1.0 + confidence) / 2
    bounds = []
    for q in (q1, q2):
        # the support's ends at q = 0 and 1, as ppf gives them
        t = -math.inf if q == 0 else math.inf if q == 1 else float(stdtrit(df, q))
        bounds.append(t * scale + loc)
    return bounds[0], bounds[1]


# scipy.special.ndtri at the levels reports use (repr round-trips: the same doubles), so a
# report imports no scipy at all; tests/stats/test_stats.py checks each against ndtri
NORMAL_QUANTILES = {
    0.95: 1.6448536269514722,
    0.975: 1.959963984540054,
    0.995: 2.5758293035489004,
}


def _normal_quantile(q: float) -> float:
    """``scipy.special.ndtri(q)``: the standard normal quantile (stored for common q)."""
    if q in NORMAL_QUANTILES:
        return NORMAL_QUANTILES[q]
    from scipy.special import ndtri

    return float(ndtri(q))


def wilson_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval, as ``scipy.stats.binomtest(k, n).proportion_ci`` gives it.

    Newcombe (1998), two-sided, no continuity correction: scipy's formula, step for step.
    """
    p = k / n
    z = _normal_quantile(0.5 + 0.5 * confidence)
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    q = 1 - p
    delta = z / denom * math.sqrt(4 * n * p * q + z**2)
    lo = 0.0 if k == 0 else center - delta
    hi = 1.0 if k == n else center + delta
    return float(lo), float(hi)


def pass_rate(
    scores: ArrayLike, *, threshold: float = 4, confidence: float = 0.95
) -> ProportionResult:
    """Share of scores at or above ``threshold`` (LH-Bench: ≤3 fail, ≥4 pass)."""
    x = _as_1d(scores, "scores")
    return proportion(int(np.sum(x >= threshold)), int(x.size), confidence=confidence)
