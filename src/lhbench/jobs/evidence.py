"""A run's evidence (task, trajectory, artifacts), loaded once and shared by its units.

Several units need the same run's evidence (three judges, several repeats, every pair it
is in); jobs plan a run's units next to each other. Evidence is loaded on first use and
kept for the most recent runs only, so memory stays bounded whatever the job's size.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict

from lhbench.judges import Evidence
from lhbench.schema import Run, Task
from lhbench.store import Store

__all__ = ["EvidenceCache"]


class EvidenceCache:
    """Evidence per run id, for the ``capacity`` runs asked for most recently."""

    def __init__(self, store: Store, tasks: dict[str, Task], *, capacity: int = 128) -> None:
        self.store = store
        self.tasks = tasks
        self.capacity = capacity
        self._loading: OrderedDict[str, asyncio.Task[Evidence]] = OrderedDict()

    def _load(self, run: Run) -> Evidence:
        return Evidence(
            run=run,
            task=self.tasks.get(run.task_id),
            trajectory=self.store.get_trajectory(run.id),
            artifacts=self.store.list_artifacts(run.id),
        )

    async def get(self, run: Run) -> Evidence:
        """The run's evidence (loaded once)."""
        task = self._loading.get(run.id)
        if task is None:
            task = asyncio.ensure_future(asyncio.to_thread(self._load, run))
            self._loading[run.id] = task
            while len(self._loading) > self.capacity:
                self._loading.popitem(last=False)
        else:
            self._loading.move_to_end(run.id)
        return await asyncio.shield(task)
