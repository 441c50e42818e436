"""Ablation by a ``versions`` key (LH-Bench Table 7), paired by task.

Per group (harness, model …) and condition: the mean panel score per dimension and overall;
then each condition against the one named baseline: Δ = mean over the tasks run under both
of (condition − baseline), with a bootstrap CI over those tasks. Tasks run under only one
of the two are listed; a CI over fewer than five paired tasks carries a warning on its own
row's group. The pooled rows give Δ over every paired task of every group (ours), the group
Δs weighted by their paired runs, and their plain mean, each saying which of LH-Bench Table
7's pooled columns it reproduces (no single one reproduces the whole row: see
:mod:`lhbench.stats.ablation`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from lhbench.reporting.data import ReportData, group_label
from lhbench.reporting.leaderboard import dimension_order
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.stats import (
    PairedDelta,
    few_clusters_note,
    paired_deltas,
    pooled_by_groups,
    pooled_by_runs,
    pooled_by_tasks,
)

__all__ = ["ablation_section"]

_OVERALL = "overall"
# each pooled row's label says what it computes and which of LH-Bench Table 7's pooled
# columns it reproduces: the paper's row mixes two poolings (see lhbench.stats.ablation)
_POOLINGS = (
    ("pooled Δ: mean over every paired task of every group (no CI)", pooled_by_tasks),
    (
        "pooled Δ: group Δs weighted by paired runs (no CI; LH-Bench Table 7's pooled "
        "Overall is this, its rubric columns are not)",
        pooled_by_runs,
    ),
    (
        "pooled Δ: plain mean of the group Δs (no CI; LH-Bench Table 7's pooled rubric "
        "columns are this, its Overall is not)",
        pooled_by_groups,
    ),
)


def _task_name(cluster: object) -> str:
    """``pack/task`` for a (pack, task) cluster."""
    return "/".join(cluster) if isinstance(cluster, tuple) else str(cluster)


def ablation_section(
    data: ReportData, key: str, baseline: str | None, by: Sequence[str], *, seed: int = 0
) -> Section:
    """Conditions of one versions key against a baseline, paired by task, per group."""
    name = key.removeprefix("versions.")
    sec = Section(f"Ablation by {name}")
    group_by = [k for k in by if k not in (key, f"versions.{name}", name)]
    found = False
    tkeys = list(data.columns_by_tier)
    for tkey in tkeys:
        scores = data.panel_scores(tkey)
        # group -> condition -> [(task cluster, overall, dimension means)]
        cells: dict[str, dict[str, list[tuple[tuple[str, str], float, dict[str, float]]]]] = (
            defaultdict(lambda: defaultdict(list))
        )
        for run_id, sc in sorted(scores.items()):
            run = data.runs.get(run_id)
            if run is None or name not in run.versions:
                continue
            cells[group_label(run, group_by)][run.versions[name]].append(
                ((run.pack_id, run.task_id), sc.mean, sc.dimension_means)
            )
        if not cells:
            continue
        conditions = sorted({c for g in cells.values() for c in g})
        base = baseline or conditions[0]
        if base not in conditions:
            sec.notes.append(
                f"{tkey.title}: baseline {name}={base} has no graded runs "
                f"(conditions: {', '.join(conditions)})"
            )
            continue
        found = True
        dims = dimension_order(
            data,
            tkey,
            {d for g in cells.values() for v in g.values() for _, _, dm in v for d in dm},
        )
        metrics = [*dims, _OVERALL]
        means = Table(
            slug=f"ablation_{name}_{tkey.unique_slug(tkeys)}",
            title=f"Ablation of {name} · {tkey.title}: mean panel score per condition",
            columns=["group", "condition", "runs", "tasks", *dims, _OVERALL],
        )
        deltas = Table(
            slug=f"ablation_delta_{name}_{tkey.unique_slug(tkeys)}",
            title=f"Ablation of {name} · {tkey.title}: Δ vs {name}={base}, paired by task",
            columns=[
                "group",
                "contrast",
                "paired tasks",
                "paired runs",
                *dims,
                _OVERALL,
                "ci_low",
                "ci_high",
                "unpaired tasks",
            ],
            notes=[
                "Δ: mean over the tasks run under both conditions of (condition mean − "
                "baseline mean); CI: percentile bootstrap over those tasks (1,000 resamples). "
                "Unpaired tasks are listed and left out. n: paired tasks (the bootstrap's "
                "clusters); paired runs: runs under the condition on those tasks."
            ],
        )
        per_contrast: dict[str, dict[str, list[PairedDelta]]] = defaultdict(
            lambda: defaultdict(list)
        )
        for group, conds in sorted(cells.items()):
            for cond in [base, *[c for c in sorted(conds) if c != base]]:
                entries = conds.get(cond, [])
                if not entries:
                    continue
                row: list[Cell] = [group, cond, len(entries), len({e[0] for e in entries})]
                row += [
                    float(np.mean([e[2][d] for e in entries if d in e[2]]))
                    if any(d in e[2] for e in entries)
                    else math.nan
                    for d in dims
                ]
                means.rows.append([*row, float(np.mean([e[1] for e in entries]))])
            if base not in conds:
                note = f"{group}: no runs under the baseline {name}={base}"
                if note not in sec.notes:
                    sec.notes.append(note)
                continue
            by_metric: dict[str, list[PairedDelta]] = {}
            for metric in metrics:
                triples = [
                    (cluster, cond, overall if metric == _OVERALL else dm[metric])
                    for cond, entries in conds.items()
                    for cluster, overall, dm in entries
                    if metric == _OVERALL or metric in dm
                ]
                if any(c == base for _, c, _ in triples):
                    by_metric[metric] = paired_deltas(triples, base, seed=seed)
            for contrast in by_metric.get(_OVERALL, []):
                cond = contrast.condition
                drow: list[Cell] = [
                    group,
                    f"Δ {cond} − {base}",
                    contrast.n_tasks,
                    contrast.n_runs,
                ]
                for metric in metrics:
                    match = [p for p in by_metric.get(metric, []) if p.condition == cond]
                    drow.append(match[0].delta if match else math.nan)
                    if match:
                        per_contrast[cond][metric].append(match[0])
                drow += [
                    contrast.ci[0],
                    contrast.ci[1],
                    ", ".join(_task_name(m) for m in contrast.missing) or "-",
                ]
                deltas.rows.append(drow)
                warning = few_clusters_note(contrast.n_tasks, "paired tasks")
                if contrast.n_tasks and warning:  # no paired task: no CI to warn about
                    deltas.notes.append(f"{group}, Δ {cond} − {base}: {warning}.")
        for cond, by_metric_list in sorted(per_contrast.items()):
            if len(by_metric_list.get(_OVERALL, [])) < 2:
                continue
            for label, pool in _POOLINGS:
                prow: list[Cell] = [
                    "pooled",
                    f"Δ {cond} − {base}: {label}",
                    sum(p.n_tasks for p in by_metric_list[_OVERALL]),
                    sum(p.n_runs for p in by_metric_list[_OVERALL]),
                ]
                prow += [pool(by_metric_list.get(m, [])) for m in metrics]
                deltas.rows.append([*prow, None, None, "-"])
        sec.tables.extend([means, deltas])
    if not found and not sec.notes:
        sec.empty = f"No graded runs carry a '{name}' version: tag runs with --versions {name}=…"
    return sec
