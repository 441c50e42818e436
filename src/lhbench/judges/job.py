"""Grading jobs over the store: resumable, bounded, every grade written as soon as it exists.

A grade's cache key is computed before any call; keys already in the store are skipped,
so a killed job restarted does only what is missing, and a finished one costs nothing.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from lhbench.judges.rubric import Evidence, PreparedPrompt, RubricJudge
from lhbench.schema import Artifact, Grade, GradeStatus, Rubric, Run, Task, Tier, Trajectory

__all__ = ["GradeStore", "JudgeJobSummary", "load_evidence", "noise_floor", "run_judge_job"]


class GradeStore(Protocol):
    """What a grading job needs of a store (lhbench.store.Store provides it)."""

    def has_grade(self, cache_key: str) -> bool:
        """Whether a grade with this key is stored."""

    def save_grade(self, grade: Grade) -> bool:
        """Store a grade (a no-op for a known key)."""

    def get_trajectory(self, run_id: str) -> Trajectory:
        """A run's steps."""

    def list_artifacts(self, run_id: str) -> list[Artifact]:
        """A run's artifacts."""

    def get_task(self, pack_hash: str, task_id: str) -> Task | None:
        """A task of a stored pack version."""

    def latest_pack_hash(self, pack_id: str) -> str | None:
        """The newest stored version of a pack."""


@dataclass
class JudgeJobSummary:
    """What a grading job did."""

    planned: int = 0
    skipped: int = 0
    graded: int = 0
    ok: int = 0
    parse_errors: int = 0
    errors: int = 0
    unscorable_dimensions: int = 0
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    grades: list[Grade] = field(default_factory=list)

    def add(self, grade: Grade) -> None:
        """Count one new grade."""
        self.graded += 1
        self.grades.append(grade)
        if grade.status == GradeStatus.OK:
            self.ok += 1
        elif grade.status == GradeStatus.PARSE_ERROR:
            self.parse_errors += 1
        else:
            self.errors += 1
        self.unscorable_dimensions += sum(1 for s in grade.scores if s.score is None)
        self.requests += grade.usage.requests
        self.input_tokens += grade.usage.input_tokens
        self.output_tokens += grade.usage.output_tokens
        self.cost_usd += grade.cost_usd or 0.0


def noise_floor(grades: Sequence[Grade]) -> dict[str, float]:
    """Per judge: mean over runs of the SD of its own repeated tier scores (needs repeats ≥ 2)."""
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for g in grades:
        if g.tier_score is not None:
            by[(g.judge.model, g.run_id)].append(g.tier_score)
    per_judge: dict[str, list[float]] = defaultdict(list)
    for (judge, _run), scores in by.items():
        if len(scores) >= 2:
            per_judge[judge].append(statistics.pstdev(scores))
    return {j: (sum(v) / len(v) if v else math.nan) for j, v in per_judge.items()}


def load_evidence(
    store: GradeStore, run: Run, tasks: dict[tuple[str, str], Task | None]
) -> Evidence:
    """The run's task, trajectory and artifacts from the store."""
    key = (run.pack_hash or run.pack_id, run.task_id)
    if key not in tasks:
        pack_hash = run.pack_hash or store.latest_pack_hash(run.pack_id) or ""
        tasks[key] = store.get_task(pack_hash, run.task_id) if pack_hash else None
    return Evidence(
        run=run,
        task=tasks[key],
        trajectory=store.get_trajectory(run.id),
        artifacts=store.list_artifacts(run.id),
    )


async def run_judge_job(
    store: GradeStore,
    runs: Sequence[Run],
    rubric: Rubric,
    tier: Tier,
    judges: Sequence[RubricJudge],
    *,
    repeats: int = 1,
    concurrency: int = 32,
    on_planned: Callable[[int, int], None] | None = None,
    on_grade: Callable[[Grade], None] | None = None,
) -> JudgeJobSummary:
    """Grade every run with every judge ``repeats`` times, skipping grades already stored.

    Args:
        store: Where evidence is read and grades are written.
        runs: The runs to grade.
        rubric: The rubric.
        tier: Which of its tiers.
        judges: The panel.
        repeats: Grades per (run, judge); repeats > 1 measure a judge's noise floor.
        concurrency: Units of work in flight (model calls are further bounded per provider).
        on_planned: Called once with (to do, already stored).
        on_grade: Called after each grade is written.
    """
    summary = JudgeJobSummary()
    tasks: dict[tuple[str, str], Task | None] = {}
    todo: list[tuple[Evidence, RubricJudge, int, PreparedPrompt]] = []
    for run in runs:
        evidence = load_evidence(store, run, tasks)
        for judge in judges:
            prepared = judge.prepare(evidence, rubric, tier)
            for k in range(repeats):
                summary.planned += 1
                if store.has_grade(judge.cache_key(evidence, rubric, tier, k, prepared=prepared)):
                    summary.skipped += 1
                else:
                    todo.append((evidence, judge, k, prepared))
    if on_planned:
        on_planned(len(todo), summary.skipped)
    gate = asyncio.Semaphore(concurrency)

    async def one(evidence: Evidence, judge: RubricJudge, k: int, prepared: PreparedPrompt) -> None:
        async with gate:
            grade = await judge.grade(evidence, rubric, tier, repeat=k, prepared=prepared)
        # written at once: a job killed after this line never redoes this grade
        await asyncio.to_thread(store.save_grade, grade)
        summary.add(grade)
        if on_grade:
            on_grade(grade)

    await asyncio.gather(*(one(e, j, k, p) for e, j, k, p in todo))
    return summary
