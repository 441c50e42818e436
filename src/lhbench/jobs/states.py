"""Final states of runs, for checks and for the agent judge's tools.

A run lhbench ran keeps its workspace: that is its final state. A run known only from its
trajectory (imported, or a pack's fixture) is replayed into a fresh directory or database:
its successful file or SQL calls applied to a copy of the task's initial state.

SQL tasks: a run's database is ``database.sqlite`` in its workspace (loaded from the task's
``environment.database`` dump before the agent starts); a replay builds one from the dump,
in SQLite or, with a :class:`~lhbench.envs.PostgresDatabases`, in PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from lhbench.envs import PostgresDatabases, replay_filesystem, replay_sql
from lhbench.harness.workspace import SQL_STATE_FILE
from lhbench.jobs.packs import LoadedPack
from lhbench.judges import StateRef
from lhbench.sandbox import (
    Limits,
    Sandbox,
    SandboxPolicy,
    SandboxSession,
    get_sandbox,
    policy_for,
    session_support,
)
from lhbench.schema import EnvironmentKind, Run, Task, Trajectory
from lhbench.store import Store

__all__ = ["RunState", "StateProvider", "state_id", "task_kind"]


def state_id(run: Run, task: Task) -> str:
    """The identity of a run's final state: the task's content and the run's record.

    Computed without replaying: a run's trajectory is fixed once it ends (a re-import
    with ``--replace`` removes the run and what was said about it).
    """
    doc = [task.content_hash, run.id, run.metadata.get("sha256"), str(run.ended_at)]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


@dataclass(frozen=True)
class RunState:
    """Where a run's final state is, how it was obtained, and what the replay could not do."""

    ref: StateRef
    kind: EnvironmentKind
    replayed: bool
    skipped: tuple[str, ...] = ()


def task_kind(pack: LoadedPack, task: Task) -> EnvironmentKind:
    """The task's environment kind (its own, or the pack's)."""
    return task.environment.kind or pack.pack.environment


def kept_workspace(run: Run) -> Path | None:
    """The workspace a run lhbench ran here left, or None (then the state is replayed).

    Only a run lhbench's harness made (not an import: an imported transcript's metadata is
    the transcript writer's) counts, and only a directory shaped as the harness makes it
    (``…/runs/<run id>/workspace``): a forged ``workspace`` naming ``/`` or a host
    directory must never become the state a check or a judge sees.
    """
    workspace = run.metadata.get("workspace")
    if run.source is not None or not isinstance(workspace, str):
        return None
    path = Path(workspace)
    if path.is_symlink() or not path.is_dir():
        return None
    if path.name != "workspace" or path.parent.name != run.id or path.parent.parent.name != "runs":
        return None
    return path


class StateProvider:
    """Final states of runs of one pack, made once per run and shared by the jobs using them."""

    def __init__(
        self,
        store: Store | None,
        pack: LoadedPack,
        workdir: Path,
        *,
        postgres: PostgresDatabases | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        self.store = store
        self.pack = pack
        self.workdir = Path(workdir).absolute()
        self.postgres = postgres
        self.sandbox = sandbox or get_sandbox()
        self._made: dict[str, asyncio.Task[RunState]] = {}
        # one sandbox per run for its replay and checks (never shared by two runs), the
        # most recently used kept open
        self.max_sessions = 8
        self._sessions: OrderedDict[str, SandboxSession] = OrderedDict()
        self._sessions_lock = threading.Lock()
        # sandboxes closing in the background (a run's, after its last check): waited for
        # by close()
        self._closing: list[threading.Thread] = []

    def session(self, run: Run) -> SandboxSession | None:
        """The run's own sandbox for its replay and checks (started on first use).

        None where each command gets a sandbox of its own: no worker here
        (:func:`~lhbench.sandbox.session_support`), a task not in the pack, or a state in
        PostgreSQL (its checks reach it through a gate made per command).
        """
        with self._sessions_lock:
            made = self._sessions.get(run.id)
            if made is not None and not made.closed:
                self._sessions.move_to_end(run.id)
                return made
            task = self.task(run)
            if task is None or session_support(self.sandbox) is not None:
                return None
            if self.postgres is not None and task_kind(self.pack, task) == EnvironmentKind.SQL:
                return None
            base = self.workdir / run.id
            base.mkdir(parents=True, exist_ok=True)
            readable = [p for p in (self.pack.task_dir(task.id), kept_workspace(run)) if p]

            def policy() -> SandboxPolicy:
                return policy_for(
                    base,
                    writable=[base],
                    readable=readable,
                    env={"LHBENCH_IN_SANDBOX": "1"},
                    limits=Limits(memory_mb=1024, processes=32),
                    name=f"run {run.id}",
                )

            made = SandboxSession(self.sandbox, policy).start()
            self._sessions[run.id] = made
            while len(self._sessions) > self.max_sessions:
                _, old = self._sessions.popitem(last=False)
                # closing waits for a command in flight: not on this thread
                self._close_later(old)
            return made

    def _close_later(self, session: SandboxSession) -> None:
        # on a thread of its own; called with the sessions lock held
        self._closing = [t for t in self._closing if t.is_alive()]
        closing = threading.Thread(target=session.close, name="lhbench-sandbox-close", daemon=True)
        closing.start()
        self._closing.append(closing)

    def end_session(self, run_id: str) -> None:
        """Close a run's sandbox (its checks are done), in the background.

        Its commands have ended; what is left is stopping its worker and releasing its
        cgroups and files (~10 ms), which the run's result need not wait for.
        :meth:`close` waits for it.
        """
        with self._sessions_lock:
            made = self._sessions.pop(run_id, None)
            if made is not None:
                self._close_later(made)

    def close(self) -> None:
        """Close every run's sandbox, and wait for those closing in the background."""
        with self._sessions_lock:
            made, self._sessions = list(self._sessions.values()), OrderedDict()
            closing, self._closing = self._closing, []
        for s in made:
            with contextlib.suppress(Exception):
                s.close()
        for t in closing:
            t.join()

    def task(self, run: Run) -> Task | None:
        """The run's task in the pack's current content."""
        try:
            return self.pack.pack.task(run.task_id)
        except KeyError:
            return None

    async def get(self, run: Run, trajectory: Trajectory | None = None) -> RunState:
        """The run's final state (made on first use)."""
        made = self._made.get(run.id)
        if made is None:
            made = asyncio.ensure_future(asyncio.to_thread(self._make, run, trajectory))
            self._made[run.id] = made
        return await asyncio.shield(made)

    def trajectory(self, run: Run, given: Trajectory | None) -> Trajectory:
        """The trajectory given, else the stored one."""
        if given is not None:
            return given
        if self.store is None:
            # a Ray worker checks the run it just made, with its trajectory in hand
            raise LookupError(f"run {run.id!r}: no trajectory given and no store to read it from")
        return self.store.get_trajectory(run.id)

    def _make(self, run: Run, trajectory: Trajectory | None) -> RunState:
        task = self.task(run)
        if task is None:
            raise LookupError(f"task {run.task_id!r} is not in pack {self.pack.pack.id!r}")
        kind = task_kind(self.pack, task)
        sid = state_id(run, task)
        base = self.workdir / run.id
        base.mkdir(parents=True, exist_ok=True)
        traj = self.trajectory(run, trajectory)
        traj_file = base / "trajectory.json"
        traj_file.write_text(traj.model_dump_json(), encoding="utf-8")
        root = kept_workspace(run)
        if root is not None:
            if kind == EnvironmentKind.SQL:
                db = root / SQL_STATE_FILE
                return RunState(StateRef(sid, None, f"sqlite:///{db}", traj_file), kind, False)
            return RunState(StateRef(sid, root, None, traj_file), kind, False)
        task_dir = self.pack.task_dir(task.id)
        if task_dir is None:
            raise LookupError(
                f"pack {self.pack.pack.id!r} is not on disk: its initial state cannot be replayed"
            )
        env = task.environment
        if kind == EnvironmentKind.SQL:
            dump = (task_dir / (env.database or "seed.sql")).read_text(encoding="utf-8")
            state, report = replay_sql(
                dump,
                traj,
                base / "state.db",
                postgres=self.postgres,
                sandbox=self.sandbox,
                session=None if self.postgres is not None else self.session(run),
            )
            return RunState(
                StateRef(sid, None, state.reader, traj_file), kind, True, tuple(report.skipped)
            )
        initial = task_dir / env.initial_state if env.initial_state else None
        report = replay_filesystem(initial, traj, base / "state")
        return RunState(
            StateRef(sid, base / "state", None, traj_file), kind, True, tuple(report.skipped)
        )
