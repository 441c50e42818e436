"""Grading health: parse failures, errors, unscorable dimensions and stale grades."""

from __future__ import annotations

from collections import defaultdict

from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Section, Table
from lhbench.schema import GradeStatus

__all__ = ["grading_health_section"]


def grading_health_section(data: ReportData) -> Section:
    """Parse failures, errors and unscorable dimensions, kept out of every score above."""
    sec = Section("Grading health")
    if not data.all_grade_facts and not data.failed_votes:
        sec.empty = "No grades yet: `lhbench judge` grades runs."
        return sec
    # the current grades are the same objects as their stored ones (ReportData.grade_facts)
    current = {id(g) for g in data.grade_facts}
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
    counts: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0] * 6)
    for g in data.all_grade_facts:
        c = counts[(g.rubric_id, g.rubric_version, g.tier.value, g.judge.label)]
        if g.status == GradeStatus.OK:
            c[0] += 1
        elif g.status == GradeStatus.PARSE_ERROR:
            c[1] += 1
        elif g.retryable:
            c[2] += 1
        else:
            c[3] += 1
        c[4] += sum(1 for s in g.scores if s.score is None)
        c[5] += id(g) not in current
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
