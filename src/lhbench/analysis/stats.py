"""Statistics every report quotes, in numpy/scipy, checked against the reference libraries.

Conventions (see ``shared/reference/statistics.md``):

- κ weights come from label *positions*; always pass the full rubric scale as ``labels``.
- Bootstrap CIs are percentile intervals; clustered resampling draws whole tasks.
  Degenerate data (every value equal) gives the degenerate interval (x, x), not NaN.
- Binary metrics treat PASS (1) as the positive class; P/R/F1 are 0 when undefined (as
  scikit-learn's ``zero_division=0``); FPR/FNR are NaN when they have no denominator.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats as sps

__all__ = [
    "BinaryMetrics",
    "BinomialResult",
    "KruskalResult",
    "ProportionResult",
    "Weights",
    "binary_metrics",
    "binomial_test",
    "bootstrap_ci",
    "cohen_kappa",
    "cohens_h",
    "krippendorff_alpha",
    "kruskal_wallis",
    "pass_rate",
    "population_variance",
    "proportion",
    "t_ci",
]

Weights = Literal["linear", "quadratic"] | None


def _codes(values: Sequence[Any], labels: Sequence[Any], what: str) -> NDArray[np.intp]:
    index = {lab: i for i, lab in enumerate(labels)}
    try:
        return np.fromiter((index[v] for v in values), dtype=np.intp, count=len(values))
    except KeyError as exc:
        raise ValueError(
            f"{what} holds {exc.args[0]!r}, which is not in labels {list(labels)}"
        ) from None


def cohen_kappa(
    a: Sequence[Any],
    b: Sequence[Any],
    *,
    weights: Weights = None,
    labels: Sequence[Any] | None = None,
) -> float:
    """Cohen's κ between two raters, unweighted, linear or quadratic.

    Args:
        a: First rater's ratings.
        b: Second rater's ratings, same length.
        weights: None (nominal), ``"linear"`` or ``"quadratic"`` disagreement weights.
        labels: The ordered categories. Pass the whole scale (e.g. 1..5) so a category
            nobody used still counts; without it, the sorted union of what was used.

    Returns:
        κ, or NaN when it is undefined (both raters used one and the same category).

    Raises:
        ValueError: lengths differ, nothing to compare, or a rating is not in ``labels``.
    """
    a_list, b_list = list(a), list(b)
    if len(a_list) != len(b_list):
        raise ValueError(f"raters have {len(a_list)} and {len(b_list)} ratings; need equal lengths")
    if not a_list:
        raise ValueError("no ratings to compare")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    labs = list(labels) if labels is not None else sorted(set(a_list) | set(b_list))
    k = len(labs)
    ia, ib = _codes(a_list, labs, "a"), _codes(b_list, labs, "b")
    observed = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(float)
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    i, j = np.indices((k, k))
    if weights is None:
        w = (i != j).astype(float)
    elif weights == "linear":
        w = np.abs(i - j).astype(float)
    else:
        w = ((i - j) ** 2).astype(float)
    denom = float((w * expected).sum())
    if denom == 0.0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / denom


def population_variance(values: ArrayLike) -> float:
    """Population variance (ddof=0), as LH-Bench reports cross-judge variance."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("variance of no values")
    return float(x.var(ddof=0))


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


def t_ci(values: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """Mean ± t-quantile · s/√n (s with ddof=1): AJ-Bench's CI over repeated runs.

    Returns (NaN, NaN) for a single value, where the interval is undefined.
    """
    x = _as_1d(values)
    if x.size < 2:
        return math.nan, math.nan
    mean = float(x.mean())
    sem = float(x.std(ddof=1) / math.sqrt(x.size))
    if sem == 0.0:
        return mean, mean
    lo, hi = sps.t.interval(confidence, df=x.size - 1, loc=mean, scale=sem)
    return float(lo), float(hi)


@dataclass(frozen=True)
class BinaryMetrics:
    """Confusion counts and rates of a binary judge against labels (1 = PASS = positive)."""

    tp: int
    fp: int
    tn: int
    fn: int
    precision: float
    recall: float
    f1: float
    fpr: float
    fnr: float
    accuracy: float

    @property
    def n(self) -> int:
        """Number of judged items."""
        return self.tp + self.fp + self.tn + self.fn

    def as_dict(self) -> dict[str, float]:
        """The metrics as ``{"f1": …, "precision": …, "recall": …, "fpr": …, "fnr": …}``."""
        return {
            "f1": self.f1,
            "precision": self.precision,
            "recall": self.recall,
            "fpr": self.fpr,
            "fnr": self.fnr,
        }


def _binary(values: Sequence[Any], what: str) -> NDArray[np.int_]:
    mapping: dict[object, int] = {1: 1, 0: 0, "PASS": 1, "FAIL": 0}  # True == 1, False == 0
    try:
        return np.array([mapping[v] for v in values], dtype=int)
    except (KeyError, TypeError):
        bad = next(v for v in values if not isinstance(v, bool | int | str) or v not in mapping)
        raise ValueError(f"{what} holds {bad!r}; expected 0/1, bool, or PASS/FAIL") from None


def binary_metrics(y_true: Sequence[Any], y_pred: Sequence[Any]) -> BinaryMetrics:
    """F1, precision, recall, FPR and FNR of predictions against labels.

    Values may be 0/1, booleans or ``"PASS"``/``"FAIL"``; PASS is the positive class.
    """
    t, p = _binary(list(y_true), "y_true"), _binary(list(y_pred), "y_pred")
    if t.size != p.size:
        raise ValueError(f"{t.size} labels but {p.size} predictions")
    if t.size == 0:
        raise ValueError("no predictions to score")
    tp = int(np.sum((t == 1) & (p == 1)))
    fp = int(np.sum((t == 0) & (p == 1)))
    tn = int(np.sum((t == 0) & (p == 0)))
    fn = int(np.sum((t == 1) & (p == 0)))

    def ratio(num: int, den: int, undefined: float) -> float:
        return num / den if den else undefined

    return BinaryMetrics(
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        precision=ratio(tp, tp + fp, 0.0),
        recall=ratio(tp, tp + fn, 0.0),
        f1=ratio(2 * tp, 2 * tp + fp + fn, 0.0),
        fpr=ratio(fp, fp + tn, math.nan),
        fnr=ratio(fn, fn + tp, math.nan),
        accuracy=(tp + tn) / t.size,
    )


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
    ci = sps.binomtest(k, n).proportion_ci(confidence_level=confidence, method=method)
    return ProportionResult(k=k, n=n, rate=k / n, ci=(float(ci.low), float(ci.high)), method=method)


def pass_rate(
    scores: ArrayLike, *, threshold: float = 4, confidence: float = 0.95
) -> ProportionResult:
    """Share of scores at or above ``threshold`` (LH-Bench: ≤3 fail, ≥4 pass)."""
    x = _as_1d(scores, "scores")
    return proportion(int(np.sum(x >= threshold)), int(x.size), confidence=confidence)


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
    res = sps.kruskal(*arrays)
    return KruskalResult(
        statistic=float(res.statistic), p_value=float(res.pvalue), degenerate=False
    )


def krippendorff_alpha(
    reliability: ArrayLike,
    *,
    level: Literal["nominal", "ordinal", "interval"] = "ordinal",
    values: Sequence[float] | None = None,
) -> float:
    """Krippendorff's α for raters × units data (NaN = missing rating).

    Args:
        reliability: Shape (raters, units).
        level: Metric: nominal, ordinal (rank-based, for rubric scores) or interval.
        values: The full ordered value domain (the rubric scale); defaults to the values
            seen. For ordinal data it matters, as for κ.

    Returns:
        α, or NaN when there is no variation to explain.
    """
    data = np.asarray(reliability, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability data must be raters × units, got shape {data.shape}")
    domain = np.array(sorted(values) if values is not None else np.unique(data[~np.isnan(data)]))
    if domain.size == 0:
        raise ValueError("no ratings")
    present = ~np.isnan(data)
    if np.any(~np.isin(data[present], domain)):
        raise ValueError("a rating is outside the value domain")
    # value counts per unit: units × values; only units with ≥2 ratings are pairable
    codes = np.where(present, np.searchsorted(domain, np.nan_to_num(data)), -1)
    n_vals = domain.size
    counts = np.zeros((data.shape[1], n_vals))
    for r in range(data.shape[0]):
        mask = codes[r] >= 0
        np.add.at(counts, (np.nonzero(mask)[0], codes[r][mask]), 1)
    m_u = counts.sum(axis=1)
    counts = counts[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if counts.size == 0:
        return math.nan
    # coincidence matrix o_ck = Σ_u n_uc n_uk / (m_u − 1), minus self-pairs on the diagonal
    o = np.einsum("uc,uk,u->ck", counts, counts, 1.0 / (m_u - 1))
    o -= np.diag(np.einsum("uc,u->c", counts, 1.0 / (m_u - 1)))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        d2 = 1.0 - np.eye(n_vals)
    elif level == "interval":
        d2 = np.subtract.outer(domain, domain) ** 2
    elif level == "ordinal":
        # δ²(c,k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²
        cum = np.cumsum(n_c)
        lo = np.minimum.outer(np.arange(n_vals), np.arange(n_vals))
        hi = np.maximum.outer(np.arange(n_vals), np.arange(n_vals))
        span = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)
        d2 = (span - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        raise ValueError(f"level must be nominal, ordinal or interval, not {level!r}")
    d_o = float((o * d2).sum())
    d_e = float((np.outer(n_c, n_c) * d2).sum()) / (n - 1)
    if d_e == 0.0:
        return math.nan
    return float(1.0 - d_o / d_e)
