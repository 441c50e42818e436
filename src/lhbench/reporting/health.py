"""Grading health: parse failures, errors, unscorable dimensions and stale grades."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from numpy.typing import NDArray

from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Section, Table
from lhbench.schema import GradeStatus
from lhbench.store import GradeColumns
from lhbench.store.grade_columns import STATUSES

__all__ = ["grading_health_section"]


def grading_health_section(data: ReportData) -> Section:
    """Parse failures, errors and unscorable dimensions, kept out of every score above."""
    sec = Section("Grading health")
    every = data.all_grade_columns
    if not len(every) and not data.failed_votes:
        sec.empty = "No grades yet: `lhbench judge` grades runs."
        return sec
    table = Table(
        slug="grading_health",
        title="Grades by status per judge, every stored grade (failed grades and unscorable "
        "dimensions are excluded from scores; stale ones from the analysis)",
        columns=[
            "rubric",
            "version",
            "tier",
            "judge",
            "ok",
            "parse errors",
            "errors (retryable)",
            "errors (final)",
            "unscorable dims",
            "stale",
        ],
        notes=[
            "retryable: the model was never reached (timeout, 429, 5xx, refused); the next "
            "`lhbench judge` asks again. parse errors are final (`--retry-errors` re-asks)."
        ],
    )
    counts = _health_counts(every, data.current_mask)
    for k, c in sorted(counts.items()):
        table.rows.append([*k, *c])
    sec.tables.append(table)
    if data.failed_votes:
        votes = Table(
            slug="pairwise_failures",
            title="Pairwise-judge comparisons that failed (kept, not counted as votes)",
            columns=["judge", "status", "retryable", "count"],
        )
        vc: dict[tuple[str, str, bool], int] = defaultdict(int)
        for v in data.failed_votes:
            vc[(v.annotator, v.status, v.retryable)] += 1
        for (judge, status, retryable), n in sorted(vc.items()):
            votes.rows.append([judge, status, "yes" if retryable else "no", n])
        sec.tables.append(votes)
    return sec


def _health_counts(
    every: GradeColumns, current: NDArray[np.bool_]
) -> dict[tuple[str, str, str, str], list[int]]:
    """Per (rubric, version, tier, judge label): the health table's six counts.

    ok, parse errors, retryable and final errors, unscorable dimensions and stale grades,
    as a numpy group-by over the columns.
    """
    # a group: the rubric tier without its content hash, and the judge's label
    groups: dict[tuple[str, str, str, str], int] = {}
    key_part = [(k[0], k[1], k[2]) for k in every.keys]
    pair = np.zeros((max(len(every.keys), 1), max(len(every.judges), 1)), dtype=np.int64)
    for ki, kp in enumerate(key_part):
        for ji, judge in enumerate(every.judges):
            pair[ki, ji] = groups.setdefault((*kp, judge.label), len(groups))
    group = pair[every.key, every.judge]
    ok = every.status == STATUSES.index(GradeStatus.OK)
    parse = every.status == STATUSES.index(GradeStatus.PARSE_ERROR)
    failed = ~ok & ~parse
    columns = (
        ok,
        parse,
        failed & every.retryable,
        failed & ~every.retryable,
        every.unscorable,
        ~current,
    )
    n = len(groups)
    table = np.stack([np.bincount(group, weights=c, minlength=n) for c in columns], axis=1)
    present = np.unique(group)
    names = list(groups)
    return {names[g]: [int(x) for x in table[g]] for g in present.tolist()}
