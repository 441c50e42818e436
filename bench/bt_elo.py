"""Bradley–Terry Elo with bootstrap CIs: lhbench's batched Newton fit vs. the Arena way.

Baseline, timed in the same run: what Chatbot Arena's notebook-era code does per bootstrap
round (FastChat ``compute_elo_mle_with_tie`` under ``get_bootstrap_result``): resample the
battles with replacement, aggregate them into win/tie counts per ordered pair, and refit a
scikit-learn logistic regression (±ln10 design rows, wins weighted 2, ties split). The
aggregation here uses numpy ``bincount`` where FastChat uses pandas pivot tables, so the
baseline is faster than the original and the speed-up is conservative.

Prints both times, the speed-up, the largest rating difference between the two fits on
the full data, and on identical bootstrap replicates. Last line: the headline.

    uv run python bench/bt_elo.py            # 100,000 votes, 20 models, 1,000 rounds
    uv run python bench/bt_elo.py --quick    # 20,000 votes, 1,000 rounds
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from sklearn.linear_model import LogisticRegression

from lhbench.stats import bradley_terry_elo
from lhbench.stats.elo import fit_bt

LN10 = math.log(10)


def simulate(
    n_votes: int, n_models: int, seed: int
) -> tuple[list[tuple[str, str, str]], np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 0.5, size=n_models)
    i = rng.integers(0, n_models, size=n_votes)
    j = (i + rng.integers(1, n_models, size=n_votes)) % n_models
    p = 1 / (1 + 10 ** (-(strength[i] - strength[j])))
    u = rng.random(n_votes)
    outcome = np.where(u < 0.1, 1, np.where(rng.random(n_votes) < p, 0, 2))  # 0 a, 1 tie, 2 b
    names = [f"model-{k:02d}" for k in range(n_models)]
    votes = [
        (names[a], names[b], ("a", "tie", "b")[o]) for a, b, o in zip(i, j, outcome, strict=True)
    ]
    return votes, i, j, outcome


def lr_fit(n_models: int, counts: np.ndarray) -> np.ndarray:
    """FastChat's older MLE: counts[a, b, outcome] -> sklearn LR on weighted ±ln10 rows."""
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


def aggregate(n_models: int, i: np.ndarray, j: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    flat = np.bincount((i * n_models + j) * 3 + outcome, minlength=n_models * n_models * 3)
    return flat.reshape(n_models, n_models, 3).astype(float)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="20,000 votes instead of 100,000")
    ap.add_argument("--votes", type=int, default=None)
    ap.add_argument("--models", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=1000)
    args = ap.parse_args()
    rounds = args.rounds
    n_votes = args.votes or (20_000 if args.quick else 100_000)
    votes, i, j, outcome = simulate(n_votes, args.models, seed=0)
    m = args.models
    names = [f"model-{k:02d}" for k in range(m)]

    t0 = time.perf_counter()
    ours = bradley_terry_elo(votes, n_bootstrap=rounds, seed=0)
    t_ours = time.perf_counter() - t0

    rng = np.random.default_rng(0)
    t0 = time.perf_counter()
    boot = np.empty((rounds, m))
    for b in range(rounds):
        pick = rng.integers(0, len(votes), size=len(votes))
        boot[b] = lr_fit(m, aggregate(m, i[pick], j[pick], outcome[pick]))
    lo_b, hi_b = np.quantile(boot, [0.025, 0.975], axis=0)
    t_base = time.perf_counter() - t0

    full = lr_fit(m, aggregate(m, i, j, outcome))
    point_diff = max(abs(ours.ratings[n] - full[k]) for k, n in enumerate(names))
    ci_diff = max(
        max(abs(ours.ci[n][0] - lo_b[k]), abs(ours.ci[n][1] - hi_b[k])) for k, n in enumerate(names)
    )

    # identical replicates through both fits: the per-round answers must agree
    rng = np.random.default_rng(1)
    same_diff = 0.0
    for _ in range(20):
        pick = rng.integers(0, len(votes), size=len(votes))
        counts = aggregate(m, i[pick], j[pick], outcome[pick])
        pi, pj = np.nonzero(np.triu(counts.sum(axis=2) + counts.sum(axis=2).T, k=1))
        n_pair = counts[pi, pj].sum(axis=1) + counts[pj, pi].sum(axis=1)
        s_pair = (
            counts[pi, pj, 0]
            + 0.5 * counts[pi, pj, 1]
            + counts[pj, pi, 2]
            + 0.5 * counts[pj, pi, 1]
        )
        r = 400 * fit_bt(m, pi, pj, n_pair, s_pair) + 1000
        same_diff = max(same_diff, float(np.max(np.abs(r - lr_fit(m, counts)))))

    speedup = t_base / t_ours
    print(f"votes={len(votes):,} models={m} bootstrap rounds={rounds}")
    print(f"lhbench batched Newton: {t_ours:.3f} s")
    print(f"baseline (resample + sklearn LR refit per round): {t_base:.3f} s")
    print(f"max |Δ Elo| point estimates (full data): {point_diff:.4f}")
    print(f"max |Δ Elo| per-round fits on identical replicates (20 rounds): {same_diff:.4f}")
    print(f"max |Δ Elo| CI bounds (independent resamples, Monte-Carlo noise): {ci_diff:.3f}")
    print(
        f"bt_elo speedup: {speedup:.1f}x (target >= 10x; "
        f"max diff {max(point_diff, same_diff):.4f} Elo, target <= 0.5)"
    )


if __name__ == "__main__":
    main()
