"""Verification: a task's checks run on every run's final state, each storing a Label.

The checks are entries of the checks registry (:mod:`lhbench.jobs.checks`): the ones the
pack's environment names (the task's ``verify`` script and hook checks everywhere, the
Figma or content checks in those domains), then the ones the task names itself. They run
on the kept workspace of a run lhbench ran, or on the replayed state of an imported one.
A check that crashes, times out or answers in a shape it should not gives an undecided
label with the reason: the job goes on. So does a replay that could not apply every call
the run made (a write refused, a statement failing where the run's succeeded): a check on
a state the run never left decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lhbench.envs import ReplayError
from lhbench.errors import ConfigError, InfrastructureError
from lhbench.jobs.checks import Check, CheckContext, TaskCheck, plan_checks
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit
from lhbench.jobs.states import StateProvider
from lhbench.sandbox import Sandbox
from lhbench.schema import FailureKind, Label, Run, RunStatus, Task, Trajectory, label_key
from lhbench.store import ResultState, Store

if TYPE_CHECKING:
    from lhbench.harness.runner import RunOutcome, RunSpec
    from lhbench.jobs.environments import Environment

__all__ = [
    "Check",
    "VerifyJob",
    "check_on_node",
    "check_outcome_on_node",
    "environment_checks",
    "task_checks",
]

#: the checks of a pack no environment claims (a job given its states directly)
DEFAULT_CHECKS = ("verify", "hooks")


def environment_checks(pack: LoadedPack) -> tuple[str, ...]:
    """The checks the pack's environment names for its tasks."""
    from lhbench.jobs.environments import environment_for

    try:
        return tuple(environment_for(pack).checks)
    except ConfigError:
        return DEFAULT_CHECKS


def task_checks(
    pack: LoadedPack, task: Task, environment: Environment | None = None
) -> list[Check]:
    """The task's planned checks: its environment's, then its own (by name)."""
    names = environment.checks if environment is not None else environment_checks(pack)
    return [c for _, c in plan_checks(pack, task, names)]


@dataclass(frozen=True)
class _CheckUnit:
    run: Run
    check: Check
    kind: TaskCheck


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
        environment: Environment | None = None,
    ) -> None:
        self._store = store
        self.runs = list(runs)
        self.states = states
        self.timeout_s = timeout_s
        self.environment = environment

    @property
    def store(self) -> Store:
        """The store (a job checking on a Ray worker has none: see :func:`check_on_node`)."""
        if self._store is None:
            raise RuntimeError("this check needs the store; it runs where the job runs")
        return self._store

    def plan(self) -> list[Unit[_CheckUnit]]:
        """One unit per run and check (the environment's checks, then the task's own)."""
        pack = self.states.pack
        names = (
            self.environment.checks if self.environment is not None else environment_checks(pack)
        )
        planned: dict[str, list[tuple[TaskCheck, Check]]] = {}
        out = []
        for run in self.runs:
            task = self.states.task(run)
            if task is None:
                continue
            if task.id not in planned:
                planned[task.id] = plan_checks(pack, task, names)
            for kind, check in planned[task.id]:
                key = label_key(run.id, check.source, check.check_hash)
                out.append(Unit(key, f"{run.id} · {check.source}", _CheckUnit(run, check, kind)))
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
        return out

    async def run(self, unit: Unit[_CheckUnit]) -> Label:
        """Run one check on the run's final state, through its registry entry."""
        run, check = unit.payload.run, unit.payload.check
        try:
            state = await self.states.get(run)
        except (LookupError, OSError, ValueError, ReplayError) as exc:
            return check.label(run, None, "", f"no final state: {exc}")
        if state.replayed and state.skipped:
            # the replayed state lacks something the run did: a check on it decides nothing
            n = len(state.skipped)
            return check.label(
                run,
                None,
                "",
                f"replay incomplete: {n} call(s) of the run could not be replayed: "
                + "; ".join(state.skipped[:3]),
            )
        ctx = CheckContext(
            self._store,
            self.states.pack,
            self.states.workdir,
            self.states.sandbox,
            self.timeout_s,
        )
        try:
            return await unit.payload.kind.run(check, run, state, ctx)
        except InfrastructureError as exc:
            # what the check needs is missing here (a package, a browser, the sandbox):
            # no label, retried by the next run of the command, counted as infrastructure
            return check.label(
                run, None, "", f"infrastructure: {exc}", kind=FailureKind.INFRASTRUCTURE
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
    (the labels travel back with the run). A check that stores grades or artifacts itself
    (``needs_store``: the Figma and content checks) stays with the job, which replays the
    state when the workspace is elsewhere.
    """
    if run.status in (RunStatus.RUNNING, RunStatus.PENDING):
        return []
    provider = StateProvider(None, pack, workdir, sandbox=sandbox)
    await provider.get(run, trajectory)  # made from the trajectory in hand, then shared
    job = VerifyJob(None, [run], provider, timeout_s=timeout_s)
    return [await job.run(u) for u in job.plan() if not u.payload.kind.needs_store]


def _first(error: str | None) -> str:
    """What an infrastructure error was about, in a few words (``playwright is not …``)."""
    text = (error or "").removeprefix("infrastructure: ")
    return text.split(";", 1)[0].split(":", 1)[0][:80] or "error"
