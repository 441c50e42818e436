"""Agent-as-a-Judge: a verdict judge (agent with tools, or plain LLM) on each run's final state.

The plain LLM judge reads only the task and the trajectory: its requests are prepared in
windows ahead of the calls (one trajectory load per run, one cache query per window, no
replay), and its verdicts are written with the responses they came from, one transaction
per batch. The agent judge replays each run's final state for its tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lhbench.jobs.batches import DEFAULT_WINDOW, RequestWindows, drain_caches
from lhbench.jobs.runner import Assessment, Unit, short_reason
from lhbench.jobs.states import StateProvider, state_id
from lhbench.judges import StateRef, VerdictItem, VerdictJudge
from lhbench.models import PreparedRequest, ReplyCache
from lhbench.schema import Run, Trajectory, Verdict
from lhbench.stats.aj_modes import verdict_failure_modes
from lhbench.store import ResultState, Store

if TYPE_CHECKING:
    from lhbench.jobs.packs import LoadedPack

__all__ = ["VerdictJob", "store_failure_modes", "verdict_failure_modes"]


@dataclass(frozen=True)
class _VerdictUnit:
    run: Run
    repeat: int


@dataclass(frozen=True)
class _PreparedVerdict:
    item: VerdictItem
    request: PreparedRequest


class VerdictJob:
    """Every run × repeat, judged by one verdict judge (the Job protocol)."""

    name = "judge-states"

    def __init__(
        self,
        store: Store,
        runs: Sequence[Run],
        states: StateProvider,
        judge: VerdictJudge,
        *,
        repeats: int = 1,
        window: int = DEFAULT_WINDOW,
    ) -> None:
        self.store = store
        self.runs = [r for r in runs if states.task(r) is not None]
        self.states = states
        self.judge = judge
        self.repeats = repeats
        cache = judge.client.cache if not judge.agentic else None
        self.caches: list[ReplyCache] = [cache] if cache is not None else []
        self._planned: list[Unit[_VerdictUnit]] = []
        self._windows: RequestWindows[_VerdictUnit, _PreparedVerdict] = RequestWindows(
            self._prepare, size=window
        )

    def plan(self) -> list[Unit[_VerdictUnit]]:
        """One unit per run and repeat; the key needs no replay (the state id is derived)."""
        out = []
        for run in self.runs:
            task = self.states.task(run)
            assert task is not None
            sid = state_id(run, task)
            for k in range(self.repeats):
                item = VerdictItem(run, task, Trajectory(run_id=run.id), StateRef(sid), k)
                label = f"{run.id} × {self.judge.identity.label}" + (f" #{k}" if k else "")
                out.append(Unit(self.judge.key(item), label, _VerdictUnit(run, k)))
        self._planned = out
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored verdict states (the plain LLM judge's requests are prepared from here on)."""
        states = self.store.verdict_states(keys)
        if not self.judge.agentic:
            self._windows.plan(self._planned, states)
        return states

    def _prepare(self, units: Sequence[Unit[_VerdictUnit]]) -> dict[str, _PreparedVerdict]:
        """A window of the plain LLM judge: trajectories once per run, one cache query."""
        trajectories: dict[str, Trajectory] = {}
        out: dict[str, _PreparedVerdict] = {}
        for unit in units:
            run = unit.payload.run
            task = self.states.task(run)
            assert task is not None
            traj = trajectories.get(run.id)
            if traj is None:
                traj = trajectories[run.id] = self.store.get_trajectory(run.id)
            item = VerdictItem(run, task, traj, StateRef(state_id(run, task)), unit.payload.repeat)
            out[unit.key] = _PreparedVerdict(item, self.judge.request(item))
        for cache in self.caches:
            cache.preload(p.request.key for p in out.values())
        return out

    async def run(self, unit: Unit[_VerdictUnit]) -> Verdict:
        """Judge: the plain LLM judge from its prepared request; the agent judge on a replay."""
        prepared = await self._windows.get(unit)
        if prepared is not None:
            return await self.judge.judge(prepared.item, request=prepared.request)
        run = unit.payload.run
        trajectory = self.store.get_trajectory(run.id)
        state = await self.states.get(run, trajectory)
        item = VerdictItem(run, self.states.task(run), trajectory, state.ref, unit.payload.repeat)
        return await self.judge.judge(item)

    def assess(self, result: Verdict) -> Assessment:
        """A verdict is ok; an error says why (retryable when the model was never reached)."""
        if result.verdict is not None:
            return Assessment(True)
        return Assessment(False, short_reason(result.error), result.retryable)

    def write(self, results: Sequence[Verdict]) -> None:
        """Verdicts and the responses they came from, one transaction per batch."""
        self.store.save_verdicts(results, cache=drain_caches(self.caches, self.store))


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
