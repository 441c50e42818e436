"""Elo on integer arrays: same answers as tuples, FastChat's bootstrap replicates, bad arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from lhbench.stats import bradley_terry_elo
from lhbench.stats.elo import VoteArrays, _cells, bootstrap_replicates, fit_bt

LN10 = math.log(10)


def simulate(n: int, m: int, seed: int) -> VoteArrays:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.5, size=m)
    a = rng.integers(0, m, size=n)
    b = (a + rng.integers(1, m, size=n)) % m
    p = 1 / (1 + 10 ** (-(strength[a] - strength[b])))
    o = np.where(rng.random(n) < 0.12, 1, np.where(rng.random(n) < p, 0, 2))
    return VoteArrays([f"m{k}" for k in range(m)], a, b, o)


def fastchat_bootstrap(votes: VoteArrays, rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """FastChat's compute_bt / compute_bootstrap_bt, from the formula (L-BFGS per round)."""
    schedule = np.column_stack([votes.a, votes.b, 2 - np.asarray(votes.outcome)])
    rows, counts = np.unique(schedule, return_counts=True, axis=0)
    matchups, outcomes = rows[:, :2], rows[:, 2] / 2.0
    m = len(votes.models)

    def loss(r: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
        x = r[matchups]
        p = expit(LN10 * (x[:, 0] - x[:, 1]))
        val = -((np.log(p) * outcomes + np.log(1 - p) * (1 - outcomes)) * w).sum()
        g = -LN10 * (outcomes - p) * w
        grad = np.zeros(m)
        np.add.at(grad, matchups, g[:, None] * np.array([1.0, -1.0]))
        return float(val), grad

    def fit(w: np.ndarray) -> np.ndarray:
        res = minimize(loss, np.zeros(m), args=(w,), jac=True, method="L-BFGS-B",
                       options={"maxiter": 1000, "gtol": 1e-12, "ftol": 1e-15})  # fmt: skip
        return 400 * res.x + 1000

    point = fit(counts.astype(float))
    rng = np.random.default_rng(seed=0)
    boot = rng.multinomial(len(votes), counts / counts.sum(), size=rounds) / len(votes)
    reps = np.array([fit(w) for w in boot])
    return point, np.quantile(reps, [0.025, 0.975], axis=0)


def test_arrays_and_tuples_give_the_same_result() -> None:
    votes = simulate(3000, 6, 1)
    triples = [
        (votes.models[a], votes.models[b], ("a", "tie", "b")[o])
        for a, b, o in zip(votes.a, votes.b, votes.outcome, strict=True)
    ]
    x = bradley_terry_elo(votes, n_bootstrap=50, seed=3)
    y = bradley_terry_elo(triples, n_bootstrap=50, seed=3)
    assert x.ratings == pytest.approx(y.ratings, abs=1e-9)
    assert x.ci == y.ci
    assert (x.wins, x.losses, x.ties) == (y.wins, y.losses, y.ties)


def test_cells_are_fastchats_unique_rows_so_the_replicates_are_its_replicates() -> None:
    votes = simulate(5000, 5, 2)
    cells = _cells(votes)
    schedule = np.column_stack([votes.a, votes.b, 2 - np.asarray(votes.outcome)])
    rows, counts = np.unique(schedule, return_counts=True, axis=0)
    assert np.array_equal(cells.a, rows[:, 0]) and np.array_equal(cells.b, rows[:, 1])
    assert np.array_equal(cells.outcome, 2 - rows[:, 2])
    assert np.array_equal(cells.counts, counts)
    ours = bootstrap_replicates(cells.counts, len(votes), 20, seed=0)
    theirs = np.random.default_rng(0).multinomial(len(votes), counts / counts.sum(), size=20)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("seed", [0, 4])
def test_ratings_and_ci_bounds_match_fastchats_formulation(seed: int) -> None:
    votes = simulate(4000, 6, seed)
    rounds = 60
    point, (lo, hi) = fastchat_bootstrap(votes, rounds)
    res = bradley_terry_elo(votes, n_bootstrap=rounds, seed=0)
    names = list(votes.models)
    assert max(abs(res.ratings[n] - point[k]) for k, n in enumerate(names)) < 0.01
    assert max(abs(res.ci[n][0] - lo[k]) for k, n in enumerate(names)) < 0.01
    assert max(abs(res.ci[n][1] - hi[k]) for k, n in enumerate(names)) < 0.01


def test_warm_started_bootstrap_equals_cold_fits() -> None:
    votes = simulate(20_000, 8, 5)
    cells = _cells(votes)
    draws = bootstrap_replicates(cells.counts, len(votes), 30, seed=0)
    n, s = cells.pair_stats(draws)
    cold = 400 * fit_bt(8, cells.pi, cells.pj, n, s, tol=1e-13) + 1000
    res = bradley_terry_elo(votes, n_bootstrap=30, seed=0)
    lo, hi = np.quantile(cold, [0.025, 0.975], axis=0)
    for k, name in enumerate(votes.models):
        assert res.ci[name] == pytest.approx((lo[k], hi[k]), abs=1e-6)


@pytest.mark.parametrize(
    ("a", "b", "o", "match"),
    [
        ([0, 1], [1], [0, 0], "differ in shape"),
        ([0, 5], [1, 0], [0, 0], "vote 1: model index a=5"),
        ([0, 1], [1, -1], [0, 0], "vote 1: model index b=-1"),
        ([0, 1], [1, 0], [0, 3], "vote 1: outcome must be"),
        ([0, 1], [1, 1], [0, 0], "vote 1: a model cannot play itself"),
        ([], [], [], "no votes"),
    ],
)
def test_bad_arrays_are_errors_naming_the_vote(a, b, o, match) -> None:
    votes = VoteArrays(["x", "y"], np.array(a, dtype=int), np.array(b, dtype=int), np.array(o))
    with pytest.raises(ValueError, match=match):
        bradley_terry_elo(votes, n_bootstrap=0)


def test_regroup_rates_groups_and_drops_votes_inside_one() -> None:
    votes = VoteArrays(
        ["r1", "r2", "r3"], np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([0, 0, 2])
    )
    g = votes.regroup(["A", "A", "B"])
    assert list(g.models) == ["A", "B"] and len(g) == 2
    assert g.a.tolist() == [0, 0] and g.b.tolist() == [1, 1] and g.outcome.tolist() == [0, 2]
    with pytest.raises(ValueError, match="labels"):
        votes.regroup(["A"])
