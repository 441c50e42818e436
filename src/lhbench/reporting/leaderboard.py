"""Leaderboard (LH-Bench Tables 3–5) and pass rates from the tasks' checks.

Panel scores per group with CIs and per-dimension means; pass rates with Wilson CIs. The
score of a group is the mean over its runs of the panel score (the judges' mean); its CI
resamples tasks, clusters being (pack, task), so runs of one task move together.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from lhbench.judges import PanelScoreTable, RunTierScore, TierKey
from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.schema import MIXED_SCALE_RULE, Scale, Tier
from lhbench.stats import (
    PanelAgreement,
    bootstrap_ci,
    few_clusters_note,
    panel_agreement,
    proportion,
)
from lhbench.stats.agreement import normalised_score
from lhbench.store import GradeColumns

__all__ = [
    "LeaderboardRow",
    "PassRateRow",
    "agreement_levels",
    "dimension_order",
    "leaderboard_notes",
    "leaderboard_row",
    "leaderboard_rows",
    "leaderboard_section",
    "pass_rate_row",
    "pass_rate_rows",
    "scale_levels",
    "tier_agreement",
]


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
    incomplete: int = 0
    panel: int = 0


@dataclass(frozen=True)
class PassRateRow:
    """One group's runs that its tasks' checks passed, with a Wilson CI."""

    group: str
    passed: int
    n: int
    rate: float
    ci: tuple[float, float]
    undecided: int


def _tier(data: ReportData, key: TierKey) -> Tier | None:
    """The rubric tier a key was graded on, when its rubric is stored."""
    rubric = data.rubric_for(key.rubric_id, key.version)
    if rubric is None:
        return None
    try:
        return rubric.tier(key.tier)
    except KeyError:
        return None


def _seen_scales(data: ReportData, key: TierKey) -> set[Scale]:
    # every content of the rubric version's tier (the key without its hash)
    return {
        scale
        for k, cols in data.columns_by_tier.items()
        if k[:3] == key[:3]
        for scale in cols.score_scales()
    }


def scale_levels(data: ReportData, key: TierKey) -> list[int]:
    """Every level of the tier's scales (κ needs the whole scale, used or not)."""
    tier = _tier(data, key)
    scales = {d.scale for d in tier.dimensions} if tier else _seen_scales(data, key)
    return sorted({lv for s in (scales or {Scale.ONE_TO_FIVE}) for lv in s.levels})


def agreement_levels(data: ReportData, key: TierKey) -> tuple[list[float], bool]:
    """The levels κ and α compare on, and whether scores are normalised to their scale.

    A tier on one scale compares raw levels. A tier mixing scales compares each score's
    position on its own scale, (s − low) / (high − low) (``normalised``), so a binary 1 and
    a 0-2 2 agree, as the tier score treats them (:data:`MIXED_SCALE_RULE`).
    """
    tier = _tier(data, key)
    scales = {d.scale for d in tier.dimensions} if tier else _seen_scales(data, key)
    if len(scales) <= 1:
        raw: list[float] = list(scale_levels(data, key))
        return raw, False
    return sorted({normalised_score(lv, s) for s in scales for lv in s.levels}), True


def tier_agreement(data: ReportData, key: TierKey) -> tuple[PanelAgreement, bool]:
    """The panel's agreement on one tier, and whether its scores were normalised.

    Computed once per report data and tier (the leaderboard's κ row and the agreement
    section show the same figures).
    """
    cached = data.agreements.get(key)
    if cached is None:
        levels, normalised = agreement_levels(data, key)
        agree = panel_agreement(
            data.columns_by_tier.get(key, GradeColumns.empty()),
            levels=levels,
            normalised=normalised,
        )
        cached = data.agreements[key] = (agree, normalised)
    return cached


def _scale_range(data: ReportData, key: TierKey) -> str:
    """The tier's score scale as its rubric declares it (``1–5``, ``0–1 (…normalised…)``)."""
    tier = _tier(data, key)
    if tier is not None:
        return tier.scale_label
    levels = scale_levels(data, key)
    return f"{min(levels)}–{max(levels)}"


def dimension_order(data: ReportData, key: TierKey, seen: set[str]) -> list[str]:
    """Dimensions in the rubric's order (unknown ones last, sorted)."""
    rubric = data.rubric_for(key.rubric_id, key.version)
    if rubric is not None:
        try:
            order = [d.id for d in rubric.tier(key.tier).dimensions]
            return [d for d in order if d in seen] + sorted(seen - set(order))
        except KeyError:
            pass
    return sorted(seen)


def _column_means(
    names: Sequence[str], values: NDArray[np.float64], present: NDArray[np.bool_]
) -> dict[str, float]:
    """Per name (sorted): the mean of its column's present values (none: left out)."""
    out = {}
    for c in sorted(range(len(names)), key=names.__getitem__):
        here = present[:, c]
        if here.any():
            out[names[c]] = float(np.mean(values[here, c]))
    return out


def leaderboard_row(
    group: str,
    scores: Sequence[RunTierScore] | PanelScoreTable,
    clusters: Sequence[tuple[str, str]],
    *,
    panel: int,
    n_resamples: int = 1000,
    seed: int = 0,
) -> LeaderboardRow:
    """One group's row on one tier, from its runs' panel scores.

    The one place a leaderboard row is computed: the report feeds it its runs' rows of
    the tier's :class:`PanelScoreTable`, the web overview panel scores from the store's
    per-(run, judge) sums (read as the same columns). ``clusters`` are the runs' (pack,
    task) pairs, the bootstrap's resampling units; ``panel`` is how many judges graded
    the tier: a run scored by fewer has an incomplete panel.
    """
    table = scores if isinstance(scores, PanelScoreTable) else PanelScoreTable.of(scores)
    vals = table.mean
    mean = float(np.mean(vals))
    lo, hi = bootstrap_ci(vals, clusters=list(clusters), n_resamples=n_resamples, seed=seed)
    return LeaderboardRow(
        group=group,
        mean=mean,
        # a percentile bound can miss the mean by a rounding error on tied data
        ci=(min(lo, mean), max(hi, mean)),
        n=int(vals.size),
        tasks=len(set(clusters)),
        judge_means=_column_means(table.judges, table.judge_scores, table.has_judge),
        dimension_means=_column_means(table.dimensions, table.dimension_means, table.has_dimension),
        variance=float(np.mean(table.variance)),
        incomplete=int(np.count_nonzero(table.has_judge.sum(axis=1) < panel)),
        panel=panel,
    )


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
    graded = data.columns_by_tier.get(key, GradeColumns.empty())
    table = data.panel_table(key)
    # the tier's panel: every judge that graded it; a run scored by fewer (a judge's grade
    # failed or is missing) has an incomplete panel, its score a mean over fewer judges
    graders = np.flatnonzero(np.bincount(graded.judge, minlength=len(graded.judges)))
    panel = {graded.judges[int(j)].key for j in graders}
    # per group, its runs' rows of the table and (pack, task) clusters, in run-id order
    groups: dict[str, tuple[list[int], list[tuple[str, str]]]] = {}
    labels = data.group_labels(by)
    runs = data.runs
    run_ids = table.run_ids
    for i in sorted(range(len(run_ids)), key=run_ids.__getitem__):
        run_id = run_ids[i]
        run = runs.get(run_id)
        if run is not None and (pack_id is None or run.pack_id == pack_id):
            label = labels[run_id]
            group = groups.get(label)
            if group is None:
                group = groups[label] = ([], [])
            group[0].append(i)
            group[1].append((run.pack_id, run.task_id))
    rows = [
        leaderboard_row(
            label,
            table.take(np.array(members, dtype=np.intp)),
            clusters,
            panel=len(panel),
            n_resamples=n_resamples,
            seed=seed,
        )
        for label, (members, clusters) in groups.items()
    ]
    rows.sort(key=lambda r: (-r.mean, r.group))
    return rows


def pass_rate_row(group: str, outcomes: Sequence[bool | None]) -> PassRateRow:
    """One group's pass rate from its checked runs' outcomes (None: no check decided)."""
    decided = [x for x in outcomes if x is not None]
    if not decided:
        return PassRateRow(group, 0, 0, math.nan, (math.nan, math.nan), len(outcomes))
    res = proportion(sum(decided), len(decided))
    return PassRateRow(group, res.k, res.n, res.rate, res.ci, len(outcomes) - len(decided))


def pass_rate_rows(
    data: ReportData, by: Sequence[str], *, pack_id: str | None = None
) -> list[PassRateRow]:
    """Per group: runs whose checks passed, of those the checks decided (Wilson 95% CI)."""
    groups: dict[str, list[bool | None]] = defaultdict(list)
    checked = {lab.run_id for lab in data.labels}
    labels = data.group_labels(by)
    outcomes = data.outcomes
    for run in data.runs.values():
        if pack_id is not None and run.pack_id != pack_id:
            continue
        label = outcomes.get(run.id)
        if label is None and run.id not in checked:
            continue
        groups[labels[run.id]].append(label)
    rows = [pass_rate_row(g, labels) for g, labels in groups.items()]
    rows.sort(key=lambda r: (-(r.rate if not math.isnan(r.rate) else -1), r.group))
    return rows


def leaderboard_notes(rows: Sequence[LeaderboardRow]) -> list[str]:
    """What a tier's rows need said beside them: too few tasks, incomplete panels."""
    notes = []
    # each group's CI resamples its own tasks: the warning is per group
    for r in rows:
        if warning := few_clusters_note(r.tasks):
            notes.append(f"{r.group}: {warning}.")
    for r in rows:
        if r.incomplete:
            notes.append(
                f"{r.group}: incomplete panel on {r.incomplete} of {r.n} run(s): scored by "
                f"fewer than the tier's {r.panel} judges (a judge's grade failed or is "
                "missing), so those runs' panel score is the mean of the judges that scored."
            )
    return notes


def leaderboard_section(data: ReportData, by: Sequence[str], *, seed: int = 0) -> Section:
    """Leaderboard per tier, rubric decomposition, and pass rates."""
    sec = Section("Leaderboard")
    sec.notes.extend(data.excluded.notes())
    keys = list(data.columns_by_tier)
    for key in keys:
        rows = leaderboard_rows(data, key, by, seed=seed)
        if not rows:
            continue
        slug = f"leaderboard_{key.unique_slug(keys)}"
        judges = sorted({j for r in rows for j in r.judge_means})
        notes = [
            "score: mean over runs of the panel score (mean of the judges' weighted tier "
            "scores). CI: percentile bootstrap, 1,000 resamples of (pack, task) clusters "
            "(all runs of a drawn task kept). var: population variance across judges, "
            "averaged over runs. n: runs; tasks: distinct tasks."
        ]
        tier = _tier(data, key)
        if tier is not None and tier.mixed_scales:
            notes.append(f"Scale: {MIXED_SCALE_RULE}.")
        notes.extend(leaderboard_notes(rows))
        table = Table(
            slug=slug,
            title=f"{key.title} tier: mean panel score (scale {_scale_range(data, key)}), "
            "95% bootstrap CI over tasks",
            columns=[
                "rank",
                "group",
                "score",
                "ci_low",
                "ci_high",
                "n",
                "tasks",
                *judges,
                "var",
                "incomplete panel",
            ],
            notes=notes,
        )
        for i, r in enumerate(rows, 1):
            row: list[Cell] = [i, r.group, r.mean, r.ci[0], r.ci[1], r.n, r.tasks]
            row += [r.judge_means.get(j, math.nan) for j in judges]
            flag = f"{r.incomplete} of {r.n} runs" if r.incomplete else ""
            table.rows.append([*row, r.variance, flag])
        sec.tables.append(table)
        sec.plots[slug] = rows

        seen = {d for r in rows for d in r.dimension_means}
        dims = dimension_order(data, key, seen)
        agree, normalised = tier_agreement(data, key)
        decomp = Table(
            slug=f"decomposition_{key.unique_slug(keys)}",
            title=f"{key.title}: per-dimension means (panel average)",
            columns=["rank", "group", "score", "n", *dims],
        )
        if normalised:
            on = ", ".join(
                f"{d.id} {d.scale.value}" for d in (tier.dimensions if tier else []) if d.id in dims
            )
            decomp.notes.append(
                f"score: the tier score on 0–1; each dimension's mean is on its own scale "
                f"({on}); κ compares scores normalised to their scale."
            )
        for i, r in enumerate(rows, 1):
            drow: list[Cell] = [i, r.group, r.mean, r.n]
            decomp.rows.append(drow + [r.dimension_means.get(d, math.nan) for d in dims])
        if len(agree.judges) >= 2:
            krow: list[Cell] = [
                "κ",
                f"mean pairwise κ (quadratic), over {agree.kappa_pairs_note}",
                agree.mean_kappa,
                agree.n_runs,
            ]
            decomp.rows.append(krow + [agree.dimension_kappa.get(d, math.nan) for d in dims])
        sec.tables.append(decomp)
    passes = pass_rate_rows(data, by)
    if passes:
        pr = Table(
            slug="pass_rate",
            title="Pass rate: runs whose task checks passed on the final state, Wilson 95% CI",
            columns=["group", "passed", "checked", "pass %", "ci_low %", "ci_high %", "undecided"],
            digits=1,
            notes=[
                "checked: runs a check decided (verify script first, then hook checks); "
                "undecided: runs whose check crashed or timed out (left out of the rate)."
            ],
        )
        if any(lab.source.startswith("figma:") for lab in data.labels):
            from lhbench.envs.figma.fidelity import PASS_DEFINITION

            pr.notes.append(PASS_DEFINITION)
        for p in passes:
            pr.rows.append(
                [p.group, p.passed, p.n, 100 * p.rate, 100 * p.ci[0], 100 * p.ci[1], p.undecided]
            )
        sec.tables.append(pr)
    if not sec.tables:
        sec.empty = (
            "No grades or check results in the store yet: `lhbench judge` grades runs, "
            "`lhbench verify` checks them."
        )
    return sec
