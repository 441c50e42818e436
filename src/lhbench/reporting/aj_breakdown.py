"""Agent-as-a-Judge by domain and subdomain, failure modes, and ablations of the judge.

AJ-Bench reports F1/P/R/FPR/FNR per subdomain (Tables 3, 7, 9) with t-intervals over
three repeats, the failure modes (a)-(d) of wrong agent verdicts (Table 8), and ablations
of the judge. Here: one row per judge × domain × subdomain (plus the domain as a whole),
each metric the mean over repeats with its t-CI; failure modes (counts per judge, shares
per subdomain), from the stored tag or, for (a)/(b), the tool-use rule; F1 per tool budget
of agent judges, per tool set, and per value of any other judge setting that varies.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from lhbench.reporting.aj import judge_configs, per_trajectory
from lhbench.reporting.aj_data import AjData, aj_data
from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Section, Table
from lhbench.schema import JudgeKind
from lhbench.stats import binary_metrics, macro_f1, t_ci
from lhbench.stats.aj_modes import failure_mode
from lhbench.store import VerdictDetail

__all__ = ["aj_breakdown_section"]
_METRICS = ("f1", "precision", "recall", "fpr", "fnr")
# judge settings with a table of their own; every other varying setting gets a generic one
_OWN_TABLES = frozenset({"tool_budget", "tool_set"})
# (verdict, label, subdomain)
_Row = tuple[VerdictDetail, bool, str]


def _per_repeat(rows: Sequence[tuple[int, bool, bool]]) -> dict[str, list[float]]:
    """Each metric per repeat, from (repeat, label, said PASS) rows."""
    by: dict[int, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
    for k, lab, said in rows:
        by[k][0].append(lab)
        by[k][1].append(said)
    out: dict[str, list[float]] = {m: [] for m in _METRICS}
    for k in sorted(by):
        bm = binary_metrics(*by[k])
        for m in _METRICS:
            out[m].append(getattr(bm, m))
    return out


def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if not math.isnan(x)]
    return float(np.mean(xs)) * 100 if xs else math.nan


def _ci(xs: list[float], confidence: float) -> tuple[float, float]:
    """The t-interval over the repeats where the metric is defined (clipped to 0–1)."""
    defined = [x for x in xs if not math.isnan(x)]
    return t_ci(defined, confidence, bounds=(0.0, 1.0)) if defined else (math.nan, math.nan)


def aj_breakdown_section(data: ReportData | AjData, *, confidence: float = 0.95) -> Section:
    """Per-domain and per-subdomain metrics with CIs, failure modes, and the ablations."""
    data = aj_data(data)
    sec = Section("Agent-as-a-Judge by domain and subdomain")
    rows: list[tuple[VerdictDetail, bool, str, str, str | None]] = []
    # the label_of, runs and task_of look-ups, inline: once per verdict of 50,000
    outcomes, runs, tasks = data.outcomes, data.runs, data.tasks
    for v in data.verdicts:
        label = outcomes.get(v.run_id)
        run = runs.get(v.run_id)
        if label is None or run is None or v.verdict is None:
            continue
        task = tasks.get((run.pack_id, run.task_id))
        domain = (task.category if task else None) or "all"
        sub = (task.subdomain if task else None) or domain
        kind = task.kind if task else None
        rows.append((v, label, domain, sub, kind))
    if not rows:
        sec.empty = "No verdicts with labels yet: `lhbench aj run` produces them."
        return sec
    item_rows = rows
    # F1 and its family are over units: a search answer is one (AJ-Bench §4.1)
    folded, partial = per_trajectory([(v, lab, tuple(rest)) for v, lab, *rest in rows], data.runs)
    rows = [(v, lab, *rest) for v, lab, rest in folded]  # type: ignore[misc]
    pct = int(confidence * 100)
    table = Table(
        slug="aj_domains",
        title=f"F1, precision, recall, FPR, FNR (%) per domain and subdomain: mean over "
        f"repeats, each ± {pct}% t-CI over repeats (clipped to 0–100)",
        columns=[
            "judge model",
            "agentic",
            "tool budget",
            "judge settings",
            "domain",
            "subdomain",
            *_METRICS,
            *[f"{m}_ci_{end}" for m in _METRICS for end in ("low", "high")],
            "repeats",
            "n",
        ],
        notes=[
            "subdomain '(domain)': every item of the domain pooled per repeat. judge "
            "settings: those that differ between one model's verdicts (one row each). PASS is the "
            "positive class; verdicts that are errors are left out. A metric's CI is over "
            "the repeats where it is defined (FPR needs a failing run, FNR a passing one; "
            "F1 and precision a PASS, recall a passing run). n: judged units (a search "
            "answer is one unit: it passes when every one of its items passes)."
            + (f" {partial} search answer(s) left out: an item has no verdict." if partial else "")
        ],
    )

    judge_config = judge_configs([v for v, *_ in rows])

    memo: dict[str, tuple[str, str, int, str]] = {}

    def config(v: VerdictDetail) -> tuple[str, str, int, str]:
        # one judge config hash is one model, kind and settings: worked out once per judge
        got = memo.get(v.judge.key)
        if got is None:
            budget_ = int(v.judge.settings.get("tool_budget", 0))
            got = v.judge.model, v.judge.kind.value, budget_, judge_config(v)[2]
            memo[v.judge.key] = got
        return got

    # each configuration's units, in their order (one pass, not one per configuration)
    rows_of: dict[tuple[str, str, int, str], list[tuple[Any, ...]]] = defaultdict(list)
    for r in rows:
        rows_of[config(r[0])].append(r)
    for model, kind, budget_, setting in sorted(rows_of):
        mine = rows_of[(model, kind, budget_, setting)]
        for domain in sorted({r[2] for r in mine}):
            in_domain = [r for r in mine if r[2] == domain]
            groups = [
                (s, [r for r in in_domain if r[3] == s]) for s in sorted({r[3] for r in in_domain})
            ]
            groups.append(("(domain)", in_domain))
            for sub, grp in groups:
                per = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, *_ in grp])
                cis = [_ci(per[m], confidence) for m in _METRICS]
                table.rows.append(
                    [
                        model,
                        "✓" if kind == "agent" else "✗",
                        budget_,
                        setting,
                        domain,
                        sub,
                        *[_mean(per[m]) for m in _METRICS],
                        *[end * 100 for ci in cis for end in ci],
                        len(per["f1"]),
                        len(grp),
                    ]
                )
    sec.tables.append(table)

    modes = Table(
        slug="aj_failure_modes_by_subdomain",
        title="Failure modes of wrong agent verdicts per subdomain (share %, AJ-Bench A.7)",
        columns=[
            "judge model",
            "judge settings",
            "domain",
            "subdomain",
            "(a)",
            "(b)",
            "(c)",
            "(d)",
            "untagged",
            "n",
        ],
        digits=1,
        notes=[
            "(a)/(b) are tagged by rule where no reviewer tag is stored; (c)/(d) by review. "
            "One row per judge configuration (a model's verdicts under different settings "
            "are never pooled)."
        ],
    )
    # per judge configuration: a model under two tool budgets fails in different ways
    wrong: dict[tuple[str, str, str, str], list[str]] = defaultdict(list)
    for v, lab, domain, sub, kind in item_rows:
        if v.judge.kind == JudgeKind.AGENT and (v.verdict == "PASS") != lab:
            key = (v.judge.model, judge_config(v)[2], domain, sub)
            wrong[key].append(failure_mode(v, lab, kind) or "?")
    counts = Table(
        slug="aj_failure_mode_counts",
        title="Failure modes of wrong agent verdicts (count, AJ-Bench A.7)",
        columns=[
            "judge model",
            "judge settings",
            "(a)",
            "(b)",
            "(c)",
            "(d)",
            "untagged",
            "wrong verdicts",
        ],
        notes=[
            "(a) called no tool; (b) no tool that reads the environment's final state; "
            "(c) misread tool output; (d) wrong reasoning. (a)/(b) by rule where no reviewer "
            "tag is stored, (c)/(d) by review (`lhbench aj tag`). One row per judge "
            "configuration."
        ],
    )
    by_config: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (model, setting, domain, sub), ms in sorted(wrong.items()):
        share = [100 * ms.count(m) / len(ms) for m in ("a", "b", "c", "d", "?")]
        modes.rows.append([model, setting, domain, sub, *share, len(ms)])
        by_config[(model, setting)].extend(ms)
    for (model, setting), ms in sorted(by_config.items()):
        counts.rows.append(
            [model, setting, *[ms.count(m) for m in ("a", "b", "c", "d", "?")], len(ms)]
        )
    if modes.rows:
        sec.tables.extend([counts, modes])

    budget = Table(
        slug="aj_turn_budget",
        title="Turn-budget ablation of agent judges: F1 (%) by tool-call budget",
        columns=["judge model", "tool budget", "overall", "pooled F1", "mean tool calls", "n"],
        notes=["overall: the mean of the subdomain F1 scores (each averaged over repeats)."],
    )
    by_budget: dict[tuple[str, int], list[tuple[VerdictDetail, bool, str]]] = defaultdict(list)
    for v, lab, _, sub, _ in rows:
        if v.judge.kind == JudgeKind.AGENT:
            b = int(v.judge.settings.get("tool_budget", 0))
            by_budget[(v.judge.model, b)].append((v, lab, sub))
    for (model, b), bgrp in sorted(by_budget.items()):
        overall, pooled_f1 = _overall(bgrp)
        calls = float(
            np.mean(
                [
                    v.tool_calls
                    for v, *_ in item_rows
                    if v.judge.kind == JudgeKind.AGENT
                    and v.judge.model == model
                    and int(v.judge.settings.get("tool_budget", 0)) == b
                ]
            )
        )
        budget.rows.append([model, b, overall, pooled_f1, calls, len(bgrp)])
    if budget.rows:
        sec.tables.append(budget)

    tools = Table(
        slug="aj_tool_sets",
        title="Tool-set ablation: F1 (%) with no tools (LLM judge), the state, or the state "
        "and the trajectory",
        columns=["judge model", "tool set", "overall", "pooled F1", "n"],
        notes=["overall: the mean of the subdomain F1 scores (each averaged over repeats)."],
    )
    by_tools: dict[tuple[str, str], list[tuple[VerdictDetail, bool, str]]] = defaultdict(list)
    for v, lab, _, sub, _ in rows:
        agentic = v.judge.kind == JudgeKind.AGENT
        ts = str(v.judge.settings.get("tool_set", "state+trajectory")) if agentic else "none"
        by_tools[(v.judge.model, ts)].append((v, lab, sub))
    if len({ts for _, ts in by_tools}) > 1:
        for (model, ts), tgrp in sorted(by_tools.items()):
            overall, pooled_f1 = _overall(tgrp)
            tools.rows.append([model, ts, overall, pooled_f1, len(tgrp)])
        sec.tables.append(tools)
    sec.tables.extend(_setting_ablations(rows))
    return sec


def _axis_slug(axis: str) -> str:
    """A setting's name as a file-name-safe slug part (stored names are untrusted)."""
    return re.sub(r"[^A-Za-z0-9]+", "_", axis).strip("_")[:40] or "setting"


def _axis_value(settings: Mapping[str, object], axis: str) -> str:
    if axis not in settings:
        return "(not set)"
    value = settings[axis]
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _setting_ablations(
    rows: Sequence[tuple[VerdictDetail, bool, str, str, str | None]],
) -> list[Table]:
    """One table per other judge setting that takes two or more values for one judge.

    Any axis stored in the judge's settings (a GUI judge's modality, the temperature, ...)
    becomes an ablation as soon as one judge model has verdicts under two of its values;
    the turn budget and tool set have their own tables above.
    """
    tables = []
    axes = sorted({k for v, *_ in rows for k in v.judge.settings} - _OWN_TABLES)
    for axis in axes:
        groups: dict[tuple[str, str, str], list[tuple[VerdictDetail, bool, str]]] = defaultdict(
            list
        )
        for v, lab, _, sub, _ in rows:
            value = _axis_value(v.judge.settings, axis)
            groups[(v.judge.model, v.judge.kind.value, value)].append((v, lab, sub))
        values: dict[tuple[str, str], set[str]] = defaultdict(set)
        for model, kind, value in groups:
            values[(model, kind)].add(value)
        varied = {mk for mk, vals in values.items() if len(vals) > 1}
        if not varied:
            continue
        table = Table(
            slug=f"aj_ablation_{_axis_slug(axis)}",
            title=f"Ablation over the judge setting {axis!r}: F1 (%) per value",
            columns=["judge model", "agentic", axis, "overall", "pooled F1", "n"],
            notes=[
                "overall: the mean of the subdomain F1 scores (each averaged over repeats); "
                "only judges with verdicts under two or more values are shown; "
                "'(not set)': verdicts stored without this setting."
            ],
        )
        for (model, kind, value), grp in sorted(groups.items()):
            if (model, kind) in varied:
                overall, pooled_f1 = _overall(grp)
                agentic = "✓" if kind == "agent" else "✗"
                table.rows.append([model, agentic, value, overall, pooled_f1, len(grp)])
        tables.append(table)
    return tables


def _overall(grp: Sequence[tuple[VerdictDetail, bool, str]]) -> tuple[float, float]:
    """(mean of subdomain F1, pooled F1), each averaged over repeats, in %."""
    per_sub = {}
    for sub in sorted({s for *_, s in grp}):
        f1s = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, s in grp if s == sub])
        per_sub[sub] = _mean(f1s["f1"]) / 100
    pooled = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, _ in grp])
    defined = {s: x for s, x in per_sub.items() if not math.isnan(x)}
    return (macro_f1(defined) * 100 if defined else math.nan), _mean(pooled["f1"])
