"""A pack's fixture trajectories (``tasks/<id>/trajectories/*.jsonl``) as runs.

Agent-as-a-Judge packs ship trajectories whose final states the judge inspects; each
becomes a run of harness ``fixture`` with a stable id ``<pack>--<task>--<file stem>``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lhbench.ingest import FORMATS, ImportContext, read_transcripts
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit
from lhbench.schema import Run, RunStatus, Task, Trajectory
from lhbench.store import ResultState, Store

__all__ = ["FixtureJob", "fixture_files"]


def fixture_files(pack: LoadedPack) -> list[tuple[Task, Path]]:
    """(task, trajectory file) for every fixture trajectory of the pack."""
    out: list[tuple[Task, Path]] = []
    for task in pack.pack.tasks:
        task_dir = pack.task_dir(task.id)
        if task_dir is None:
            continue
        out.extend((task, f) for f in sorted((task_dir / "trajectories").glob("*.jsonl")))
    return out


@dataclass(frozen=True)
class _Fixture:
    task: Task
    file: Path


class FixtureJob:
    """Every fixture trajectory of a pack, stored as a run (the Job protocol)."""

    name = "fixtures"

    def __init__(self, store: Store, pack: LoadedPack) -> None:
        self.store = store
        self.pack = pack

    def plan(self) -> list[Unit[_Fixture]]:
        """One unit per trajectory file."""
        return [
            Unit(f"{self.pack.pack.id}--{task.id}--{f.stem}", str(f), _Fixture(task, f))
            for task, f in fixture_files(self.pack)
        ]

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Fixtures already stored from this pack content."""
        out: dict[str, ResultState] = {}
        for key in keys:
            run = self.store.find_run(key)
            if run is not None and run.pack_hash == self.pack.pack.content_hash:
                out[key] = "ok"
        return out

    async def run(self, unit: Unit[_Fixture]) -> tuple[Run, Trajectory]:
        """Read one trajectory (strictly: a fixture must read whole)."""
        return await asyncio.to_thread(self._read, unit.key, unit.payload)

    def _read(self, run_id: str, fx: _Fixture) -> tuple[Run, Trajectory]:
        return self.read_as_run(
            run_id,
            fx.file,
            fx.task.id,
            source=f"tasks/{fx.task.id}/trajectories/{fx.file.name}",
            metadata={"trajectory": fx.file.stem},
        )

    def read_as_run(
        self, run_id: str, path: Path, task_id: str, *, source: str, metadata: dict[str, str]
    ) -> tuple[Run, Trajectory]:
        """A fixture trajectory file (generic JSONL, read strictly) as a run of ``task_id``."""
        ctx = ImportContext(path=path, strict=True)
        [(info, steps_iter)] = list(read_transcripts(FORMATS["jsonl"], ctx))
        traj = Trajectory(run_id=run_id, steps=list(steps_iter))
        run = Run(
            id=run_id,
            pack_id=self.pack.pack.id,
            pack_hash=self.pack.pack.content_hash,
            task_id=task_id,
            harness="fixture",
            model=info.model or "fixture",
            status=RunStatus.COMPLETED,
            source=source,
            # what the file's run line says (e.g. the outcome its harness recorded), as an
            # import keeps it; the fixture's own keys win
            metadata={**{k: v for k, v in info.metadata.items() if v is not None}, **metadata},
        )
        return run, traj

    def assess(self, result: tuple[Run, Trajectory]) -> Assessment:
        """A fixture read whole is ok."""
        return Assessment(True)

    def write(self, results: Sequence[tuple[Run, Trajectory]]) -> None:
        """Runs and their trajectories (replacing an older pack content's)."""
        for run, traj in results:
            existing = self.store.find_run(run.id)
            if existing is not None and existing.pack_hash != run.pack_hash:
                self.store.delete_run(run.id)  # the fixture changed: what was said is stale
            self.store.save_run(run)
            self.store.save_trajectory(traj)
