"""Grading jobs: rubric grades by a judge panel, and pairwise votes by pairwise judges.

A grade's unit is (run, judge, repeat) on one rubric tier; its key is the grade's identity,
so N runs with identical evidence get N grades each (the response cache, keyed by the
request, makes the identical prompts cost one model call per judge).

Bookkeeping is batched: the units to run are prepared in windows ahead of their calls
(evidence loaded once per run, each prompt rendered once, each request encoded once, all
their cache keys looked up in one query: :mod:`lhbench.jobs.batches`), and results are
written with the responses they came from, a batch at a time, in one transaction.

On Ray (``GradeJob(..., remote=RayExecutor)``) each unit is prepared here the same way and
sent, a batch of units per Ray task, to a worker: the worker builds each judge from its
model spec (the endpoint pinned to the one this machine resolved, so the grade's identity
and request keys are the same), asks the model and returns the grades. Only this machine
writes the store, keyed by grade identity, so a batch run again after a lost worker is
stored once. The response cache stays in the store: the stored replies of a batch's first
requests travel with it, the worker keeps its new replies in memory for the batch (a
re-ask, or an identical request in the same batch, is answered from there) and returns
them, and they are written here with the grades. A judge's ``max_concurrency`` is kept
here, over the units in flight on all workers.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from operator import is_not, itemgetter
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from lhbench.jobs.batches import DEFAULT_WINDOW, RequestWindows, drain_caches
from lhbench.jobs.evidence import EvidenceCache
from lhbench.jobs.runner import Assessment, Gaps, Unit, short_reason
from lhbench.judges import (
    Evidence,
    GradeItem,
    PairItem,
    PairwiseJudge,
    PreparedPrompt,
    RubricJudge,
    RunTierScore,
    candidate_pairs,
    panel_score,
    repeat_sd,
)
from lhbench.models import (
    CacheRow,
    ModelSpec,
    PreparedRequest,
    Reply,
    ReplyCache,
    cache_refresh,
    cache_refreshing,
)
from lhbench.schema import (
    Grade,
    GradeStatus,
    JudgeIdentity,
    PreferenceVote,
    Rubric,
    Run,
    Task,
    Tier,
    judge_labels,
)
from lhbench.store import PanelGradeRow, ResultState, Store

__all__ = [
    "DEFAULT_REMOTE_BATCH",
    "GradeJob",
    "PairwiseJob",
    "PanelFigures",
    "RemoteExecutor",
    "RemoteGrade",
    "RunFigures",
    "RunFiguresRow",
    "RunFiguresTable",
    "grade_on_node",
    "panel_figures",
]


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


class RemoteExecutor(Protocol):
    """Runs a module-level function on another machine (the Ray executor's ``call``)."""

    async def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)`` where the executor runs work; its result."""
        ...


#: grading units per Ray task: enough to amortise a task's start and the judge clients it
#: builds, few enough that a lost worker costs little to redo and that an endpoint's
#: ``max_concurrency`` units (8 by default) make two batches, on two workers
DEFAULT_REMOTE_BATCH = 4


@dataclass(frozen=True)
class RemoteGrade:
    """One grading unit as it travels to a worker: what it needs to build the judge and ask.

    ``spec`` has the endpoint this machine resolved (``OPENAI_BASE_URL`` and the like read
    here, not on the worker); ``judge_key`` is the judge identity this machine computed,
    which the worker's judge must match; ``cached``: the stored replies of the unit's first
    request (none when ``refresh``).
    """

    spec: dict[str, Any]
    retries: int
    budget_tokens: int
    judge_key: str
    run: Run
    rubric: Rubric
    tier: str
    repeat: int
    key: str
    request: PreparedRequest
    refresh: bool = False
    cached: dict[str, dict[str, Any]] = field(default_factory=dict)


class _NodeCache:
    """A batch's response cache on a worker: the replies it brought; new ones are drained."""

    def __init__(self, docs: dict[str, dict[str, Any]]) -> None:
        self.docs = docs

    def get_cached_responses(self, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
        return {k: self.docs[k] for k in keys if k in self.docs}

    def put_cached_responses(self, rows: Sequence[CacheRow]) -> int:
        return 0  # the batch's new replies go back to the job, which writes them

    def get_cached_response(self, key: str) -> dict[str, Any] | None:
        return self.docs.get(key)

    def put_cached_response(self, key: str, model: str, response: dict[str, Any]) -> None:
        return None


def grade_on_node(
    units: Sequence[RemoteGrade], use_cache: bool
) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, Any]]]]:
    """The Ray task: a batch of grades made here, as JSON, and the new replies they cost."""
    return asyncio.run(_grade_on_node(units, use_cache))


async def _grade_on_node(
    units: Sequence[RemoteGrade], use_cache: bool
) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, Any]]]]:
    from lhbench.models import ModelPool

    seeds = {k: doc for u in units for k, doc in u.cached.items()}
    pool = ModelPool(_NodeCache(seeds) if use_cache else None)
    async with pool.session():
        judges: dict[tuple[str, int, int], RubricJudge] = {}

        async def one(u: RemoteGrade) -> Grade:
            jkey = (u.judge_key, u.retries, u.budget_tokens)
            judge = judges.get(jkey)
            if judge is None:
                spec = ModelSpec.model_validate(u.spec)
                judge = RubricJudge(
                    pool.get(spec), spec, retries=u.retries, budget_tokens=u.budget_tokens
                )
                if judge.identity.key != u.judge_key:
                    raise RuntimeError(
                        f"judge {spec.ref!r} has another identity on this node than on the "
                        "machine that sent it: install the same lhbench version on every node"
                    )
                judges[jkey] = judge
            tier = u.rubric.tier(u.tier)
            with cache_refresh(u.refresh):
                return await judge.grade(
                    Evidence(run=u.run, task=None),
                    u.rubric,
                    tier,
                    repeat=u.repeat,
                    request=u.request,
                    key=u.key,
                )

        grades = await asyncio.gather(*(one(u) for u in units))
        rows = pool.replies.drain() if pool.replies is not None else []
    return (
        [g.model_dump(mode="json") for g in grades],
        [(r.key, r.model, r.response) for r in rows],
    )


class _RemoteBatches:
    """Grading units gathered into batches, each sent as one task to the executor.

    A batch leaves when it is full or ``linger`` seconds after its first unit arrived; the
    replies a batch cost are put into its judges' response cache (written with the grades).
    """

    def __init__(
        self, executor: RemoteExecutor, *, size: int = DEFAULT_REMOTE_BATCH, linger: float = 0.05
    ) -> None:
        if size < 1:
            raise ValueError("a batch holds at least one grading unit")
        self.executor = executor
        self.size = size
        self.linger = linger
        self._queue: list[tuple[RemoteGrade, ReplyCache | None, asyncio.Future[Grade]]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def grade(self, item: RemoteGrade, cache: ReplyCache | None) -> Grade:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Grade] = loop.create_future()
        self._queue.append((item, cache, fut))
        if len(self._queue) >= self.size:
            self._send()
        elif self._timer is None:
            self._timer = loop.call_later(self.linger, self._send)
        return await fut

    def _send(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        batch, self._queue = self._queue, []
        if batch:
            task = asyncio.ensure_future(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(
        self, batch: list[tuple[RemoteGrade, ReplyCache | None, asyncio.Future[Grade]]]
    ) -> None:
        caches = {id(c): c for _, c, _ in batch if c is not None}
        try:
            docs, rows = await self.executor.call(
                grade_on_node, [item for item, _, _ in batch], bool(caches)
            )
            grades = [Grade.model_validate(d) for d in docs]
        except Exception as exc:  # a lost worker Ray gave up on, or a node's error
            for _, _, fut in batch:
                if not fut.done():
                    fut.set_exception(exc)
            return
        for key, model, doc in rows:
            reply = Reply.from_doc(doc)
            if reply is not None:
                for cache in caches.values():
                    cache.put(key, model, reply)
        for (_, _, fut), grade in zip(batch, grades, strict=True):
            if not fut.done():
                fut.set_result(grade)


class GradeJob:
    """Every run × judge × repeat on one rubric tier (the Job protocol).

    ``remote``: grade on that executor's workers (Ray), ``batch`` units per task.
    ``complete``: ids of further runs of the job whose every grade is stored ok
    (:meth:`Store.grade_complete_runs`, asked by the caller): counted by :meth:`plan_gaps`
    as stored, never planned, no ``Run`` needed for them; ``runs`` then holds the others.
    """

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
        remote: RemoteExecutor | None = None,
        batch: int = DEFAULT_REMOTE_BATCH,
        complete: Iterable[str] | None = None,
    ) -> None:
        self.store = store
        self.runs = list(runs)
        self._complete = None if complete is None else set(complete) - {r.id for r in self.runs}
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
        self._remote = _RemoteBatches(remote, size=batch) if remote is not None else None
        self._limits: dict[str, asyncio.Semaphore] = {}

    def plan(self) -> list[Unit[_GradeUnit]]:
        """Run-major, so a run's evidence is loaded once for all its judges and repeats."""
        self._planned = self._units(self.runs)
        return self._planned

    def _units(self, runs: Sequence[Run]) -> list[Unit[_GradeUnit]]:
        out = []
        for run in runs:
            for judge in self.judges:
                for k in range(self.repeats):
                    key = judge.key(GradeItem(run, self.rubric, self.tier, k))
                    label = f"{run.id} × {judge.identity.label}" + (f" #{k}" if k else "")
                    out.append(Unit(key, label, _GradeUnit(run, judge, k)))
        return out

    def plan_gaps(self) -> Gaps[_GradeUnit]:
        """The plan without the runs whose every grade is stored ok (one GROUP BY finds them).

        Units and keys are built for the other runs only, and their stored states looked up
        by key as :meth:`stored` does: a job over a store holding all its grades builds
        none. The same keys, states and counts as :meth:`plan` then :meth:`stored`.
        """
        judge_keys = list(dict.fromkeys(j.identity.key for j in self.judges))
        runs = list({r.id: r for r in self.runs}.values())
        total = len(runs)
        if self._complete is not None:  # the caller found them: the other runs are the gaps
            complete: set[str] = set()
            total += len(self._complete)
        else:
            complete = self.store.grade_complete_runs(
                rubric_hash=self.rubric.content_hash,
                tier=self.tier.kind.value,
                judge_keys=judge_keys,
                repeats=self.repeats,
            )
        self._planned = self._units([r for r in runs if r.id not in complete])
        states = self.stored([u.key for u in self._planned]) if self._planned else {}
        return Gaps(total * len(judge_keys) * self.repeats, self._planned, states)

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
        if self._remote is not None:
            return await self._run_remote(unit, prepared)
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

    async def _run_remote(self, unit: Unit[_GradeUnit], prepared: _PreparedGrade | None) -> Grade:
        """One grade made on a worker: the unit's request and stored reply travel with it."""
        assert self._remote is not None
        u = unit.payload
        if prepared is None:  # not prepared ahead (a final failure re-asked)
            evidence = await self.evidence.get(u.run)
            request = u.judge.request(evidence, self.rubric, self.tier, repeat=u.repeat)
        else:
            request = prepared.request
        refresh = cache_refreshing()
        cached: dict[str, dict[str, Any]] = {}
        cache = u.judge.client.cache
        if cache is not None and not refresh:
            reply = await cache.lookup(request.key)
            if reply is not None:
                cached[request.key] = reply.to_doc()
        spec = u.judge.spec
        pinned = spec.model_copy(update={"base_url": spec.endpoint})
        # an endpoint's limit holds across the workers: its units in flight, one call each
        limit = self._limits.get(spec.pool_key)
        if limit is None:
            limit = self._limits[spec.pool_key] = asyncio.Semaphore(spec.max_concurrency)
        async with limit:
            return await self._remote.grade(
                RemoteGrade(
                    spec=pinned.model_dump(mode="json"),
                    retries=u.judge.retries,
                    budget_tokens=u.judge.budget_tokens,
                    judge_key=u.judge.identity.key,
                    run=u.run,
                    rubric=self.rubric,
                    tier=self.tier.kind.value,
                    repeat=u.repeat,
                    key=unit.key,
                    request=request,
                    refresh=refresh,
                    cached=cached,
                ),
                cache,
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


# --- what a grade job's outcome prints, from the grades' plain columns --------------------


@dataclass(frozen=True)
class RunFigures:
    """One run's grades on the graded tier: its panel score, and what they failed and cost."""

    score: RunTierScore | None
    failed: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0


#: one run's figures as plain values: judge label -> score (empty: none scored), panel
#: mean and variance (NaN: none scored), failed grades, cost, input and output tokens
RunFiguresRow = tuple[dict[str, float], float, float, int, float, int, int]


class RunFiguresTable(Mapping[str, RunFigures]):
    """Run id -> :class:`RunFigures`, each made when asked, from per-run columns.

    What :func:`panel_figures` returns: ``lhbench judge`` reads every run's figures as
    plain values (:meth:`row`), so 67,000 runs cost no ``RunFigures`` and
    ``RunTierScore`` objects. Runs with the same judge scores share one score.
    """

    def __init__(
        self,
        index: dict[str, int],
        scores: Sequence[RunTierScore | None],
        score_of: Sequence[int],
        spent: Sequence[tuple[int, float, int, int]],
    ) -> None:
        """Figures of the runs ``index`` numbers.

        ``index``: run id -> its position in ``score_of`` (its score's in ``scores``) and
        in ``spent`` (failed, cost, input and output tokens).
        """
        self._index = index
        self._scores = scores
        self._score_of = score_of
        self._spent = spent

    def __getitem__(self, run_id: str) -> RunFigures:
        i = self._index[run_id]
        s = self._scores[self._score_of[i]]
        score = None if s is None else RunTierScore(run_id, s.judge_scores, {}, s.mean, s.variance)
        return RunFigures(score, *self._spent[i])

    def __iter__(self) -> Iterator[str]:
        return iter(self._index)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, run_id: object) -> bool:
        return run_id in self._index

    def row(self, run_id: str) -> RunFiguresRow | None:
        """The run's figures as plain values (None: no grade of it); judge dicts shared."""
        i = self._index.get(run_id)
        if i is None:
            return None
        s = self._scores[self._score_of[i]]
        if s is None:
            return ({}, math.nan, math.nan, *self._spent[i])
        return (s.judge_scores, s.mean, s.variance, *self._spent[i])


@dataclass(frozen=True)
class PanelFigures:
    """A grade job's stored grades summed per run (``lhbench judge``'s table and JSON).

    ``runs``: run id -> its figures (runs with no grade are absent); ``ok_grades``: grades
    stored ok; ``noise_floor``: per judge label, the mean over runs of the SD of its own
    repeated tier scores (runs graded once are left out).
    """

    runs: Mapping[str, RunFigures]
    ok_grades: int
    noise_floor: dict[str, float]

    def run_row(self, run_id: str) -> RunFiguresRow | None:
        """A run's figures as plain values (:data:`RunFiguresRow`; None: no grade of it)."""
        if isinstance(self.runs, RunFiguresTable):
            return self.runs.row(run_id)
        fig = self.runs.get(run_id)
        if fig is None:
            return None
        sc = fig.score
        spent = (fig.failed, fig.cost_usd, fig.input_tokens, fig.output_tokens)
        if sc is None:
            return ({}, math.nan, math.nan, *spent)
        return (sc.judge_scores, sc.mean, sc.variance, *spent)


def _distinct_rows(matrix: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
    """The distinct rows of a float matrix (NaN equal to NaN) and each row's one."""
    flat = np.ascontiguousarray(matrix).view(np.dtype((np.void, matrix.itemsize * matrix.shape[1])))
    _, first, inverse = np.unique(flat.ravel(), return_index=True, return_inverse=True)
    return matrix[first], inverse.ravel()


def _bincount(
    group: NDArray[np.intp], weights: NDArray[np.float64], size: int
) -> NDArray[np.float64]:
    """Per group, its weights added in order (the float array numpy's typing calls ints)."""
    return np.asarray(np.bincount(group, weights=weights, minlength=size), dtype=np.float64)


def _exact_sums(
    group: NDArray[np.intp], values: NDArray[np.float64], count: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per group: ``math.fsum`` of its values and of their squares.

    A sum of one or two floats is rounded once whatever the method, so numpy's sum is
    fsum's there; a group of three or more (a judge repeated three times) is summed by fsum.
    """
    total = _bincount(group, values, count.size)
    total_sq = _bincount(group, values * values, count.size)
    many = np.flatnonzero(count > 2)
    if many.size:
        order = np.argsort(group, kind="stable")
        starts = np.concatenate(([0], np.cumsum(count)))
        for g in many.tolist():
            vals = values[order[starts[g] : starts[g + 1]]].tolist()
            total[g] = math.fsum(vals)
            total_sq[g] = math.fsum(v * v for v in vals)
    return total, total_sq


def panel_figures(
    rows: Iterable[PanelGradeRow], identities: Mapping[str, JudgeIdentity]
) -> PanelFigures:
    """The figures of a job's grades, from their rows (:meth:`Store.panel_grade_rows`).

    The same figures :func:`~lhbench.judges.panel_scores` and
    :func:`~lhbench.judges.noise_floor` give from the ``Grade`` objects (a judge's repeats
    averaged, then :func:`~lhbench.judges.panel_score`; the noise floor from
    :func:`~lhbench.judges.repeat_sd`), without a document read: ``identities`` (judge key
    -> identity, the panel's) names the judges as those name them, judges listed in panel
    order; grades of other judges count as spent, not scored.

    Summed as columns, as the report's :class:`~lhbench.judges.PanelScoreTable` is: per run
    and judge with ``bincount`` (exact where a Python loop's sum is: see
    :func:`_exact_sums`), and :func:`~lhbench.judges.panel_score` once per distinct row of
    judge scores (a panel's runs share a few thousand), not once per run.
    """
    got = rows if isinstance(rows, list) else list(rows)
    if not got:
        return PanelFigures({}, 0, {})
    n = len(got)
    # a column per field, by C-level maps (``zip(*rows)`` or a generator per field cost
    # seconds at 400,000 rows)
    names = PanelGradeRow._fields
    get = dict(zip(names, map(itemgetter, range(len(names))), strict=True))
    run_ids = list(map(get["run_id"], got))
    scores = list(map(get["tier_score"], got))
    index = dict.fromkeys(run_ids, 0)  # run id -> its position, runs in the order first read
    for pos, run_id in enumerate(index):
        index[run_id] = pos
    run = np.fromiter(map(index.__getitem__, run_ids), np.intp, n)
    n_runs = len(index)
    panel = list(identities)
    column: defaultdict[str, int] = defaultdict(lambda: -1, {k: c for c, k in enumerate(panel)})
    judge = np.fromiter(map(column.__getitem__, map(get["judge_key"], got)), np.intp, n)
    ok = np.fromiter(map(GradeStatus.OK.value.__eq__, map(get["status"], got)), np.bool_, n)
    has_score = np.fromiter(map(is_not, scores, repeat(None)), np.bool_, n)

    def summed(name: str) -> NDArray[np.float64]:
        """A column summed per run in row order (as ``+=`` in a loop would)."""
        return _bincount(run, np.fromiter(map(get[name], got), np.float64, n), n_runs)

    # what the grades spent
    failed = np.bincount(run, weights=(~ok).astype(np.float64), minlength=n_runs)
    cost, spent_in, spent_out = summed("cost_usd"), summed("input_tokens"), summed("output_tokens")
    # the scored grades: one group per (run, judge), a judge's repeats averaged
    chosen = ok & has_score & (judge >= 0)
    values = np.array(scores, dtype=np.float64)[chosen]  # None read as NaN, then left out
    n_judges = max(len(panel), 1)  # a table column even for no panel (every run unscored)
    cell = run[chosen] * n_judges + judge[chosen]
    cells, group, count = np.unique(cell, return_inverse=True, return_counts=True)
    total, total_sq = _exact_sums(group.ravel(), values, count)
    run_of, judge_of = np.divmod(cells, n_judges)
    scored = sorted(set(judge_of.tolist()))
    labels = judge_labels(identities[panel[j]] for j in scored)
    label = [labels.get(k, "") for k in panel] or [""]
    table = np.full((n_runs, n_judges), np.nan)
    table[run_of, judge_of] = total / count
    distinct, which = _distinct_rows(table)
    made: list[RunTierScore | None] = []
    for row in distinct.tolist():
        judge_scores = {label[j]: v for j, v in enumerate(row) if not math.isnan(v)}
        made.append(panel_score("", judge_scores) if judge_scores else None)
    spent = list(
        zip(
            [int(f) for f in failed.tolist()],
            cost.tolist(),
            [int(i) for i in spent_in.tolist()],
            [int(o) for o in spent_out.tolist()],
            strict=True,
        )
    )
    runs = RunFiguresTable(index, made, which.tolist(), spent)
    # the noise floor: the SD of a judge's repeats of a run, once per distinct (n, Σ, Σ²)
    repeated = count >= 2
    floor: dict[str, list[float]] = {}
    if repeated.any():
        sums = np.stack(
            [count[repeated].astype(np.float64), total[repeated], total_sq[repeated]], axis=1
        )
        kinds, kind_of = _distinct_rows(sums)
        sd = np.array([repeat_sd(int(k), s, sq) for k, s, sq in kinds.tolist()])[kind_of]
        for j, v in zip(judge_of[repeated].tolist(), sd.tolist(), strict=True):
            floor.setdefault(label[j], []).append(v)
    ok_grades = int(ok.sum())
    return PanelFigures(runs, ok_grades, {j: statistics.fmean(v) for j, v in sorted(floor.items())})
