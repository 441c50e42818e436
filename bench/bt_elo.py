"""Bradley–Terry Elo with bootstrap CIs: lhbench's batched fit vs. FastChat's current one.

Baseline, timed in the same run, in alternation: Chatbot Arena's current formulation
(FastChat ``compute_bt`` / ``compute_bootstrap_bt``, written here from the formula):
votes counted into unique (a, b, outcome) rows, ties as half wins, the Bradley–Terry
negative log-likelihood with its gradient minimised by scipy's L-BFGS-B (``gtol`` 1e-6)
from zero ratings; the bootstrap draws every round's row counts from one multinomial and
refits by L-BFGS per round (FastChat spreads the rounds over a process pool; here both
sides run in one process with BLAS pinned to one thread). Both sides start from the same
integer vote arrays (what the store gives, ``vote_columns``). Their point ratings must
agree. Their bootstrap replicates have the same multinomial distribution but are not the
same draws (lhbench completes Poisson counts to n votes, FastChat draws sequential
binomials; ``stats.elo.bootstrap_replicates``), so at 1,000 rounds their CI bounds differ
by Monte Carlo error; the CI agreement is also checked, untimed, at ``--agree-rounds``
rounds (default 10,000), where that error is small enough to expose a real difference of
1 Elo, and with lhbench drawing FastChat's own replicates (``draw="multinomial"``), where
the bounds must agree to the fit's tolerance.

Second, slower reference (timed once, over ``--sklearn-rounds`` rounds and scaled): the
older notebook formulation, a scikit-learn logistic regression refit per round.

Prints the load, every repetition, the medians and their ratio, the largest rating and
CI-bound differences. Last line: the headline.

    uv run python bench/bt_elo.py            # 100,000 votes, 20 models, 1,000 rounds
    uv run python bench/bt_elo.py --quick    # 20,000 votes, 200 rounds
"""

from __future__ import annotations

import argparse
import math

import common  # before numpy: pins BLAS/OpenMP threads for both sides
import numpy as np
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from lhbench.stats import bradley_terry_elo
from lhbench.stats.elo import VoteArrays, _cells, bootstrap_replicates

LN10 = math.log(10)


def simulate(n_votes: int, n_models: int, seed: int) -> VoteArrays:
    """Votes between models of normal strengths, 10 % ties, as integer arrays."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.5, size=n_models)
    i = rng.integers(0, n_models, size=n_votes)
    j = (i + rng.integers(1, n_models, size=n_votes)) % n_models
    p = 1 / (1 + 10 ** (-(strength[i] - strength[j])))
    u = rng.random(n_votes)
    outcome = np.where(u < 0.1, 1, np.where(rng.random(n_votes) < p, 0, 2))  # 0 a, 1 tie, 2 b
    names = [f"model-{k:02d}" for k in range(n_models)]
    return VoteArrays(names, i.astype(np.int32), j.astype(np.int32), outcome.astype(np.int8))


# -- FastChat's current formulation (rating_systems.py), from the formula ------------------


def preprocess_for_bt(votes: VoteArrays) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Unique (a, b, outcome) rows with their counts; outcome 1 / ½ / 0 for a win / tie / loss."""
    schedule = np.empty((len(votes), 3), dtype=np.int32)
    schedule[:, 0] = votes.a
    schedule[:, 1] = votes.b
    schedule[:, 2] = 2 - np.asarray(votes.outcome, dtype=np.int32)  # a won -> 2, b won -> 0
    rows, counts = np.unique(schedule, return_counts=True, axis=0)
    return rows[:, :2], rows[:, 2].astype(np.float64) / 2.0, counts.astype(np.float64)


def bt_loss_and_grad(
    ratings: np.ndarray,
    matchups: np.ndarray,
    outcomes: np.ndarray,
    weights: np.ndarray,
    alpha: float,
) -> tuple[float, np.ndarray]:
    r = ratings[matchups]
    probs = expit(alpha * (r[:, 0] - r[:, 1]))
    loss = -((np.log(probs) * outcomes + np.log(1.0 - probs) * (1.0 - outcomes)) * weights).sum()
    g = -alpha * (outcomes - probs) * weights
    grad = np.zeros_like(ratings)
    np.add.at(grad, matchups, g[:, None] * np.array([1.0, -1.0]))
    return float(loss), grad


def fastchat_fit(
    matchups: np.ndarray, outcomes: np.ndarray, weights: np.ndarray, n_models: int
) -> np.ndarray:
    result = minimize(
        bt_loss_and_grad,
        np.zeros(n_models),
        args=(matchups, outcomes, weights, LN10),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 100, "gtol": 1e-6},
    )
    return np.asarray(result["x"])


def fastchat(votes: VoteArrays, rounds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Point ratings and 95 % bootstrap bounds, FastChat's way (one process)."""
    m = len(votes.models)
    matchups, outcomes, weights = preprocess_for_bt(votes)
    point = 400 * fastchat_fit(matchups, outcomes, weights, m) + 1000
    rng = np.random.default_rng(seed=0)
    n = len(votes)
    boot_weights = rng.multinomial(n, weights / weights.sum(), size=rounds) / n
    boot = np.array([fastchat_fit(matchups, outcomes, w, m) for w in boot_weights])
    lo, hi = np.quantile(400 * boot + 1000, [0.025, 0.975], axis=0)
    return point, lo, hi


def ours(
    votes: VoteArrays, rounds: int, draw: str = "poisson"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    res = bradley_terry_elo(votes, n_bootstrap=rounds, seed=0, draw=draw)  # type: ignore[arg-type]
    names = list(votes.models)
    point = np.array([res.ratings[n] for n in names])
    lo = np.array([res.ci[n][0] for n in names])
    hi = np.array([res.ci[n][1] for n in names])
    return point, lo, hi


# -- the older reference: sklearn refit per round -----------------------------------------


def sklearn_fit(n_models: int, counts: np.ndarray) -> np.ndarray:
    """counts[a, b, outcome] -> LR on weighted ±ln10 rows (wins weighted 2, ties split)."""
    a_idx, b_idx = np.nonzero(counts.sum(axis=2))
    rows, ys, ws = [], [], []
    for a, b in zip(a_idx, b_idx, strict=True):
        win, tie, loss = counts[a, b]
        x = np.zeros(n_models)
        x[a], x[b] = LN10, -LN10
        for y, w in ((1, 2 * win + tie), (0, 2 * loss + tie)):
            if w:
                rows.append(x)
                ys.append(y)
                ws.append(w)
    lr = LogisticRegression(fit_intercept=False, C=1e12, tol=1e-8, max_iter=1000)
    lr.fit(np.array(rows), np.array(ys), sample_weight=np.array(ws, dtype=float))
    r = lr.coef_[0]
    return 400 * (r - r.mean()) + 1000


def sklearn_rounds(votes: VoteArrays, rounds: int) -> None:
    m = len(votes.models)
    a, b, o = (np.asarray(x, dtype=np.int64) for x in (votes.a, votes.b, votes.outcome))
    rng = np.random.default_rng(0)
    for _ in range(rounds):
        pick = rng.integers(0, len(votes), size=len(votes))
        flat = np.bincount((a[pick] * m + b[pick]) * 3 + o[pick], minlength=m * m * 3)
        sklearn_fit(m, flat.reshape(m, m, 3).astype(float))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 votes and 200 rounds")
    ap.add_argument("--votes", type=int, default=None)
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--reps", type=int, default=3, help="alternating repetitions (>= 3)")
    ap.add_argument("--agree-rounds", type=int, default=None, help="rounds of the untimed CI check")
    ap.add_argument("--sklearn-rounds", type=int, default=50, help="0 skips the sklearn reference")
    args = ap.parse_args()
    print(common.load_line("bt_elo"), flush=True)
    n_votes = args.votes or (20_000 if args.quick else 100_000)
    rounds = args.rounds or (200 if args.quick else 1000)
    votes = simulate(n_votes, args.models, seed=0)

    answers: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def timed(name: str, fn):  # type: ignore[no-untyped-def]
        def side() -> float:
            with common.Timer() as t:
                answers[name] = fn(votes, rounds)
            return t.wall

        return side

    ours(votes, 10)  # imports and first-call costs: not measured
    fastchat(votes, 2)
    times = common.alternate(
        {"lhbench": timed("lhbench", ours), "fastchat": timed("fastchat", fastchat)}, args.reps
    )
    (p_ours, lo_ours, hi_ours), (p_fc, lo_fc, hi_fc) = answers["lhbench"], answers["fastchat"]
    point_diff = float(np.max(np.abs(p_ours - p_fc)))
    ci_diff = float(max(np.max(np.abs(lo_ours - lo_fc)), np.max(np.abs(hi_ours - hi_fc))))
    ratio = common.ratio_of_medians(times["fastchat"], times["lhbench"])

    print(f"votes={n_votes:,} models={args.models} bootstrap rounds={rounds} reps={args.reps}")
    print(
        f"lhbench (integer arrays, batched Newton): median {common.median(times['lhbench']):.3f} s "
        f"{common.spread(times['lhbench'])}"
    )
    print(
        f"FastChat formulation (L-BFGS per round): median {common.median(times['fastchat']):.3f} s "
        f"{common.spread(times['fastchat'])}"
    )
    # the two draws of the replicates alone (same distribution, different algorithms)
    cells = _cells(votes)
    drawn = {"poisson": cells.by_pair().counts, "multinomial": cells.counts}
    draw_times: dict[str, list[float]] = {"poisson": [], "multinomial": []}
    for _ in range(args.reps):
        for kind in draw_times:
            with common.Timer() as t:
                bootstrap_replicates(drawn[kind], n_votes, rounds, 0, kind)  # type: ignore[arg-type]
            draw_times[kind].append(t.wall)
    print(
        f"of which drawing the replicates: lhbench (Poisson completed to n, "
        f"{drawn['poisson'].size} cells, each pair's two orders merged) median "
        f"{common.median(draw_times['poisson']):.3f} s; FastChat's multinomial "
        f"({drawn['multinomial'].size} cells) median "
        f"{common.median(draw_times['multinomial']):.3f} s"
    )
    print(f"max |Δ Elo| point ratings vs FastChat formulation: {point_diff:.5f}")
    print(
        f"max |Δ Elo| 95 % CI bounds vs FastChat formulation at {rounds} rounds (different "
        f"draws of one distribution: Monte Carlo error): {ci_diff:.5f}"
    )
    same = ours(votes, rounds, "multinomial")
    same_diff = float(max(np.max(np.abs(same[1] - lo_fc)), np.max(np.abs(same[2] - hi_fc))))
    print(
        f"max |Δ Elo| 95 % CI bounds with lhbench drawing FastChat's replicates "
        f"(draw='multinomial'): {same_diff:.5f}"
    )
    agree = args.agree_rounds or (2000 if args.quick else 10_000)
    with common.Timer() as t:
        _, lo_a, hi_a = ours(votes, agree)
        _, lo_b, hi_b = fastchat(votes, agree)
    agree_diff = float(max(np.max(np.abs(lo_a - lo_b)), np.max(np.abs(hi_a - hi_b))))
    print(
        f"max |Δ Elo| 95 % CI bounds vs FastChat formulation at {agree:,} rounds (untimed, "
        f"{t.wall:.1f} s): {agree_diff:.5f}"
    )
    if args.sklearn_rounds:
        with common.Timer() as t:
            sklearn_rounds(votes, args.sklearn_rounds)
        scaled = t.wall / args.sklearn_rounds * rounds
        vs = scaled / common.median(times["lhbench"])
        print(
            f"sklearn refit per round (older reference): {t.wall:.3f} s for "
            f"{args.sklearn_rounds} rounds, {scaled:.2f} s scaled to {rounds} ({vs:.1f}x "
            "lhbench's median)"
        )
    print(common.load_line("bt_elo", "end"))
    print(
        f"bt_elo: {ratio:.1f}x the FastChat formulation (target >= 10x); max diff "
        f"{point_diff:.4f} Elo (target <= 0.01), CI bounds within {agree_diff:.4f} Elo at "
        f"{agree:,} rounds, {ci_diff:.4f} at {rounds:,} (target <= 1)"
    )


if __name__ == "__main__":
    main()
