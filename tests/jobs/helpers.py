"""The bundled Agent-as-a-Judge fixtures as stored runs with replayed, labelled states."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from lhbench.config import Settings
from lhbench.envs import PostgresDatabases
from lhbench.jobs import (
    FixtureJob,
    RunState,
    StateProvider,
    VerifyJob,
    resolve_pack,
    run_job,
)
from lhbench.schema import Label, Run, Task, Trajectory
from lhbench.store import Store


@dataclass
class Replayed:
    """One fixture run, its replayed final state, and its verify label."""

    name: str
    run: Run
    task: Task
    trajectory: Trajectory
    state: RunState
    label: Label | None


def fixture_states(
    tmp_path: Path,
    tasks: set[str] | None = None,
    *,
    pack: str = "aj-ds-mini",
    postgres: PostgresDatabases | None = None,
    store: Store | None = None,
) -> dict[str, Replayed]:
    """Store the pack's fixtures, replay and verify them; run id -> Replayed."""
    own = store is None
    store = store or Store.open(f"sqlite:///{tmp_path / 'fixtures.db'}")
    try:
        settings = Settings(home=tmp_path / "home")
        loaded = resolve_pack(pack, settings, store)

        async def go() -> dict[str, Replayed]:
            await run_job(FixtureJob(store, loaded))
            runs = [
                r
                for r in store.list_runs(pack_id=loaded.pack.id)
                if tasks is None or r.task_id in tasks
            ]
            provider = StateProvider(store, loaded, tmp_path / "states", postgres=postgres)
            await run_job(VerifyJob(store, runs, provider), concurrency=4)
            labels = {
                lab.run_id: lab for lab in store.list_labels() if lab.source.startswith("verify")
            }
            out = {}
            for r in runs:
                state = await provider.get(r)
                out[r.id] = Replayed(
                    str(r.metadata["trajectory"]),
                    r,
                    loaded.pack.task(r.task_id),
                    store.get_trajectory(r.id),
                    state,
                    labels.get(r.id),
                )
            return out

        return asyncio.run(go())
    finally:
        if own:
            store.close()
