"""Agent-as-a-Judge by domain and subdomain, failure modes, and the turn-budget ablation.

AJ-Bench reports F1/P/R/FPR/FNR per subdomain (Tables 3, 7, 9) with t-intervals over
three repeats, the failure modes (a)-(d) of wrong agent verdicts (Table 8), and ablations
of the judge. Here: one row per judge × domain × subdomain (plus the domain as a whole),
each metric the mean over repeats with the F1 t-CI; failure modes per subdomain, from the
stored tag or, for (a)/(b), the tool-use rule; and F1 per tool budget of agent judges.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from lhbench.report.data import ReportData
from lhbench.report.tables import Section, Table
from lhbench.schema import Verdict
from lhbench.stats import binary_metrics, macro_f1, t_ci
from lhbench.stats.aj_modes import failure_mode

__all__ = ["aj_breakdown_section"]
_METRICS = ("f1", "precision", "recall", "fpr", "fnr")


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


def aj_breakdown_section(data: ReportData, *, confidence: float = 0.95) -> Section:
    """Per-domain and per-subdomain metrics with CIs, failure modes, turn-budget ablation."""
    sec = Section("Agent-as-a-Judge by domain and subdomain")
    rows: list[tuple[Verdict, bool, str, str, str | None]] = []
    for v in data.verdicts:
        label = data.label_of(v.run_id)
        run = data.runs.get(v.run_id)
        if label is None or run is None or v.verdict is None:
            continue
        task = data.task_of(run)
        domain = (task.tags.category if task else None) or "all"
        sub = (task.tags.subdomain if task else None) or domain
        kind = task.environment.kind.value if task and task.environment.kind else None
        rows.append((v, label, domain, sub, kind))
    if not rows:
        sec.empty = "No verdicts with labels yet: `lhbench aj run` produces them."
        return sec
    pct = int(confidence * 100)
    table = Table(
        slug="aj_domains",
        title=f"F1, precision, recall, FPR, FNR (%) per domain and subdomain: mean over "
        f"repeats, F1 ± {pct}% t-CI over repeats",
        columns=[
            "judge model",
            "agentic",
            "tool budget",
            "domain",
            "subdomain",
            *_METRICS,
            "f1_ci_low",
            "f1_ci_high",
            "repeats",
            "n",
        ],
        notes=[
            "subdomain '(domain)': every item of the domain pooled per repeat. PASS is the "
            "positive class; verdicts that are errors are left out."
        ],
    )

    def config(v: Verdict) -> tuple[str, str, int]:
        return v.judge.model, v.judge.kind.value, int(v.judge.settings.get("tool_budget", 0))

    for model, kind, budget_ in sorted({config(v) for v, *_ in rows}):
        mine = [r for r in rows if config(r[0]) == (model, kind, budget_)]
        for domain in sorted({r[2] for r in mine}):
            in_domain = [r for r in mine if r[2] == domain]
            groups = [
                (s, [r for r in in_domain if r[3] == s]) for s in sorted({r[3] for r in in_domain})
            ]
            groups.append(("(domain)", in_domain))
            for sub, grp in groups:
                per = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, *_ in grp])
                lo, hi = t_ci(per["f1"], confidence)
                table.rows.append(
                    [
                        model,
                        "✓" if kind == "agent" else "✗",
                        budget_,
                        domain,
                        sub,
                        *[_mean(per[m]) for m in _METRICS],
                        lo * 100,
                        hi * 100,
                        len(per["f1"]),
                        len(grp),
                    ]
                )
    sec.tables.append(table)

    modes = Table(
        slug="aj_failure_modes_by_subdomain",
        title="Failure modes of wrong agent verdicts per subdomain (share %, AJ-Bench A.7)",
        columns=["judge model", "domain", "subdomain", "(a)", "(b)", "(c)", "(d)", "untagged", "n"],
        digits=1,
        notes=["(a)/(b) are tagged by rule where no reviewer tag is stored; (c)/(d) by review."],
    )
    wrong: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for v, lab, domain, sub, kind in rows:
        if v.judge.kind.value == "agent" and (v.verdict == "PASS") != lab:
            wrong[(v.judge.model, domain, sub)].append(failure_mode(v, lab, kind) or "?")
    for (model, domain, sub), ms in sorted(wrong.items()):
        share = [100 * ms.count(m) / len(ms) for m in ("a", "b", "c", "d", "?")]
        modes.rows.append([model, domain, sub, *share, len(ms)])
    if modes.rows:
        sec.tables.append(modes)

    budget = Table(
        slug="aj_turn_budget",
        title="Turn-budget ablation of agent judges: F1 (%) by tool-call budget",
        columns=["judge model", "tool budget", "overall", "pooled F1", "mean tool calls", "n"],
        notes=["overall: the mean of the subdomain F1 scores (each averaged over repeats)."],
    )
    by_budget: dict[tuple[str, int], list[tuple[Verdict, bool, str]]] = defaultdict(list)
    for v, lab, _, sub, _ in rows:
        if v.judge.kind.value == "agent":
            b = int(v.judge.settings.get("tool_budget", 0))
            by_budget[(v.judge.model, b)].append((v, lab, sub))
    for (model, b), bgrp in sorted(by_budget.items()):
        overall, pooled_f1 = _overall(bgrp)
        calls = float(np.mean([v.tool_calls for v, _, _ in bgrp]))
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
    by_tools: dict[tuple[str, str], list[tuple[Verdict, bool, str]]] = defaultdict(list)
    for v, lab, _, sub, _ in rows:
        agentic = v.judge.kind.value == "agent"
        ts = str(v.judge.settings.get("tool_set", "state+trajectory")) if agentic else "none"
        by_tools[(v.judge.model, ts)].append((v, lab, sub))
    if len({ts for _, ts in by_tools}) > 1:
        for (model, ts), tgrp in sorted(by_tools.items()):
            overall, pooled_f1 = _overall(tgrp)
            tools.rows.append([model, ts, overall, pooled_f1, len(tgrp)])
        sec.tables.append(tools)
    return sec


def _overall(grp: Sequence[tuple[Verdict, bool, str]]) -> tuple[float, float]:
    """(mean of subdomain F1, pooled F1), each averaged over repeats, in %."""
    per_sub = {}
    for sub in sorted({s for *_, s in grp}):
        f1s = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, s in grp if s == sub])
        per_sub[sub] = float(np.mean(f1s["f1"]))
    pooled = _per_repeat([(v.repeat, lab, v.verdict == "PASS") for v, lab, _ in grp])
    return macro_f1(per_sub) * 100, _mean(pooled["f1"])
