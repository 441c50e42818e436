"""Ablations paired by task: does a condition (a skill version, a prompt) change the score?

For each task run under both the condition and the baseline, the task's delta is the mean
score under the condition minus the mean under the baseline; the ablation's Δ is the mean
of those per-task deltas, with a bootstrap CI over tasks. Tasks run under only one of the
two are listed, never silently dropped, and never mixed in: an unpaired task would compare
different tasks, not conditions.

Pooling groups (harnesses) into one Δ has three definitions here, and a report names the one
it shows: :func:`pooled_by_tasks` (ours: the mean over every paired task of every group),
:func:`pooled_by_runs` (group Δs weighted by their paired runs) and :func:`pooled_by_groups`
(the plain mean of the group Δs). LH-Bench Table 7's "Pooled (n=7)" row is not one of them
throughout: from its per-harness rows (n = 3, 2, 2), its Overall (+0.33) is the paired-run
weighted mean (0.327; the plain mean is 0.357) while its four rubric columns (+0.28, +0.28,
+0.37, +0.56) are the plain means of the harness Δs (the weighted ones are 0.289, 0.287,
0.337, 0.433).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from lhbench.stats.intervals import bootstrap_ci

__all__ = [
    "PairedDelta",
    "paired_deltas",
    "pooled_by_groups",
    "pooled_by_runs",
    "pooled_by_tasks",
]


@dataclass(frozen=True)
class PairedDelta:
    """One condition against the baseline, paired by task.

    Attributes:
        condition: The condition's value (e.g. ``v1``).
        baseline: The baseline's value (e.g. ``none``).
        delta: Mean over paired tasks of (condition mean − baseline mean); NaN if none.
        ci: 95% percentile bootstrap CI of ``delta`` over tasks.
        n_tasks: Tasks run under both.
        n_runs: Runs under the condition on those tasks (LH-Bench's paired-run n).
        per_task: Each paired task's delta.
        missing: Tasks run under only one of the two (not in ``delta``).
    """

    condition: str
    baseline: str
    delta: float
    ci: tuple[float, float]
    n_tasks: int
    n_runs: int
    per_task: dict[Hashable, float] = field(default_factory=dict)
    missing: list[Hashable] = field(default_factory=list)


def paired_deltas(
    scores: Iterable[tuple[Hashable, str, float]],
    baseline: str,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[PairedDelta]:
    """Every other condition against ``baseline``, each paired by task.

    Args:
        scores: (task, condition, score) per run; several runs of a task and condition
            are averaged first, so a task with more repeats does not weigh more.
        baseline: The condition every other is compared with.
        n_resamples: Bootstrap resamples over tasks.
        seed: Bootstrap seed.

    Raises:
        ValueError: ``baseline`` does not occur in ``scores``.
    """
    cells: dict[str, dict[Hashable, list[float]]] = defaultdict(lambda: defaultdict(list))
    for task, condition, value in scores:
        cells[condition][task].append(float(value))
    if baseline not in cells:
        raise ValueError(
            f"baseline {baseline!r} has no scored runs; conditions present: {sorted(cells)}"
        )
    base = {t: float(np.mean(v)) for t, v in cells[baseline].items()}
    out = []
    for condition in sorted(c for c in cells if c != baseline):
        mine = {t: float(np.mean(v)) for t, v in cells[condition].items()}
        paired = sorted((t for t in mine if t in base), key=str)
        missing = sorted(set(mine).symmetric_difference(base), key=str)
        per_task = {t: mine[t] - base[t] for t in paired}
        deltas = list(per_task.values())
        if deltas:
            delta = float(np.mean(deltas))
            ci = bootstrap_ci(deltas, n_resamples=n_resamples, seed=seed)
        else:
            delta, ci = float("nan"), (float("nan"), float("nan"))
        out.append(
            PairedDelta(
                condition=condition,
                baseline=baseline,
                delta=delta,
                ci=ci,
                n_tasks=len(paired),
                n_runs=sum(len(cells[condition][t]) for t in paired),
                per_task=per_task,
                missing=missing,
            )
        )
    return out


def pooled_by_tasks(groups: Sequence[PairedDelta]) -> float:
    """Mean of every paired task's delta across groups (each paired task counts once)."""
    deltas = [d for g in groups for d in g.per_task.values()]
    return float(np.mean(deltas)) if deltas else float("nan")


def pooled_by_runs(groups: Sequence[PairedDelta]) -> float:
    """Group deltas weighted by their paired runs (LH-Bench Table 7's Overall column only)."""
    used = [g for g in groups if g.n_tasks]
    total = sum(g.n_runs for g in used)
    return sum(g.delta * g.n_runs for g in used) / total if total else float("nan")


def pooled_by_groups(groups: Sequence[PairedDelta]) -> float:
    """The plain mean of the group deltas (LH-Bench Table 7's rubric columns only)."""
    deltas = [g.delta for g in groups if g.n_tasks]
    return float(np.mean(deltas)) if deltas else float("nan")
