"""Agent-as-a-Judge in the search domain: answers split into items, each labelled and judged.

A search pack (environment ``web``) holds a recorded corpus and, per task, answers split
into items (:mod:`lhbench.envs.web`). Every item becomes a run (``<pack>--<task>--<answer>
--<item>``) whose final state is the item and its answer; the task's verify script labels
it, and the verdict judge judges it with the recorded web as its tools. The report folds
an answer's items into one result before F1, as AJ-Bench scores its search domain
(:func:`lhbench.reporting.aj.per_trajectory`: the answer passes when every item passes, i.e.
:func:`answer_scores` = 1); the item-level F1 is shown apart, labelled.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lhbench.envs.web import SearchAnswer, build_index, load_answers, load_corpus
from lhbench.jobs.fixtures import FixtureJob
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.runner import Unit
from lhbench.jobs.states import RunState, StateProvider, state_id
from lhbench.judges import StateRef
from lhbench.judges.search_item import ItemUnderReview
from lhbench.schema import EnvironmentKind, Run, Trajectory, Verdict
from lhbench.store import Store

__all__ = [
    "SearchFixtureJob",
    "SearchStates",
    "answer_scores",
    "is_search_pack",
    "search_items",
]

ITEM_FILE = "item.json"
ANSWER_FILE = "answer.md"


def is_search_pack(pack: LoadedPack) -> bool:
    """Whether the pack is a search pack (web environment with a recorded corpus)."""
    return (
        pack.pack.environment == EnvironmentKind.WEB
        and pack.directory is not None
        and (pack.directory / "corpus").is_dir()
    )


@dataclass(frozen=True)
class _ItemFixture:
    task_id: str
    answer: SearchAnswer
    item_id: str
    trajectory: Path


def search_items(pack: LoadedPack) -> list[_ItemFixture]:
    """Every item of every answer of the pack's tasks, in order."""
    out = []
    for task in pack.pack.tasks:
        d = pack.task_dir(task.id)
        if d is None:
            continue
        for ans in load_answers(d):
            out += [
                _ItemFixture(task.id, ans, it.id, d / "answers" / f"{ans.id}.jsonl")
                for it in ans.items
            ]
    return out


def _run_id(pack: LoadedPack, fx: _ItemFixture) -> str:
    return f"{pack.pack.id}--{fx.task_id}--{fx.answer.id}--{fx.item_id}"


class SearchFixtureJob(FixtureJob):
    """Every item of every answer of a search pack, stored as a run (the Job protocol)."""

    def plan(self) -> list[Unit[_ItemFixture]]:  # type: ignore[override]
        """One unit per item."""
        return [
            Unit(_run_id(self.pack, fx), f"{fx.task_id}/{fx.answer.id}/{fx.item_id}", fx)
            for fx in search_items(self.pack)
        ]

    async def run(self, unit: Unit[_ItemFixture]) -> tuple[Run, Trajectory]:  # type: ignore[override]
        """Read the answer's trajectory (strictly) as this item's run."""
        fx = unit.payload
        return await asyncio.to_thread(
            self.read_as_run,
            unit.key,
            fx.trajectory,
            fx.task_id,
            source=f"tasks/{fx.task_id}/answers/{fx.answer.id}.json#{fx.item_id}",
            metadata={"trajectory": fx.answer.id, "answer": fx.answer.id, "item": fx.item_id},
        )


class SearchStates(StateProvider):
    """Final states of search items: the item and its answer, beside the corpus index."""

    def __init__(self, store: Store, pack: LoadedPack, workdir: Path, **kw: Any) -> None:
        super().__init__(store, pack, workdir, **kw)
        self._lock = threading.Lock()
        self._answers: dict[tuple[str, str], SearchAnswer] = {}

    def index(self) -> Path:
        """The corpus's FTS5 index for this pack content (compiled once)."""
        assert self.pack.directory is not None
        out = self.workdir / f"corpus-{self.pack.pack.content_hash[:16]}.sqlite"
        with self._lock:
            if not out.is_file():
                build_index(load_corpus(self.pack.directory / "corpus"), out)
        return out

    def answer(self, task_id: str, answer_id: str) -> SearchAnswer:
        """One answer of one task (read once)."""
        key = (task_id, answer_id)
        with self._lock:
            if key not in self._answers:
                d = self.pack.task_dir(task_id)
                if d is None:
                    raise LookupError(f"pack {self.pack.pack.id!r} is not on disk")
                for ans in load_answers(d):
                    self._answers[(task_id, ans.id)] = ans
            if key not in self._answers:
                raise LookupError(f"task {task_id!r} has no answer {answer_id!r}")
            return self._answers[key]

    def under_review(self, run: Run) -> ItemUnderReview:
        """The answer and item a run stands for."""
        ans = self.answer(run.task_id, str(run.metadata.get("answer")))
        it = ans.item(str(run.metadata.get("item")))
        return ItemUnderReview(ans.answer, it.text, tuple(it.sources))

    def _make(self, run: Run, trajectory: Trajectory | None) -> RunState:
        task = self.task(run)
        if task is None:
            raise LookupError(f"task {run.task_id!r} is not in pack {self.pack.pack.id!r}")
        if "item" not in run.metadata:
            raise LookupError(f"run {run.id!r} is not an item of a search answer")
        base = self.workdir / run.id
        state = base / "state"
        state.mkdir(parents=True, exist_ok=True)
        traj = self.trajectory(run, trajectory)
        traj_file = base / "trajectory.json"
        traj_file.write_text(traj.model_dump_json(), encoding="utf-8")
        ans = self.answer(run.task_id, str(run.metadata["answer"]))
        it = ans.item(str(run.metadata["item"]))
        (state / ANSWER_FILE).write_text(ans.answer, encoding="utf-8")
        (state / ITEM_FILE).write_text(
            json.dumps({"id": it.id, "text": it.text, "sources": it.sources}), encoding="utf-8"
        )
        ref = StateRef(state_id(run, task), state, None, traj_file)
        return RunState(ref, EnvironmentKind.WEB, True)


def answer_scores(runs: Sequence[Run], verdicts: Sequence[Verdict]) -> dict[str, float]:
    """Per answer (``task/answer``): the share of its items judged PASS (errors left out)."""
    by_run = {r.id: f"{r.task_id}/{r.metadata.get('answer')}" for r in runs if "item" in r.metadata}
    tally: dict[str, list[int]] = {}
    for v in verdicts:
        if v.verdict is None or v.run_id not in by_run:
            continue
        tally.setdefault(by_run[v.run_id], []).append(v.verdict == "PASS")
    return {k: sum(vs) / len(vs) for k, vs in sorted(tally.items())}
