"""Verification: a task's checks run on every run's final state, each storing a Label.

The checks are the task's ``verify`` script (``environment.verify``, default ``verify.py``)
and its declared hook checks, run on the kept workspace of a run lhbench ran, or on the
replayed state of an imported one. A check that crashes, times out or answers in a shape
it should not gives an undecided label with the reason: the job goes on. So does a replay
that could not apply every call the run made (a write refused, a statement failing where
the run's succeeded): a check on a state the run never left decides nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lhbench.envs import ReplayError, VerifyError, run_state_check, run_verify
from lhbench.errors import InfrastructureError
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit
from lhbench.jobs.states import StateProvider
from lhbench.sandbox import Sandbox
from lhbench.schema import (
    EnvironmentKind,
    FailureKind,
    Label,
    Run,
    RunStatus,
    Task,
    Trajectory,
    label_key,
)
from lhbench.store import ResultState, Store

if TYPE_CHECKING:
    from lhbench.envs.content.checks import CourseReport
    from lhbench.envs.figma import CheckReport
    from lhbench.harness.runner import RunOutcome, RunSpec

__all__ = [
    "Check",
    "VerifyJob",
    "check_on_node",
    "check_outcome_on_node",
    "content_checks",
    "figma_checks",
    "run_content_checks",
    "run_figma_checks",
    "state_checks",
    "task_checks",
]


@dataclass(frozen=True)
class Check:
    """One check of a task: its script, the label source it writes, its content hash."""

    script: Path
    source: str
    check_hash: str
    hook: bool = False
    figma: bool = False  # script is the task's ground-truth directory (see figma checks below)
    plugin: str | None = None  # a named state check (lhbench.plugins), run in the sandbox
    content: bool = False  # the programmatic-content checks (see content checks below)


def task_checks(task: Task, task_dir: Path | None) -> list[Check]:
    """The task's checks: its verify script first, then its hook checks (deduplicated)."""
    if task_dir is None:
        return state_checks(task)
    out: list[Check] = []
    verify = task_dir / (task.environment.verify or "verify.py")
    if verify.is_file():
        out.append(Check(verify, f"verify:{task.id}/{verify.name}", task.content_hash))
    seen = set()
    for h in task.environment.hooks:
        if h.check in seen:
            continue
        seen.add(h.check)
        script = task_dir / h.check
        if script.is_file():
            out.append(Check(script, f"check:{task.id}/{h.check}", task.content_hash, hook=True))
    out += state_checks(task)
    return out


def state_checks(task: Task) -> list[Check]:
    """The task's named state checks; a new version of a check's package runs it again."""
    from lhbench.plugins import check_registry

    registry = check_registry()
    out = []
    for name in dict.fromkeys(task.environment.checks):
        check = registry.get(name)
        version = str(getattr(check, "version", "")) if check is not None else "missing"
        digest = hashlib.sha256(f"{task.content_hash}|{name}|{version}".encode()).hexdigest()
        out.append(Check(Path(name), f"plugin:{task.id}/{name}", digest, plugin=name))
    return out


@dataclass(frozen=True)
class _CheckUnit:
    run: Run
    check: Check


class VerifyJob:
    """Every run × check of its task (the Job protocol)."""

    name = "verify"

    def __init__(
        self,
        store: Store | None,
        runs: Sequence[Run],
        states: StateProvider,
        *,
        timeout_s: float = 60.0,
    ) -> None:
        self._store = store
        self.runs = list(runs)
        self.states = states
        self.timeout_s = timeout_s
        # units of each run still to check: its sandbox closes after the last one, and
        # the next run's is built while this one's checks run
        self._left: dict[str, int] = {}
        self._next: dict[str, Run] = {}

    @property
    def store(self) -> Store:
        """The store (a job checking on a Ray worker has none: see :func:`check_on_node`)."""
        if self._store is None:
            raise RuntimeError("this check needs the store; it runs where the job runs")
        return self._store

    def plan(self) -> list[Unit[_CheckUnit]]:
        """One unit per run and check."""
        out = []
        for run in self.runs:
            task = self.states.task(run)
            if task is None:
                continue
            checks = task_checks(task, self.states.pack.task_dir(task.id))
            checks += figma_checks(self.states.pack, task)
            checks += content_checks(self.states.pack, task)
            for check in checks:
                key = label_key(run.id, check.source, check.check_hash)
                out.append(Unit(key, f"{run.id} · {check.source}", _CheckUnit(run, check)))
        self._left = {}
        for u in out:
            self._left[u.payload.run.id] = self._left.get(u.payload.run.id, 0) + 1
        order = list(dict.fromkeys(u.payload.run.id for u in out))
        by_id = {u.payload.run.id: u.payload.run for u in out}
        self._next = {a: by_id[b] for a, b in itertools.pairwise(order)}
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Labels whose check content is current; an undecided label is a final failure.

        One undecided for infrastructure is run again (it is retryable).
        """
        wanted = set(keys)
        out: dict[str, ResultState] = {}
        for lab in self.store.list_labels(run_ids=[r.id for r in self.runs]):
            key = label_key(lab.run_id, lab.source, lab.check_hash)
            if key in wanted:
                out[key] = (
                    "ok"
                    if lab.passed is not None
                    else "retryable"
                    if lab.failure_kind == FailureKind.INFRASTRUCTURE
                    else "final_error"
                )
                if out[key] == "ok" and lab.run_id in self._left:
                    self._left[lab.run_id] -= 1  # skipped: it never runs
        return out

    async def run(self, unit: Unit[_CheckUnit]) -> Label:
        """Run one check on the run's final state (in the run's own sandbox, where one works)."""
        run, check = unit.payload.run, unit.payload.check
        try:
            return await self._run(run, check)
        finally:
            left = self._left.get(run.id, 1) - 1
            self._left[run.id] = left
            if left <= 0:
                await asyncio.to_thread(self.states.end_session, run.id)

    async def _run(self, run: Run, check: Check) -> Label:
        # the sandbox is built while the state is made; the next run's while this one checks
        if not (check.figma or check.content):
            await asyncio.to_thread(self.states.session, run)
            following = self._next.get(run.id)
            if following is not None and self._left.get(following.id, 0) > 0:
                await asyncio.to_thread(self.states.session, following)
        try:
            state = await self.states.get(run)
        except (LookupError, OSError, ValueError, ReplayError) as exc:
            return self._label(run, check, None, "", f"no final state: {exc}")
        if state.replayed and state.skipped:
            # the replayed state lacks something the run did: a check on it decides nothing
            n = len(state.skipped)
            return self._label(
                run,
                check,
                None,
                "",
                f"replay incomplete: {n} call(s) of the run could not be replayed: "
                + "; ".join(state.skipped[:3]),
            )
        try:
            return await self._check(run, check, state.ref.root, state.ref.db_url)
        except InfrastructureError as exc:
            # what the check needs is missing here (a package, a browser, the sandbox):
            # no label, retried by the next run of the command, counted as infrastructure
            return self._label(
                run,
                check,
                None,
                "",
                f"infrastructure: {exc}",
                kind=FailureKind.INFRASTRUCTURE,
            )

    async def _check(self, run: Run, check: Check, root: Path | None, db_url: str | None) -> Label:
        if check.hook:
            return await asyncio.to_thread(self._hook, run, check, root)
        if check.figma:
            return await asyncio.to_thread(self._figma, run, check, root)
        if check.content:
            return await asyncio.to_thread(self._content, run, check, root)
        try:
            if check.plugin is not None:
                res = await asyncio.to_thread(
                    run_state_check,
                    check.plugin,
                    root=root,
                    db_url=db_url,
                    timeout=self.timeout_s,
                    sandbox=self.states.sandbox,
                    session=self.states.session(run),
                )
            else:
                res = await asyncio.to_thread(
                    run_verify,
                    check.script,
                    root=root,
                    db_url=db_url,
                    timeout=self.timeout_s,
                    sandbox=self.states.sandbox,
                    session=self.states.session(run),
                )
        except VerifyError as exc:
            return self._label(run, check, None, "", str(exc))
        return self._label(run, check, res.passed, res.detail, None)

    def _hook(self, run: Run, check: Check, root: Path | None) -> Label:
        from lhbench.harness.hooks import run_hooks
        from lhbench.schema import HookSpec

        if root is None:
            return self._label(run, check, None, "", "hook checks need a directory state")
        spec = HookSpec(after_tool="*", check=check.script.name, timeout_s=self.timeout_s)
        [res] = run_hooks(
            [spec],
            "*",
            check.script.parent,
            root,
            sandbox=self.states.sandbox,
            session=self.states.session(run),
        )
        if res.error is not None:
            return self._label(run, check, None, "", res.error)
        return self._label(run, check, res.ok, res.diagnosis, None)

    def _figma(self, run: Run, check: Check, root: Path | None) -> Label:
        """Figma-to-code output checks: a label, a programmatic grade, the judge's frames."""
        if root is None:
            return self._label(run, check, None, "", "figma checks need the run's workspace")
        try:
            report = run_figma_checks(
                self.store,
                self.states.pack,
                run,
                check,
                root,
                self.states.workdir,
                self.states.sandbox,
            )
        except InfrastructureError:
            raise
        except Exception as exc:  # a check that breaks is an undecided label, never a crash
            return self._label(run, check, None, "", f"figma checks failed: {exc}")
        from lhbench.envs.figma.fidelity import DEPLOY_SOURCE

        # built & deployed is its own label, beside (never instead of) the quality pass
        deploy = Check(
            check.script,
            DEPLOY_SOURCE + check.source.removeprefix("figma"),
            check.check_hash,
            figma=True,
        )
        self.store.save_labels([self._label(run, deploy, report.deployed(), report.detail(), None)])
        verdict = report.verdict()
        if verdict is None:
            return self._label(run, check, None, "", report.fidelity().describe())
        return self._label(run, check, verdict, report.detail(), None)

    def _content(self, run: Run, check: Check, root: Path | None) -> Label:
        """Programmatic-content checks: a label and a grade with the offending citations."""
        if root is None:
            return self._label(run, check, None, "", "content checks need the run's workspace")
        try:
            report = run_content_checks(
                self.store, self.states.pack, run, root, self.states.sandbox
            )
        except InfrastructureError:
            raise
        except Exception as exc:  # a check that breaks is an undecided label, never a crash
            return self._label(run, check, None, "", f"content checks failed: {exc}")
        return self._label(run, check, report.passed(), report.detail(), None)

    @staticmethod
    def _label(
        run: Run,
        check: Check,
        passed: bool | None,
        detail: str,
        error: str | None,
        *,
        kind: FailureKind | None = None,
    ) -> Label:
        return Label(
            run_id=run.id,
            passed=passed,
            source=check.source,
            detail=detail[:2000],
            error=error[:2000] if error else None,
            check_hash=check.check_hash,
            failure_kind=kind,
        )

    def assess(self, result: Label) -> Assessment:
        """A decided label is ok (pass or fail alike); an undecided one says why.

        An infrastructure failure (a missing package or browser, no sandbox) is retried by
        the next run of the command.
        """
        if result.passed is not None:
            return Assessment(True)
        if result.failure_kind == FailureKind.INFRASTRUCTURE:
            return Assessment(False, f"infrastructure: {_first(result.error)}", True)
        reason = (result.error or "check failed").split(":", 1)[0]
        if "timed out" in (result.error or ""):
            reason = "check timed out"
        elif "contradicts itself" in (result.error or ""):
            reason = "check's exit code and answer disagree"
        elif "exited" in (result.error or "") or "crashed" in (result.error or ""):
            reason = "check crashed"
        return Assessment(False, reason)

    def write(self, results: Sequence[Label]) -> None:
        """Labels, replacing what the same check said before."""
        self.store.save_labels(results)


async def check_outcome_on_node(pack_dir: Path, spec: RunSpec, out: RunOutcome) -> list[Label]:
    """The Ray executor's node check (:data:`~lhbench.harness.executors.NodeCheck`)."""
    from lhbench.packs import load_pack
    from lhbench.sandbox import get_sandbox

    pack = load_pack(pack_dir)
    return await check_on_node(
        LoadedPack(pack, pack_dir),
        out.run,
        out.trajectory,
        sandbox=get_sandbox(spec.sandbox, unsafe=spec.unsafe_no_sandbox),
        workdir=Path(spec.home) / "states" / pack.id,
    )


async def check_on_node(
    pack: LoadedPack,
    run: Run,
    trajectory: Trajectory,
    *,
    sandbox: Sandbox,
    workdir: Path,
    timeout_s: float = 60.0,
) -> list[Label]:
    """The checks of a run that need only its kept workspace, run where the workspace is.

    A run made on a Ray worker leaves its workspace on that node: its verify script, hook
    checks and named state checks run there, in that node's sandbox, right after the run
    (the labels travel back with the run). Figma and content checks store grades and
    artifacts themselves: they stay with the job, which replays the state when the
    workspace is elsewhere.
    """
    if run.status in (RunStatus.RUNNING, RunStatus.PENDING):
        return []
    provider = StateProvider(None, pack, workdir, sandbox=sandbox)
    try:
        await provider.get(run, trajectory)  # made from the trajectory in hand, then shared
        job = VerifyJob(None, [run], provider, timeout_s=timeout_s)
        return [
            await job.run(u)
            for u in job.plan()
            if not (u.payload.check.figma or u.payload.check.content)
        ]
    finally:
        await asyncio.to_thread(provider.close)


def _first(error: str | None) -> str:
    """What an infrastructure error was about, in a few words (``playwright is not …``)."""
    text = (error or "").removeprefix("infrastructure: ")
    return text.split(";", 1)[0].split(":", 1)[0][:80] or "error"


# -- Figma-to-code output checks ------------------------------------------------------------
# A figma-to-code task with a ground-truth directory (task.ground_truth[0] under the pack's
# ground_truth/) gets one more check: lhbench.envs.figma.check_app on the run's workspace.
# It stores the quality label (fidelity ≥ the calibrated threshold: LH-Bench's "quality ≥ 4
# of 5"), a separate ``figma-deploy`` label (build, deploy, every route renders, nothing
# leaks), a programmatic
# grade on the pack's ``figma-checks`` rubric when the pack has one, and the reference and
# captured frames as the run's artifacts (what the output judge then sees).

_FIGMA_SEMAPHORE = threading.Semaphore(1)  # one build and browser at a time: they are heavy


def figma_checks(pack: LoadedPack, task: Task) -> list[Check]:
    """The task's Figma output check, when it is a figma-to-code task with ground truth."""
    from lhbench.envs.figma import CHECKS_VERSION
    from lhbench.packs import hash_tree

    kind = task.environment.kind or pack.pack.environment
    if kind != EnvironmentKind.FIGMA_TO_CODE or pack.directory is None or not task.ground_truth:
        return []
    gt = pack.directory / "ground_truth" / task.ground_truth[0]
    if not (gt / "manifest.json").is_file():
        return []
    rubric = next((r.content_hash for r in pack.pack.rubrics if r.id == "figma-checks"), "")
    digest = hashlib.sha256(
        "|".join([task.content_hash, hash_tree(gt), rubric, CHECKS_VERSION]).encode()
    ).hexdigest()
    return [Check(gt, f"figma:{task.id}/{task.ground_truth[0]}", digest, figma=True)]


def run_figma_checks(
    store: Store,
    pack: LoadedPack,
    run: Run,
    check: Check,
    root: Path,
    workdir: Path,
    sandbox: Sandbox,
) -> CheckReport:
    """Check the app in ``root``; store the grade and the judge's artifacts; the report."""
    from lhbench.envs.figma import check_app, judge_artifacts

    design = pack.directory / "figma" if pack.directory is not None else None
    with _FIGMA_SEMAPHORE:
        report = check_app(
            root,
            check.script,
            design=design if design is not None and design.is_dir() else None,
            work_dir=workdir / run.id / "figma",
            sandbox=sandbox,
            cache_dir=workdir / "npm-cache",
        )
    rubric = next((r for r in pack.pack.rubrics if r.id == "figma-checks"), None)
    if rubric is not None:
        store.save_grades([report.grade(run.id, rubric)])
    for artifact in judge_artifacts(report, run.id):
        store.save_artifact(artifact)
    return report


# -- Programmatic-content checks ------------------------------------------------------------
# A programmatic-content task with frozen sources gets the citation, coverage, slide and
# scene checks on the run's workspace: a label, and a grade on the pack's content-checks
# rubric (its evidence the offending citations) when the pack has one.
def content_checks(pack: LoadedPack, task: Task) -> list[Check]:
    """The task's content check, when it is a programmatic-content task."""
    from lhbench.envs.content.checks import CHECKS_VERSION
    from lhbench.packs import hash_tree

    kind = task.environment.kind or pack.pack.environment
    if kind != EnvironmentKind.PROGRAMMATIC_CONTENT or pack.directory is None:
        return []
    gt = pack.directory / "ground_truth"
    rubric = next((r.content_hash for r in pack.pack.rubrics if r.id == "content-checks"), "")
    digest = hashlib.sha256(
        "|".join(
            [task.content_hash, hash_tree(gt) if gt.is_dir() else "", rubric, CHECKS_VERSION]
        ).encode()
    ).hexdigest()
    return [Check(pack.directory, f"content:{task.id}", digest, content=True)]


def run_content_checks(
    store: Store, pack: LoadedPack, run: Run, root: Path, sandbox: Sandbox
) -> CourseReport:
    """Check the course in ``root``; store the grade; the report."""
    from lhbench.envs.content.grading import check_task_workspace, checks_rubric

    assert pack.directory is not None
    task = next(t for t in pack.pack.tasks if t.id == run.task_id)
    report = check_task_workspace(pack.directory, task, root, sandbox=sandbox)
    rubric = checks_rubric(pack.pack)
    if rubric is not None:
        store.save_grades([report.grade(run.id, rubric)])
    return report
