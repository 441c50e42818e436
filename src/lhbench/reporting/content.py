"""Programmatic content: course scores on the 3- and 5-point scales, and humans vs scores.

As LH-Bench defines them (§8.3, §8.6, App. J): per agent, the mean over courses of the
course score with a 95% bootstrap CI over courses (Table 6); ties among chapter-level
comparisons; and, where human chapter-level votes are stored, win rates from the humans and
from the chapter scores on the same matched comparisons (Table 10) and their agreement and
Cohen's κ per agent pair and overall (App. J, Table 16). lhbench's own per-run figure (a
run's course score with a t-interval over its chapters) is kept and labelled as such. Every
figure is computed by :mod:`lhbench.stats.course` and printed with its definition and n.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Hashable, Sequence
from typing import Literal, cast

from lhbench.reporting.data import ReportData, group_label
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.schema import Scale
from lhbench.stats import few_clusters_note
from lhbench.stats.course import (
    AGENT_SCORE_DEFINITION,
    AGREEMENT_DEFINITION,
    CHAPTER_SCORE_DEFINITION,
    CI_DEFINITION,
    COMPARISON_DEFINITION,
    COURSE_SCORE_DEFINITION,
    EXCLUSION_DEFINITION,
    MATCHED_DEFINITION,
    NORMALISATION,
    RUN_CI_DEFINITION,
    TIE_DEFINITION,
    WIN_RATE_DEFINITION,
    AgentCourseScore,
    ChapterComparison,
    CourseScore,
    agent_scores,
    chapter_comparisons,
    comparison_win_rates,
    course_scores,
    human_vlm_agreement,
    matched_comparisons,
    tie_share,
)

__all__ = ["SCALE_NAMES", "content_scales_section"]

SCALE_NAMES = {Scale.ZERO_TO_TWO: "3-point", Scale.ONE_TO_FIVE: "5-point"}
Outcome = Literal["a", "b", "tie"]


def content_scales_section(data: ReportData, by: Sequence[str], *, seed: int = 0) -> Section:
    """Table 6, ties, Table 10 and App. J from chapter grades and chapter-level votes."""
    sec = Section("Programmatic content: 3-point vs 5-point chapter scores")
    if not data.chapter_grades:
        sec.empty = "No chapter grades yet: `lhbench content grade-chapters` grades chapters."
        return sec
    scores = course_scores(data.chapter_grades)
    scales = [s for s in SCALE_NAMES if any(k[1] is s for k in scores)]
    runs = sorted({k[0] for k in scores})
    group_of = {r: group_label(data.runs[r], by) for r in runs if r in data.runs}
    course_of: dict[str, Hashable] = {
        r: (data.runs[r].pack_id, data.runs[r].task_id) for r in runs if r in data.runs
    }
    chapter_total = sum(cs.n for cs in scores.values())
    excluded_total = sum(len(cs.excluded) for cs in scores.values())
    sec.notes = [
        f"Normalised criterion score: {NORMALISATION}.",
        f"{CHAPTER_SCORE_DEFINITION}; {COURSE_SCORE_DEFINITION}.",
        f"{excluded_total} chapter score(s) excluded ({EXCLUSION_DEFINITION}), "
        f"{chapter_total} used.",
    ]
    if unknown := [r for r in runs if r not in data.runs]:
        sec.notes.append(f"{len(unknown)} graded run(s) not in the store: left out.")
    if data.stale_chapter_grades:
        sec.notes.append(
            f"{data.stale_chapter_grades} chapter grade(s) left out: made with a rubric that is "
            "not the current one (`--include-stale` keeps them)."
        )
    agents = agent_scores(scores, group_of=group_of, course_of=course_of, seed=seed)
    sec.tables.append(_agent_table(agents, scales))
    sec.tables.append(_run_table(data, scores, scales, runs, by))
    chapter_scores = {
        s: {k[0]: cs.chapter_scores for k, cs in scores.items() if k[1] is s} for s in scales
    }
    comparisons = {
        s: chapter_comparisons(chapter_scores[s], group_of=group_of, course_of=course_of)
        for s in scales
    }
    votes = [
        (v.run_a, v.run_b, v.chapter_id or "", cast(Outcome, v.winner)) for v in data.chapter_votes
    ]
    matched = {s: matched_comparisons(votes, chapter_scores[s], group_of=group_of) for s in scales}
    summary = Table(
        slug="content_scales_summary",
        title="Per scale: ties among chapter-level comparisons, and Table 6's CI half-widths",
        columns=[
            "scale",
            "comparisons",
            "score ties",
            "tie share",
            "matched",
            "score ties (matched)",
            "human ties (matched)",
            "mean ± (Table 6)",
            "agents",
        ],
        notes=[
            f"{COMPARISON_DEFINITION}; {TIE_DEFINITION}.",
            f"{MATCHED_DEFINITION}: LH-Bench's VLM-vs-human tie counts (§8.3: 74 vs 38 VLM ties "
            "on 3- vs 5-point, 36 human ties, n = 275) are over these.",
            "mean ±: mean over agents of half the 95% bootstrap CI over courses.",
        ],
        digits=3,
    )
    for s in scales:
        ties = tie_share(comparisons[s])
        hits, _unmatched = matched[s]
        halves = [a.half_width for (_g, sc), a in agents.items() if sc is s]
        summary.rows.append(
            [
                SCALE_NAMES[s],
                ties.pairs,
                ties.ties,
                ties.share if ties.pairs else None,
                len(hits),
                tie_share(hits).ties if hits else None,
                tie_share(hits, human=True).ties if hits else None,
                statistics.fmean(halves) if halves else None,
                len(halves),
            ]
        )
    sec.tables.append(summary)
    if not data.chapter_votes:
        sec.notes.append(
            "No human chapter-level votes stored: `lhbench content import-votes` stores them; "
            "win rates (LH-Bench Table 10) and human–score agreement (App. J) need them."
        )
        return sec
    sec.tables.extend(_human_tables(data, scales, matched, group_of))
    return sec


def _agent_table(agents: dict[tuple[str, Scale], AgentCourseScore], scales: list[Scale]) -> Table:
    columns = ["agent"]
    for s in scales:
        name = SCALE_NAMES[s]
        columns += [
            f"{name} score",
            f"{name} ci_low",
            f"{name} ci_high",
            f"{name} ±",
            f"{name} courses",
            f"{name} chapters",
        ]
    table = Table(
        slug="content_course_scores",
        title="Course score per agent (LH-Bench Table 6): mean over courses, normalised 0-1, "
        "95% bootstrap CI over courses",
        columns=columns,
        notes=[
            f"{AGENT_SCORE_DEFINITION}; CI: {CI_DEFINITION}; ±: half the CI's width. "
            "chapters: the chapter scores behind it."
        ],
        digits=3,
    )
    groups = sorted({g for g, _ in agents})
    rows = []
    order: dict[str, float] = {}  # the first scale's score decides the order, best first
    for g in groups:
        first = agents.get((g, scales[0]))
        order[g] = first.mean if first else -1.0
        row: list[Cell] = [g]
        for s in scales:
            a = agents.get((g, s))
            if a is None:
                row += [None, None, None, None, 0, 0]
                continue
            row += [a.mean, a.ci[0], a.ci[1], a.half_width, a.n, a.chapters]
            if warning := few_clusters_note(a.n, "courses"):
                table.notes.append(f"{g}, {SCALE_NAMES[s]}: {warning}.")
        rows.append(row)
    rows.sort(key=lambda r: (-order[str(r[0])], str(r[0])))
    table.rows = rows
    return table


def _run_table(
    data: ReportData,
    scores: dict[tuple[str, Scale], CourseScore],
    scales: list[Scale],
    runs: list[str],
    by: Sequence[str],
) -> Table:
    columns = ["agent", "run"]
    for s in scales:
        name = SCALE_NAMES[s]
        columns += [f"{name} score", f"{name} n", f"{name} excluded", f"{name} t-CI width"]
    table = Table(
        slug="content_scales_runs",
        title="Course score per run (lhbench's figure, not in LH-Bench): mean over the run's "
        "chapters, normalised 0-1",
        columns=columns,
        notes=[f"t-CI: {RUN_CI_DEFINITION}. n = graded chapters of the run on that scale."],
        digits=3,
    )
    for run_id in runs:
        run = data.runs.get(run_id)
        row: list[Cell] = [group_label(run, by) if run else "(run not in store)", run_id]
        for s in scales:
            cs = scores.get((run_id, s))
            if cs is None:
                row += [None, 0, 0, None]
            else:
                row += [cs.mean, cs.n, len(cs.excluded), cs.ci_width]
        table.rows.append(row)
    return table


def _human_tables(
    data: ReportData,
    scales: list[Scale],
    matched: dict[Scale, tuple[list[ChapterComparison], int]],
    group_of: dict[str, str],
) -> list[Table]:
    # the humans' own outcomes: every chapter-level vote between two agents whose runs are known
    human_votes = [
        ChapterComparison(
            v.run_a,
            v.run_b,
            v.chapter_id or "",
            group_of[v.run_a],
            group_of[v.run_b],
            cast(Outcome, v.winner),
            cast(Outcome, v.winner),
        )
        for v in data.chapter_votes
        if v.run_a in group_of and v.run_b in group_of and group_of[v.run_a] != group_of[v.run_b]
    ]
    human_rates = comparison_win_rates(human_votes, human=True)
    score_rates = {s: comparison_win_rates(matched[s][0]) for s in scales}
    columns: list[str] = ["agent", "human WR %", "human n"]
    for s in scales:
        columns += [f"scores WR {SCALE_NAMES[s]} %", f"{SCALE_NAMES[s]} n"]
    unmatched = ", ".join(f"{SCALE_NAMES[s]} {matched[s][1]}" for s in scales)
    wr = Table(
        slug="content_win_rates",
        title="Chapter-level win rates: human preferences vs outcomes from chapter scores "
        "(LH-Bench Table 10)",
        columns=columns,
        notes=[
            f"{WIN_RATE_DEFINITION}; n: comparisons the agent is in.",
            "human: every stored human chapter-level vote between two agents' runs "
            f"({len(human_votes)} of {len(data.chapter_votes)} votes); scores: the outcome "
            "the chapter scores give on the same votes (LH-Bench's 'VLM WR'), over those "
            f"matched on the scale. Votes not matched: {unmatched}.",
            f"{MATCHED_DEFINITION}.",
        ],
        digits=1,
    )
    agents = sorted(set(human_rates) | {g for r in score_rates.values() for g in r})
    for g in agents:
        h = human_rates.get(g)
        row: list[Cell] = [g, 100 * h.rate_ties_half if h else None, h.games if h else 0]
        for s in scales:
            r = score_rates[s].get(g)
            row += [100 * r.rate_ties_half if r else None, r.games if r else 0]
        wr.rows.append(row)
    agree_cols = ["pair"]
    for s in scales:
        name = SCALE_NAMES[s]
        agree_cols += [
            f"{name} n",
            f"{name} agree %",
            f"{name} κ",
            f"{name} human ties",
            f"{name} score ties",
        ]
    agree = Table(
        slug="content_human_agreement",
        title="Human vs chapter scores on matched chapter-level comparisons, per agent pair "
        "(LH-Bench App. J, Table 16)",
        columns=agree_cols,
        notes=[
            f"{AGREEMENT_DEFINITION}; n: matched comparisons of the pair. κ is undefined "
            "(blank) when both raters used one and the same outcome throughout."
        ],
        digits=3,
    )
    per_scale = {
        s: {pa.pair: pa.result for pa in human_vlm_agreement(matched[s][0])} for s in scales
    }
    pairs = sorted({p for rows in per_scale.values() for p in rows if p is not None})
    for pair in [*pairs, None]:
        label = "overall" if pair is None else f"{pair[0]} vs {pair[1]}"
        arow: list[Cell] = [label]
        for s in scales:
            res = per_scale[s].get(pair)
            if res is None:
                arow += [0, None, None, None, None]
            else:
                kappa = None if math.isnan(res.kappa) else res.kappa
                arow += [res.n, 100 * res.raw_agreement, kappa, res.ties_first, res.ties_second]
        agree.rows.append(arow)
    return [wr, agree]
