"""The checks a verify job runs: every one an entry of the checks registry.

The registry (entry-point group ``lhbench.checks``, :func:`lhbench.plugins.check_registry`)
holds the built-ins and the plugins' checks alike, registered the same way::

    [project.entry-points."lhbench.checks"]
    builtin = "lhbench.jobs.checks:BUILTIN_CHECKS"   # verify, hooks, figma, content
    acme = "acme_lhbench:CHECKS"                     # a plugin's

An entry is either a :class:`TaskCheck` (it plans its checks from a task and runs them in
the job's process: the built-ins ``verify`` (the task's verify script), ``hooks`` (its hook
checks), ``figma`` (the Figma-to-code output checks) and ``content`` (the
programmatic-content checks)), or a :class:`~lhbench.plugins.StateCheck` (a named check of a
directory or database, run in the sandbox as verify scripts are; :func:`task_check` makes it
a TaskCheck). A task runs the checks its pack's environment names
(:attr:`~lhbench.jobs.environments.Environment.checks`), then those it names itself in
``environment.checks``; the verify job plans and runs each through this one path.

This module imports nothing heavy at load (the sandboxed state-check runner loads the
registry, so every state check would pay for it).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lhbench._version import __version__
from lhbench.errors import InfrastructureError

if TYPE_CHECKING:
    from lhbench.jobs.packs import LoadedPack
    from lhbench.jobs.states import RunState
    from lhbench.plugins import StateCheck
    from lhbench.sandbox import Sandbox, SandboxSession
    from lhbench.schema import EnvironmentKind, FailureKind, Label, Run, Task
    from lhbench.store import Store

__all__ = [
    "BUILTIN_CHECKS",
    "Check",
    "CheckContext",
    "ContentChecks",
    "FigmaChecks",
    "HookChecks",
    "TaskCheck",
    "VerifyScript",
    "plan_checks",
    "task_check",
    "uses_session",
]


@dataclass(frozen=True)
class Check:
    """One planned check of a task: what it checks with, the label it writes, its hash.

    ``kind`` is the name of the registry entry that planned it and runs it; ``target`` is
    what that entry checks with (a script, a ground-truth directory, the pack, a name).
    """

    target: Path
    source: str
    check_hash: str
    kind: str = "verify"

    def label(
        self,
        run: Run,
        passed: bool | None,
        detail: str,
        error: str | None,
        *,
        kind: FailureKind | None = None,
    ) -> Label:
        """This check's label for ``run`` (undecided when ``passed`` is None)."""
        from lhbench.schema import Label

        return Label(
            run_id=run.id,
            passed=passed,
            source=self.source,
            detail=detail[:2000],
            error=error[:2000] if error else None,
            check_hash=self.check_hash,
            failure_kind=kind,
        )


@dataclass(frozen=True)
class CheckContext:
    """What the verify job gives a check: the store (None on a Ray worker), pack, sandbox."""

    store: Store | None
    pack: LoadedPack
    workdir: Path
    sandbox: Sandbox
    timeout_s: float = 60.0
    #: the run's own long-lived sandbox (see :func:`uses_session`), None where none works
    session: SandboxSession | None = None

    def require_store(self) -> Store:
        """The store, for a check that stores grades or artifacts (it runs with the job)."""
        if self.store is None:
            raise RuntimeError("this check needs the store; it runs where the job runs")
        return self.store


@runtime_checkable
class TaskCheck(Protocol):
    """A registered check kind: plans a task's checks, runs one on a run's final state.

    ``run`` returns the check's label, undecided with the reason when it cannot decide;
    it raises :class:`~lhbench.errors.InfrastructureError` when what it needs is missing
    here (the job stores a retryable label). ``needs_store``: the check stores grades or
    artifacts itself, so it runs where the job runs, never on a Ray worker. A kind that
    runs its check as a sandboxed process may say ``uses_session = True``: the job then
    gives it the run's own long-lived sandbox in ``ctx.session`` (see :func:`uses_session`).
    """

    name: str
    #: shown by ``lhbench plugins list``; what must run a check again goes in its hash
    version: str
    description: str
    needs_store: bool

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """The task's checks of this kind (none where it does not apply)."""
        ...

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """Run one planned check on the run's final state."""
        ...


def _task_kind(pack: LoadedPack, task: Task) -> EnvironmentKind:
    return task.environment.kind or pack.pack.environment


async def _sandboxed_check(
    runner: Any, what: Any, check: Check, run: Run, state: RunState, ctx: CheckContext
) -> Label:
    """Run ``runner(what, …)`` (a verify script, a named state check) in the run's sandbox.

    On the run's final state; a crash, a timeout or a bad answer is an undecided label.
    """
    import asyncio

    from lhbench.envs import VerifyError

    try:
        res = await asyncio.to_thread(
            runner,
            what,
            root=state.ref.root,
            db_url=state.ref.db_url,
            timeout=ctx.timeout_s,
            sandbox=ctx.sandbox,
            session=ctx.session,
        )
    except VerifyError as exc:
        return check.label(run, None, "", str(exc))
    return check.label(run, res.passed, res.detail, None)


def _ground_truth_digest(
    pack: LoadedPack, task: Task, gt: Path, rubric_id: str, checks_version: str
) -> str:
    """A ground-truth check's hash: the task, its ground truth, the checks' rubric, version."""
    from lhbench.packs import hash_tree

    rubric = next((r.content_hash for r in pack.pack.rubrics if r.id == rubric_id), "")
    tree = hash_tree(gt) if gt.is_dir() else ""
    return hashlib.sha256(
        "|".join([task.content_hash, tree, rubric, checks_version]).encode()
    ).hexdigest()


class VerifyScript:
    """The task's verify script (``environment.verify``, default ``verify.py``)."""

    name = "verify"
    version = __version__
    description = "the task's verify script, in the sandbox, on the run's final state"
    needs_store = False
    uses_session = True

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """The script, when the task has one on disk."""
        task_dir = pack.task_dir(task.id)
        if task_dir is None:
            return []
        script = task_dir / (task.environment.verify or "verify.py")
        if not script.is_file():
            return []
        return [Check(script, f"verify:{task.id}/{script.name}", task.content_hash, self.name)]

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """Run the script; a crash, a timeout or a bad answer is an undecided label."""
        from lhbench.envs import run_verify

        return await _sandboxed_check(run_verify, check.target, check, run, state, ctx)


class HookChecks:
    """The task's hook checks (``environment.hooks``), each script once, on the final state."""

    name = "hooks"
    version = __version__
    description = "the task's hook check scripts, in the sandbox, on the run's final state"
    needs_store = False
    uses_session = True

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """One check per distinct hook script on disk."""
        task_dir = pack.task_dir(task.id)
        if task_dir is None:
            return []
        out = []
        for name in dict.fromkeys(h.check for h in task.environment.hooks):
            script = task_dir / name
            if script.is_file():
                out.append(Check(script, f"check:{task.id}/{name}", task.content_hash, self.name))
        return out

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """Run the hook script as a hook after any tool."""
        import asyncio

        return await asyncio.to_thread(self._run, check, run, state, ctx)

    @staticmethod
    def _run(check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        from lhbench.harness.hooks import run_hooks
        from lhbench.schema import HookSpec

        root = state.ref.root
        if root is None:
            return check.label(run, None, "", "hook checks need a directory state")
        spec = HookSpec(after_tool="*", check=check.target.name, timeout_s=ctx.timeout_s)
        [res] = run_hooks(
            [spec], "*", check.target.parent, root, sandbox=ctx.sandbox, session=ctx.session
        )
        if res.error is not None:
            return check.label(run, None, "", res.error)
        return check.label(run, res.ok, res.diagnosis, None)


class StateCheckRunner:
    """A plugin's :class:`~lhbench.plugins.StateCheck`, run in the sandbox by its name.

    A new version of the check's package runs it again (the version is in the hash).
    """

    needs_store = False
    uses_session = True

    def __init__(self, name: str, check: StateCheck | None) -> None:
        self.name = name
        self.check = check
        self.version = str(getattr(check, "version", "")) if check is not None else "missing"
        self.description = str(getattr(check, "description", ""))

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """One check (a name not installed plans one too: its label says so)."""
        digest = hashlib.sha256(
            f"{task.content_hash}|{self.name}|{self.version}".encode()
        ).hexdigest()
        return [Check(Path(self.name), f"plugin:{task.id}/{self.name}", digest, self.name)]

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """``python -m lhbench.plugins check NAME`` in the sandbox, as verify runs."""
        from lhbench.envs import run_state_check

        return await _sandboxed_check(run_state_check, self.name, check, run, state, ctx)


# -- Figma-to-code output checks ------------------------------------------------------------
# A figma-to-code task with a ground-truth directory (task.ground_truth[0] under the pack's
# ground_truth/) gets lhbench.envs.figma.check_app on the run's workspace. It stores the
# quality label (fidelity ≥ the calibrated threshold: LH-Bench's "quality ≥ 4 of 5"), a
# separate ``figma-deploy`` label (build, deploy, every route renders, nothing leaks), a
# programmatic grade on the pack's ``figma-checks`` rubric when the pack has one, and the
# reference and captured frames as the run's artifacts (what the output judge then sees).

_FIGMA_SEMAPHORE = threading.Semaphore(1)  # one build and browser at a time: they are heavy


class FigmaChecks:
    """The Figma-to-code output checks of a task with ground-truth frames."""

    name = "figma"
    description = (
        "a figma-to-code app built, served and captured against the ground-truth frames: "
        "quality and deploy labels, the figma-checks grade, the judge's frames"
    )
    needs_store = True

    version = __version__  # the checks' own CHECKS_VERSION is in each planned check's hash

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """One check, for a figma-to-code task whose ground truth has a manifest."""
        from lhbench.envs.figma import CHECKS_VERSION
        from lhbench.schema import EnvironmentKind

        if (
            _task_kind(pack, task) != EnvironmentKind.FIGMA_TO_CODE
            or pack.directory is None
            or not task.ground_truth
        ):
            return []
        gt = pack.directory / "ground_truth" / task.ground_truth[0]
        if not (gt / "manifest.json").is_file():
            return []
        digest = _ground_truth_digest(pack, task, gt, "figma-checks", CHECKS_VERSION)
        return [Check(gt, f"figma:{task.id}/{task.ground_truth[0]}", digest, self.name)]

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """Check the app; the deploy label, grade and frames are stored beside the label."""
        import asyncio

        return await asyncio.to_thread(self._run, check, run, state, ctx)

    def _run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        from lhbench.envs.figma import check_app, judge_artifacts
        from lhbench.envs.figma.fidelity import DEPLOY_SOURCE

        root = state.ref.root
        if root is None:
            return check.label(run, None, "", "figma checks need the run's workspace")
        store, pack = ctx.require_store(), ctx.pack
        design = pack.directory / "figma" if pack.directory is not None else None
        try:
            with _FIGMA_SEMAPHORE:
                report = check_app(
                    root,
                    check.target,
                    design=design if design is not None and design.is_dir() else None,
                    work_dir=ctx.workdir / run.id / "figma",
                    sandbox=ctx.sandbox,
                    cache_dir=ctx.workdir / "npm-cache",
                )
            rubric = next((r for r in pack.pack.rubrics if r.id == "figma-checks"), None)
            if rubric is not None:
                store.save_grades([report.grade(run.id, rubric)])
            for artifact in judge_artifacts(report, run.id):
                store.save_artifact(artifact)
        except InfrastructureError:
            raise
        except Exception as exc:  # a check that breaks is an undecided label, never a crash
            return check.label(run, None, "", f"figma checks failed: {exc}")
        # built & deployed is its own label, beside (never instead of) the quality pass
        deploy = Check(
            check.target,
            DEPLOY_SOURCE + check.source.removeprefix("figma"),
            check.check_hash,
            self.name,
        )
        store.save_labels([deploy.label(run, report.deployed(), report.detail(), None)])
        verdict = report.verdict()
        if verdict is None:
            return check.label(run, None, "", report.fidelity().describe())
        return check.label(run, verdict, report.detail(), None)


# -- Programmatic-content checks ------------------------------------------------------------
# A programmatic-content task with frozen sources gets the citation, coverage, slide and
# scene checks on the run's workspace: a label, and a grade on the pack's content-checks
# rubric (its evidence the offending citations) when the pack has one.


class ContentChecks:
    """The programmatic-content checks: citations, coverage, slides and scenes."""

    name = "content"
    description = (
        "a course's citations, coverage, slides and scenes against the frozen sources: "
        "a label and the content-checks grade"
    )
    needs_store = True

    version = __version__  # the checks' own CHECKS_VERSION is in each planned check's hash

    def plan(self, pack: LoadedPack, task: Task) -> list[Check]:
        """One check, for a programmatic-content task of a pack on disk."""
        from lhbench.envs.content.checks import CHECKS_VERSION
        from lhbench.schema import EnvironmentKind

        if _task_kind(pack, task) != EnvironmentKind.PROGRAMMATIC_CONTENT or pack.directory is None:
            return []
        gt = pack.directory / "ground_truth"
        digest = _ground_truth_digest(pack, task, gt, "content-checks", CHECKS_VERSION)
        return [Check(pack.directory, f"content:{task.id}", digest, self.name)]

    async def run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        """Check the course; its grade is stored beside the label."""
        import asyncio

        return await asyncio.to_thread(self._run, check, run, state, ctx)

    def _run(self, check: Check, run: Run, state: RunState, ctx: CheckContext) -> Label:
        from lhbench.envs.content.grading import check_task_workspace, checks_rubric

        root = state.ref.root
        if root is None:
            return check.label(run, None, "", "content checks need the run's workspace")
        store, pack = ctx.require_store(), ctx.pack
        try:
            task = pack.pack.task(run.task_id)
            report = check_task_workspace(check.target, task, root, sandbox=ctx.sandbox)
            rubric = checks_rubric(pack.pack)
            if rubric is not None:
                store.save_grades([report.grade(run.id, rubric)])
        except InfrastructureError:
            raise
        except Exception as exc:  # a check that breaks is an undecided label, never a crash
            return check.label(run, None, "", f"content checks failed: {exc}")
        return check.label(run, report.passed(), report.detail(), None)


#: the built-in checks, registered by entry point (``lhbench.checks``) as a plugin's are
BUILTIN_CHECKS: list[TaskCheck] = [VerifyScript(), HookChecks(), FigmaChecks(), ContentChecks()]


def uses_session(kind: TaskCheck) -> bool:
    """Whether ``kind`` runs its checks in the run's long-lived sandbox (default: no)."""
    return bool(getattr(kind, "uses_session", False))


def task_check(name: str) -> TaskCheck:
    """The registered check ``name`` as a TaskCheck (a StateCheck runs in the sandbox).

    A name not installed (a pack loaded before its plugin was removed) still plans its
    check: running it says the check is not installed.
    """
    from lhbench.plugins import StateCheck, check_registry

    entry = check_registry().get(name)
    if isinstance(entry, TaskCheck):
        return entry
    return StateCheckRunner(name, entry if isinstance(entry, StateCheck) else None)


def plan_checks(
    pack: LoadedPack, task: Task, names: Iterable[str]
) -> list[tuple[TaskCheck, Check]]:
    """The task's checks: those of ``names`` (the environment's), then the task's own."""
    out: list[tuple[TaskCheck, Check]] = []
    for name in dict.fromkeys([*names, *task.environment.checks]):
        kind = task_check(name)
        out += [(kind, c) for c in kind.plan(pack, task)]
    return out
