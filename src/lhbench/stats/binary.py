"""Binary judges against labels: F1, precision, recall, FPR, FNR (AJ-Bench Tables 3 and 9).

PASS (1) is the positive class. A rate with no denominator is undefined and NaN, never
0: precision when nothing was said PASS, recall and FNR when no label is PASS, FPR when no
label is FAIL, F1 when there are no positives at all (no PASS among labels or verdicts: a
judge that rightly said FAIL to every failing run is not an F1 of 0). Tables show NaN as
"n/a"; means over repeats or subdomains leave undefined values out and say so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BinaryMetrics", "binary_metrics", "macro_f1"]


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
        precision=ratio(tp, tp + fp, math.nan),
        recall=ratio(tp, tp + fn, math.nan),
        f1=ratio(2 * tp, 2 * tp + fp + fn, math.nan),
        fpr=ratio(fp, fp + tn, math.nan),
        fnr=ratio(fn, fn + tp, math.nan),
        accuracy=(tp + tn) / t.size,
    )


def macro_f1(per_subdomain: dict[str, float]) -> float:
    """AJ-Bench's Overall: the unweighted mean of the subdomain F1 scores.

    A subdomain with few items counts as much as a large one, unlike the pooled F1 over
    all items (which the report shows beside it, labelled).
    """
    values = [v for v in per_subdomain.values() if not math.isnan(v)]
    if not values:
        raise ValueError("no subdomain F1 to average")
    return float(np.mean(values))
