"""Grading jobs: rubric grades by a judge panel, and pairwise votes by pairwise judges.

A grade's unit is (run, judge, repeat) on one rubric tier; its key is the grade's identity,
so N runs with identical evidence get N grades each (the response cache, keyed by the
request, makes the identical prompts cost one model call per judge).

Bookkeeping is batched: the units to run are prepared in windows ahead of their calls
(evidence loaded once per run, each prompt rendered once, each request encoded once, all
their cache keys looked up in one query: :mod:`lhbench.jobs.batches`), and results are
written with the responses they came from, a batch at a time, in one transaction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lhbench.jobs.batches import DEFAULT_WINDOW, RequestWindows, drain_caches
from lhbench.jobs.evidence import EvidenceCache
from lhbench.jobs.runner import Assessment, Unit, short_reason
from lhbench.judges import (
    Evidence,
    GradeItem,
    PairItem,
    PairwiseJudge,
    PreparedPrompt,
    RubricJudge,
    candidate_pairs,
)
from lhbench.models import PreparedRequest, ReplyCache
from lhbench.schema import Grade, GradeStatus, PreferenceVote, Rubric, Run, Task, Tier
from lhbench.store import ResultState, Store

__all__ = ["GradeJob", "PairwiseJob"]


def _caches(clients: Sequence[object]) -> list[ReplyCache]:
    """The distinct response caches behind the judges' clients."""
    found: dict[int, ReplyCache] = {}
    for c in clients:
        cache = getattr(c, "cache", None)
        if isinstance(cache, ReplyCache):
            found[id(cache)] = cache
    return list(found.values())


def _preload(requests: Sequence[tuple[object, PreparedRequest]]) -> None:
    """Look every request's key up in its client's cache: one query per cache."""
    by_cache: dict[int, tuple[ReplyCache, list[str]]] = {}
    for client, request in requests:
        cache = getattr(client, "cache", None)
        if isinstance(cache, ReplyCache):
            by_cache.setdefault(id(cache), (cache, []))[1].append(request.key)
    for cache, keys in by_cache.values():
        cache.preload(keys)


def _load_evidence(
    store: Store, tasks: dict[str, Task], runs: Sequence[Run]
) -> dict[str, Evidence]:
    """Each run's evidence (blocking; a window's runs at once)."""
    return {
        r.id: Evidence(
            run=r,
            task=tasks.get(r.task_id),
            trajectory=store.get_trajectory(r.id),
            artifacts=store.list_artifacts(r.id),
        )
        for r in {r.id: r for r in runs}.values()
    }


@dataclass(frozen=True)
class _GradeUnit:
    run: Run
    judge: RubricJudge
    repeat: int


@dataclass(frozen=True)
class _PreparedGrade:
    evidence: Evidence
    request: PreparedRequest


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
        window: int = DEFAULT_WINDOW,
    ) -> None:
        self.store = store
        self.runs = list(runs)
        self.rubric = rubric
        self.tier = tier
        self.judges = list(judges)
        self.repeats = repeats
        self.tasks = tasks
        self.evidence = EvidenceCache(store, tasks)
        self.caches = _caches([j.client for j in self.judges])
        self._planned: list[Unit[_GradeUnit]] = []
        self._windows: RequestWindows[_GradeUnit, _PreparedGrade] = RequestWindows(
            self._prepare, size=window
        )

    def plan(self) -> list[Unit[_GradeUnit]]:
        """Run-major, so a run's evidence is loaded once for all its judges and repeats."""
        out = []
        for run in self.runs:
            for judge in self.judges:
                for k in range(self.repeats):
                    key = judge.key(GradeItem(run, self.rubric, self.tier, k))
                    label = f"{run.id} × {judge.identity.label}" + (f" #{k}" if k else "")
                    out.append(Unit(key, label, _GradeUnit(run, judge, k)))
        self._planned = out
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored grade states; what is left to run is prepared in windows from here on."""
        # one query for the panel's grades on this rubric content and tier, not one per
        # 500 keys: a job over a large store finds what is stored in seconds
        states = self.store.grade_states_in(
            keys,
            rubric_hash=self.rubric.content_hash,
            tier=self.tier.kind.value,
            judge_keys=[j.identity.key for j in self.judges],
        )
        self._windows.plan(self._planned, states)
        return states

    def _prepare(self, units: Sequence[Unit[_GradeUnit]]) -> dict[str, _PreparedGrade]:
        """A window: evidence once per run, a prompt once per run and budget, one cache query."""
        evidence = _load_evidence(self.store, self.tasks, [u.payload.run for u in units])
        prompts: dict[tuple[str, int], PreparedPrompt] = {}
        out: dict[str, _PreparedGrade] = {}
        for unit in units:
            u = unit.payload
            ev = evidence[u.run.id]
            pkey = (u.run.id, u.judge.budget_tokens)
            prompt = prompts.get(pkey)
            if prompt is None:
                prompt = prompts[pkey] = u.judge.prepare(ev, self.rubric, self.tier)
            request = u.judge.request(ev, self.rubric, self.tier, repeat=u.repeat, prepared=prompt)
            out[unit.key] = _PreparedGrade(ev, request)
        _preload([(u.payload.judge.client, out[u.key].request) for u in units])
        return out

    async def run(self, unit: Unit[_GradeUnit]) -> Grade:
        """One grade (from its prepared request when the window has it)."""
        u = unit.payload
        prepared = await self._windows.get(unit)
        if prepared is None:
            evidence = await self.evidence.get(u.run)
            return await u.judge.judge(GradeItem(u.run, self.rubric, self.tier, u.repeat, evidence))
        return await u.judge.grade(
            prepared.evidence,
            self.rubric,
            self.tier,
            repeat=u.repeat,
            request=prepared.request,
            key=unit.key,  # the plan's key is the grade's
        )

    def assess(self, result: Grade) -> Assessment:
        """Ok, a parse failure (final), or an error (retryable when transport)."""
        if result.status == GradeStatus.OK:
            return Assessment(True)
        if result.status == GradeStatus.PARSE_ERROR:
            return Assessment(False, "answer did not fit the rubric (parse error)")
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[Grade]) -> None:
        """Grades and the responses they came from, one transaction per batch."""
        self.store.save_grades(results, cache=drain_caches(self.caches, self.store))


@dataclass(frozen=True)
class _PairUnit:
    run_a: Run
    run_b: Run
    judge: PairwiseJudge


@dataclass(frozen=True)
class _PreparedPair:
    item: PairItem
    requests: tuple[PreparedRequest, PreparedRequest]


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
        window: int = DEFAULT_WINDOW,
    ) -> None:
        self.store = store
        self.by_id = {r.id: r for r in runs}
        self.pairs = candidate_pairs(list(runs))
        self.rubric = rubric
        self.tier = tier
        self.judges = list(judges)
        self.tasks = tasks
        self.evidence = EvidenceCache(store, tasks)
        self.caches = _caches([j.client for j in self.judges])
        self._planned: list[Unit[_PairUnit]] = []
        self._windows: RequestWindows[_PairUnit, _PreparedPair] = RequestWindows(
            self._prepare, size=window
        )

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
        self._planned = out
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored vote states (a failed comparison is a vote with no winner)."""
        states = self.store.vote_states(keys)
        self._windows.plan(self._planned, states)
        return states

    def _prepare(self, units: Sequence[Unit[_PairUnit]]) -> dict[str, _PreparedPair]:
        """A window: evidence once per run, both orders' requests, one cache query."""
        runs = [r for u in units for r in (u.payload.run_a, u.payload.run_b)]
        evidence = _load_evidence(self.store, self.tasks, runs)
        out: dict[str, _PreparedPair] = {}
        for unit in units:
            u = unit.payload
            item = PairItem(
                u.run_a,
                u.run_b,
                self.rubric,
                self.tier,
                evidence[u.run_a.id],
                evidence[u.run_b.id],
            )
            out[unit.key] = _PreparedPair(item, u.judge.requests(item))
        _preload([(u.payload.judge.client, r) for u in units for r in out[u.key].requests])
        return out

    async def run(self, unit: Unit[_PairUnit]) -> PreferenceVote:
        """One comparison, asked in both orders."""
        u = unit.payload
        prepared = await self._windows.get(unit)
        if prepared is None:
            ea = await self.evidence.get(u.run_a)
            eb = await self.evidence.get(u.run_b)
            return await u.judge.judge(PairItem(u.run_a, u.run_b, self.rubric, self.tier, ea, eb))
        return (await u.judge.compare_item(prepared.item, prepared.requests)).vote

    def assess(self, result: PreferenceVote) -> Assessment:
        """Ok, or why not."""
        if result.status == "ok":
            return Assessment(True)
        if result.status == "parse_error":
            return Assessment(False, "answer did not fit (parse error)")
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[PreferenceVote]) -> None:
        """Votes (failed ones included) and their responses, one transaction per batch."""
        self.store.save_votes(results, cache=drain_caches(self.caches, self.store))
