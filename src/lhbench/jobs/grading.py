"""Grading jobs: rubric grades by a judge panel, and pairwise votes by pairwise judges.

A grade's unit is (run, judge, repeat) on one rubric tier; its key is the grade's identity,
so N runs with identical evidence get N grades each (the response cache, keyed by the
request, makes the identical prompts cost one model call per judge).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lhbench.jobs.evidence import EvidenceCache
from lhbench.jobs.runner import Assessment, Unit, short_reason
from lhbench.judges import GradeItem, PairItem, PairwiseJudge, RubricJudge, candidate_pairs
from lhbench.schema import Grade, GradeStatus, PreferenceVote, Rubric, Run, Task, Tier
from lhbench.store import ResultState, Store

__all__ = ["GradeJob", "PairwiseJob"]


@dataclass(frozen=True)
class _GradeUnit:
    run: Run
    judge: RubricJudge
    repeat: int


class GradeJob:
    """Every run × judge × repeat on one rubric tier (the Job protocol)."""

    name = "grade"

    def __init__(
        self,
        store: Store,
        runs: Sequence[Run],
        rubric: Rubric,
        tier: Tier,
        judges: Sequence[RubricJudge],
        *,
        tasks: dict[str, Task],
        repeats: int = 1,
    ) -> None:
        self.store = store
        self.runs = list(runs)
        self.rubric = rubric
        self.tier = tier
        self.judges = list(judges)
        self.repeats = repeats
        self.evidence = EvidenceCache(store, tasks)

    def plan(self) -> list[Unit[_GradeUnit]]:
        """Run-major, so a run's evidence is loaded once for all its judges and repeats."""
        out = []
        for run in self.runs:
            for judge in self.judges:
                for k in range(self.repeats):
                    key = judge.key(GradeItem(run, self.rubric, self.tier, k))
                    label = f"{run.id} × {judge.identity.label}" + (f" #{k}" if k else "")
                    out.append(Unit(key, label, _GradeUnit(run, judge, k)))
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored grade states."""
        return self.store.grade_states(keys)

    async def run(self, unit: Unit[_GradeUnit]) -> Grade:
        """One grade."""
        u = unit.payload
        evidence = await self.evidence.get(u.run)
        return await u.judge.judge(GradeItem(u.run, self.rubric, self.tier, u.repeat, evidence))

    def assess(self, result: Grade) -> Assessment:
        """Ok, a parse failure (final), or an error (retryable when transport)."""
        if result.status == GradeStatus.OK:
            return Assessment(True)
        if result.status == GradeStatus.PARSE_ERROR:
            return Assessment(False, "answer did not fit the rubric (parse error)")
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[Grade]) -> None:
        """Grades, one transaction per batch."""
        self.store.save_grades(results)


@dataclass(frozen=True)
class _PairUnit:
    run_a: Run
    run_b: Run
    judge: PairwiseJudge


class PairwiseJob:
    """Every candidate pair of runs of a task × pairwise judge (the Job protocol)."""

    name = "pairwise"

    def __init__(
        self,
        store: Store,
        runs: Sequence[Run],
        rubric: Rubric,
        tier: Tier,
        judges: Sequence[PairwiseJudge],
        *,
        tasks: dict[str, Task],
    ) -> None:
        self.store = store
        self.by_id = {r.id: r for r in runs}
        self.pairs = candidate_pairs(list(runs))
        self.rubric = rubric
        self.tier = tier
        self.judges = list(judges)
        self.evidence = EvidenceCache(store, tasks)

    def plan(self) -> list[Unit[_PairUnit]]:
        """One unit per (pair, judge)."""
        out = []
        for _pack, _task, a, b in self.pairs:
            ra, rb = self.by_id[a], self.by_id[b]
            for judge in self.judges:
                key = judge.key(PairItem(ra, rb, self.rubric, self.tier))
                out.append(
                    Unit(key, f"{a} vs {b} × {judge.identity.label}", _PairUnit(ra, rb, judge))
                )
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored vote states (a failed comparison is a vote with no winner)."""
        return self.store.vote_states(keys)

    async def run(self, unit: Unit[_PairUnit]) -> PreferenceVote:
        """One comparison, asked in both orders."""
        u = unit.payload
        ea = await self.evidence.get(u.run_a)
        eb = await self.evidence.get(u.run_b)
        return await u.judge.judge(PairItem(u.run_a, u.run_b, self.rubric, self.tier, ea, eb))

    def assess(self, result: PreferenceVote) -> Assessment:
        """Ok, or why not."""
        if result.status == "ok":
            return Assessment(True)
        if result.status == "parse_error":
            return Assessment(False, "answer did not fit (parse error)")
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[PreferenceVote]) -> None:
        """Votes, failed ones included."""
        self.store.save_votes(results)
