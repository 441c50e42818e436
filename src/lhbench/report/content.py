"""Programmatic content: 3-point vs 5-point chapter grading, as LH-Bench's Table 6.

Per run (and its agent): the course score on each scale, the chapters it averages and
those excluded (a failed grade), and the width of the 95 % t-interval over chapters; per
scale: how many pairs of runs tie on the course score. Every figure is computed by
:mod:`lhbench.stats.course` and labelled with its definition and n.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from lhbench.report.data import ReportData, group_label
from lhbench.report.tables import Section, Table
from lhbench.schema import Scale
from lhbench.stats.course import (
    CHAPTER_SCORE_DEFINITION,
    CI_DEFINITION,
    COURSE_SCORE_DEFINITION,
    EXCLUSION_DEFINITION,
    NORMALISATION,
    TIE_DEFINITION,
    course_scores,
    tie_share,
)

__all__ = ["SCALE_NAMES", "content_scales_section"]

SCALE_NAMES = {Scale.ZERO_TO_TWO: "3-point", Scale.ONE_TO_FIVE: "5-point"}


def content_scales_section(data: ReportData, by: Sequence[str]) -> Section:
    """The 3-point vs 5-point comparison (one line when no chapter was graded)."""
    sec = Section("Programmatic content: 3-point vs 5-point chapter scores")
    if not data.chapter_grades:
        sec.empty = "No chapter grades yet: `lhbench content grade-chapters` grades chapters."
        return sec
    scores = course_scores(data.chapter_grades)
    scales = [s for s in SCALE_NAMES if any(k[1] is s for k in scores)]
    runs = sorted({k[0] for k in scores})
    chapter_total = sum(cs.n for cs in scores.values())
    excluded_total = sum(len(cs.excluded) for cs in scores.values())
    sec.notes = [
        f"Normalised criterion score: {NORMALISATION}.",
        f"{CHAPTER_SCORE_DEFINITION}; {COURSE_SCORE_DEFINITION}.",
        f"CI: {CI_DEFINITION}. n = graded chapters of the run on that scale.",
        f"{excluded_total} chapter score(s) excluded ({EXCLUSION_DEFINITION}), "
        f"{chapter_total} used.",
    ]
    if data.stale_chapter_grades:
        sec.notes.append(
            f"{data.stale_chapter_grades} chapter grade(s) left out: made with a rubric that is "
            "not the current one (`--include-stale` keeps them)."
        )
    columns = ["agent", "run"]
    for s in scales:
        name = SCALE_NAMES[s]
        columns += [f"{name} score", f"{name} n", f"{name} excluded", f"{name} CI width"]
    per_run = Table(
        slug="content_scales_runs",
        title="Course score per run on each scale (normalised 0-1, mean over chapters)",
        columns=columns,
        digits=3,
    )
    for run_id in runs:
        run = data.runs.get(run_id)
        row: list[str | int | float | None] = [
            group_label(run, by) if run else "(run not in store)",
            run_id,
        ]
        for s in scales:
            cs = scores.get((run_id, s))
            if cs is None:
                row += [None, 0, 0, None]
            else:
                row += [cs.mean, cs.n, len(cs.excluded), cs.ci_width]
        per_run.rows.append(row)
    per_scale = Table(
        slug="content_scales_summary",
        title="Per scale: ties between runs and CI widths",
        columns=[
            "scale",
            "runs",
            "pairs",
            "tied pairs",
            "tie share",
            "mean CI width",
            "CI widths n",
        ],
        notes=[f"{TIE_DEFINITION}.", "Mean CI width over runs with n >= 2 chapters."],
        digits=3,
    )
    for s in scales:
        mine = {k[0]: cs for k, cs in scores.items() if k[1] is s}
        ties = tie_share({r: cs.mean for r, cs in mine.items()})
        widths = [cs.ci_width for cs in mine.values() if not math.isnan(cs.ci_width)]
        per_scale.rows.append(
            [
                SCALE_NAMES[s],
                len(mine),
                ties.pairs,
                ties.ties,
                ties.share,
                statistics.fmean(widths) if widths else None,
                len(widths),
            ]
        )
    sec.tables = [per_run, per_scale]
    return sec
