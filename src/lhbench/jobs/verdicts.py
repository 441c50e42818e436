"""Agent-as-a-Judge: a verdict judge (agent with tools, or plain LLM) on each run's final state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lhbench.jobs.runner import Assessment, Unit, short_reason
from lhbench.jobs.states import StateProvider, state_id
from lhbench.judges import StateRef, VerdictItem, VerdictJudge
from lhbench.schema import EnvironmentKind, Run, Trajectory, Verdict
from lhbench.store import ResultState, Store

__all__ = ["STATE_TOOLS", "VerdictJob", "auto_failure_mode"]


@dataclass(frozen=True)
class _VerdictUnit:
    run: Run
    repeat: int


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
    ) -> None:
        self.store = store
        self.runs = [r for r in runs if states.task(r) is not None]
        self.states = states
        self.judge = judge
        self.repeats = repeats

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
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Stored verdict states."""
        return self.store.verdict_states(keys)

    async def run(self, unit: Unit[_VerdictUnit]) -> Verdict:
        """Replay (once per run) and judge."""
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
        """Verdicts, one transaction per batch."""
        self.store.save_verdicts(results)


STATE_TOOLS = {
    EnvironmentKind.FILESYSTEM: {
        "list_directory",
        "directory_tree",
        "read_file",
        "search_files",
        "get_file_info",
    },
    EnvironmentKind.SQL: {"list_tables", "describe_table", "query"},
}


def auto_failure_mode(verdict: Verdict, label: bool, kind: EnvironmentKind) -> str | None:
    """AJ-Bench A.7 modes (a) and (b) for a wrong agent verdict, from its tool use.

    (a) no or omitted tool call: it never looked at the final state; (b) wrong tool: it
    called tools, but none that read this environment's state. (c) misread output and
    (d) wrong reasoning need a reviewer (``lhbench aj tag``).
    """
    if verdict.verdict is None or (verdict.verdict == "PASS") == label:
        return None
    if verdict.failure_mode:
        return verdict.failure_mode
    if verdict.judge.kind.value != "agent":
        return None
    if not verdict.tools_used:
        return "a"
    if not set(verdict.tools_used) & STATE_TOOLS.get(kind, set()):
        return "b"
    return None
