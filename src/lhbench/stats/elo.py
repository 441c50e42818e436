"""Bradley–Terry "Elo" from pairwise votes, with bootstrap CIs.

The model is Chatbot Arena's: P(A beats B) = 1 / (1 + 10^(−(R_A − R_B)/400)); a tie
counts as half a win each way; ratings are the maximum-likelihood fit, centred so their
mean is 1000 (or shifted so a named reference model sits at ``anchor_rating``).

We fit by Newton's method on per-pair sufficient statistics, and fit all bootstrap
replicates at once as one batched Newton iteration (vote-level multinomial resampling,
as FastChat's ``compute_bootstrap_bt`` does). With 20 models that is a few milliseconds
where refitting a logistic regression per round takes seconds.

When the vote graph is not strongly connected (e.g. a model never loses or never wins),
the MLE does not exist: ratings run off to infinity. We detect it and fit with an L2
penalty ``ELO_L2_PENALTY`` · Σθ² on natural-log strengths θ (a Gaussian prior with
s.d. 1/√(2·0.1) ≈ 2.24 in θ, ≈ 390 Elo), and say so in the result. Bootstrap
replicates that are separated get the same penalty and are counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["ELO_L2_PENALTY", "EloResult", "bradley_terry_elo", "fit_bt"]

Winner = Literal["a", "b", "tie"]
ELO_L2_PENALTY = 0.1
_LN10 = math.log(10.0)
_SCALE = 400.0


@dataclass(frozen=True)
class EloResult:
    """Ratings, 95% percentile bootstrap CIs, and what the fit had to do."""

    ratings: dict[str, float]
    ci: dict[str, tuple[float, float]]
    n_votes: int
    wins: dict[str, int]
    losses: dict[str, int]
    ties: dict[str, int]
    penalty: float = 0.0
    separated: bool = False
    notes: list[str] = field(default_factory=list)
    n_bootstrap: int = 0
    bootstrap_penalized: int = 0

    @property
    def models(self) -> list[str]:
        """Models, best first."""
        return sorted(self.ratings, key=lambda m: -self.ratings[m])

    def games(self, model: str) -> int:
        """Votes the model took part in."""
        return self.wins[model] + self.losses[model] + self.ties[model]

    def win_rate(self, model: str) -> float:
        """Wins / games (ties count as games won by neither), as LH-Bench's Win %."""
        g = self.games(model)
        return self.wins[model] / g if g else math.nan


def _pair_stats(
    votes: Iterable[tuple[str, str, str]],
) -> tuple[list[str], NDArray[np.intp], NDArray[np.intp], NDArray[np.float64], int]:
    """Models and per-cell counts: cells are (pair, outcome) with outcome a-win/tie/b-win.

    Pairs are oriented i < j; counts[:, 0] are i's wins, [:, 1] ties, [:, 2] j's wins.
    """
    rows = list(votes)
    if not rows:
        raise ValueError("no votes")
    for k, vote in enumerate(rows):
        if not isinstance(vote, tuple | list) or len(vote) != 3:
            raise ValueError(f"vote {k} is not (model_a, model_b, winner): {vote!r}")
    a_col, b_col, w_col = zip(*rows, strict=True)
    models = sorted(set(a_col) | set(b_col))
    index = {m: i for i, m in enumerate(models)}
    ia = np.fromiter((index[x] for x in a_col), dtype=np.intp, count=len(rows))
    ib = np.fromiter((index[x] for x in b_col), dtype=np.intp, count=len(rows))
    code = {"a": 0, "tie": 1, "b": 2}
    outcome = np.fromiter(
        (code.get(w, 1 if isinstance(w, str) and w.startswith("tie") else -1) for w in w_col),
        dtype=np.intp,
        count=len(rows),
    )
    if (bad := np.flatnonzero(outcome < 0)).size:
        k = int(bad[0])
        raise ValueError(f"vote {k}: winner must be 'a', 'b' or 'tie', got {w_col[k]!r}")
    if (same := np.flatnonzero(ia == ib)).size:
        k = int(same[0])
        raise ValueError(f"vote {k}: a model cannot play itself ({a_col[k]!r})")
    swap = ia > ib
    lo, hi = np.where(swap, ib, ia), np.where(swap, ia, ib)
    outcome = np.where(swap, 2 - outcome, outcome)
    m = len(models)
    cells = np.bincount((lo * m + hi) * 3 + outcome, minlength=m * m * 3).reshape(m * m, 3)
    keys = np.flatnonzero(cells.sum(axis=1))
    return models, keys // m, keys % m, cells[keys].astype(float), len(rows)


def _strongly_connected(
    n_models: int, pi: NDArray[np.intp], pj: NDArray[np.intp], counts: NDArray[np.float64]
) -> bool:
    """The MLE exists iff every model can reach every other through 'won or tied' edges."""
    fwd = counts[:, 0] + counts[:, 1] > 0  # i gained something against j
    bwd = counts[:, 2] + counts[:, 1] > 0
    src = np.concatenate([pi[fwd], pj[bwd]])
    dst = np.concatenate([pj[fwd], pi[bwd]])
    graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(n_models, n_models))
    n_comp, _ = connected_components(graph, directed=True, connection="strong")
    return bool(n_comp == 1)


def fit_bt(
    n_models: int,
    pi: NDArray[np.intp],
    pj: NDArray[np.intp],
    n: NDArray[np.float64],
    s: NDArray[np.float64],
    penalty: NDArray[np.float64] | float = 0.0,
    *,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> NDArray[np.float64]:
    """Batched Newton fit of Bradley–Terry strengths in log10 units (Elo = 400·r + 1000).

    Args:
        n_models: Number of models M.
        pi: First model of each pair, shape (P,).
        pj: Second model of each pair, shape (P,).
        n: Votes per pair, shape (B, P) for B problems at once (or (P,)).
        s: Score of the first model per pair (wins + ½ ties), same shape as ``n``.
        penalty: L2 weight on natural-log strengths, scalar or shape (B,).
        max_iter: Newton iteration cap.
        tol: Stop when the largest step is below this.

    Returns:
        Centred strengths, shape (B, M) (or (M,) for 1-D input).
    """
    single = n.ndim == 1
    n2 = np.atleast_2d(n).astype(float)
    s2 = np.atleast_2d(s).astype(float)
    batch = n2.shape[0]
    lam = np.broadcast_to(np.asarray(penalty, dtype=float), (batch,))
    # penalty λ·Σθ² with θ = ln10·r  ->  λ·ln10²·Σr² in r
    lam_r = 2.0 * lam * _LN10**2
    r = np.zeros((batch, n_models))
    eye = np.eye(n_models)
    ones = np.ones((n_models, n_models))
    # incidence D: (P, M) with +1 at i, −1 at j; outer[p] = vec(d_p d_pᵀ) so that the
    # Hessians of all B problems are one matrix product
    inc = np.zeros((pi.size, n_models))
    inc[np.arange(pi.size), pi] = 1.0
    inc[np.arange(pi.size), pj] = -1.0
    outer = np.einsum("pm,pk->pmk", inc, inc).reshape(pi.size, n_models * n_models)
    for _ in range(max_iter):
        z = _LN10 * (r[:, pi] - r[:, pj])  # (B, P)
        p = 1.0 / (1.0 + np.exp(-z))
        resid = n2 * p - s2  # d NLL / d z
        grad = _LN10 * resid @ inc + lam_r[:, None] * r  # (B, M)
        wgt = _LN10**2 * n2 * p * (1.0 - p)  # (B, P)
        hess = (wgt @ outer).reshape(batch, n_models, n_models)
        hess += lam_r[:, None, None] * eye + ones
        step = np.linalg.solve(hess, -grad[..., None])[..., 0]
        # damped: never move a strength by more than 1.0 (400 Elo) in one iteration
        biggest = np.abs(step).max(axis=1, keepdims=True)
        step = step / np.maximum(1.0, biggest)
        r += step
        r -= r.mean(axis=1, keepdims=True)
        if float(biggest.max()) < tol:
            break
    return r[0] if single else r


def bradley_terry_elo(
    votes: Iterable[tuple[str, str, str]],
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    confidence: float = 0.95,
) -> EloResult:
    """Bradley–Terry Elo ratings with percentile bootstrap CIs over votes.

    Args:
        votes: ``(model_a, model_b, winner)`` with winner ``"a"``, ``"b"`` or ``"tie"``
            (any ``"tie…"`` such as ``"tie (bothbad)"`` counts as a tie).
        n_bootstrap: Bootstrap rounds (0 for none: the CI is then the point estimate).
        seed: RNG seed; the same seed gives the same CIs.
        anchor: A model to pin at ``anchor_rating``; by default the mean is 1000.
        anchor_rating: Where the anchor sits.
        confidence: CI level.

    Raises:
        ValueError: malformed votes, or an anchor that is not among the models.
    """
    models, pi, pj, counts, n_votes = _pair_stats(votes)
    m = len(models)
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} is not among the models {models}")
    notes: list[str] = []
    n_pair = counts.sum(axis=1)
    s_pair = counts[:, 0] + 0.5 * counts[:, 1]
    wins = np.zeros(m, dtype=int)
    losses = np.zeros(m, dtype=int)
    ties = np.zeros(m, dtype=int)
    np.add.at(wins, pi, counts[:, 0].astype(int))
    np.add.at(wins, pj, counts[:, 2].astype(int))
    np.add.at(losses, pi, counts[:, 2].astype(int))
    np.add.at(losses, pj, counts[:, 0].astype(int))
    np.add.at(ties, pi, counts[:, 1].astype(int))
    np.add.at(ties, pj, counts[:, 1].astype(int))

    separated = m > 1 and not _strongly_connected(m, pi, pj, counts)
    penalty = ELO_L2_PENALTY if separated else 0.0
    if separated:
        never_lost = [models[i] for i in range(m) if losses[i] == 0 and ties[i] == 0]
        never_won = [models[i] for i in range(m) if wins[i] == 0 and ties[i] == 0]
        what = []
        if never_lost:
            what.append(f"never lost: {', '.join(never_lost)}")
        if never_won:
            what.append(f"never won: {', '.join(never_won)}")
        notes.append(
            "maximum-likelihood ratings do not exist (the vote graph is not strongly "
            f"connected{'; ' + '; '.join(what) if what else ''}); fitted with L2 penalty "
            f"{ELO_L2_PENALTY}·Σθ²"
        )

    def to_elo(r: NDArray[np.float64]) -> NDArray[np.float64]:
        elo = _SCALE * r + 1000.0
        if anchor is not None:
            elo = elo - elo[..., [models.index(anchor)]] + anchor_rating
        return elo

    point = to_elo(fit_bt(m, pi, pj, n_pair, s_pair, penalty))
    ratings = {mod: float(point[i]) for i, mod in enumerate(models)}

    penalized = 0
    if n_bootstrap > 0:
        rng = np.random.default_rng(seed)
        flat = counts.reshape(-1)
        draws = (
            rng.multinomial(n_votes, flat / flat.sum(), size=n_bootstrap)
            .reshape(n_bootstrap, -1, 3)
            .astype(float)
        )
        boot_pen = np.zeros(n_bootstrap)
        # A replicate keeps a subset of the full data's edges; only one that lost an edge
        # can differ from the full data in connectivity, so only those are checked.
        full_edges = np.concatenate([counts[:, 0] + counts[:, 1], counts[:, 2] + counts[:, 1]]) > 0
        rep_edges = (
            np.concatenate(
                [draws[:, :, 0] + draws[:, :, 1], draws[:, :, 2] + draws[:, :, 1]], axis=1
            )
            > 0
        )
        for b in np.flatnonzero((full_edges & ~rep_edges).any(axis=1) | separated):
            if not _strongly_connected(m, pi, pj, draws[b]):
                boot_pen[b] = ELO_L2_PENALTY
        penalized = int(np.count_nonzero(boot_pen))
        if penalized and not separated:
            notes.append(
                f"{penalized} of {n_bootstrap} bootstrap replicates were separated and fitted "
                f"with the L2 penalty"
            )
        boot = to_elo(
            fit_bt(m, pi, pj, draws.sum(axis=2), draws[:, :, 0] + 0.5 * draws[:, :, 1], boot_pen)
        )
        alpha = (1.0 - confidence) / 2.0
        lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
        ci = {mod: (float(lo[i]), float(hi[i])) for i, mod in enumerate(models)}
    else:
        ci = {mod: (ratings[mod], ratings[mod]) for mod in models}
    return EloResult(
        ratings=ratings,
        ci=ci,
        n_votes=n_votes,
        wins={mod: int(wins[i]) for i, mod in enumerate(models)},
        losses={mod: int(losses[i]) for i, mod in enumerate(models)},
        ties={mod: int(ties[i]) for i, mod in enumerate(models)},
        penalty=penalty,
        separated=separated,
        notes=notes,
        n_bootstrap=n_bootstrap,
        bootstrap_penalized=penalized,
    )
