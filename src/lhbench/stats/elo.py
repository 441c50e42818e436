"""Bradley–Terry "Elo" from pairwise votes, with bootstrap CIs, on integer arrays.

The model is Chatbot Arena's: P(A beats B) = 1 / (1 + 10^(−(R_A − R_B)/400)); a tie
counts as half a win each way; ratings are the maximum-likelihood fit, centred so their
mean is 1000 (or shifted so a named reference model sits at ``anchor_rating``).

Votes reach the fit as integer arrays (:class:`VoteArrays`: model index of each side and
the outcome; the store gives them from one query), never as Python tuples. They are
counted once into cells (model a, model b, outcome), as FastChat's ``preprocess_for_bt``
does. The bootstrap resamples the votes with replacement: each round's cell counts are
one multinomial draw over the cells' shares, as FastChat's ``compute_bootstrap_bt``. By
default the draw is made as independent Poisson counts completed to exactly ``n`` votes
(:func:`bootstrap_replicates`), which has the same multinomial distribution at under half
the cost of numpy's sequential-binomial multinomial, over cells that merge each pair's two
orders (the fit sees only a pair's votes and score); ``draw="multinomial"`` makes
FastChat's own draw, so with the same seed and model order the replicates are exactly
FastChat's. Every round is then fitted at once, by
a batched Newton iteration on per-pair sufficient statistics: with 20 models and 1,000
rounds that is a fraction of a second where FastChat's L-BFGS refit per round takes tens
of seconds (``bench/bt_elo.py``).

When the vote graph is not strongly connected (e.g. a model never loses or never wins),
the MLE does not exist: ratings run off to infinity. We detect it and fit with an L2
penalty ``ELO_L2_PENALTY`` · Σθ² on natural-log strengths θ (a Gaussian prior with
s.d. 1/√(2·0.1) ≈ 2.24 in θ, ≈ 390 Elo), and say so in the result. Bootstrap
replicates that are separated get the same penalty and are counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lhbench._codes import sorted_codes

__all__ = [
    "ELO_L2_PENALTY",
    "OUTCOME_CODES",
    "EloResult",
    "VoteArrays",
    "bootstrap_replicates",
    "bradley_terry_elo",
    "fit_bt",
]

Winner = Literal["a", "b", "tie"]
ELO_L2_PENALTY = 0.1
OUTCOME_CODES = {"a": 0, "tie": 1, "b": 2}
_LN10 = math.log(10.0)
_SCALE = 400.0
# rounds fitted at once: bounds the memory of a bootstrap (~rounds × pairs × 8 bytes × 10)
_ROUND_CHUNK = 512
# a replicate's fit stops after a Newton step below this (in log10 strength: 0.004 Elo); what
# is left is of the order of its square (measured: < 1e-9 Elo at 100k votes, 20 models)
_BOOT_TOL = 1e-5
# up to this many models, connectivity is a transitive closure in numpy; beyond, the
# closure's M³ per replicate outgrows scipy's sparse search
_CLOSURE_MODELS = 64


@dataclass(frozen=True)
class VoteArrays:
    """Votes as integer columns: ``models[a[k]]`` against ``models[b[k]]``, ``outcome[k]``.

    ``outcome`` is 0 when a won, 1 for a tie, 2 when b won (:data:`OUTCOME_CODES`).
    """

    models: Sequence[str]
    a: NDArray[np.integer]
    b: NDArray[np.integer]
    outcome: NDArray[np.integer]

    def __len__(self) -> int:
        return int(np.asarray(self.a).size)

    @classmethod
    def from_triples(cls, votes: Iterable[tuple[str, str, str]]) -> VoteArrays:
        """``(model_a, model_b, winner)`` tuples as arrays (winner ``a``/``b``/``tie…``).

        Raises:
            ValueError: a vote that is not a triple, or a winner that is none of those.
        """
        rows = list(votes)
        if not rows:
            return cls([], *(np.zeros(0, dtype=np.int64) for _ in range(3)))
        for k, vote in enumerate(rows):
            if not isinstance(vote, tuple | list) or len(vote) != 3:
                raise ValueError(f"vote {k} is not (model_a, model_b, winner): {vote!r}")
        a_col, b_col, w_col = zip(*rows, strict=True)
        models = sorted(set(a_col) | set(b_col))
        index = {m: i for i, m in enumerate(models)}
        n = len(rows)
        a = np.fromiter((index[x] for x in a_col), dtype=np.int64, count=n)
        b = np.fromiter((index[x] for x in b_col), dtype=np.int64, count=n)
        outcome = np.fromiter(
            (
                OUTCOME_CODES.get(w, 1 if isinstance(w, str) and w.startswith("tie") else -1)
                for w in w_col
            ),
            dtype=np.int64,
            count=n,
        )
        if (bad := np.flatnonzero(outcome < 0)).size:
            k = int(bad[0])
            raise ValueError(f"vote {k}: winner must be 'a', 'b' or 'tie', got {w_col[k]!r}")
        return cls(models, a, b, outcome)

    def regroup(self, labels: Sequence[str]) -> VoteArrays:
        """The same votes between groups: ``labels[i]`` is model ``i``'s group.

        (The store gives votes between runs; a report rates harness × model groups.)
        Votes inside one group are dropped, and so are groups left without a vote; the
        groups come out sorted, as :meth:`from_triples` orders models.
        """
        if len(labels) != len(self.models):
            raise ValueError(f"{len(labels)} labels for {len(self.models)} models")
        # the labels as numbers in their sorted order (not an object array's sort)
        distinct, lab = sorted_codes(labels, np.int64)
        ga, gb = lab[np.asarray(self.a)], lab[np.asarray(self.b)]
        keep = ga != gb
        used, code = np.unique(np.concatenate([ga[keep], gb[keep]]), return_inverse=True)
        n = int(np.count_nonzero(keep))
        return VoteArrays(
            [distinct[g] for g in used.tolist()], code[:n], code[n:], np.asarray(self.outcome)[keep]
        )


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


@dataclass(frozen=True)
class _Cells:
    """Votes counted per (a, b, outcome) cell, and how cells map onto unordered pairs."""

    n_models: int
    n_votes: int
    a: NDArray[np.intp]  # per cell
    b: NDArray[np.intp]
    outcome: NDArray[np.intp]  # 0 a won, 1 tie, 2 b won
    counts: NDArray[np.int64]
    pi: NDArray[np.intp]  # per pair, pi < pj
    pj: NDArray[np.intp]
    pair: NDArray[np.intp]  # per cell: its pair
    score: NDArray[np.float64]  # per cell: what one vote gives pi (1, ½ or 0)

    def pair_stats(
        self, counts: NDArray[np.floating] | NDArray[np.integer]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Votes and pi's score per pair, for cell counts of shape (K,) or (B, K).

        Each pair's cells summed in place (cells in pair order, one ``reduceat``): sums
        of whole and half votes, exact in any order, so equal to a sparse (2P, K)
        product, without building one (importing scipy.sparse took a third of a second
        of every report with votes).
        """
        c = np.atleast_2d(counts).astype(float)
        order, starts, score = self._pair_runs
        by_cell = c[:, order]
        n = np.add.reduceat(by_cell, starts, axis=1)
        s = np.add.reduceat(by_cell * score, starts, axis=1)
        return n, s

    @cached_property
    def _pair_runs(self) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.float64]]:
        """The cells in pair order, where each pair's run of cells starts, and their scores."""
        order = np.argsort(self.pair, kind="stable")
        sorted_pairs = self.pair[order]
        starts = np.flatnonzero(np.r_[True, sorted_pairs[1:] != sorted_pairs[:-1]])
        return order, starts, self.score[order]

    def by_pair(self) -> _Cells:
        """The same votes in cells (pi, pj, outcome for pi): each pair's two orders merged.

        The fit only sees each pair's votes and score, so resampling these up to 3 cells
        per pair gives the same distribution of fits as resampling FastChat's up to 6.
        """
        code = np.rint(2 * self.score).astype(np.intp)  # 2 pi won, 1 tie, 0 pj won
        keys, inverse = np.unique(self.pair * 3 + code, return_inverse=True)
        pair, code = keys // 3, keys % 3
        return _Cells(
            n_models=self.n_models,
            n_votes=self.n_votes,
            a=self.pi[pair],
            b=self.pj[pair],
            outcome=2 - code,
            counts=np.bincount(inverse, weights=self.counts).astype(np.int64),
            pi=self.pi,
            pj=self.pj,
            pair=pair,
            score=code / 2.0,
        )


def _cells(votes: VoteArrays) -> _Cells:
    """Check the votes and count them per cell, FastChat's unique (a, b, outcome) rows."""
    m = len(votes.models)
    a = np.asarray(votes.a, dtype=np.intp)
    b = np.asarray(votes.b, dtype=np.intp)
    o = np.asarray(votes.outcome, dtype=np.intp)
    if not (a.shape == b.shape == o.shape and a.ndim == 1):
        raise ValueError(
            f"vote arrays differ in shape: a {a.shape}, b {b.shape}, outcome {o.shape}"
        )
    if a.size == 0:
        raise ValueError("no votes")
    for name, col in (("a", a), ("b", b)):
        if (bad := np.flatnonzero((col < 0) | (col >= m))).size:
            k = int(bad[0])
            raise ValueError(f"vote {k}: model index {name}={int(col[k])} is not in 0..{m - 1}")
    if (bad := np.flatnonzero((o < 0) | (o > 2))).size:
        k = int(bad[0])
        raise ValueError(f"vote {k}: outcome must be 0 (a), 1 (tie) or 2 (b), got {int(o[k])}")
    if (same := np.flatnonzero(a == b)).size:
        k = int(same[0])
        raise ValueError(f"vote {k}: a model cannot play itself ({votes.models[int(a[k])]!r})")
    # FastChat codes a win of a as 2 and sorts unique (a, b, code) rows: the same order
    flat = (a * m + b) * 3 + (2 - o)
    counts = np.bincount(flat, minlength=m * m * 3)
    keys = np.flatnonzero(counts)
    ca, cb, code = keys // (3 * m), (keys // 3) % m, keys % 3
    co = 2 - code
    lo, hi = np.minimum(ca, cb), np.maximum(ca, cb)
    pair_ids, pair = np.unique(lo * m + hi, return_inverse=True)
    # what a vote gives the pair's first model: a win 1, a tie ½, a loss 0
    a_score = np.array([1.0, 0.5, 0.0])[co]
    score = np.where(ca == lo, a_score, 1.0 - a_score)
    return _Cells(
        n_models=m,
        n_votes=int(a.size),
        a=ca,
        b=cb,
        outcome=co,
        counts=counts[keys],
        pi=pair_ids // m,
        pj=pair_ids % m,
        pair=pair,
        score=score,
    )


def _strongly_connected(
    n_models: int,
    pi: NDArray[np.intp],
    pj: NDArray[np.intp],
    n: NDArray[np.float64],
    s: NDArray[np.float64],
) -> bool:
    """The MLE exists iff every model can reach every other through 'won or tied' edges.

    With a few models, :func:`_strongly_connected_each`'s closure (no scipy import);
    with more, scipy's strong components.
    """
    if n_models <= _CLOSURE_MODELS:
        return bool(_strongly_connected_each(n_models, pi, pj, n[None, :], s[None, :])[0])
    fwd = s > 0  # pi gained something against pj (a win or a tie)
    bwd = n - s > 0
    src = np.concatenate([pi[fwd], pj[bwd]])
    dst = np.concatenate([pj[fwd], pi[bwd]])
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    graph = csr_matrix((np.ones(src.size), (src, dst)), shape=(n_models, n_models))
    n_comp, _ = connected_components(graph, directed=True, connection="strong")
    return bool(n_comp == 1)


def _strongly_connected_each(
    n_models: int,
    pi: NDArray[np.intp],
    pj: NDArray[np.intp],
    n: NDArray[np.float64],
    s: NDArray[np.float64],
) -> NDArray[np.bool_]:
    """:func:`_strongly_connected` of each row of ``n`` and ``s`` (shape (K, P)).

    A bootstrap asks it of hundreds of replicates: with a few models, the reachability of
    all of them at once is a batched transitive closure (⌈log₂ M⌉ squarings of the
    'won or tied' adjacency plus the identity), not a sparse graph built per replicate.
    """
    k = n.shape[0]
    if k == 0:
        return np.zeros(0, dtype=bool)
    if n_models > _CLOSURE_MODELS:  # the closure's M³ per replicate outgrows the sparse search
        return np.array(
            [_strongly_connected(n_models, pi, pj, n[i], s[i]) for i in range(k)], dtype=bool
        )
    reach = np.zeros((k, n_models, n_models), dtype=bool)
    diag = np.arange(n_models)
    reach[:, diag, diag] = True
    rows, pairs = np.nonzero(s > 0)
    reach[rows, pi[pairs], pj[pairs]] = True
    rows, pairs = np.nonzero(n - s > 0)
    reach[rows, pj[pairs], pi[pairs]] = True
    for _ in range(max(1, math.ceil(math.log2(n_models)))):
        r = reach.astype(np.float32)  # path counts ≤ 64 are exact in float32
        reach = (r @ r) > 0
    return np.asarray(reach.all(axis=(1, 2)))


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
    init: NDArray[np.float64] | None = None,
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
        tol: Stop when the largest step is below this (Newton's convergence is quadratic:
            what is left after such a step is of the order of its square).
        init: Starting strengths, shape (M,) or (B, M) (bootstrap replicates start from
            the full data's fit, a few Newton steps away); zeros by default.

    Returns:
        Centred strengths, shape (B, M) (or (M,) for 1-D input).
    """
    single = n.ndim == 1
    n2 = np.atleast_2d(n).astype(float)
    s2 = np.atleast_2d(s).astype(float)
    batch, n_pairs = n2.shape
    lam = np.broadcast_to(np.asarray(penalty, dtype=float), (batch,))
    # penalty λ·Σθ² with θ = ln10·r  ->  λ·ln10²·Σr² in r
    lam_r = 2.0 * lam * _LN10**2
    r = np.zeros((batch, n_models))
    if init is not None:
        r[:] = init
        r -= r.mean(axis=1, keepdims=True)
    diag = np.arange(n_models)
    # incidence D (P, M): +1 at pi, −1 at pj; gradient = resid @ D, Hessian = Dᵀ diag(w) D,
    # built from its entries: −w at (pi, pj) and (pj, pi), Σ w on the diagonal
    inc = np.zeros((n_pairs, n_models))
    inc[np.arange(n_pairs), pi] = 1.0
    inc[np.arange(n_pairs), pj] = -1.0
    absinc = np.abs(inc)
    hess = np.empty((batch, n_models, n_models))
    active = np.ones(batch, dtype=bool)
    for _ in range(max_iter):
        idx = np.flatnonzero(active)
        rb = r[idx]
        z = _LN10 * (rb[:, pi] - rb[:, pj])  # (b, P)
        p = 1.0 / (1.0 + np.exp(-z))
        nb = n2[idx]
        resid = nb * p - s2[idx]  # d NLL / d z
        grad = _LN10 * resid @ inc + lam_r[idx, None] * rb  # (b, M)
        wgt = _LN10**2 * nb * p * (1.0 - p)  # (b, P)
        h = hess[: idx.size]
        h.fill(0.0)
        h[:, pi, pj] = -wgt
        h[:, pj, pi] = -wgt
        h[:, diag, diag] = wgt @ absinc + lam_r[idx, None]
        h += 1.0  # + 11ᵀ: pins the free mean (the gradient sums to zero)
        step = np.linalg.solve(h, -grad[..., None])[..., 0]
        # damped: never move a strength by more than 1.0 (400 Elo) in one iteration
        biggest = np.abs(step).max(axis=1)
        step = step / np.maximum(1.0, biggest)[:, None]
        rb = rb + step
        r[idx] = rb - rb.mean(axis=1, keepdims=True)
        active[idx[biggest < tol]] = False
        if not active.any():
            break
    return r[0] if single else r


def bootstrap_replicates(
    counts: ArrayLike,
    n_votes: int,
    rounds: int,
    seed: int = 0,
    draw: Literal["poisson", "multinomial"] = "poisson",
) -> NDArray[np.int64]:
    """Replicate cell counts, shape (rounds, K): each row is ``Multinomial(n_votes, p)``.

    ``p`` is the cells' shares of the votes, so a row is the cell counts of ``n_votes``
    votes resampled with replacement.

    ``draw="multinomial"`` is FastChat's ``compute_bootstrap_bt`` draw,
    ``np.random.default_rng(seed).multinomial(n_votes, p, size=rounds)``: K − 1
    sequential binomials per round.

    ``draw="poisson"`` (the default) has the same distribution, made cheaper: independent
    counts ``X_k ~ Poisson(n_votes · p_k)`` are, given their total ``t``, exactly
    ``Multinomial(t, p)``. A round with ``t < n_votes`` gets ``n_votes − t`` more votes
    drawn from ``p`` (the sum of two independent multinomials with the same ``p``); a
    round with ``t > n_votes`` loses ``t − n_votes`` of its votes chosen uniformly without
    replacement (a uniform subset of i.i.d. draws is i.i.d.). Either way the row is
    ``Multinomial(n_votes, p)``; ``tests/stats/test_elo_arrays.py`` checks the pmf.
    """
    c = np.asarray(counts, dtype=float)
    p = c / c.sum()
    rng = np.random.default_rng(seed)
    if draw == "multinomial":
        return rng.multinomial(n_votes, p, size=rounds)
    if draw != "poisson":
        raise ValueError(f"draw must be 'poisson' or 'multinomial', not {draw!r}")
    k = p.size
    x = rng.poisson(n_votes * p, size=(rounds, k))
    total = x.sum(axis=1)
    short = np.maximum(n_votes - total, 0)
    if short.any():
        extra = _categorical(rng, p, int(short.sum()))
        rows = np.repeat(np.arange(rounds), short)
        x += np.bincount(rows * k + extra, minlength=rounds * k).reshape(rounds, k)
    over = np.flatnonzero(total > n_votes)
    if over.size:
        x[over] -= _drop_uniformly(rng, x[over], total[over] - n_votes)
    return x


def _categorical(rng: np.random.Generator, p: NDArray[np.float64], size: int) -> NDArray[np.intp]:
    """``size`` i.i.d. cell indices with probabilities ``p``, by inversion with a guide table.

    The same answer as ``searchsorted(cdf, u, side="right")`` for each uniform ``u``, in
    O(1) per draw: the table gives the first cell that can hold ``u``'s bucket and a step or
    two forward finds it.
    """
    cdf = np.cumsum(p)
    cdf /= cdf[-1]  # the last bound is exactly 1 > u, so every walk ends in range
    buckets = 8 * p.size
    guide = np.searchsorted(cdf, np.arange(buckets) / buckets, side="right")
    u = rng.random(size)
    idx = guide[(u * buckets).astype(np.intp)]
    todo = np.flatnonzero(cdf[idx] <= u)
    while todo.size:
        idx[todo] += 1
        todo = todo[cdf[idx[todo]] <= u[todo]]
    return idx


def _drop_uniformly(
    rng: np.random.Generator, x: NDArray[np.int64], drop: NDArray[np.int64]
) -> NDArray[np.int64]:
    """Cell counts of ``drop[r]`` of row r's votes chosen uniformly without replacement.

    Row r's votes are numbered cell by cell (all rows laid end to end); positions are drawn
    with replacement and repeats redrawn until all are distinct — every step treats all of
    a row's positions alike, so the chosen set is a uniform subset — then counted back
    into cells.
    """
    rows, k = x.shape
    sizes = x.sum(axis=1)
    start: NDArray[np.int64] = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)

    def positions(owner: NDArray[np.intp]) -> NDArray[np.int64]:
        # each row's votes are numbered from its first vote, start[row]
        offset: NDArray[np.int64] = (rng.random(owner.size) * sizes[owner]).astype(np.int64)
        return start[owner] + offset

    pos = np.sort(positions(np.repeat(np.arange(rows), drop)))
    repeat = pos[1:] == pos[:-1]
    while repeat.any():
        owner = np.searchsorted(start, pos[1:][repeat], side="right") - 1
        kept = pos[np.concatenate([[True], ~repeat])]
        pos = np.sort(np.concatenate([kept, positions(owner)]))
        repeat = pos[1:] == pos[:-1]
    cells = np.searchsorted(np.cumsum(x.ravel()), pos, side="right")
    return np.bincount(cells, minlength=rows * k).reshape(rows, k)


def bradley_terry_elo(
    votes: VoteArrays | Iterable[tuple[str, str, str]],
    *,
    n_bootstrap: int = 1000,
    seed: int = 0,
    anchor: str | None = None,
    anchor_rating: float = 1000.0,
    confidence: float = 0.95,
    draw: Literal["poisson", "multinomial"] = "poisson",
) -> EloResult:
    """Bradley–Terry Elo ratings with percentile bootstrap CIs over votes.

    Args:
        votes: :class:`VoteArrays` (what the store gives), or ``(model_a, model_b,
            winner)`` tuples with winner ``"a"``, ``"b"`` or ``"tie"`` (any ``"tie…"``
            such as ``"tie (bothbad)"`` counts as a tie).
        n_bootstrap: Bootstrap rounds (0 for none: the CI is then the point estimate).
        seed: RNG seed; the same seed gives the same CIs.
        anchor: A model to pin at ``anchor_rating``; by default the mean is 1000.
        anchor_rating: Where the anchor sits.
        confidence: CI level.
        draw: How the bootstrap's multinomial replicates are drawn
            (:func:`bootstrap_replicates`); ``"multinomial"`` reproduces FastChat's
            replicates exactly, ``"poisson"`` has the same distribution at less cost.

    Raises:
        ValueError: malformed votes, or an anchor that is not among the models.
    """
    arrays = votes if isinstance(votes, VoteArrays) else VoteArrays.from_triples(votes)
    cells = _cells(arrays)
    models = list(arrays.models)
    m = len(models)
    if anchor is not None and anchor not in models:
        raise ValueError(f"anchor {anchor!r} is not among the models {models}")
    notes: list[str] = []
    wins = np.zeros(m, dtype=np.int64)
    losses = np.zeros(m, dtype=np.int64)
    ties = np.zeros(m, dtype=np.int64)
    c = cells.counts
    np.add.at(wins, cells.a[cells.outcome == 0], c[cells.outcome == 0])
    np.add.at(wins, cells.b[cells.outcome == 2], c[cells.outcome == 2])
    np.add.at(losses, cells.a[cells.outcome == 2], c[cells.outcome == 2])
    np.add.at(losses, cells.b[cells.outcome == 0], c[cells.outcome == 0])
    np.add.at(ties, cells.a[cells.outcome == 1], c[cells.outcome == 1])
    np.add.at(ties, cells.b[cells.outcome == 1], c[cells.outcome == 1])

    n_pair, s_pair = (x[0] for x in cells.pair_stats(c))
    separated = m > 1 and not _strongly_connected(m, cells.pi, cells.pj, n_pair, s_pair)
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

    r_point = fit_bt(m, cells.pi, cells.pj, n_pair, s_pair, penalty)
    point = to_elo(r_point)
    ratings = {mod: float(point[i]) for i, mod in enumerate(models)}

    penalized = 0
    if n_bootstrap > 0:
        # FastChat's own draw resamples its cells; the cheaper one the merged pair cells
        drawn = cells if draw == "multinomial" else cells.by_pair()
        draws = bootstrap_replicates(drawn.counts, cells.n_votes, n_bootstrap, seed, draw)
        boot = np.empty((n_bootstrap, m))
        full_fwd, full_bwd = s_pair > 0, n_pair - s_pair > 0
        for start in range(0, n_bootstrap, _ROUND_CHUNK):
            n_b, s_b = drawn.pair_stats(draws[start : start + _ROUND_CHUNK])
            pen = np.zeros(n_b.shape[0])
            # a replicate keeps a subset of the full data's edges: only one that lost an
            # edge can differ from the full data in connectivity, so only those are checked
            lost = (full_fwd & ~(s_b > 0)) | (full_bwd & ~(n_b - s_b > 0))
            check = np.flatnonzero(lost.any(axis=1) | separated)
            joined = _strongly_connected_each(m, cells.pi, cells.pj, n_b[check], s_b[check])
            pen[check[~joined]] = ELO_L2_PENALTY
            penalized += int(np.count_nonzero(pen))
            # each replicate starts from the full data's fit: 3–4 Newton steps instead of 6–8
            boot[start : start + n_b.shape[0]] = to_elo(
                fit_bt(
                    m,
                    cells.pi,
                    cells.pj,
                    n_b,
                    s_b,
                    pen,
                    tol=_BOOT_TOL,
                    init=r_point,
                )
            )
        if penalized and not separated:
            notes.append(
                f"{penalized} of {n_bootstrap} bootstrap replicates were separated and fitted "
                f"with the L2 penalty"
            )
        alpha = (1.0 - confidence) / 2.0
        lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=0)
        ci = {mod: (float(lo[i]), float(hi[i])) for i, mod in enumerate(models)}
    else:
        ci = {mod: (ratings[mod], ratings[mod]) for mod in models}
    return EloResult(
        ratings=ratings,
        ci=ci,
        n_votes=cells.n_votes,
        wins={mod: int(wins[i]) for i, mod in enumerate(models)},
        losses={mod: int(losses[i]) for i, mod in enumerate(models)},
        ties={mod: int(ties[i]) for i, mod in enumerate(models)},
        penalty=penalty,
        separated=separated,
        notes=notes,
        n_bootstrap=n_bootstrap,
        bootstrap_penalized=penalized,
    )
