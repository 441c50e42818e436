"""Report section on Agent-as-a-Judge meta-evaluation (AJ-Bench Tables 3 and 9).

AJ-Bench's Overall is the mean of the subdomain F1 scores (each averaged over repeats);
the F1 of all items pooled is shown beside it, labelled. Its CI is a t-interval over
repeats of the per-repeat overall. One row per judge configuration: a model's verdicts
made under different settings (two tool budgets, two GUI modalities) are never pooled.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable

import numpy as np

from lhbench.report.data import ReportData
from lhbench.report.tables import Section, Table
from lhbench.schema import Verdict
from lhbench.stats import binary_metrics, macro_f1, t_ci

__all__ = ["aj_section", "judge_configs"]


def judge_configs(verdicts: list[Verdict]) -> Callable[[Verdict], tuple[str, str, str]]:
    """A verdict's judge configuration: (model, kind, the settings that vary for it).

    The settings part names only the settings whose values differ among one model and
    kind's verdicts (``tool_budget=5``), so a judge run under one setting keeps "" and two
    tool budgets or modalities of one model are never pooled into one F1.
    """
    seen: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    total: dict[tuple[str, str], int] = defaultdict(int)
    having: dict[tuple[tuple[str, str], str], int] = defaultdict(int)
    for v in verdicts:
        total[_mk(v)] += 1
        for k, val in v.judge.settings.items():
            seen[_mk(v)][k].add(_show(val))
            having[(_mk(v), k)] += 1
    # a setting varies when it takes two values, or some verdicts lack it
    keys = {
        mk: sorted(k for k, vals in by_key.items() if len(vals) > 1 or having[(mk, k)] < total[mk])
        for mk, by_key in seen.items()
    }

    memo: dict[int, tuple[str, str, str]] = {}

    def config(v: Verdict) -> tuple[str, str, str]:
        if id(v) not in memo:
            mk = _mk(v)
            shown = ", ".join(
                f"{k}={_show(v.judge.settings[k]) if k in v.judge.settings else '(not set)'}"
                for k in keys.get(mk, [])
            )
            memo[id(v)] = (*mk, shown)
        return memo[id(v)]

    return config


def _mk(v: Verdict) -> tuple[str, str]:
    return v.judge.model, v.judge.kind.value


def _show(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def aj_section(data: ReportData, *, confidence: float = 0.95) -> Section:
    """Agent-as-a-Judge meta-evaluation (AJ-Bench Table 3 and Table 9)."""
    sec = Section("Agent-as-a-Judge meta-evaluation")
    rows = []
    unlabelled = 0
    for v in data.verdicts:
        label = data.label_of(v.run_id)
        run = data.runs.get(v.run_id)
        if label is None or run is None:
            unlabelled += 1
            continue
        task = data.task_of(run)
        sub = (task.tags.subdomain or task.tags.category) if task else None
        rows.append((v, label, sub or "all"))
    if not rows:
        sec.empty = "No verdicts with labels yet: `lhbench aj run` produces them."
        return sec
    errors = sum(1 for v, _, _ in rows if v.verdict is None)
    subs = sorted({s for _, _, s in rows})
    cfg = judge_configs([v for v, _, _ in rows])
    configs = sorted({cfg(v) for v, _, _ in rows})

    def f1_runs(config: tuple[str, str, str], sub: str | None) -> list[float]:
        by_repeat: dict[int, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
        for v, label, s in rows:
            if cfg(v) != config or v.verdict is None:
                continue
            if sub is not None and s != sub:
                continue
            by_repeat[v.repeat][0].append(label)
            by_repeat[v.repeat][1].append(v.verdict == "PASS")
        return [binary_metrics(t, p).f1 for t, p in (by_repeat[k] for k in sorted(by_repeat))]

    main = Table(
        slug="aj_f1",
        title=f"F1 (%) by subdomain, mean over repeats; overall = mean of subdomain F1 "
        f"(AJ-Bench) ± {int(confidence * 100)}% t-CI over repeats (clipped to 0–100)",
        columns=[
            "judge model",
            "agentic",
            "judge settings",
            *subs,
            "overall",
            "ci_low",
            "ci_high",
            "pooled F1",
            "repeats",
            "n",
        ],
        digits=2,
        notes=[
            "overall: the unweighted mean of the subdomain F1 scores, as AJ-Bench reports it; "
            "pooled F1: one F1 over every item of every subdomain (weighs large subdomains "
            "more). PASS is the positive class. A judge model whose verdicts were made under "
            "different settings (tool budget, modality, ...) has one row per setting. "
            f"{errors} verdict(s) were errors and are left out"
            + (
                f"; so are {unlabelled} verdict(s) on runs with no pass/fail label."
                if unlabelled
                else "."
            )
        ],
    )
    f1_means: dict[tuple[str, str, str], list[float]] = {}
    for config in configs:
        model, kind, setting = config
        per_sub_runs = {s: f1_runs(config, s) for s in subs}
        per_sub = [
            float(np.mean(per_sub_runs[s])) * 100 if per_sub_runs[s] else math.nan for s in subs
        ]
        repeats = sorted({k for s in subs for k in range(len(per_sub_runs[s]))})
        per_repeat = []
        for k in repeats:
            here = {s: per_sub_runs[s][k] for s in subs if k < len(per_sub_runs[s])}
            if here:
                per_repeat.append(macro_f1(here))
        present = {s: v for s, v in zip(subs, per_sub, strict=True) if not math.isnan(v)}
        overall = macro_f1(present) if present else math.nan
        lo, hi = (
            t_ci(per_repeat, confidence, bounds=(0.0, 1.0))
            if len(per_repeat) > 1
            else (math.nan, math.nan)
        )
        pooled = f1_runs(config, None)
        n = sum(1 for v, _, _ in rows if cfg(v) == config and v.verdict is not None)
        main.rows.append(
            [
                model,
                "✓" if kind == "agent" else "✗",
                setting,
                *per_sub,
                overall,
                lo * 100,
                hi * 100,
                float(np.mean(pooled)) * 100 if pooled else math.nan,
                len(per_repeat),
                n,
            ]
        )
        f1_means[config] = [*per_sub, overall]
    # agent minus LLM judge of the same model, when the model has one LLM configuration
    for model in sorted({m for m, _, _ in configs}):
        llm = [c for c in configs if c[:2] == (model, "llm")]
        agents = [c for c in configs if c[:2] == (model, "agent")]
        if agents and len(llm) > 1:
            main.notes.append(
                f"No improvement row for {model}: its LLM-judge verdicts were made under "
                f"{len(llm)} settings, so there is no one LLM judge to subtract."
            )
        for agent in agents if len(llm) == 1 else ():
            diff = [a - b for a, b in zip(f1_means[agent], f1_means[llm[0]], strict=True)]
            main.rows.append([model, "improvement", agent[2], *diff, None, None, None, None, None])
    sec.tables.append(main)
    sec.plots["aj_f1"] = (
        subs,
        {(f"{m} [{st}]" if st else m, k): vals for (m, k, st), vals in f1_means.items()},
    )

    detail = Table(
        slug="aj_metrics",
        title="FPR, FNR, precision and recall (%) by subdomain, all repeats pooled",
        columns=["judge model", "agentic", "metric", "judge settings", *subs, "overall"],
    )
    for config in configs:
        model, kind, setting = config
        mine = [
            (lab, v.verdict == "PASS", s)
            for v, lab, s in rows
            if cfg(v) == config and v.verdict is not None
        ]
        if not mine:
            continue
        metrics = {
            s: binary_metrics([m[0] for m in mine if m[2] == s], [m[1] for m in mine if m[2] == s])
            if any(m[2] == s for m in mine)
            else None
            for s in subs
        }
        total = binary_metrics([m[0] for m in mine], [m[1] for m in mine])
        for name in ("fpr", "fnr", "precision", "recall"):
            detail.rows.append(
                [
                    model,
                    "✓" if kind == "agent" else "✗",
                    name.upper() if len(name) == 3 else name,
                    setting,
                ]
                + [getattr(metrics[s], name) * 100 if metrics[s] else math.nan for s in subs]
                + [getattr(total, name) * 100]
            )
    sec.tables.append(detail)
    modes = [
        v.failure_mode
        for v, label, _ in rows
        if v.verdict is not None and (v.verdict == "PASS") != label and v.failure_mode
    ]
    if modes:
        fm = Table(
            slug="aj_failure_modes",
            title="Failure modes of wrong verdicts",
            columns=["mode", "count", "share %"],
            digits=1,
        )
        for mode, cnt in sorted({m: modes.count(m) for m in modes}.items()):
            fm.rows.append([mode, cnt, 100 * cnt / len(modes)])
        sec.tables.append(fm)
    return sec
