"""Pairwise-preference statistics beyond Elo: win rates, position bias, cycles, agreement."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from lhbench.stats.agreement import cohen_kappa
from lhbench.stats.significance import BinomialResult, binomial_test, cohens_h

__all__ = [
    "CycleResult",
    "OutcomeAgreement",
    "PairRecord",
    "WinRate",
    "cycle_rate",
    "head_to_head",
    "outcome_agreement",
    "position_bias",
    "win_rates",
]

Outcome = Literal["a", "b", "tie"]


@dataclass(frozen=True)
class PairRecord:
    """Head-to-head record of ``first`` against ``second``; binomial test on decisive votes."""

    first: str
    second: str
    first_wins: int
    second_wins: int
    ties: int
    test: BinomialResult | None

    @property
    def n(self) -> int:
        """All votes between the two, ties included."""
        return self.first_wins + self.second_wins + self.ties

    @property
    def first_win_rate(self) -> float:
        """First's wins over all their votes (ties count as games, won by neither)."""
        return self.first_wins / self.n if self.n else math.nan

    @property
    def first_share(self) -> float:
        """First's share of the decisive votes (ties left out), as the binomial test sees it."""
        decisive = self.first_wins + self.second_wins
        return self.first_wins / decisive if decisive else math.nan

    @property
    def h(self) -> float:
        """Cohen's h of first's decisive share against an even split (LH-Bench: h = 0.08)."""
        share = self.first_share
        return math.nan if math.isnan(share) else cohens_h(share, 0.5)


def head_to_head(votes: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], PairRecord]:
    """Every pair's record (keys sorted alphabetically), with an exact binomial p."""
    tallies: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])
    for a, b, w in votes:
        first, second = sorted((a, b))
        t = tallies[(first, second)]
        if w.startswith("tie"):
            t[2] += 1
        elif (w == "a") == (a == first):
            t[0] += 1
        else:
            t[1] += 1
    out = {}
    for (first, second), (w1, w2, ties) in sorted(tallies.items()):
        test = binomial_test(w1, w1 + w2, ties="excluded") if w1 + w2 else None
        out[(first, second)] = PairRecord(first, second, w1, w2, ties, test)
    return out


@dataclass(frozen=True)
class WinRate:
    """One model's games, wins and ties, with its win rate under both tie rules."""

    model: str
    games: int
    wins: int
    ties: int

    @property
    def rate(self) -> float:
        """Wins / games: a tie is a game won by neither (our default)."""
        return self.wins / self.games if self.games else math.nan

    @property
    def rate_ties_half(self) -> float:
        """(Wins + ties / 2) / games: a tie credited half to each side, as LH-Bench Table 10."""
        return (self.wins + self.ties / 2) / self.games if self.games else math.nan


def win_rates(votes: Iterable[tuple[str, str, str]]) -> dict[str, WinRate]:
    """Every model's record over (a, b, winner) votes; winner is a, b or tie[...]."""
    games: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for a, b, w in votes:
        for m in (a, b):
            games[m][0] += 1
        if w.startswith("tie"):
            games[a][2] += 1
            games[b][2] += 1
        else:
            games[a if w == "a" else b][1] += 1
    return {m: WinRate(m, g, w, t) for m, (g, w, t) in sorted(games.items())}


def position_bias(
    left_won: Iterable[bool | None], *, ties: Literal["exclude", "include"] = "exclude"
) -> BinomialResult:
    """Binomial test that the left-shown item wins half the time.

    Args:
        left_won: Per vote: True if the left item won, False if the right did, None for a tie.
        ties: ``"exclude"`` drops ties from n; ``"include"`` counts them as not-left wins.
            LH-Bench's p = 0.72 for "52% of 135 votes" reproduces only with ties excluded
            (65/125); with them counted (70/135) it is 0.7308. Report which.
    """
    values = list(left_won)
    k = sum(1 for v in values if v is True)
    n = sum(1 for v in values if v is not None) if ties == "exclude" else len(values)
    if n == 0:
        raise ValueError("no decisive votes to test for position bias")
    return binomial_test(k, n, ties="excluded" if ties == "exclude" else "counted as not-left")


@dataclass(frozen=True)
class CycleResult:
    """Share of model triads whose pairwise majorities form a directed 3-cycle."""

    cycles: int
    triads: int
    skipped_triads: int
    pairs_used: int

    @property
    def rate(self) -> float:
        """Cycles / triads (NaN when no triad had three decided pairs)."""
        return self.cycles / self.triads if self.triads else math.nan


def cycle_rate(
    votes: Iterable[tuple[str, str, str]], groups: Sequence[Hashable] | None = None
) -> CycleResult:
    """Intransitivity of majority preferences.

    A tournament is built from majorities of decisive votes; exactly tied pairs and pairs
    never compared are left out, and a triad with such a pair is skipped (counted apart),
    not counted as transitive. With ``groups`` (e.g. the task of each vote), a tournament
    is built per group and triads are pooled across groups.
    """
    vote_list = list(votes)
    keys = list(groups) if groups is not None else [None] * len(vote_list)
    if len(keys) != len(vote_list):
        raise ValueError(f"{len(keys)} group ids for {len(vote_list)} votes")
    by_group: dict[Hashable, list[tuple[str, str, str]]] = defaultdict(list)
    for g, v in zip(keys, vote_list, strict=True):
        by_group[g].append(v)
    cycles = triads = skipped = pairs_used = 0
    for group_votes in by_group.values():
        margin: dict[tuple[str, str], int] = defaultdict(int)
        models: set[str] = set()
        for a, b, w in group_votes:
            models.update((a, b))
            if w.startswith("tie"):
                continue
            winner, loser = (a, b) if w == "a" else (b, a)
            margin[(winner, loser)] += 1
        beats: set[tuple[str, str]] = set()
        for x, y in itertools.combinations(sorted(models), 2):
            d = margin[(x, y)] - margin[(y, x)]
            if d > 0:
                beats.add((x, y))
            elif d < 0:
                beats.add((y, x))
        pairs_used += len(beats)
        for x, y, z in itertools.combinations(sorted(models), 3):
            decided = [
                (p, q) if (p, q) in beats else (q, p)
                for p, q in ((x, y), (y, z), (x, z))
                if (p, q) in beats or (q, p) in beats
            ]
            if len(decided) < 3:
                skipped += 1
                continue
            triads += 1
            wins: dict[str, int] = defaultdict(int)
            for p, _q in decided:
                wins[p] += 1
            if all(wins[m] == 1 for m in (x, y, z)):
                cycles += 1
    return CycleResult(cycles=cycles, triads=triads, skipped_triads=skipped, pairs_used=pairs_used)


@dataclass(frozen=True)
class OutcomeAgreement:
    """Agreement of two raters on the 3-class outcome (A wins / B wins / tie)."""

    n: int
    raw_agreement: float
    kappa: float
    ties_first: int
    ties_second: int


def outcome_agreement(first: Sequence[Outcome], second: Sequence[Outcome]) -> OutcomeAgreement:
    """Raw agreement and unweighted (nominal) Cohen's κ over A/B/tie, as LH-Bench App. J.

    Nominal, because a tie is not "between" the two wins for this purpose.
    """
    if len(first) != len(second):
        raise ValueError(f"{len(first)} and {len(second)} outcomes; need matched comparisons")
    if not first:
        raise ValueError("no matched comparisons")
    agree = sum(1 for x, y in zip(first, second, strict=True) if x == y)
    return OutcomeAgreement(
        n=len(first),
        raw_agreement=agree / len(first),
        kappa=cohen_kappa(list(first), list(second), labels=["a", "b", "tie"]),
        ties_first=sum(1 for x in first if x == "tie"),
        ties_second=sum(1 for y in second if y == "tie"),
    )
