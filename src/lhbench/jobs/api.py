"""The main jobs as functions: what the CLI commands (and a notebook) call.

Each builds its job from the settings, the store and the pack, runs it through
:func:`~lhbench.jobs.runner.run_job`, and returns the summary with what the caller
needs to print. None of them prints.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lhbench.errors import ConfigError, LhbenchError
from lhbench.jobs.imports import ImportJob, ImportResult, collect_files
from lhbench.jobs.packs import LoadedPack, check_versions, find_rubric, pack_for_id, resolve_pack
from lhbench.jobs.runner import JobSummary, run_job
from lhbench.models import ModelSpec, resolve_model
from lhbench.packs import bundled_pack_dirs, load_pack
from lhbench.sandbox import Sandbox, get_sandbox
from lhbench.schema import Grade, Rubric, Run, RunStatus, Tier, TierKind

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.jobs.states import StateProvider
    from lhbench.store import Store

# The agent harness, the environments' states, the judges and the model pool (pydantic-ai)
# load in the jobs that use them: importing transcripts needs none of them.

__all__ = [
    "GradeOutcome",
    "ImportOutcome",
    "RunOutcomeSummary",
    "grade_runs",
    "import_transcripts",
    "judge_states",
    "panel_specs",
    "run_agents",
    "sandbox_for",
    "store_failure_modes",
    "verdict_failure_modes",
    "verify_runs",
]

# Runs still going, or never started, have no trajectory worth grading yet.
_GRADABLE = {s for s in RunStatus} - {RunStatus.RUNNING, RunStatus.PENDING}

ProgressFactory = Any  # Callable[[str], ProgressSink-context-manager] | None


def sandbox_for(settings: Settings) -> Sandbox:
    """The sandbox the settings ask for (raises SandboxUnavailable, naming what to install)."""
    return get_sandbox(
        settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
    )


def panel_specs(refs: Sequence[str] | None, settings: Settings) -> list[ModelSpec]:
    """The judges named (or ``judge_panel``); a clear error when there are none."""
    names = [r.strip() for r in refs or [] if r.strip()] or list(settings.judge_panel)
    if not names:
        raise ConfigError(
            "no judge models configured: pass --panel M1,M2,M3 or set judge_panel in "
            "lhbench.toml (LHBENCH_JUDGE_PANEL); LLM judges are skipped, never faked"
        )
    return [resolve_model(r, settings.models) for r in names]


def aj_judge_spec(judge: str | None, model: str | None, settings: Settings) -> ModelSpec | None:
    """The Agent-as-a-Judge model for ``--judge agent|llm`` (None: label only, no judge).

    Raises:
        ConfigError: an unknown judge kind, or a judge with no model given or configured.
    """
    if judge not in (None, "agent", "llm"):
        raise ConfigError(f"--judge {judge!r}: expected agent or llm")
    if judge is None:
        return None
    ref = model or settings.aj_model
    if not ref:
        raise ConfigError(
            "no judge model: pass --model or set aj_model in lhbench.toml (LHBENCH_AJ_MODEL)"
        )
    return resolve_model(ref, settings.models)


async def _run(job: Any, progress: ProgressFactory, label: str, **kw: Any) -> JobSummary[Any]:
    if progress is None:
        return await run_job(job, **kw)
    with progress(label) as sink:
        return await run_job(job, progress=sink, **kw)


@dataclass
class GradeOutcome:
    """A grading job's summary, what it graded with, and the grades of its runs."""

    summary: JobSummary[Any]
    rubric: Rubric
    tier: Tier
    runs: list[Run]
    judges: list[str]
    grades: list[Grade] = field(default_factory=list)
    # runs that failed for infrastructure: not graded (no score), named by the CLI
    infra_skipped: list[Run] = field(default_factory=list)


async def grade_runs(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    tier: str = "process",
    panel: Sequence[str] | None = None,
    rubric: str | None = None,
    run_ids: Sequence[str] | None = None,
    repeats: int = 1,
    concurrency: int = 32,
    use_cache: bool = True,
    retry_errors: bool = False,
    pairwise: bool = False,
    progress: ProgressFactory = None,
    models: dict[str, Any] | None = None,
    executor: str = "local",
    ray_address: str | None = None,
) -> GradeOutcome:
    """Grade a pack's stored runs with a judge panel (or compare them pairwise).

    Args:
        store: The store.
        settings: Settings (model aliases, ``judge_panel``, ``pack_paths``).
        pack: The pack id (or directory) whose runs are graded.
        tier: process, output or behavior.
        panel: Judge models (aliases or model strings); default ``judge_panel``.
        rubric: Rubric id (default: the tasks' own rubric with that tier).
        run_ids: Only these runs.
        repeats: Grades per run and judge (the judge noise floor needs ≥ 2).
        concurrency: Grades in flight (model calls are further limited per endpoint).
        use_cache: Use the response cache (False: neither read nor written).
        retry_errors: Re-ask grades stored as final failures (parse errors).
        pairwise: Pairwise votes instead of rubric grades.
        progress: Progress-bar factory (``label -> context manager``).
        models: Test hook: model ref -> a pydantic-ai model used instead of the real one.
        executor: local, or ray: rubric grades are made on Ray workers (``ray_address``,
            else the ``ray_address`` setting, else a Ray instance started here) and stored here.
        ray_address: An existing Ray cluster for ``executor="ray"``.
    """
    from lhbench.jobs.grading import GradeJob, PairwiseJob
    from lhbench.judges import PairwiseJudge, RubricJudge
    from lhbench.models import ModelPool

    if tier not in {t.value for t in TierKind}:
        raise ConfigError(f"--tier {tier!r}: expected one of process, output, behavior")
    specs = panel_specs(panel, settings)
    loaded = pack_for_id(store, settings, pack)
    if loaded is None:
        try:
            loaded = resolve_pack(pack, settings, store)
        except LhbenchError:
            loaded = None
    pack_id = loaded.pack.id if loaded else pack
    runs = [r for r in store.list_runs(pack_id=pack_id) if r.status in _GRADABLE]
    if run_ids:
        wanted = set(run_ids)
        missing = wanted - {r.id for r in runs}
        if missing:
            raise LhbenchError(f"--runs: not in pack {pack_id!r}: {', '.join(sorted(missing))}")
        runs = [r for r in runs if r.id in wanted]
    # a run that failed for infrastructure is no score: never graded, never compared
    infra = [r for r in runs if r.infrastructure_failure]
    runs = [r for r in runs if not r.infrastructure_failure]
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
    rub, tier_obj = find_rubric(loaded.pack if loaded else None, rubric, tier, runs, library)
    tasks = {t.id: t for t in loaded.pack.tasks} if loaded else {}
    if executor == "ray" and (pairwise or models):
        raise ConfigError(
            "--executor ray grades rubric tiers on Ray workers; pairwise comparisons (and "
            "substituted test models) run here: drop --executor ray"
        )
    remote = None
    if executor != "local" or ray_address is not None:  # the harness loads only for Ray
        from lhbench.harness import RayExecutor, make_executor

        ex = make_executor(
            executor,
            parallel=os.cpu_count() or 2,
            address=ray_address or (settings.ray_address if executor == "ray" else None),
        )
        remote = ex if isinstance(ex, RayExecutor) else None
    pool = ModelPool(store if use_cache else None)
    async with pool.session(), contextlib.AsyncExitStack() as stack:
        if remote is not None:
            await stack.enter_async_context(remote)
        wrapped = models or {}
        if pairwise:
            pjudges = [PairwiseJudge(pool.get(s, wrapped=wrapped.get(s.ref)), s) for s in specs]
            job: Any = PairwiseJob(store, runs, rub, tier_obj, pjudges, tasks=tasks)
            labels = [j.identity.label for j in pjudges]
        else:
            rjudges = [RubricJudge(pool.get(s, wrapped=wrapped.get(s.ref)), s) for s in specs]
            job = GradeJob(
                store,
                runs,
                rub,
                tier_obj,
                rjudges,
                tasks=tasks,
                repeats=repeats,
                remote=remote,
            )
            labels = [j.identity.label for j in rjudges]
        summary = await _run(
            job,
            progress,
            "comparing" if pairwise else "grading",
            concurrency=concurrency,
            retry_errors=retry_errors,
        )
    out = GradeOutcome(summary, rub, tier_obj, runs, labels, infra_skipped=infra)
    if not pairwise:
        keys = {u.key for u in job.plan()}
        out.grades = [g for g in store.list_grades(run_ids=[r.id for r in runs]) if g.key in keys]
    return out


@dataclass
class RunOutcomeSummary:
    """A run job's summary and the verification that followed it."""

    summary: JobSummary[Any]
    verify: JobSummary[Any] | None
    pack: LoadedPack
    model: str


async def run_agents(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    harness: str,
    model: str,
    tasks: Sequence[str] | None = None,
    repeats: int = 1,
    versions: dict[str, str] | None = None,
    parallel: int = 2,
    executor: str = "local",
    ray_address: str | None = None,
    retry_errors: bool = False,
    verify: bool = True,
    progress: ProgressFactory = None,
    wrapped_model: Any = None,
) -> RunOutcomeSummary:
    """Run a harness on a pack's tasks; finished runs are skipped, interrupted ones resume.

    Every run that ends is then verified (its task's checks on its workspace). On Ray
    (``ray_address``, else the ``ray_address`` setting, else a local instance) each run
    and its workspace checks run together on a worker node.
    """
    from lhbench.harness import HARNESSES, LocalExecutor, make_executor
    from lhbench.harness.cli_agents import CLI_AGENTS, cli_binary
    from lhbench.jobs.agents import RunAgentsJob, specs_for
    from lhbench.jobs.verification import check_outcome_on_node

    if harness not in HARNESSES:
        raise ConfigError(f"--harness {harness!r}: expected one of {', '.join(HARNESSES)}")
    if harness in CLI_AGENTS:
        cli_binary(CLI_AGENTS[harness])  # not installed: one clear error, not N crashed runs
    loaded = resolve_pack(pack, settings, store)
    chosen = list(tasks) if tasks else [t.id for t in loaded.pack.tasks]
    unknown = sorted(set(chosen) - {t.id for t in loaded.pack.tasks})
    if unknown:
        raise ConfigError(
            f"--tasks: not in pack {loaded.pack.id}: {', '.join(unknown)} "
            f"(it has {', '.join(t.id for t in loaded.pack.tasks)})"
        )
    run_versions = check_versions(
        loaded.pack, dict(versions or {}), [loaded.pack.task(t) for t in chosen]
    )
    spec = resolve_model(model, settings.models)
    sandbox = sandbox_for(settings)  # refuses here, before any run, when none works
    specs = specs_for(
        loaded,
        tasks=chosen,
        harness=harness,
        model=spec.model_dump(mode="json"),
        versions=run_versions,
        repeats=repeats,
        home=settings.home,
        sandbox=settings.sandbox if sandbox.name != "none" else "none",
        unsafe_no_sandbox=settings.unsafe_no_sandbox,
    )
    ex = (
        LocalExecutor(model=wrapped_model)
        if wrapped_model is not None
        else make_executor(
            executor,
            parallel=parallel,
            address=ray_address or (settings.ray_address if executor == "ray" else None),
            checks=check_outcome_on_node if verify else None,
        )
    )
    async with ex:
        job = RunAgentsJob(store, loaded, specs, ex)
        summary = await _run(
            job,
            progress,
            "running",
            concurrency=parallel,
            retry_errors=retry_errors,
            batch_size=1,
            flush_seconds=0.0,
        )
    checked = None
    if verify:
        ids = {u.key for u in job.plan()}
        ended = [r for r in store.list_runs(pack_id=loaded.pack.id) if r.id in ids]
        checked = await _verify_pack(store, settings, loaded, ended, progress=progress)
    return RunOutcomeSummary(summary, checked, loaded, spec.model_string)


async def _verify_pack(
    store: Store,
    settings: Settings,
    pack: LoadedPack,
    runs: Sequence[Run],
    *,
    retry_errors: bool = False,
    progress: ProgressFactory = None,
    states: StateProvider | None = None,
) -> JobSummary[Any]:
    """Label runs by their tasks' checks, on the final states the pack's environment makes."""
    from lhbench.jobs.environments import environment_context, environment_for
    from lhbench.jobs.verification import VerifyJob

    # a run that failed for infrastructure is no score: its state is not labelled either
    done = [
        r
        for r in runs
        if r.status not in (RunStatus.RUNNING, RunStatus.PENDING) and not r.infrastructure_failure
    ]
    if states is None:
        env = environment_for(pack)
        with environment_context(env, pack, settings, sandbox_for(settings)) as ctx:
            return await _verify_pack(
                store,
                settings,
                pack,
                [r for r in done if env.judged(r)],
                retry_errors=retry_errors,
                progress=progress,
                states=env.states(store, pack, ctx),
            )
    return await _run(
        VerifyJob(store, done, states),
        progress,
        "verifying",
        concurrency=4,
        retry_errors=retry_errors,
    )


async def verify_runs(
    store: Store,
    settings: Settings,
    *,
    pack: str | None = None,
    run_ids: Sequence[str] | None = None,
    retry_errors: bool = False,
    progress: ProgressFactory = None,
) -> list[tuple[str, JobSummary[Any]]]:
    """Run every stored run's task checks on its final state (one job per pack)."""
    runs = store.list_runs()
    if pack is not None:
        loaded = pack_for_id(store, settings, pack) or resolve_pack(pack, settings, store)
        runs = [r for r in runs if r.pack_id == loaded.pack.id]
    if run_ids:
        runs = [r for r in runs if r.id in set(run_ids)]
    out = []
    for pack_id in sorted({r.pack_id for r in runs}):
        loaded_pack = pack_for_id(store, settings, pack_id)
        if loaded_pack is None:
            continue
        mine = [r for r in runs if r.pack_id == pack_id]
        out.append(
            (
                pack_id,
                await _verify_pack(
                    store, settings, loaded_pack, mine, retry_errors=retry_errors, progress=progress
                ),
            )
        )
    return out


@dataclass
class ImportOutcome:
    """An import job's summary, each file's result, and the verification that followed."""

    summary: JobSummary[ImportResult]
    files: list[ImportResult]
    verify: JobSummary[Any] | None


async def import_transcripts(
    store: Store,
    settings: Settings,
    paths: Sequence[Path],
    *,
    fmt: str = "auto",
    pack: str | None = None,
    task: str | None = None,
    harness: str | None = None,
    model: str | None = None,
    versions: dict[str, str] | None = None,
    strict: bool = False,
    replace: bool = False,
    split_sessions: bool = False,
    progress: ProgressFactory = None,
) -> ImportOutcome:
    """Import transcripts as runs; with ``pack`` and ``task`` they are then verified.

    A file holding several sessions becomes one run (the last session decides its status),
    or one run per session with ``split_sessions``.
    """
    loaded: LoadedPack | None = None
    if task is not None and pack is None:
        raise ConfigError("--task needs --pack (the pack the task belongs to)")
    if pack is not None:
        loaded = pack_for_id(store, settings, pack) or resolve_pack(pack, settings, store)
        if task is not None and task not in {t.id for t in loaded.pack.tasks}:
            raise ConfigError(
                f"--task {task!r}: not in pack {loaded.pack.id!r} "
                f"(it has {', '.join(t.id for t in loaded.pack.tasks)})"
            )
        if versions:
            chosen = [loaded.pack.task(task)] if task else None
            versions = check_versions(loaded.pack, dict(versions), chosen)
    files = collect_files(paths)
    job = ImportJob(
        store,
        files,
        fmt=fmt,
        pack=loaded,
        task=task,
        harness=harness,
        model=model,
        versions=versions,
        strict=strict,
        replace=replace,
        split_sessions=split_sessions,
    )
    summary = await _run(job, progress, "importing", concurrency=1, batch_size=1)
    checked = None
    if loaded is not None and task is not None:
        new = {rid for res in summary.results for rid in res.runs}
        runs = [r for r in store.list_runs(pack_id=loaded.pack.id) if r.id in new]
        if runs:
            checked = await _verify_pack(store, settings, loaded, runs, progress=progress)
    return ImportOutcome(summary, list(summary.results), checked)


@dataclass
class JudgeStatesOutcome:
    """Fixtures stored, runs verified, and verdicts given, for one pack."""

    fixtures: JobSummary[Any]
    verify: JobSummary[Any]
    verdicts: JobSummary[Any] | None
    pack: LoadedPack
    runs: int


async def judge_states(
    store: Store,
    settings: Settings,
    *,
    pack: str,
    judge: str | None = "agent",
    model: str | None = None,
    repeats: int = 1,
    budget: int = 20,
    concurrency: int = 4,
    postgres_url: str | None = None,
    tool_set: str | None = None,
    modality: str | None = None,
    retry_errors: bool = False,
    progress: ProgressFactory = None,
    wrapped_model: Any = None,
) -> JudgeStatesOutcome:
    """Agent-as-a-Judge on a pack, whatever its domain: fixtures, labels, then verdicts.

    The pack's environment (:func:`~lhbench.jobs.environments.environment_for`) stores its
    fixture trajectories as runs, makes each run's final state, labels it with the task's
    checks there, and builds the judge that gives a verdict on it. ``judge=None`` stops
    after labelling (no model needed). ``postgres_url`` (SQL packs), ``tool_set`` (search
    packs: ``state`` or ``state+trajectory``) and ``modality`` (GUI packs: ``screenshot``,
    ``a11y`` or ``both``) are options of one environment; another refuses them.
    """
    from lhbench.jobs.environments import environment_context, environment_for, judged_runs
    from lhbench.jobs.verdicts import VerdictJob
    from lhbench.models import ModelPool

    spec = aj_judge_spec(judge, model, settings)
    loaded = resolve_pack(pack, settings, store)
    env = environment_for(loaded)
    options = {"postgres_url": postgres_url, "tool_set": tool_set, "modality": modality}
    sandbox = sandbox_for(settings)
    with environment_context(
        env, loaded, settings, sandbox, judge=judge, budget=budget, options=options
    ) as ctx:
        fixtures = await _run(env.fixtures(store, loaded), progress, "fixtures", concurrency=4)
        runs = judged_runs(store, env, loaded)
        checked = await _verify_pack(
            store,
            settings,
            loaded,
            runs,
            progress=progress,
            states=env.states(store, loaded, ctx),
            retry_errors=retry_errors,
        )
        verdicts = None
        if spec is not None:
            seen = env.judge_states(store, loaded, ctx)
            pool = ModelPool(store)
            async with pool.session():
                client = pool.get(spec, wrapped=wrapped_model)
                verdicts = await _run(
                    VerdictJob(
                        store,
                        runs,
                        seen,
                        await env.verdict_judge(client, spec, ctx, seen, runs),
                        repeats=repeats,
                    ),
                    progress,
                    "judging",
                    concurrency=concurrency,
                    retry_errors=retry_errors,
                )
    store_failure_modes(store, loaded)
    return JudgeStatesOutcome(fixtures, checked, verdicts, loaded, len(runs))


def verdict_failure_modes(
    store: Store, *, pack_id: str | None = None
) -> dict[str, tuple[str, bool]]:
    """Each wrong agent verdict's failure mode: verdict id -> (mode, whether it is stored).

    A stored tag (a reviewer's, or an earlier rule's) wins; otherwise AJ-Bench's rule
    (:func:`lhbench.stats.aj_modes.failure_mode`) decides (a) or (b) where it can tell, from
    the run's label and its task's environment (the task's own, or its pack's).
    """
    from lhbench.errors import StoreError
    from lhbench.schema import EnvironmentKind
    from lhbench.stats.aj_modes import failure_mode

    labels = {lab.run_id: lab.passed for lab in store.list_labels() if lab.passed is not None}
    runs = {r.id: r for r in store.list_runs(pack_id=pack_id)}
    kinds: dict[tuple[str, str], EnvironmentKind] = {}
    out: dict[str, tuple[str, bool]] = {}
    for v in store.list_verdicts(judge_kind="agent"):
        run = runs.get(v.run_id)
        if run is None or v.run_id not in labels:
            continue
        if v.failure_mode:
            out[v.id] = (v.failure_mode, True)
            continue
        where = (run.pack_hash, run.task_id)
        if where not in kinds:
            task = store.get_task(*where)
            try:
                pack_kind = store.get_pack(run.pack_hash).environment
            except StoreError:
                pack_kind = EnvironmentKind.FILESYSTEM
            kinds[where] = (task.environment.kind if task else None) or pack_kind
        mode = failure_mode(v, bool(labels[v.run_id]), kinds[where].value)
        if mode is not None:
            out[v.id] = (mode, False)
    return out


def store_failure_modes(store: Store, pack: LoadedPack) -> int:
    """Tag the pack's wrong agent verdicts (a)/(b) where the rule can tell; how many tagged.

    A stored tag (a reviewer's, or an earlier rule's) is never overwritten.
    """
    modes = verdict_failure_modes(store, pack_id=pack.pack.id)
    return sum(
        1
        for vid, (mode, stored) in modes.items()
        if not stored and store.set_verdict_failure_mode(vid, mode)
    )
