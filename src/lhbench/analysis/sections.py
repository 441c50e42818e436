"""Report sections on rubric grades: leaderboard, decomposition, agreement, ablation, health.

Each section is computed from ReportData into Tables laid out as LH-Bench's tables are.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lhbench.analysis.agreement import PanelAgreement, panel_agreement
from lhbench.analysis.data import ReportData, group_label
from lhbench.analysis.scores import TierKey, panel_scores, tier_keys
from lhbench.analysis.stats import (
    bootstrap_ci,
)
from lhbench.analysis.tables import Cell, Table
from lhbench.schema import GradeStatus, Scale

__all__ = [
    "LeaderboardRow",
    "Section",
    "ablation_section",
    "agreement_section",
    "grading_health_section",
    "leaderboard_section",
]


@dataclass
class Section:
    """A titled part of the report: tables, plot data, and a line when it has no data."""

    title: str
    tables: list[Table] = field(default_factory=list)
    empty: str | None = None
    plots: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class LeaderboardRow:
    """One group on one tier: mean with a task-clustered bootstrap CI."""

    group: str
    mean: float
    ci: tuple[float, float]
    n: int
    tasks: int
    judge_means: dict[str, float]
    dimension_means: dict[str, float]
    variance: float


def _levels(data: ReportData, key: TierKey) -> list[int]:
    rubric = data.rubrics.get((key[0], key[1]))
    if rubric is not None:
        try:
            scales = {d.scale for d in rubric.tier(key[2]).dimensions}
            return sorted({lv for s in scales for lv in s.levels})
        except KeyError:
            pass
    seen = {
        s.scale
        for g in data.grades
        if (g.rubric_id, g.rubric_version, g.tier.value) == key
        for s in g.scores
    }
    return sorted({lv for s in (seen or {Scale.ONE_TO_FIVE}) for lv in s.levels})


def _dimension_order(data: ReportData, key: TierKey, seen: set[str]) -> list[str]:
    rubric = data.rubrics.get((key[0], key[1]))
    if rubric is not None:
        try:
            order = [d.id for d in rubric.tier(key[2]).dimensions]
            return [d for d in order if d in seen] + sorted(seen - set(order))
        except KeyError:
            pass
    return sorted(seen)


def leaderboard_rows(
    data: ReportData,
    key: TierKey,
    by: Sequence[str],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    pack_id: str | None = None,
) -> list[LeaderboardRow]:
    """Per-group rows, best mean first (only runs of ``pack_id`` when given)."""
    scores = panel_scores(data.grades, key)
    groups: dict[str, list[str]] = defaultdict(list)
    for run_id in scores:
        run = data.runs.get(run_id)
        if run is not None and (pack_id is None or run.pack_id == pack_id):
            groups[group_label(run, by)].append(run_id)
    rows = []
    for label, run_ids in groups.items():
        vals = [scores[r].mean for r in run_ids]
        tasks = [data.runs[r].task_id for r in run_ids]
        judges = sorted({j for r in run_ids for j in scores[r].judge_scores})
        dims = sorted({d for r in run_ids for d in scores[r].dimension_means})
        rows.append(
            LeaderboardRow(
                group=label,
                mean=float(np.mean(vals)),
                ci=bootstrap_ci(vals, clusters=tasks, n_resamples=n_resamples, seed=seed),
                n=len(vals),
                tasks=len(set(tasks)),
                judge_means={
                    j: float(
                        np.mean(
                            [
                                scores[r].judge_scores[j]
                                for r in run_ids
                                if j in scores[r].judge_scores
                            ]
                        )
                    )
                    for j in judges
                },
                dimension_means={
                    d: float(
                        np.mean(
                            [
                                scores[r].dimension_means[d]
                                for r in run_ids
                                if d in scores[r].dimension_means
                            ]
                        )
                    )
                    for d in dims
                },
                variance=float(np.mean([scores[r].variance for r in run_ids])),
            )
        )
    rows.sort(key=lambda r: (-r.mean, r.group))
    return rows


def leaderboard_section(data: ReportData, by: Sequence[str], *, seed: int = 0) -> Section:
    """Leaderboard per tier (LH-Bench Tables 3–4) and rubric decomposition (Table 5)."""
    sec = Section("Leaderboard")
    keys = tier_keys(data.grades)
    if not keys:
        sec.empty = "No grades in the store yet: run `lhbench judge` to grade runs."
        return sec
    for key in keys:
        rows = leaderboard_rows(data, key, by, seed=seed)
        if not rows:
            continue
        slug = f"leaderboard_{key[0]}_{key[1]}_{key[2]}".replace(".", "_")
        judges = sorted({j for r in rows for j in r.judge_means})
        table = Table(
            slug=slug,
            title=f"{key[0]} v{key[1]} · {key[2]} tier: mean panel score, "
            "95% bootstrap CI over tasks",
            columns=["rank", "group", "score", "ci_low", "ci_high", "n", "tasks", *judges, "var"],
            notes=[
                "CI: percentile bootstrap, 1,000 resamples of tasks (all runs of a drawn "
                "task kept). var: population variance across judges, averaged over runs."
            ],
        )
        for i, r in enumerate(rows, 1):
            row: list[Cell] = [i, r.group, r.mean, r.ci[0], r.ci[1], r.n, r.tasks]
            row += [r.judge_means.get(j, math.nan) for j in judges]
            table.rows.append([*row, r.variance])
        sec.tables.append(table)
        sec.plots[slug] = rows

        seen = {d for r in rows for d in r.dimension_means}
        dims = _dimension_order(data, key, seen)
        agree = panel_agreement(
            [g for g in data.grades if (g.rubric_id, g.rubric_version, g.tier.value) == key],
            levels=_levels(data, key),
        )
        decomp = Table(
            slug=f"decomposition_{slug.removeprefix('leaderboard_')}",
            title=f"{key[0]} v{key[1]} · {key[2]}: per-dimension means (panel average)",
            columns=["rank", "group", "score", "n", *dims],
        )
        for i, r in enumerate(rows, 1):
            drow: list[Cell] = [i, r.group, r.mean, r.n]
            decomp.rows.append(drow + [r.dimension_means.get(d, math.nan) for d in dims])
        if len(agree.judges) >= 2:
            krow: list[Cell] = ["κ", "mean pairwise κ (quadratic)", agree.mean_kappa, agree.n_runs]
            decomp.rows.append(krow + [agree.dimension_kappa.get(d, math.nan) for d in dims])
        sec.tables.append(decomp)
    return sec


def agreement_section(data: ReportData) -> tuple[Section, dict[TierKey, PanelAgreement]]:
    """Judge agreement per rubric version (LH-Bench Table 8) with pairwise κ matrices."""
    sec = Section("Judge agreement")
    results: dict[TierKey, PanelAgreement] = {}
    for key in tier_keys(data.grades):
        agree = panel_agreement(
            [g for g in data.grades if (g.rubric_id, g.rubric_version, g.tier.value) == key],
            levels=_levels(data, key),
        )
        if len(agree.judges) >= 2:
            results[key] = agree
    if not results:
        sec.empty = "No tier was graded by two or more judges: agreement needs a panel."
        return sec, results
    summary = Table(
        slug="judge_agreement",
        title="Inter-judge agreement by rubric version (κ: quadratic-weighted Cohen's kappa)",
        columns=[
            "rubric",
            "version",
            "tier",
            "author",
            "judges",
            "mean pairwise κ",
            "α (ordinal)",
            "mean variance",
            "runs",
            "ratings",
        ],
    )
    for key, agree in results.items():
        rubric = data.rubrics.get((key[0], key[1]))
        summary.rows.append(
            [
                key[0],
                key[1],
                key[2],
                rubric.author.value if rubric else None,
                len(agree.judges),
                agree.mean_kappa,
                agree.alpha,
                agree.mean_variance,
                agree.n_runs,
                agree.n_ratings,
            ]
        )
        matrix = Table(
            slug=f"kappa_matrix_{key[0]}_{key[1]}_{key[2]}".replace(".", "_"),
            title=f"Pairwise κ, {key[0]} v{key[1]} · {key[2]}",
            columns=["judge", *agree.judges],
        )
        for j1 in agree.judges:
            row: list[Cell] = [j1]
            for j2 in agree.judges:
                if j1 == j2:
                    row.append(1.0)
                else:
                    row.append(agree.pairwise_kappa.get((min(j1, j2), max(j1, j2)), math.nan))
            matrix.rows.append(row)
        sec.tables.append(matrix)
        sec.plots[matrix.slug] = agree
    sec.tables.insert(0, summary)
    return sec, results


def ablation_section(
    data: ReportData, key: str, baseline: str | None, by: Sequence[str]
) -> Section:
    """Deltas between values of one ``versions`` key, per group (LH-Bench Table 7)."""
    name = key.removeprefix("versions.")
    sec = Section(f"Ablation by {name}")
    tiers = tier_keys(data.grades)
    found = False
    for tkey in tiers:
        scores = panel_scores(data.grades, tkey)
        cells: dict[str, dict[str, list[tuple[str, float, dict[str, float]]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for run_id, sc in scores.items():
            run = data.runs.get(run_id)
            if run is None or name not in run.versions:
                continue
            cells[group_label(run, by)][run.versions[name]].append(
                (run.task_id, sc.mean, sc.dimension_means)
            )
        if not cells:
            continue
        found = True
        dims = _dimension_order(
            data,
            tkey,
            {d for g in cells.values() for v in g.values() for _, _, dm in v for d in dm},
        )
        table = Table(
            slug=f"ablation_{name}_{tkey[0]}_{tkey[1]}_{tkey[2]}".replace(".", "_"),
            title=f"Ablation of {name} · {tkey[0]} v{tkey[1]} {tkey[2]}: "
            "mean panel scores and Δ vs baseline",
            columns=["group", "condition", "n", *dims, "overall"],
        )
        pooled: dict[str, list[float]] = defaultdict(list)
        for group, conds in sorted(cells.items()):
            values = sorted(conds)
            base = baseline if baseline in conds else values[0]
            means = {}
            for v in [base] + [x for x in values if x != base]:
                entries = conds[v]
                dm = {
                    d: float(np.mean([e[2][d] for e in entries if d in e[2]]))
                    if any(d in e[2] for e in entries)
                    else math.nan
                    for d in dims
                }
                overall = float(np.mean([e[1] for e in entries]))
                means[v] = (dm, overall)
                table.rows.append([group, v, len(entries), *[dm[d] for d in dims], overall])
            for v in values:
                if v == base:
                    continue
                delta = [means[v][0][d] - means[base][0][d] for d in dims]
                d_overall = means[v][1] - means[base][1]
                table.rows.append([group, f"Δ {v} − {base}", None, *delta, d_overall])
                for d, x in zip(dims, delta, strict=True):
                    pooled[d].append(x)
                pooled["overall"].append(d_overall)
        if pooled:
            table.rows.append(
                [
                    "pooled",
                    "Δ (mean over groups)",
                    None,
                    *[float(np.mean(pooled[d])) for d in dims],
                    float(np.mean(pooled["overall"])),
                ]
            )
        sec.tables.append(table)
    if not found:
        sec.empty = f"No graded runs carry a '{name}' version: tag runs with --versions {name}=…"
    return sec


def grading_health_section(data: ReportData) -> Section:
    """Parse failures, errors and unscorable dimensions, kept out of every score above."""
    sec = Section("Grading health")
    if not data.grades:
        sec.empty = "No grades yet."
        return sec
    table = Table(
        slug="grading_health",
        title="Grades by status per judge (failed grades and unscorable dimensions "
        "are excluded from scores)",
        columns=[
            "rubric",
            "version",
            "tier",
            "judge",
            "ok",
            "parse errors",
            "errors",
            "unscorable dims",
        ],
    )
    counts: dict[tuple[str, str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for g in data.grades:
        c = counts[(g.rubric_id, g.rubric_version, g.tier.value, g.judge.model)]
        c[{GradeStatus.OK: 0, GradeStatus.PARSE_ERROR: 1, GradeStatus.ERROR: 2}[g.status]] += 1
        c[3] += sum(1 for s in g.scores if s.score is None)
    for k, c in sorted(counts.items()):
        table.rows.append([*k, *c])
    sec.tables.append(table)
    return sec
