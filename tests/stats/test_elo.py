import math

import choix
import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from lhbench.stats import (
    bradley_terry_elo,
    cycle_rate,
    head_to_head,
    outcome_agreement,
    position_bias,
)
from lhbench.stats.elo import ELO_L2_PENALTY

THREE = (
    [("A", "B", "a")] * 2
    + [("B", "A", "a"), ("A", "C", "a"), ("A", "C", "a"), ("C", "A", "tie")]
    + [("B", "C", "a")] * 2
    + [("B", "C", "b"), ("C", "B", "b"), ("B", "A", "tie (bothbad)"), ("C", "A", "b")]
)


def simulate(
    n_votes: int, n_models: int, seed: int, tie_rate: float = 0.15
) -> list[tuple[str, str, str]]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.6, size=n_models)
    votes = []
    for _ in range(n_votes):
        i, j = rng.choice(n_models, size=2, replace=False)
        if rng.random() < tie_rate:
            w = "tie"
        else:
            p = 1 / (1 + 10 ** (-(strength[i] - strength[j])))
            w = "a" if rng.random() < p else "b"
        votes.append((f"m{i:02d}", f"m{j:02d}", w))
    return votes


def sklearn_elo(votes: list[tuple[str, str, str]]) -> dict[str, float]:
    """The older FastChat formulation: LR on ±ln10 rows, wins weighted 2, ties split."""
    models = sorted({m for a, b, _ in votes for m in (a, b)})
    idx = {m: i for i, m in enumerate(models)}
    rows, ys, ws = [], [], []
    for a, b, w in votes:
        x = np.zeros(len(models))
        x[idx[a]], x[idx[b]] = math.log(10), -math.log(10)
        if w == "tie":
            rows += [x, x]
            ys += [1, 0]
            ws += [1, 1]
        else:
            rows.append(x)
            ys.append(1 if w == "a" else 0)
            ws.append(2)
    lr = LogisticRegression(fit_intercept=False, C=1e12, tol=1e-10, max_iter=10000)
    lr.fit(np.array(rows), np.array(ys), sample_weight=np.array(ws))
    elo = 400 * lr.coef_[0]
    elo = elo - elo.mean() + 1000
    return {m: float(elo[i]) for i, m in enumerate(models)}


def choix_elo(votes: list[tuple[str, str, str]]) -> dict[str, float]:
    models = sorted({m for a, b, _ in votes for m in (a, b)})
    idx = {m: i for i, m in enumerate(models)}
    data = []
    for a, b, w in votes:
        i, j = idx[a], idx[b]
        if w == "a":
            data += [(i, j), (i, j)]
        elif w == "b":
            data += [(j, i), (j, i)]
        else:
            data += [(i, j), (j, i)]
    theta = choix.ilsr_pairwise(len(models), data, alpha=0.0, max_iter=1000, tol=1e-12)
    elo = 1000 + 400 / math.log(10) * (theta - theta.mean())
    return {m: float(elo[i]) for i, m in enumerate(models)}


def test_exact_test_vectors() -> None:
    r = bradley_terry_elo([("A", "B", "a")] * 3 + [("B", "A", "a")], n_bootstrap=0).ratings
    assert r == pytest.approx({"A": 1095.4243, "B": 904.5757}, abs=1e-4)
    r = bradley_terry_elo(
        [("A", "B", "a")] * 2 + [("A", "B", "b")] + [("A", "B", "tie")] * 2, n_bootstrap=0
    ).ratings
    assert r == pytest.approx({"A": 1035.2183, "B": 964.7817}, abs=1e-4)
    res = bradley_terry_elo(THREE, n_bootstrap=0)
    assert res.ratings == pytest.approx({"A": 1137.70, "B": 1035.26, "C": 827.04}, abs=0.01)
    assert not res.separated and res.penalty == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_agrees_with_sklearn_and_choix_within_half_an_elo(seed: int) -> None:
    votes = simulate(600, 6, seed)
    ours = bradley_terry_elo(votes, n_bootstrap=0).ratings
    for ref in (sklearn_elo(votes), choix_elo(votes)):
        assert max(abs(ours[m] - ref[m]) for m in ours) < 0.5
    assert sum(ours.values()) / len(ours) == pytest.approx(1000.0)


def test_bootstrap_ci_seeded_and_covering() -> None:
    votes = simulate(400, 4, 5)
    a = bradley_terry_elo(votes, n_bootstrap=300, seed=1)
    b = bradley_terry_elo(votes, n_bootstrap=300, seed=1)
    c = bradley_terry_elo(votes, n_bootstrap=300, seed=2)
    assert a.ci == b.ci and a.ci != c.ci
    for m in a.ratings:
        lo, hi = a.ci[m]
        assert lo < a.ratings[m] < hi
        assert 20 < hi - lo < 400
    assert sum(a.wins.values()) + sum(a.ties.values()) // 2 == len(votes)


def test_anchor() -> None:
    res = bradley_terry_elo(THREE, n_bootstrap=50, anchor="B", anchor_rating=1114)
    assert res.ratings["B"] == pytest.approx(1114)
    assert res.ratings["A"] - res.ratings["B"] == pytest.approx(1137.70 - 1035.26, abs=0.01)
    assert res.ci["B"] == pytest.approx((1114, 1114))
    with pytest.raises(ValueError, match="anchor"):
        bradley_terry_elo(THREE, anchor="Z")


def test_separation_detected_and_penalised() -> None:
    undefeated = [
        ("A", "B", "a"),
        ("A", "C", "a"),
        ("B", "C", "a"),
        ("C", "B", "a"),
        ("A", "B", "a"),
    ]
    res = bradley_terry_elo(undefeated, n_bootstrap=100)
    assert res.separated and res.penalty == ELO_L2_PENALTY
    assert "never lost: A" in res.notes[0]
    # finite and ordered, not the runaway values an unpenalised fit returns
    assert 1000 < res.ratings["A"] < 1600
    assert res.ratings["A"] > res.ratings["B"]
    assert all(math.isfinite(v) for lo_hi in res.ci.values() for v in lo_hi)
    # a tie links the graph both ways: no separation
    assert not bradley_terry_elo([("A", "B", "a"), ("A", "B", "tie")], n_bootstrap=0).separated


def test_bad_votes() -> None:
    with pytest.raises(ValueError, match="winner must be"):
        bradley_terry_elo([("A", "B", "left")])
    with pytest.raises(ValueError, match="cannot play itself"):
        bradley_terry_elo([("A", "A", "a")])
    with pytest.raises(ValueError, match="no votes"):
        bradley_terry_elo([])


def test_position_bias_tie_rules_reproduce_the_paper() -> None:
    # 135 votes, 10 ties, 65 left wins of 125 decisive: the paper's p = 0.72
    left = [True] * 65 + [False] * 60 + [None] * 10
    ex = position_bias(left)
    assert (ex.k, ex.n, round(ex.p_value, 2), ex.ties) == (65, 125, 0.72, "excluded")
    inc = position_bias(left, ties="include")
    assert (inc.k, inc.n) == (65, 135) and inc.p_value == pytest.approx(0.7308, abs=1e-4)


def test_cycle_rate_and_head_to_head() -> None:
    cyc = [("A", "B", "a"), ("B", "C", "a"), ("C", "A", "a")]
    trans = [("A", "B", "a"), ("B", "C", "a"), ("A", "C", "a")]
    assert cycle_rate(cyc).rate == 1.0
    assert cycle_rate(trans).rate == 0.0
    pooled = cycle_rate(cyc + trans, groups=["t1"] * 3 + ["t2"] * 3)
    assert (pooled.cycles, pooled.triads, pooled.rate) == (1, 2, 0.5)
    tied = cycle_rate([("A", "B", "a"), ("B", "A", "a"), ("B", "C", "a"), ("A", "C", "a")])
    assert tied.triads == 0 and tied.skipped_triads == 1 and math.isnan(tied.rate)
    h = head_to_head([("A", "B", "a"), ("B", "A", "a"), ("A", "B", "tie"), ("B", "A", "b")])
    rec = h[("A", "B")]
    assert (rec.first_wins, rec.second_wins, rec.ties, rec.n) == (2, 1, 1, 4)
    assert rec.test is not None and rec.test.n == 3


def test_three_class_agreement_is_nominal_kappa() -> None:
    from sklearn.metrics import cohen_kappa_score

    human = ["a", "a", "b", "tie", "b", "a", "tie", "b"]
    judge = ["a", "b", "b", "tie", "b", "tie", "a", "b"]
    res = outcome_agreement(human, judge)  # type: ignore[arg-type]
    assert res.raw_agreement == pytest.approx(5 / 8)
    assert res.kappa == pytest.approx(cohen_kappa_score(human, judge))
    assert (res.ties_first, res.ties_second) == (2, 2)
