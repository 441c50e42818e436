"""Running agents: every (task, repeat) of a pack with one harness and model, as one job.

A run's id is stable (pack content, task, harness, model, versions, repeat), so running
the same command again skips finished runs and resumes interrupted ones in their kept
workspace. A completed run is final; one that ran out of time or tool calls is a final
failure (``--retry-errors`` runs it again); one that crashed (the model unreachable, the
harness stopped) is retried by the next run of the command.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from lhbench.harness import Executor, RunOutcome, RunSpec, run_id_for
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Assessment, Unit, short_reason
from lhbench.schema import RunStatus
from lhbench.store import ResultState, Store

__all__ = ["RunAgentsJob", "store_outcome"]

_FINAL_FAILURES = {RunStatus.TIMED_OUT, RunStatus.LIMIT_EXCEEDED}


def store_outcome(store: Store, out: RunOutcome) -> None:
    """Save a run with its trajectory, artifacts and labels.

    Every write replaces what the same run said before (keyed by the run id, an artifact's
    name, a label's check): a unit Ray ran twice, its first worker lost, is stored once.
    """
    store.save_run(out.run)
    store.save_trajectory(out.trajectory)
    for a in out.artifacts:
        store.save_artifact(a)
    if out.labels:
        store.save_labels(out.labels)


class RunAgentsJob:
    """Every run spec of one pack (the Job protocol)."""

    name = "run"

    def __init__(
        self, store: Store, pack: LoadedPack, specs: Sequence[RunSpec], executor: Executor
    ) -> None:
        if pack.directory is None:
            raise ValueError(f"pack {pack.pack.id!r} must be on disk to run agents on it")
        self.store = store
        self.pack = pack
        self.specs = list(specs)
        self.executor = executor

    def run_id(self, spec: RunSpec) -> str:
        """The stable id of the run a spec makes."""
        return run_id_for(
            self.pack.pack,
            self.pack.pack.task(spec.task_id),
            spec.harness,
            spec.spec.model_string,
            spec.versions,
            spec.repeat,
        )

    def plan(self) -> list[Unit[RunSpec]]:
        """One unit per spec, keyed by its run id."""
        return [Unit(self.run_id(s), f"{s.task_id} r{s.repeat}", s) for s in self.specs]

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored run states: completed is final, a limit reached a final failure.

        The rest (running when killed, failed on an error) are run again.
        """
        out: dict[str, ResultState] = {}
        for run_id in keys:
            run = self.store.find_run(run_id)
            if run is None:
                continue
            if run.status == RunStatus.COMPLETED:
                out[run_id] = "ok"
            elif run.status in _FINAL_FAILURES:
                out[run_id] = "final_error"
            else:
                out[run_id] = "retryable"
        return out

    async def run(self, unit: Unit[RunSpec]) -> RunOutcome:
        """Execute one run."""
        return await self.executor.run(unit.payload)

    def assess(self, result: RunOutcome) -> Assessment:
        """Completed is ok; a limit is a final failure; anything else is retried next time."""
        status = result.run.status
        if status == RunStatus.COMPLETED:
            return Assessment(True)
        if status in _FINAL_FAILURES:
            return Assessment(False, status.value.replace("_", " "))
        return Assessment(False, short_reason(result.run.error, default=status.value), True)

    def write(self, results: Sequence[RunOutcome]) -> None:
        """Each run with its trajectory and artifacts."""
        for out in results:
            store_outcome(self.store, out)


def specs_for(
    pack: LoadedPack,
    *,
    tasks: Sequence[str],
    harness: str,
    model: dict[str, object],
    versions: dict[str, str],
    repeats: int,
    home: Path,
    sandbox: str = "auto",
    unsafe_no_sandbox: bool = False,
) -> list[RunSpec]:
    """A spec per (task, repeat)."""
    assert pack.directory is not None
    return [
        RunSpec(
            pack_dir=str(pack.directory),
            task_id=t,
            harness=harness,
            model=dict(model),
            versions=dict(versions),
            repeat=k,
            home=str(home.resolve()),
            sandbox=sandbox,
            unsafe_no_sandbox=unsafe_no_sandbox,
        )
        for t in tasks
        for k in range(repeats)
    ]
