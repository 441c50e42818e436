"""Agreement of two binary labellings: confusion, accuracy, κ (oracle: scikit-learn), its CI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from lhbench.stats import label_agreement


def test_counts_accuracy_and_kappa_match_the_oracle() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(60) < 0.6
    b = np.where(rng.random(60) < 0.8, a, ~a)
    got = label_agreement(a.tolist(), b.tolist())
    assert got.n == 60 and got.agree == int((a == b).sum())
    assert (got.both_pass, got.both_fail) == (int((a & b).sum()), int((~a & ~b).sum()))
    assert (got.a_pass_b_fail, got.a_fail_b_pass) == (int((a & ~b).sum()), int((~a & b).sum()))
    assert got.accuracy == pytest.approx(float((a == b).mean()), abs=1e-13)
    assert got.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-13)
    lo, hi = got.kappa_ci
    assert lo < got.kappa < hi and lo >= -1 and hi <= 1
    # percentile bootstrap over runs, seeded: the same call gives the same interval
    assert label_agreement(a.tolist(), b.tolist()).kappa_ci == got.kappa_ci
    assert got.resampled == "runs" and got.undefined_resamples == 0


def test_perfect_agreement_and_undefined_kappa() -> None:
    both = [True] * 5 + [False] * 4
    got = label_agreement(both, both)
    assert got.accuracy == 1.0 and got.kappa == 1.0 and got.kappa_ci == (1.0, 1.0)
    one_class = label_agreement([True, True], [True, True], n_resamples=50)
    # both used one class only: κ is undefined, and so is every resample
    assert math.isnan(one_class.kappa) and one_class.undefined_resamples == 50
    assert all(math.isnan(x) for x in one_class.kappa_ci)


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    a = [True, True, False, False, True, False]
    b = [True, False, False, False, True, True]
    got = label_agreement(a, b, clusters=["t1", "t1", "t2", "t2", "t3", "t3"], n_resamples=200)
    assert got.resampled == "3 clusters" and got.resamples == 200


@pytest.mark.parametrize(
    ("a", "b", "what"),
    [([True], [True, False], "one pair per run"), ([], [], "no runs"), ([1], [True], "True")],
)
def test_bad_input_is_refused(a: list[object], b: list[object], what: str) -> None:
    with pytest.raises(ValueError, match=what):
        label_agreement(a, b)  # type: ignore[arg-type]
