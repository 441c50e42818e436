"""The Python API: lhbench's jobs as functions, the one way in for scripts, notebooks and the CLI.

Each job is an ``async`` function, ``NAME_async``, with a synchronous twin ``NAME`` (as
Inspect AI has ``eval_async`` and ``eval``): ``run_agents``/``run_agents_async``,
``grade``, ``verify``, ``import_transcripts``, ``judge_states``, ``report`` and
``export_inspect``. ``lhbench run``, ``judge``, ``verify``, ``import``, ``aj run``,
``report`` and ``export inspect`` parse their flags and call these same functions, so a
notebook and the command line store the same runs under the same keys, skip the same
stored work, resume the same interrupted work, and get the same outcome back.

A function's parameters are its options class's fields (:class:`RunOptions`,
:class:`GradeOptions`, … in :mod:`lhbench.jobs.options`, declared once); every one takes
``store`` (default: the configured store, opened and closed for the call), ``settings``
(default: ``lhbench.toml`` and ``LHBENCH_*``, as the CLI reads them) and ``progress``.
Each returns one outcome (:class:`RunOutcome`, :class:`GradeOutcome`, …): the job's
summary counts and the stored runs, grades, labels or verdicts it is about. The sync
twin works inside a running event loop too (a notebook cell).

Example:
    >>> import lhbench
    >>> store = lhbench.open_store("sqlite:///my-eval.db")
    >>> runs = lhbench.run_agents("lhbench-samples", model="openai:gpt-5.2", store=store).runs
    >>> grades = lhbench.grade("lhbench-samples", panel=["openai:gpt-5.2"], store=store).grades
    >>> board = lhbench.report(store=store).table("leaderboard")
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar

from lhbench.errors import ConfigError, LhbenchError
from lhbench.jobs.options import (
    ExportOptions,
    GradeOptions,
    ImportOptions,
    JobPlace,
    JudgeOptions,
    ReportOptions,
    RunOptions,
    VerifyOptions,
)

# Only the options (plain dataclasses) load with this module: each job imports its stack
# (the store, the harness, the judges, the reporting) when it is called.
if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.jobs.grading import PanelFigures
    from lhbench.jobs.imports import ImportResult
    from lhbench.jobs.packs import LoadedPack
    from lhbench.jobs.runner import JobSummary
    from lhbench.reporting import ReportData, ReportFiles
    from lhbench.reporting.inspect_log import ExportedLog
    from lhbench.schema import Grade, Label, PreferenceVote, Rubric, Run, Tier, Verdict
    from lhbench.store import GradeRunRow, PanelGradeRow, Store

__all__ = [
    "ExportOptions",
    "ExportOutcome",
    "GradeOptions",
    "GradeOutcome",
    "ImportOptions",
    "ImportOutcome",
    "JudgeOptions",
    "JudgeOutcome",
    "Report",
    "ReportOptions",
    "RunOptions",
    "RunOutcome",
    "VerifyOptions",
    "VerifyOutcome",
    "export_inspect",
    "export_inspect_async",
    "grade",
    "grade_async",
    "import_transcripts",
    "import_transcripts_async",
    "judge_states",
    "judge_states_async",
    "open_store",
    "report",
    "report_async",
    "run_agents",
    "run_agents_async",
    "verify",
    "verify_async",
]

P = ParamSpec("P")
Opts = TypeVar("Opts", bound=JobPlace)
T = TypeVar("T")


class _Opaque(Generic[T]):
    """An outcome that ``repr`` does not walk.

    ``asyncio.run`` gives SIGINT back by ``signal.getsignal``, which tries its handler (a
    partial holding the main task) as a ``Handlers`` enum: the ValueError's message is the
    handler's repr, so the task's, so the outcome's. A grade outcome of 40,000 ``Grade``
    objects took 12 s per repr, twice per call.
    """

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __repr__(self) -> str:
        return "<outcome>"


async def _opaque(coro: Coroutine[Any, Any, T]) -> _Opaque[T]:
    return _Opaque(await coro)


def _run_to_end(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to the end, also from inside a running event loop (a notebook cell)."""
    import asyncio  # on the first call: importing the face stays cheap
    import threading

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(_opaque(coro)).value
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(_opaque(coro)).value
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=target, name="lhbench-api")
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


@contextlib.contextmanager
def _store(store: Store | None, settings: Settings) -> Iterator[Store]:
    if store is not None:
        yield store
        return
    from lhbench.store import Store

    own = Store.open(settings.database_url)
    try:
        yield own
    finally:
        own.close()


_PLACE = ("store", "settings", "progress")
# a job's body: its options, the open store and the settings -> its outcome
_Body = Callable[[Opts, "Store", "Settings"], Awaitable[T]]


def _args_doc(options: Callable[..., Any]) -> str:
    # the options' "Attributes:" are the function's "Args:" (declared once, in the class)
    def block(doc: str | None) -> list[str]:
        lines = (doc or "").splitlines()
        at = [i for i, line in enumerate(lines) if line.strip() == "Attributes:"]
        return lines[at[0] + 1 :] if at else []

    rows = block(options.__doc__) + block(JobPlace.__doc__)
    return "    Args:\n" + "\n".join(r for r in rows if r.strip()) + "\n"


def _job(
    options: Callable[P, Opts],
) -> Callable[[_Body[Opts, T]], Callable[P, Coroutine[Any, Any, T]]]:
    """The public async function of a job: its parameters are ``options``' fields.

    The call builds the options (which check themselves), opens the store when none is
    given, and runs ``body`` with the options, the store and the settings.
    """

    def wrap(body: _Body[Opts, T]) -> Callable[P, Coroutine[Any, Any, T]]:
        async def call(*args: P.args, **kwargs: P.kwargs) -> T:
            from lhbench.config import load_settings

            opts = options(*args, **kwargs)
            settings = opts.settings or load_settings()
            with _store(opts.store, settings) as store:
                return await body(opts, store, settings)

        functools.update_wrapper(call, body)
        del call.__wrapped__  # type: ignore[attr-defined]  # its signature is the options'
        params = list(inspect.signature(options).parameters.values())
        place = [p for p in params if p.name in _PLACE]  # where it runs: last
        call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [p for p in params if p.name not in _PLACE] + place,
            return_annotation=inspect.signature(body).return_annotation,
        )
        call.__doc__ = f"{body.__doc__}\n{_args_doc(options)}"
        return call

    return wrap


def _sync(fn: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The synchronous twin of a public async function (same parameters, same outcome)."""

    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return _run_to_end(fn(*args, **kwargs))

    functools.update_wrapper(call, fn)
    del call.__wrapped__  # type: ignore[attr-defined]
    call.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    call.__name__ = call.__qualname__ = fn.__name__.removesuffix("_async")
    call.__doc__ = (fn.__doc__ or "").replace(
        "\n", f"\n\n    Synchronous; ``{fn.__name__}`` is the same job to ``await``.\n", 1
    )
    return call


def open_store(url: str | None = None, *, settings: Settings | None = None) -> Store:
    """Open (and create or migrate) the store at ``url``, or the configured one.

    The caller closes it (``store.close()``, or use it as a context manager).
    """
    from lhbench.config import load_settings
    from lhbench.store import Store

    settings = settings or load_settings()
    return Store.open(url or settings.database_url)


# --- running agents ----------------------------------------------------------------------


@dataclass
class RunOutcome:
    """What running a harness on a pack did, and the runs it is about.

    Attributes:
        summary: The run job's counts; ``summary.results`` are this call's runs with their
            trajectories (stored runs skipped are not among them).
        verify: The checks' job on the runs that ended (None with ``verify=False``).
        pack: The pack run.
        model: The agent's model string.
        runs: Every run of the call's plan as stored (skipped ones included), in plan order.
        labels: Their labels (the tasks' checks).
    """

    summary: JobSummary[Any]
    verify: JobSummary[Any] | None
    pack: LoadedPack
    model: str
    runs: list[Run] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


@_job(RunOptions)
async def run_agents_async(o: RunOptions, store: Store, settings: Settings) -> RunOutcome:
    """Run a harness on a pack's tasks (``lhbench run``); finished runs are skipped.

    Interrupted runs resume; every run that ends is verified by its task's checks. On Ray
    (``executor="ray"``) each run and its workspace checks run together on a worker node.
    """
    from lhbench.harness import HARNESSES, LocalExecutor, make_executor
    from lhbench.harness.cli_agents import CLI_AGENTS, cli_binary
    from lhbench.jobs.agents import RunAgentsJob, specs_for
    from lhbench.jobs.common import label_runs, run_with_progress, sandbox_for
    from lhbench.jobs.packs import check_versions, resolve_pack
    from lhbench.jobs.verification import check_outcome_on_node
    from lhbench.models import resolve_model

    if o.harness not in HARNESSES:
        raise ConfigError(f"--harness {o.harness!r}: expected one of {', '.join(HARNESSES)}")
    if o.harness in CLI_AGENTS:
        cli_binary(CLI_AGENTS[o.harness])  # not installed: one clear error, not N crashed runs
    loaded = resolve_pack(o.pack, settings, store)
    chosen = list(o.tasks or ()) or [t.id for t in loaded.pack.tasks]
    unknown = sorted(set(chosen) - {t.id for t in loaded.pack.tasks})
    if unknown:
        raise ConfigError(
            f"--tasks: not in pack {loaded.pack.id}: {', '.join(unknown)} "
            f"(it has {', '.join(t.id for t in loaded.pack.tasks)})"
        )
    run_versions = check_versions(
        loaded.pack, dict(o.versions or {}), [loaded.pack.task(t) for t in chosen]
    )
    spec = resolve_model(o.model, settings.models)
    sandbox = sandbox_for(settings)  # refuses here, before any run, when none works
    specs = specs_for(
        loaded,
        tasks=chosen,
        harness=o.harness,
        model=spec.model_dump(mode="json"),
        versions=run_versions,
        repeats=o.repeats,
        home=settings.home,
        sandbox=settings.sandbox if sandbox.name != "none" else "none",
        unsafe_no_sandbox=settings.unsafe_no_sandbox,
    )
    ex = (
        LocalExecutor(model=o.agent_model)
        if o.agent_model is not None
        else make_executor(
            o.executor,
            parallel=o.parallel,
            address=o.ray_address or (settings.ray_address if o.executor == "ray" else None),
            checks=check_outcome_on_node if o.verify else None,
        )
    )
    async with ex:
        job = RunAgentsJob(store, loaded, specs, ex)
        summary = await run_with_progress(
            job,
            o.progress,
            "running",
            concurrency=o.parallel,
            retry_errors=o.retry_errors,
            batch_size=1,
            flush_seconds=0.0,
        )
    ids = [u.key for u in job.plan()]
    stored = {r.id: r for r in store.list_runs(pack_id=loaded.pack.id)}
    runs = [stored[i] for i in ids if i in stored]
    checked = None
    if o.verify:
        checked = await label_runs(store, settings, loaded, runs, progress=o.progress)
    labels = store.list_labels(run_ids=[r.id for r in runs])
    return RunOutcome(summary, checked, loaded, spec.model_string, runs, labels)


run_agents = _sync(run_agents_async)


# --- grading -----------------------------------------------------------------------------


@dataclass
class GradeOutcome:
    """What grading did, what it graded with, and the grades (or votes) of its runs.

    Attributes:
        summary: The grading job's counts (``summary.results``: this call's judgements).
        rubric: The rubric graded on.
        tier: Its tier.
        runs: The runs graded as ``Run`` models; with ``with_grades=False`` (rubric
            grading) only those with a grade not stored ok when the job planned (the
            others are in ``graded`` alone: no ``Run`` is built for a fully graded run).
        graded: Every run in scope as plain columns (id, task, harness, model, status), in
            the pack's order: what ``lhbench judge`` prints a row for.
        judges: The panel's labels.
        grades: Every grade of the plan as stored (rubric grading; empty with
            ``with_grades=False``).
        figures: The plan's stored grades summed per run: panel scores, failures, cost
            (rubric grading; from the grades' plain columns, no document read).
        votes: The pairwise judges' votes on these runs (``pairwise=True``).
        infra_skipped: Runs that failed for infrastructure: not graded (no score).
    """

    summary: JobSummary[Any]
    rubric: Rubric
    tier: Tier
    runs: list[Run]
    judges: list[str]
    grades: list[Grade] = field(default_factory=list)
    votes: list[PreferenceVote] = field(default_factory=list)
    infra_skipped: list[Run] = field(default_factory=list)
    figures: PanelFigures | None = None
    graded: list[GradeRunRow] = field(default_factory=list)


@_job(GradeOptions)
async def grade_async(o: GradeOptions, store: Store, settings: Settings) -> GradeOutcome:
    """Grade a pack's stored runs with a judge panel, or pairwise (``lhbench judge``).

    A grade is one (run, judge config, rubric content, tier, repeat): a call again does
    only what is missing. ``panel`` defaults to ``judge_panel``.
    """
    from lhbench.jobs.common import GRADABLE, panel_specs, run_with_progress
    from lhbench.jobs.grading import GradeJob, PairwiseJob, panel_figures
    from lhbench.jobs.packs import find_rubric, pack_for_id, resolve_pack
    from lhbench.judges import PairwiseJudge, RubricJudge
    from lhbench.models import ModelPool
    from lhbench.packs import bundled_pack_dirs, load_pack
    from lhbench.store import complete_runs

    specs = panel_specs(o.panel, settings)
    loaded = pack_for_id(store, settings, o.pack)
    if loaded is None:
        try:
            loaded = resolve_pack(o.pack, settings, store)
        except LhbenchError:
            loaded = None
    pack_id = loaded.pack.id if loaded else o.pack
    # with no objects asked for, a rubric job reads its runs as plain rows and builds a Run
    # only for a run with a gap (67,000 Run models cost seconds at scale)
    lean = not o.with_grades and not o.pairwise
    runs: list[Any] = [
        r
        for r in (store.pack_run_facts(pack_id) if lean else store.list_pack_runs(pack_id))
        if r.status in GRADABLE
    ]
    if o.run_ids:
        wanted = set(o.run_ids)
        missing = wanted - {r.id for r in runs}
        if missing:
            raise LhbenchError(f"--runs: not in pack {pack_id!r}: {', '.join(sorted(missing))}")
        runs = [r for r in runs if r.id in wanted]
    # a run that failed for infrastructure is no score: never graded, never compared
    infra = [r for r in runs if r.infrastructure_failure]
    runs = [r for r in runs if not r.infrastructure_failure]
    if lean and infra:
        infra = store.pack_runs_in(pack_id, [r.id for r in infra])
    if not runs:
        why = (
            f" ({len(infra)} failed for infrastructure and are not graded: run them again)"
            if infra
            else ""
        )
        raise LhbenchError(
            f"no finished runs of pack {pack_id!r} in the store{why}: `lhbench run` or "
            "`lhbench import --pack` makes some"
        )
    library = [load_pack(d) for d in bundled_pack_dirs()]
    rub, tier_obj = find_rubric(loaded.pack if loaded else None, o.rubric, o.tier, runs, library)
    tasks = {t.id: t for t in loaded.pack.tasks} if loaded else {}
    if o.executor == "ray" and (o.pairwise or o.judge_models):
        raise ConfigError(
            "--executor ray grades rubric tiers on Ray workers; pairwise comparisons (and "
            "substituted test models) run here: drop --executor ray"
        )
    remote = None
    if o.executor != "local" or o.ray_address is not None:  # the harness loads only for Ray
        from lhbench.harness import RayExecutor, make_executor

        ex = make_executor(
            o.executor,
            parallel=os.cpu_count() or 2,
            address=o.ray_address or (settings.ray_address if o.executor == "ray" else None),
        )
        remote = ex if isinstance(ex, RayExecutor) else None
    looked_up = 0.0  # seconds finding the runs whose grades are all stored (lean)
    pool = ModelPool(store if o.use_cache else None)
    wrapped = dict(o.judge_models or {})
    async with pool.session(), contextlib.AsyncExitStack() as stack:
        if remote is not None:
            await stack.enter_async_context(remote)
        if o.pairwise:
            pjudges = [PairwiseJudge(pool.get(s, wrapped=wrapped.get(s.ref)), s) for s in specs]
            job: Any = PairwiseJob(store, runs, rub, tier_obj, pjudges, tasks=tasks)
            labels = [j.identity.label for j in pjudges]
        else:
            rjudges = [RubricJudge(pool.get(s, wrapped=wrapped.get(s.ref)), s) for s in specs]
            complete = None
            models = runs
            if lean:  # the runs with every grade stored ok are counted, not built
                # part of the job's time: its stored lookup, moved here from the job
                t0 = time.monotonic()
                ids_in = {r.id for r in runs}
                rows = _panel_rows(store, rub, tier_obj, rjudges, o.repeats, pack_id)
                complete = ids_in & complete_runs(rows, len(_judge_keys(rjudges)) * o.repeats)
                models = store.pack_runs_in(pack_id, ids_in - complete)
                looked_up = time.monotonic() - t0
            job = GradeJob(
                store,
                models,
                rub,
                tier_obj,
                rjudges,
                tasks=tasks,
                repeats=o.repeats,
                remote=remote,
                complete=complete,
            )
            labels = [j.identity.label for j in rjudges]
        summary = await run_with_progress(
            job,
            o.progress,
            "comparing" if o.pairwise else "grading",
            concurrency=o.concurrency,
            retry_errors=o.retry_errors,
        )
    summary.seconds += looked_up
    graded = runs if lean else [_run_fact(r) for r in runs]
    if lean:
        runs = job.runs
    out = GradeOutcome(summary, rub, tier_obj, runs, labels, infra_skipped=infra, graded=graded)
    ids = {r.id for r in graded}
    if o.pairwise:
        out.votes = [
            v
            for v in store.list_votes()
            if v.rater_kind != "human" and (v.run_a in ids or v.run_b in ids)
        ]
    else:
        # the plan's grades are those of its runs, panel, rubric content, tier and repeats;
        # their figures come from plain columns (a million grades as Grade objects cost
        # minutes and gigabytes), the Grade objects only when asked for
        panel = {j.identity.key: j.identity for j in job.judges}
        if not lean or summary.results:  # read before the job, and nothing written since
            rows = _panel_rows(store, rub, tier_obj, job.judges, o.repeats, pack_id)
        out.figures = panel_figures((r for r in rows if r.run_id in ids), panel)
        if o.with_grades:
            keys = {u.key for u in job.plan()}
            # only this rubric's tier (a run's grades on other tiers and rubrics are not read)
            stored = store.list_grades(rubric_id=rub.id, tier=tier_obj.kind.value, run_ids=ids)
            out.grades = [g for g in stored if g.key in keys]
    return out


def _judge_keys(judges: Sequence[Any]) -> list[str]:
    """A panel's distinct judge keys, in panel order."""
    return list(dict.fromkeys(j.identity.key for j in judges))


def _panel_rows(
    store: Store, rub: Rubric, tier: Tier, judges: Sequence[Any], repeats: int, pack_id: str
) -> list[PanelGradeRow]:
    """The panel's grades of a pack on this rubric and tier, as plain rows."""
    return store.panel_grade_rows(
        rubric_id=rub.id,
        rubric_hash=rub.content_hash,
        tier=tier.kind.value,
        judge_keys=_judge_keys(judges),
        repeats=repeats,
        pack_id=pack_id,
    )


def _run_fact(run: Run) -> GradeRunRow:
    """A run's plain columns (``GradeOutcome.graded``)."""
    from lhbench.store import GradeRunRow

    return GradeRunRow(
        run.id,
        run.task_id,
        run.harness,
        run.model,
        str(run.status),
        None if run.failure_kind is None else str(run.failure_kind),
        run.error,
    )


grade = _sync(grade_async)


# --- verifying ---------------------------------------------------------------------------


@dataclass
class VerifyOutcome:
    """What running the tasks' checks did, per pack, and the labels of the runs checked.

    Attributes:
        packs: (pack id, the checks' job counts), one per pack with runs.
        runs: The runs in scope.
        labels: Their labels, as stored.
    """

    packs: list[tuple[str, JobSummary[Any]]]
    runs: list[Run] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)


@_job(VerifyOptions)
async def verify_async(o: VerifyOptions, store: Store, settings: Settings) -> VerifyOutcome:
    """Label stored runs with their tasks' checks on their final states (``lhbench verify``).

    A kept workspace is the final state of a run lhbench ran; an imported run's state is
    replayed from its trajectory. Checks already run on the same task content are skipped.
    """
    from lhbench.jobs.common import label_runs
    from lhbench.jobs.packs import pack_for_id, resolve_pack

    runs = store.list_runs()
    if o.pack is not None:
        loaded = pack_for_id(store, settings, o.pack) or resolve_pack(o.pack, settings, store)
        runs = [r for r in runs if r.pack_id == loaded.pack.id]
    if o.run_ids:
        runs = [r for r in runs if r.id in set(o.run_ids)]
    out = VerifyOutcome([], runs)
    for pack_id in sorted({r.pack_id for r in runs}):
        loaded_pack = pack_for_id(store, settings, pack_id)
        if loaded_pack is None:
            continue
        mine = [r for r in runs if r.pack_id == pack_id]
        summary = await label_runs(
            store,
            settings,
            loaded_pack,
            mine,
            retry_errors=o.retry_errors,
            progress=o.progress,
        )
        out.packs.append((pack_id, summary))
    out.labels = store.list_labels(run_ids=[r.id for r in runs])
    return out


verify = _sync(verify_async)


# --- importing ---------------------------------------------------------------------------


@dataclass
class ImportOutcome:
    """What importing did: each file's result, the runs, and the checks that followed.

    Attributes:
        summary: The import job's counts.
        files: Each file's result (``error`` says why one could not be read).
        verify: The checks' job (with ``pack`` and ``task``), else None.
        runs: The files' runs as stored (already imported ones included).
        labels: Their labels.
    """

    summary: JobSummary[ImportResult]
    files: list[ImportResult]
    verify: JobSummary[Any] | None
    runs: list[Run] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)

    @property
    def failed(self) -> list[ImportResult]:
        """The files that could not be imported (the others were)."""
        return [f for f in self.files if f.error]


@_job(ImportOptions)
async def import_transcripts_async(
    o: ImportOptions, store: Store, settings: Settings
) -> ImportOutcome:
    """Import transcript files or directories as runs (``lhbench import``).

    Re-importing a file is a no-op. A file that cannot be read is reported in
    ``outcome.failed`` and the others are imported. With ``pack`` and ``task`` the runs
    are checked by the task's verify script on their replayed final state.
    """
    from lhbench.jobs.common import label_runs, run_with_progress
    from lhbench.jobs.imports import ImportJob, collect_files
    from lhbench.jobs.packs import check_versions, pack_for_id, resolve_pack

    loaded: LoadedPack | None = None
    versions = dict(o.versions or {})
    if o.pack is not None:
        loaded = pack_for_id(store, settings, o.pack) or resolve_pack(o.pack, settings, store)
        if o.task is not None and o.task not in {t.id for t in loaded.pack.tasks}:
            raise ConfigError(
                f"--task {o.task!r}: not in pack {loaded.pack.id!r} "
                f"(it has {', '.join(t.id for t in loaded.pack.tasks)})"
            )
        if versions:
            chosen = [loaded.pack.task(o.task)] if o.task else None
            versions = check_versions(loaded.pack, versions, chosen)
    files = collect_files(Path(p) for p in o.paths)
    job = ImportJob(store, files, o, pack=loaded, versions=versions)
    summary = await run_with_progress(job, o.progress, "importing", concurrency=1, batch_size=1)
    results = list(summary.results)
    runs = [store.get_run(rid) for res in results for rid in res.runs]
    checked = None
    if loaded is not None and o.task is not None:
        new = {rid for res in results for rid in res.runs}
        ended = [r for r in store.list_runs(pack_id=loaded.pack.id) if r.id in new]
        if ended:
            checked = await label_runs(store, settings, loaded, ended, progress=o.progress)
    labels = store.list_labels(run_ids=[r.id for r in runs])
    return ImportOutcome(summary, results, checked, runs, labels)


import_transcripts = _sync(import_transcripts_async)


# --- Agent-as-a-Judge --------------------------------------------------------------------


@dataclass
class JudgeOutcome:
    """What Agent-as-a-Judge did on a pack: fixtures stored, runs labelled, verdicts given.

    Attributes:
        fixtures: The fixture job's counts (the pack's trajectories stored as runs).
        verify: The checks' job counts.
        judging: The verdict job's counts (None when ``judge`` is None).
        pack: The pack judged.
        runs: The runs its environment judges.
        labels: Their labels.
        verdicts: The judge's verdicts on them, as stored (stored ones included).
    """

    fixtures: JobSummary[Any]
    verify: JobSummary[Any]
    judging: JobSummary[Any] | None
    pack: LoadedPack
    runs: list[Run] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)


@_job(JudgeOptions)
async def judge_states_async(o: JudgeOptions, store: Store, settings: Settings) -> JudgeOutcome:
    """Agent-as-a-Judge on a pack, whatever its domain (``lhbench aj run``).

    The pack's environment (:func:`~lhbench.jobs.environments.environment_for`) stores its
    fixture trajectories as runs, makes each run's final state, labels it with the task's
    checks there, and builds the judge that gives a verdict on it. ``judge=None`` stops
    after labelling (no model needed). ``postgres_url`` (SQL packs), ``tool_set`` (search
    packs) and ``modality`` (GUI packs) are options of one environment; another refuses
    them before any work.
    """
    from lhbench.jobs.common import aj_judge_spec, label_runs, run_with_progress, sandbox_for
    from lhbench.jobs.environments import environment_context, environment_for, judged_runs
    from lhbench.jobs.packs import resolve_pack
    from lhbench.jobs.verdicts import VerdictJob, store_failure_modes
    from lhbench.models import ModelPool

    spec = aj_judge_spec(o.judge, o.model, settings)
    loaded = resolve_pack(o.pack, settings, store)
    env = environment_for(loaded)
    options = {"postgres_url": o.postgres_url, "tool_set": o.tool_set, "modality": o.modality}
    sandbox = sandbox_for(settings)
    keys: set[str] = set()
    with environment_context(
        env, loaded, settings, sandbox, judge=o.judge, budget=o.budget, options=options
    ) as ctx:
        fixtures = await run_with_progress(
            env.fixtures(store, loaded), o.progress, "fixtures", concurrency=4
        )
        runs = judged_runs(store, env, loaded)
        checked = await label_runs(
            store,
            settings,
            loaded,
            runs,
            progress=o.progress,
            states=env.states(store, loaded, ctx),
            retry_errors=o.retry_errors,
        )
        judging = None
        if spec is not None:
            seen = env.judge_states(store, loaded, ctx)
            pool = ModelPool(store)
            async with pool.session():
                client = pool.get(spec, wrapped=o.judge_model)
                job = VerdictJob(
                    store,
                    runs,
                    seen,
                    await env.verdict_judge(client, spec, ctx, seen, runs),
                    repeats=o.repeats,
                )
                judging = await run_with_progress(
                    job,
                    o.progress,
                    "judging",
                    concurrency=o.concurrency,
                    retry_errors=o.retry_errors,
                )
                keys = {u.key for u in job.plan()}
    store_failure_modes(store, loaded)
    ids = {r.id for r in runs}
    verdicts = [v for r in runs for v in store.list_verdicts(run_id=r.id) if v.key in keys]
    labels = store.list_labels(run_ids=list(ids))
    return JudgeOutcome(fixtures, checked, judging, loaded, runs, labels, verdicts)


judge_states = _sync(judge_states_async)


# --- the report and Inspect logs ---------------------------------------------------------


class Report:
    """The report over the store's current judgements.

    ``table(slug)`` gives one table as a list of dicts (column -> value), ready for
    ``pandas.DataFrame``; ``files`` is where it was written, when ``out`` was given;
    ``notes`` say which judgements were left out (stale ones) and why. The sections are
    computed when first asked for (writing the files computes its own). ``data`` holds
    the grades as facts (``data.grade_facts``: columns and dimension scores), not
    ``Grade`` documents (``data.grades`` is empty): a team's store has a million.
    """

    def __init__(
        self, data: ReportData, options: ReportOptions, files: ReportFiles | None = None
    ) -> None:
        """The report of ``data`` as ``options`` group it."""
        self.data = data
        self.options = options
        self.files = files
        self.notes: list[str] = list(data.excluded.notes())

    @functools.cached_property
    def sections(self) -> list[Any]:
        """The report's sections (tables, plots and their notes), in order."""
        from lhbench.reporting import build_sections

        o = self.options
        return build_sections(
            self.data, by=list(o.by), ablation=o.ablation, baseline=o.baseline, seed=o.seed
        )

    def tables(self) -> list[str]:
        """The slugs of every table, in report order."""
        return [t.slug for s in self.sections for t in s.tables]

    def table(self, slug: str) -> list[dict[str, Any]]:
        """One table's rows; ``slug`` may be a prefix (``leaderboard`` for the first one)."""
        found = [t for s in self.sections for t in s.tables if t.slug.startswith(slug)]
        if not found:
            raise ConfigError(f"no table {slug!r}; the report has: {', '.join(self.tables())}")
        t = found[0]
        return [dict(zip(t.columns, row, strict=True)) for row in t.rows]


def _report_data(
    store: Store, settings: Settings, include_stale: bool, *, lean: bool = False
) -> ReportData:
    from lhbench.reporting.data import ReportData, configured_panel

    return ReportData.from_store(
        store, include_stale=include_stale, panel=configured_panel(settings), lean=lean
    )


@_job(ReportOptions)
async def report_async(o: ReportOptions, store: Store, settings: Settings) -> Report:
    """The report over the store (``lhbench report``); written to ``out`` when given.

    By default only grades of each rubric's current content by the current judges count;
    ``notes`` say how many were left out.
    """
    from lhbench.reporting import write_report

    # the report's figures read grade facts, not documents (a team's million grades)
    data = _report_data(store, settings, o.include_stale, lean=True)
    files = None
    if o.out is not None:
        files = write_report(
            data,
            Path(o.out),
            by=list(o.by),
            ablation=o.ablation,
            baseline=o.baseline,
            seed=o.seed,
            notes=list(o.notes),
        )
    return Report(data, o, files)


report = _sync(report_async)


@dataclass
class ExportOutcome:
    """The Inspect AI logs written, one per (pack, harness, model, versions) group."""

    logs: list[ExportedLog]

    @property
    def paths(self) -> list[Path]:
        """Every file written."""
        return [p for log in self.logs for p in log.paths]


@_job(ExportOptions)
async def export_inspect_async(o: ExportOptions, store: Store, settings: Settings) -> ExportOutcome:
    """Inspect AI logs of the store's runs (``lhbench export inspect``).

    Samples are runs (id = task, epoch = repeat + 1); scores are the panel mean of the
    current grades per rubric tier, the task's checks and agent-judge verdicts, as in the
    report. Example::

        paths = lhbench.export_inspect("inspect-logs", pack="lhbench-samples").paths
    """
    from lhbench.reporting.inspect_log import export_inspect as write_logs

    if o.pack is not None and o.pack not in {r.pack_id for r in store.list_runs()}:
        raise ConfigError(f"no runs of pack {o.pack!r} in the store")
    data = _report_data(store, settings, o.include_stale)
    formats = tuple(o.formats)
    return ExportOutcome(write_logs(data, Path(o.out), pack=o.pack, formats=formats))  # type: ignore[arg-type]


export_inspect = _sync(export_inspect_async)
