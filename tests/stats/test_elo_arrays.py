"""Elo on integer arrays: same answers as tuples, FastChat's bootstrap replicates, bad arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from lhbench.stats import bradley_terry_elo
from lhbench.stats.elo import VoteArrays, _categorical, _cells, bootstrap_replicates, fit_bt

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
    ours = bootstrap_replicates(cells.counts, len(votes), 20, seed=0, draw="multinomial")
    theirs = np.random.default_rng(0).multinomial(len(votes), counts / counts.sum(), size=20)
    assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("seed", [0, 4])
def test_ratings_and_ci_bounds_match_fastchats_formulation(seed: int) -> None:
    votes = simulate(4000, 6, seed)
    rounds = 60
    point, (lo, hi) = fastchat_bootstrap(votes, rounds)
    res = bradley_terry_elo(votes, n_bootstrap=rounds, seed=0, draw="multinomial")
    names = list(votes.models)
    assert max(abs(res.ratings[n] - point[k]) for k, n in enumerate(names)) < 0.01
    assert max(abs(res.ci[n][0] - lo[k]) for k, n in enumerate(names)) < 0.01
    assert max(abs(res.ci[n][1] - hi[k]) for k, n in enumerate(names)) < 0.01


@pytest.mark.parametrize(("counts", "n"), [([1, 2, 3], 4), ([5, 1, 1, 3], 7)])
def test_the_poisson_draw_has_the_multinomial_pmf(counts: list[int], n: int) -> None:
    """Every outcome's frequency over 60,000 rounds against the exact multinomial pmf.

    With these sizes about 4 rounds in 10 are completed with extra votes and 4 in 10 lose
    votes, so both corrections are exercised; a biased correction (e.g. dropping votes
    from the largest cell) fails the chi-square test by orders of magnitude.
    """
    from itertools import product

    from scipy.stats import chisquare, multinomial

    rounds = 60_000
    draws = bootstrap_replicates(np.array(counts), n, rounds, seed=11)
    assert draws.shape == (rounds, len(counts)) and (draws >= 0).all()
    assert (draws.sum(axis=1) == n).all()
    p = np.array(counts) / sum(counts)
    outcomes = [c for c in product(range(n + 1), repeat=len(counts)) if sum(c) == n]
    index = {c: i for i, c in enumerate(outcomes)}
    observed = np.bincount([index[tuple(row)] for row in draws.tolist()], minlength=len(outcomes))
    expected = multinomial.pmf(np.array(outcomes), n, p) * rounds
    assert expected.sum() == pytest.approx(rounds)
    assert chisquare(observed, expected).pvalue > 1e-3


def test_the_two_draws_give_the_same_cis_up_to_monte_carlo_error() -> None:
    """Different replicates, same distribution: with 4,000 rounds the bounds agree closely."""
    votes = simulate(20_000, 6, 7)
    a = bradley_terry_elo(votes, n_bootstrap=4000, seed=1, draw="poisson")
    b = bradley_terry_elo(votes, n_bootstrap=4000, seed=2, draw="multinomial")
    assert a.ratings == b.ratings
    widths = [hi - lo for lo, hi in b.ci.values()]
    for name in votes.models:
        assert a.ci[name] == pytest.approx(b.ci[name], abs=1.0)
    # the bounds are not trivially equal: the intervals are ~20 Elo wide
    assert min(widths) > 10


def test_merging_a_pairs_two_orders_keeps_every_pairs_votes_and_score() -> None:
    votes = simulate(5000, 5, 3)
    cells = _cells(votes)
    merged = cells.by_pair()
    assert merged.counts.size <= 3 * cells.pi.size < cells.counts.size
    assert merged.counts.sum() == cells.counts.sum() == len(votes)
    for x, y in zip(merged.pair_stats(merged.counts), cells.pair_stats(cells.counts), strict=True):
        assert np.array_equal(x, y)
    # each merged cell is oriented from the pair's first model
    assert np.array_equal(merged.a, cells.pi[merged.pair])


def test_the_guide_table_draw_is_inversion_by_binary_search() -> None:
    """Cells of zero and of tiny probability included: the same index for every uniform."""
    p = np.random.default_rng(5).random(57)
    p[[0, 3, 56]] = [0.0, 0.0, 1e-9]
    p /= p.sum()
    got = _categorical(np.random.default_rng(1), p, 200_000)
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    want = np.searchsorted(cdf, np.random.default_rng(1).random(200_000), side="right")
    assert np.array_equal(got, want)
    assert not np.isin(got, [0, 3]).any()


def test_an_unknown_draw_is_an_error() -> None:
    with pytest.raises(ValueError, match="draw must be"):
        bootstrap_replicates(np.array([1, 2]), 3, 2, draw="bogus")  # type: ignore[arg-type]


def test_warm_started_bootstrap_equals_cold_fits() -> None:
    votes = simulate(20_000, 8, 5)
    cells = _cells(votes).by_pair()
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


def test_regroup_drops_a_group_whose_only_votes_were_inside_it() -> None:
    votes = VoteArrays(
        ["r1", "r2", "r3", "r4"], np.array([0, 2, 2]), np.array([1, 3, 1]), np.array([0, 1, 2])
    )
    g = votes.regroup(["B", "B", "C", "A"])
    assert list(g.models) == ["A", "B", "C"]
    assert g.a.tolist() == [2, 2] and g.b.tolist() == [0, 1] and g.outcome.tolist() == [1, 2]
    only_inside = votes.regroup(["Z", "Z", "Y", "Y"])
    assert list(only_inside.models) == ["Y", "Z"] and len(only_inside) == 1
    triples = [("Y", "Z", "b")]
    assert bradley_terry_elo(only_inside, n_bootstrap=0).ratings == pytest.approx(
        bradley_terry_elo(triples, n_bootstrap=0).ratings
    )


@pytest.mark.parametrize("m", [1, 2, 3, 5, 9, 17, 70])
def test_batched_connectivity_equals_scipys_strong_components(m: int) -> None:
    """Each replicate's 'won or tied' graph: strongly connected as scipy's search says."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from lhbench.stats.elo import _strongly_connected_each

    rng = np.random.default_rng(m)
    pi, pj = (np.array(x, dtype=np.intp) for x in np.triu_indices(m, 1))
    k = 300
    # sparse graphs: many are separated, some just barely connected (a single cycle)
    n = rng.poisson(rng.uniform(0.05, 1.5, size=(k, 1)), size=(k, pi.size)).astype(float)
    s = np.floor(rng.random((k, pi.size)) * (n + 1))
    ring = np.arange(m)
    n[0], s[0] = 0.0, 0.0
    for a, b in zip(ring, np.roll(ring, -1), strict=True):  # one cycle 0→1→…→0
        if a != b:
            lo, hi = min(a, b), max(a, b)
            p = np.flatnonzero((pi == lo) & (pj == hi))[0]
            n[0, p] += 1
            s[0, p] += 1 if a == lo else 0
    got = _strongly_connected_each(m, pi, pj, n, s)
    want = []
    for row in range(k):
        fwd, bwd = s[row] > 0, n[row] - s[row] > 0
        src = np.concatenate([pi[fwd], pj[bwd]])
        dst = np.concatenate([pj[fwd], pi[bwd]])
        graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(m, m))
        want.append(connected_components(graph, directed=True, connection="strong")[0] == 1)
    assert got.tolist() == want
    assert m == 1 or (bool(got[0]) and 0 < int(got.sum()) < k)  # both answers occur


def test_pair_sums_equal_the_sparse_product_and_a_fit_imports_no_scipy_sparse() -> None:
    """Each pair's votes and score, summed per pair, are the (2P, K) sparse product's bits.

    And a fit of a report's few groups (point and bootstrap) never loads scipy.sparse,
    a third of a second of every report with votes.
    """
    import subprocess
    import sys

    from scipy.sparse import csr_matrix

    for seed, m in ((3, 2), (4, 7), (5, 23)):
        votes = simulate(4000, m, seed)
        for cells in (_cells(votes), _cells(votes).by_pair()):
            k, n_pairs = cells.pair.size, cells.pi.size
            matrix = csr_matrix(
                (
                    np.concatenate([np.ones(k), cells.score]),
                    (np.concatenate([cells.pair, n_pairs + cells.pair]), np.r_[0:k, 0:k]),
                ),
                shape=(2 * n_pairs, k),
            )
            draws = bootstrap_replicates(cells.counts, len(votes), 40, seed=seed)
            for counts in (cells.counts, draws):
                want = np.asarray(matrix @ np.atleast_2d(counts).astype(float).T).T
                n, s = cells.pair_stats(counts)
                assert np.array_equal(n, want[:, :n_pairs])
                assert np.array_equal(s, want[:, n_pairs:])
    code = (
        "import sys, numpy as np\n"
        "from lhbench.stats import bradley_terry_elo\n"
        "from lhbench.stats.elo import VoteArrays\n"
        "rng = np.random.default_rng(0)\n"
        "a = rng.integers(0, 8, 3000); b = (a + rng.integers(1, 8, 3000)) % 8\n"
        "res = bradley_terry_elo(VoteArrays([f'g{i}' for i in range(8)], a, b,"
        " rng.integers(0, 3, 3000)), n_bootstrap=200)\n"
        "assert len(res.ratings) == 8 and res.n_bootstrap == 200\n"
        "print(sorted(m for m in sys.modules if m.startswith('scipy.sparse')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_regroup_equals_numpys_unique_of_the_labels_on_random_votes() -> None:
    """Regrouping by label numbers gives what ``np.unique`` over the label strings gives."""
    rng = np.random.default_rng(3)
    for trial in range(50):
        n_models = int(rng.integers(2, 40))
        names = [f"agent {c}" for c in "bAa_Zé"][: int(rng.integers(1, 7))]
        labels = [names[i] for i in rng.integers(0, len(names), n_models)]
        n = int(rng.integers(0, 200))
        a, b = rng.integers(0, n_models, n), rng.integers(0, n_models, n)
        outcome = rng.integers(0, 3, n)
        votes = VoteArrays([f"r{i}" for i in range(n_models)], a, b, outcome)
        got = votes.regroup(labels)
        lab = np.asarray(labels, dtype=object)
        ga, gb = lab[a], lab[b]
        keep = ga != gb
        groups, code = np.unique(np.concatenate([ga[keep], gb[keep]]), return_inverse=True)
        k = int(keep.sum())
        assert list(got.models) == [str(g) for g in groups], trial
        assert got.a.tolist() == code[:k].tolist() and got.b.tolist() == code[k:].tolist()
        assert got.outcome.tolist() == outcome[keep].tolist()
