"""Agreement between raters: Cohen's κ, Krippendorff's α, and a judge panel's agreement.

A *rating* is one judge's score of one dimension of one run (LH-Bench: "92 runs, 360
ratings"). Pairwise κ pools all ratings two judges share; per-dimension κ uses only
that dimension's; α treats (run, dimension) as the unit and every judge as a rater.
Only repeat 0 of each judge enters, so repeated grading does not count as agreement.

κ weights come from label *positions*: always pass the full rubric scale as ``labels``
(``shared/reference/statistics.md`` §2).
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lhbench.schema import GradeLike, Scale, judge_labels
from lhbench.store.grade_columns import GradeColumns

__all__ = [
    "PanelAgreement",
    "Weights",
    "cohen_kappa",
    "krippendorff_alpha",
    "normalised_score",
    "panel_agreement",
    "population_variance",
]

Weights = Literal["linear", "quadratic"] | None
_NONE = object()


def _is_nan(value: object) -> bool:
    # NaN is the one value that is not equal to itself; as a category its result would
    # depend on object identity, so it is refused
    return (isinstance(value, float) and math.isnan(value)) or (
        isinstance(value, np.floating) and bool(np.isnan(value))
    )


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
        ValueError: lengths differ, nothing to compare, a rating is NaN or not in
            ``labels``, or ``labels`` repeats a category.
    """
    a_list, b_list = list(a), list(b)
    if len(a_list) != len(b_list):
        raise ValueError(f"raters have {len(a_list)} and {len(b_list)} ratings; need equal lengths")
    if not a_list:
        raise ValueError("no ratings to compare")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', not {weights!r}")
    for what, ratings in (("a", a_list), ("b", b_list)):
        bad = next((v for v in ratings if _is_nan(v)), _NONE)
        if bad is not _NONE:
            raise ValueError(f"{what} holds a missing rating (NaN); drop unrated items first")
    labs = _check_levels(labels) if labels is not None else sorted(set(a_list) | set(b_list))
    k = len(labs)
    ia, ib = _codes(a_list, labs, "a"), _codes(b_list, labs, "b")
    return _kappa(ia, ib, k, weights)


def _kappa(ia: NDArray[np.intp], ib: NDArray[np.intp], k: int, weights: Weights) -> float:
    """κ of two raters' ratings as positions among ``k`` labels (the one computation)."""
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


@lru_cache(maxsize=65536)
def _unit_variance(values: tuple[float, ...]) -> float:
    """:func:`population_variance` of one unit's judge scores, remembered per tuple.

    A unit's scores are a few levels from a few judges, so a panel's 1,000,000 units
    repeat a few hundred tuples (same values in the same order: the same result).
    """
    return population_variance(values)


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
    n_pairs: int = 0
    undefined_pairs: int = 0
    n_units: int = 0

    @property
    def kappa_pairs_note(self) -> str:
        """How many judge pairs the mean κ averages: ``2 of 3 pairs (1 undefined)``."""
        defined = self.n_pairs - self.undefined_pairs
        out = f"{defined} of {self.n_pairs} pair(s)"
        return out + (f" ({self.undefined_pairs} undefined)" if self.undefined_pairs else "")


def _nanmean(values: Iterable[float]) -> float:
    vals = [v for v in values if not math.isnan(v)]
    return float(np.mean(vals)) if vals else math.nan


def normalised_score(score: int, scale: Scale) -> float:
    """A score as its position on its own scale, (s − low) / (high − low), in [0, 1]."""
    return (score - scale.low) / (scale.high - scale.low)


def _check_levels(levels: Sequence[float]) -> list[float]:
    labs = list(levels)
    dupes = sorted({str(x) for x in labs if labs.count(x) > 1})
    if dupes:
        raise ValueError(f"labels must be distinct; repeated: {', '.join(dupes)}")
    if any(_is_nan(x) for x in labs):
        raise ValueError("labels must not hold NaN")
    return labs


def panel_agreement(
    grades: Iterable[GradeLike] | GradeColumns,
    *,
    levels: Sequence[float],
    weights: Weights = "quadratic",
    normalised: bool = False,
) -> PanelAgreement:
    """Agreement of the judges behind ``grades`` (all of one rubric version and tier).

    Args:
        grades: Grades of one rubric tier (documents, facts or :class:`GradeColumns`);
            failed grades and unscorable dimensions are left out.
        levels: The whole scale (e.g. ``[1, 2, 3, 4, 5]``), so unused levels still count.
        weights: κ weights (LH-Bench uses quadratic).
        normalised: Compare every score as :func:`normalised_score` (a tier whose
            dimensions are on different scales: a binary 1 and a 0-2 2 are both the top);
            ``levels`` are then the normalised levels.

    The ratings are a judges × units matrix (a unit: a run and a dimension, sorted), built
    with numpy from the grades' columns; κ is computed from each pair's confusion matrix
    (as :func:`cohen_kappa`), α from the matrix (:func:`krippendorff_alpha`), and a
    unit's variance (:func:`population_variance`) once per distinct set of scores.
    """
    cols = GradeColumns.from_grades(grades) if not isinstance(grades, GradeColumns) else grades
    chosen = cols.take(cols.ok & (cols.repeat == 0))
    dims, values = chosen.dimension_matrix(normalised=normalised)
    row, dim = np.nonzero(~np.isnan(values))
    if row.size == 0:
        return PanelAgreement([], {}, math.nan, {}, math.nan, math.nan, 0, 0)
    uniq, first = np.unique(chosen.judge[row], return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    labels = judge_labels(chosen.judges[int(j)] for j in order)
    judges = sorted(set(labels.values()))
    label_of = np.zeros(len(chosen.judges), dtype=np.int64)
    for j in order:
        label_of[j] = judges.index(labels[chosen.judges[int(j)].key])
    # units sorted as (run id, dimension) pairs are: runs ranked by id, dimensions sorted
    rank = np.empty(len(chosen.run_ids), dtype=np.int64)
    rank[np.argsort(np.asarray(chosen.run_ids, dtype=object))] = np.arange(len(chosen.run_ids))
    n_dims = len(dims)
    unit = rank[chosen.run[row]] * n_dims + dim
    rater = label_of[chosen.judge[row]]
    vals = values[row, dim]
    # a judge's later rating of a unit replaces an earlier one (oldest first)
    n_units_max = len(chosen.run_ids) * n_dims
    _, last = np.unique((rater * n_units_max + unit)[::-1], return_index=True)
    keep = row.size - 1 - last
    unit, rater, vals = unit[keep], rater[keep], vals[keep]
    units, col = np.unique(unit, return_inverse=True)
    data = np.full((len(judges), units.size), np.nan)
    data[rater, col] = vals
    present = ~np.isnan(data)
    unit_dim = units % n_dims
    seen = np.unique(vals)
    labs = _check_levels(levels)
    index = {lab: i for i, lab in enumerate(labs)}
    k = len(labs)
    pairwise: dict[tuple[str, str], float] = {}
    dim_pairs: dict[str, list[float]] = defaultdict(list)
    if len(judges) >= 2:
        try:
            positions = np.array([index[v] for v in seen.tolist()], dtype=np.intp)
        except KeyError as exc:
            raise ValueError(
                f"a holds {exc.args[0]!r}, which is not in labels {list(labs)}"
            ) from None
        at = positions[np.searchsorted(seen, np.where(present, data, seen[0]))]
        for i1, i2 in itertools.combinations(range(len(judges)), 2):
            both = present[i1] & present[i2]
            if not both.any():
                continue
            pair = (judges[i1], judges[i2])
            pairwise[pair] = _kappa(at[i1, both], at[i2, both], k, weights)
            for c, d in enumerate(dims):
                du = both & (unit_dim == c)
                if du.any():
                    dim_pairs[d].append(_kappa(at[i1, du], at[i2, du], k, weights))
        alpha = krippendorff_alpha(data, level="ordinal", values=levels)
    else:
        alpha = math.nan
    variances = _unit_variances(data, present, seen)
    # a pair's κ is undefined when the two share no unit or their κ is 0/0 (both used one
    # and the same level): the mean is over the defined pairs, and says how many were not
    n_pairs = len(judges) * (len(judges) - 1) // 2
    defined = sum(1 for kv in pairwise.values() if not math.isnan(kv))
    return PanelAgreement(
        n_pairs=n_pairs,
        undefined_pairs=n_pairs - defined,
        judges=judges,
        pairwise_kappa=pairwise,
        mean_kappa=_nanmean(pairwise.values()),
        dimension_kappa={
            d: _nanmean(dim_pairs[d]) for c, d in enumerate(dims) if (unit_dim == c).any()
        },
        alpha=alpha,
        mean_variance=float(np.mean(variances)) if variances.size else math.nan,
        n_runs=int(np.unique(units // n_dims).size),
        n_ratings=int(vals.size),
        n_units=int(units.size),
    )


def _unit_variances(
    data: NDArray[np.float64], present: NDArray[np.bool_], seen: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Per unit two or more judges scored, in unit order: the variance of its scores.

    A unit's scores are a few levels from a few judges, so a million units hold a few
    hundred distinct score sets: each set's variance is computed once.
    """
    pairable = present.sum(axis=0) >= 2
    if not pairable.any():
        return np.zeros(0)
    sub, mask = data[:, pairable], present[:, pairable]
    base = seen.size + 1
    code = np.zeros(sub.shape[1], dtype=np.int64)
    if base ** sub.shape[0] < 2**62:
        for r in range(sub.shape[0]):
            pos = np.where(
                mask[r], np.searchsorted(seen, np.where(mask[r], sub[r], seen[0])) + 1, 0
            )
            code = code * base + pos
        _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    else:  # too many judges for one integer code: each unit alone
        first, inverse = np.arange(sub.shape[1]), np.arange(sub.shape[1])
    var = np.array([_unit_variance(tuple(sub[mask[:, u], u].tolist())) for u in first.tolist()])
    return var[inverse.ravel()]
