"""What the Agent-as-a-Judge tables read, and nothing else: verdicts' columns, run outcomes, tags.

A team's store holds 100,000 runs and 50,000 verdicts; ``lhbench aj score`` used to load
the report's data (every run and label as a pydantic model) to read a handful of columns
of each. :meth:`AjData.from_store` reads those columns only (the search answer a run
belongs to from the few runs whose metadata names one), and :meth:`AjData.from_report`
takes them from report data already loaded, so the CLI, the report and the web page feed
one implementation of the tables (:mod:`lhbench.reporting.aj`, ``aj_breakdown``).
The label precedence and staleness rules are the report's own (:func:`outcome_labels`,
:func:`label_is_stale`).
"""

from __future__ import annotations

import weakref
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lhbench.reporting.data import ReportData, label_is_stale, outcome_labels
from lhbench.schema import FailureKind, Task, Verdict
from lhbench.stats.aj_modes import VerdictReads
from lhbench.store import JudgeFact, Store, VerdictDetail

__all__ = ["AjData", "AjRun", "AjTask", "aj_data", "answer_of", "verdict_detail"]


def verdict_detail(v: Verdict) -> VerdictDetail:
    """A stored verdict model's fields the tables read (what the store reads lean)."""
    j = v.judge
    return VerdictDetail(
        v.id,
        v.run_id,
        JudgeFact(j.model, j.kind, j.key, j.settings),
        v.verdict,
        v.repeat,
        v.failure_mode,
        v.tool_calls,
        tuple(v.tools_used),
    )


@dataclass(frozen=True, slots=True)
class AjRun:
    """Where a run belongs: its pack and task, and its search answer (None: not a search item)."""

    pack_id: str
    task_id: str
    answer: str | None = None


@dataclass(frozen=True, slots=True)
class AjTask:
    """A task's tags and environment kind, as the tables group by them."""

    category: str | None
    subdomain: str | None
    kind: str | None

    @classmethod
    def of(cls, task: Task) -> AjTask:
        """From a task model."""
        kind = task.environment.kind
        return cls(task.tags.category, task.tags.subdomain, kind.value if kind else None)


def answer_of(pack_id: str, task_id: str, metadata: Mapping[str, Any]) -> str | None:
    """The search answer (trajectory) a search item's run belongs to: ``pack/task/answer``."""
    if "item" not in metadata or "answer" not in metadata:
        return None
    return f"{pack_id}/{task_id}/{metadata['answer']}"


def _places(
    runs: Iterable[tuple[str, str, str, Mapping[str, Any]]], judged: Container[str]
) -> dict[str, AjRun]:
    """Run id -> place, of the runs (id, pack, task, metadata) judged or part of a search answer.

    The tables read the place of a judged run, and count every search answer's items
    (judged or not); no other run's place is read, so none is made (100,000 runs, a few
    thousand judged).
    """
    out: dict[str, AjRun] = {}
    for rid, pack_id, task_id, metadata in runs:
        answer = answer_of(pack_id, task_id, metadata)
        if answer is not None or rid in judged:
            out[rid] = AjRun(pack_id, task_id, answer)
    return out


@dataclass
class AjData:
    """Verdicts, each judged run's outcome and place, and the current tasks' tags.

    ``runs`` and ``verdicts`` leave out runs that failed for infrastructure, as the report
    does; ``runs`` holds the judged runs and every search item (what the tables read);
    ``outcomes`` each judged run's deciding label (current labels only, unless
    ``include_stale``).
    """

    verdicts: list[VerdictDetail]
    runs: dict[str, AjRun]
    outcomes: dict[str, bool]
    tasks: dict[tuple[str, str], AjTask]

    def label_of(self, run_id: str) -> bool | None:
        """The run's ground-truth outcome (None: no deciding label)."""
        return self.outcomes.get(run_id)

    def task_of(self, run: AjRun) -> AjTask | None:
        """The task a run was on, if its pack is current."""
        return self.tasks.get((run.pack_id, run.task_id))

    @classmethod
    def from_report(cls, data: ReportData) -> AjData:
        """From report data already loaded (the report and the web page)."""
        verdicts = (
            [verdict_detail(v) for v in data.verdicts]
            if data.lean_verdicts is None
            else data.lean_verdicts
        )
        outcomes: dict[str, bool] = {}
        for v in verdicts:
            if (passed := data.label_of(v.run_id)) is not None:
                outcomes[v.run_id] = passed
        judged = {v.run_id for v in verdicts}
        return cls(
            verdicts=verdicts,
            runs=_places(
                ((rid, r.pack_id, r.task_id, r.metadata) for rid, r in data.runs.items()), judged
            ),
            outcomes=outcomes,
            tasks={k: AjTask.of(t) for k, t in data.tasks.items()},
        )

    @classmethod
    def from_store(
        cls,
        store: Store,
        *,
        include_stale: bool = False,
        check_packs: bool = True,
        reads: VerdictReads | None = None,
    ) -> AjData:
        """Read what the tables need, lean: columns and a few documents, no run models.

        Args:
            store: The store.
            include_stale: Keep labels made by a check of a task whose content changed.
            check_packs: First re-register packs whose directory changed, as the report
                does (:func:`lhbench.jobs.packs.refresh_packs`).
            reads: The runs', labels' and verdicts' columns, when already read.
        """
        if check_packs:
            from lhbench.jobs.packs import refresh_packs

            refresh_packs(store)
        tasks: dict[tuple[str, str], AjTask] = {}
        task_hashes: dict[tuple[str, str], str] = {}
        for pack_id, content_hash in store.current_packs().items():
            for t in store.get_pack(content_hash).tasks:
                tasks[(pack_id, t.id)] = AjTask.of(t)
                task_hashes[(pack_id, t.id)] = t.content_hash
        infra = FailureKind.INFRASTRUCTURE.value
        reads = reads or VerdictReads.of(store)
        places = reads.places
        answers = store.run_metadata_having("answer")
        dropped = {rid for rid, *_, failure_kind in places if failure_kind == infra}
        verdicts = [v for v in reads.verdicts if v.run_id not in dropped]
        judged = {v.run_id for v in verdicts}
        runs = _places(
            (
                (rid, pack_id, task_id, answers.get(rid, {}))
                for rid, pack_id, task_id, _pack_hash, failure_kind in places
                if failure_kind != infra
            ),
            judged,
        )
        kept = []
        for lab in reads.labels:
            if lab.run_id not in judged:  # only a judged run's outcome is read
                continue
            run = runs.get(lab.run_id)
            current = task_hashes.get((run.pack_id, run.task_id)) if run else None
            if not include_stale and label_is_stale(lab.source, lab.check_hash, current):
                continue
            kept.append(lab)
        outcomes = {rid: bool(lab.passed) for rid, lab in outcome_labels(kept).items()}
        return cls(
            verdicts=verdicts,
            runs=runs,
            outcomes=outcomes,
            tasks=tasks,
        )


# the report and the web page call both AJ sections on one report data: taken once
_last: tuple[weakref.ref[ReportData], tuple[int, ...], AjData] | None = None


def aj_data(data: ReportData | AjData) -> AjData:
    """The tables' input from either kind of data (the last report data's, kept while it lives)."""
    global _last
    if isinstance(data, AjData):
        return data
    # the same object with the same lists: report data is not changed once sections read it
    verdicts = data.verdicts if data.lean_verdicts is None else data.lean_verdicts
    shape = (id(verdicts), len(verdicts), id(data.runs), len(data.runs), id(data.labels))
    if _last is not None and _last[0]() is data and _last[1] == shape:
        return _last[2]
    out = AjData.from_report(data)
    _last = (weakref.ref(data, _forget), shape, out)
    return out


def _forget(ref: weakref.ref[ReportData]) -> None:
    # the report data is gone: so is what was taken from it (a web server lives on)
    global _last
    if _last is not None and _last[0] is ref:
        _last = None
