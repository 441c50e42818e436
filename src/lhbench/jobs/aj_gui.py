"""Agent-as-a-Judge in the GUI (office) domain: OSWorld-shaped trajectories of office tasks.

A GUI pack (environment ``gui``) keeps, per task, ``checker.json`` + ``verify.py`` (the
checkers comparing the final document with the task's golden file) and its trajectories
as OSWorld result directories with the final document (:mod:`lhbench.envs.gui.state`).
Each trajectory becomes a run (``<pack>--<task>--<name>``, read with the ``osworld``
transcript format); its final state is materialized (document copy, screenshots, trees,
the document rendered by LibreOffice in the sandbox, all read-only); the task's verify
script labels it, and the GUI judge judges it with the tools of one modality.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lhbench.envs.gui import GuiRecord, Rendered, load_result_dir, materialize, render_document
from lhbench.errors import PackError, Problem
from lhbench.ingest import FORMATS, ImportContext, read_transcripts
from lhbench.jobs.fixtures import FixtureJob
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Unit
from lhbench.jobs.states import RunState, StateProvider, state_id
from lhbench.judges import StateRef
from lhbench.schema import EnvironmentKind, Run, RunStatus, Trajectory
from lhbench.store import Store

__all__ = ["GuiFixtureJob", "GuiStates", "gui_trajectories", "is_gui_pack"]


def is_gui_pack(pack: LoadedPack) -> bool:
    """Whether the pack is a GUI (office) pack."""
    return pack.pack.environment == EnvironmentKind.GUI and pack.directory is not None


@dataclass(frozen=True)
class _GuiFixture:
    task_id: str
    directory: Path


def gui_trajectories(pack: LoadedPack) -> list[_GuiFixture]:
    """Every trajectory directory (``tasks/<id>/trajectories/<name>/``) of the pack, checked.

    Raises:
        PackError: naming the file of the first problems of a trajectory.
    """
    out = []
    for task in pack.pack.tasks:
        d = pack.task_dir(task.id)
        if d is None or not (d / "trajectories").is_dir():
            continue
        for t in sorted(p for p in (d / "trajectories").iterdir() if p.is_dir()):
            if t.is_symlink():
                raise PackError([Problem(t, "a trajectory directory must not be a symlink")])
            load_result_dir(t)  # a broken trajectory is the pack's error, named
            out.append(_GuiFixture(task.id, t))
    return out


class GuiFixtureJob(FixtureJob):
    """Every trajectory of a GUI pack, stored as a run (the Job protocol)."""

    def plan(self) -> list[Unit[_GuiFixture]]:  # type: ignore[override]
        """One unit per trajectory directory."""
        return [
            Unit(f"{self.pack.pack.id}--{fx.task_id}--{fx.directory.name}", str(fx.directory), fx)
            for fx in gui_trajectories(self.pack)
        ]

    async def run(self, unit: Unit[_GuiFixture]) -> tuple[Run, Trajectory]:  # type: ignore[override]
        """Read the trajectory's ``traj.jsonl`` (OSWorld's format, strictly) as a run."""
        return await asyncio.to_thread(self._read_osworld, unit.key, unit.payload)

    def _read_osworld(self, run_id: str, fx: _GuiFixture) -> tuple[Run, Trajectory]:
        ctx = ImportContext(path=fx.directory / "traj.jsonl", strict=True)
        [(info, steps_iter)] = list(read_transcripts(FORMATS["osworld"], ctx))
        traj = Trajectory(run_id=run_id, steps=list(steps_iter))
        run = Run(
            id=run_id,
            pack_id=self.pack.pack.id,
            pack_hash=self.pack.pack.content_hash,
            task_id=fx.task_id,
            harness="fixture",
            model=info.model or "fixture",
            status=RunStatus.COMPLETED,
            source=f"tasks/{fx.task_id}/trajectories/{fx.directory.name}/traj.jsonl",
            metadata={"trajectory": fx.directory.name, "gui": "osworld"},
        )
        return run, traj


class GuiStates(StateProvider):
    """Final states of GUI runs: materialized, rendered once per document content."""

    def __init__(
        self, store: Store, pack: LoadedPack, workdir: Path, *, render: bool = True, **kw: Any
    ) -> None:
        super().__init__(store, pack, workdir, **kw)
        self.render = render
        self._lock = threading.Lock()
        self._doc_locks: dict[str, threading.Lock] = {}

    def _render_cached(self, document: Path, out: Path) -> Rendered:
        """Render through a cache keyed by the document's bytes (same bytes: same pages)."""
        digest = hashlib.sha256(document.read_bytes()).hexdigest()[:32]
        with self._lock:
            lock = self._doc_locks.setdefault(digest, threading.Lock())
        cache = self.workdir / "renders" / f"{digest}{document.suffix.lower()}"
        with lock:
            done = cache / "done"
            if not done.is_file():
                shutil.rmtree(cache, ignore_errors=True)
                r = render_document(document, cache, sandbox=self.sandbox)
                done.write_text(f"{r.pages} {r.drawn}", encoding="utf-8")
            pages, drawn = (int(x) for x in done.read_text(encoding="utf-8").split())
        for n in range(1, drawn + 1):
            shutil.copyfile(cache / f"page-{n}.png", out / f"page-{n}.png")
        return Rendered(out, pages, drawn)

    def record(self, run: Run) -> GuiRecord:
        """The run's trajectory directory, checked."""
        d = self.pack.task_dir(run.task_id)
        name = str(run.metadata.get("trajectory", ""))
        if d is None or not name or "/" in name or name.startswith("."):
            raise LookupError(f"run {run.id!r} is not a trajectory of a GUI pack on disk")
        return load_result_dir(d / "trajectories" / name)

    def _make(self, run: Run, trajectory: Trajectory | None) -> RunState:
        task = self.task(run)
        if task is None:
            raise LookupError(f"task {run.task_id!r} is not in pack {self.pack.pack.id!r}")
        base = self.workdir / run.id
        base.mkdir(parents=True, exist_ok=True)
        traj = trajectory or self.store.get_trajectory(run.id)
        traj_file = base / "trajectory.json"
        traj_file.write_text(traj.model_dump_json(), encoding="utf-8")
        state = materialize(
            self.record(run), base / "state", render=self._render_cached if self.render else None
        )
        return RunState(
            StateRef(state_id(run, task), state, None, traj_file), EnvironmentKind.GUI, True
        )
