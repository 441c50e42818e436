"""Report section on Agent-as-a-Judge meta-evaluation (AJ-Bench Tables 3 and 9).

AJ-Bench's Overall is the mean of the subdomain F1 scores (each averaged over repeats);
the F1 of all units pooled is shown beside it, labelled. A unit is a run; in the search
domain an answer (trajectory), whose items are folded into one result first, as AJ-Bench
does (:func:`per_trajectory`); the item-level F1 has its own table. An undefined F1 (no
positives) is n/a and left out of means; agent-minus-LLM Improvement compares both judges
over the subdomains both have an F1 for and says "over k of n subdomains" when fewer.
Its CI is a t-interval over repeats of the per-repeat overall (repeats paired by
number). One row per judge configuration: a model's verdicts made under different
settings (two tool budgets, two GUI modalities) are never pooled.
"""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

import numpy as np

from lhbench.reporting.aj_data import AjData, AjRun, aj_data
from lhbench.reporting.data import ReportData
from lhbench.reporting.tables import Cell, Section, Table
from lhbench.stats import binary_metrics, macro_f1, t_ci
from lhbench.store import VerdictDetail

__all__ = ["aj_section", "judge_configs", "per_trajectory"]


def judge_configs(
    verdicts: list[VerdictDetail],
) -> Callable[[VerdictDetail], tuple[str, str, str]]:
    """A verdict's judge configuration: (model, kind, the settings that vary for it).

    The settings part names only the settings whose values differ among one model and
    kind's verdicts (``tool_budget=5``), so a judge run under one setting keeps "" and two
    tool budgets or modalities of one model are never pooled into one F1.
    """
    seen: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    total: dict[tuple[str, str], int] = defaultdict(int)
    having: dict[tuple[tuple[str, str], str], int] = defaultdict(int)
    # one judge config hash is one model, kind and settings: each judge's verdicts counted
    # first, its settings then read once (a few judges among 50,000 verdicts)
    judges: dict[str, VerdictDetail] = {}
    count: Counter[str] = Counter()
    for v in verdicts:
        key = v.judge.key
        count[key] += 1
        if key not in judges:
            judges[key] = v
    for key, v in judges.items():
        mk, n = _mk(v), count[key]
        total[mk] += n
        for k, val in v.judge.settings.items():
            seen[mk][k].add(_show(val))
            having[(mk, k)] += n
    # a setting varies when it takes two values, or some verdicts lack it
    keys = {
        mk: sorted(k for k, vals in by_key.items() if len(vals) > 1 or having[(mk, k)] < total[mk])
        for mk, by_key in seen.items()
    }

    # one judge config hash is one model, kind and settings: worked out once per judge
    memo: dict[str, tuple[str, str, str]] = {}

    def config(v: VerdictDetail) -> tuple[str, str, str]:
        got = memo.get(v.judge.key)
        if got is None:
            mk = _mk(v)
            shown = ", ".join(
                f"{k}={_show(v.judge.settings[k]) if k in v.judge.settings else '(not set)'}"
                for k in keys.get(mk, [])
            )
            got = memo[v.judge.key] = (*mk, shown)
        return got

    return config


def _mk(v: VerdictDetail) -> tuple[str, str]:
    return v.judge.model, v.judge.kind.value


def _show(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


R = TypeVar("R")


def _answer(run: AjRun | None) -> str | None:
    return None if run is None else run.answer


def per_trajectory(
    rows: Sequence[tuple[VerdictDetail, bool, R]], runs: Mapping[str, AjRun]
) -> tuple[list[tuple[VerdictDetail, bool, R]], int]:
    """Search items folded into one row per answer, as AJ-Bench scores its search domain.

    AJ-Bench labels and judges a search answer item by item, then "aggregate[s] the
    evaluations of all single items within a trajectory into a single result, from which
    the F1 score is computed" (§4.1). The single result here: the answer passes when every
    item of it passes (the label: every item labelled PASS; the verdict: every item judged
    PASS, i.e. :func:`~lhbench.jobs.aj_search.answer_scores` = 1), the rule of the
    benchmarks the items come from (WideSearch's table-level success). One row per judge
    configuration, repeat and answer; rows of other runs are returned unchanged.

    Returns:
        The rows, and how many answers were left out because some of their items have no
        verdict (an error) or no label: an answer is only scored whole.
    """
    items_of: Counter[str] = Counter(r.answer for r in runs.values() if r.answer is not None)
    out: list[tuple[VerdictDetail, bool, R]] = []
    groups: dict[tuple[str, int, str], list[tuple[VerdictDetail, bool, R]]] = defaultdict(list)
    for v, label, rest in rows:
        answer = _answer(runs.get(v.run_id))
        if answer is None:
            out.append((v, label, rest))
        else:
            groups[(v.judge.key, v.repeat, answer)].append((v, label, rest))
    partial = 0
    for (_, _, answer), grp in sorted(groups.items(), key=lambda kv: kv[0]):
        decided = [g for g in grp if g[0].verdict is not None]
        if len({g[0].run_id for g in decided}) < items_of[answer]:
            partial += 1
            continue
        said = all(g[0].verdict == "PASS" for g in decided)
        first = decided[0][0]
        folded = replace(
            first, run_id=answer, verdict="PASS" if said else "FAIL", failure_mode=None
        )
        out.append((folded, all(g[1] for g in decided), decided[0][2]))
    return out, partial


def _nanmean(values: Sequence[float]) -> float:
    defined = [x for x in values if not math.isnan(x)]
    return float(np.mean(defined)) if defined else math.nan


def aj_section(data: ReportData | AjData, *, confidence: float = 0.95) -> Section:
    """Agent-as-a-Judge meta-evaluation (AJ-Bench Table 3 and Table 9)."""
    data = aj_data(data)
    sec = Section("Agent-as-a-Judge meta-evaluation")
    item_rows = []
    search_items = []  # scored per answer (AJ-Bench §4.1); every other run is its own unit
    unlabelled = 0
    # the label_of, runs and task_of look-ups, inline: once per verdict of 50,000
    outcomes, runs, tasks = data.outcomes, data.runs, data.tasks
    for v in data.verdicts:
        label = outcomes.get(v.run_id)
        run = runs.get(v.run_id)
        if label is None or run is None:
            unlabelled += 1
            continue
        task = tasks.get((run.pack_id, run.task_id))
        sub = (task.subdomain or task.category) if task else None
        row = (v, label, sub or "all")
        item_rows.append(row)
        if run.answer is not None:
            search_items.append(row)
    if not item_rows:
        sec.empty = "No verdicts with labels yet: `lhbench aj run` produces them."
        return sec
    errors = sum(1 for v, _, _ in item_rows if v.verdict is None)
    rows, partial = per_trajectory([r for r in item_rows if r[0].verdict is not None], data.runs)
    subs = sorted({s for _, _, s in item_rows})
    cfg = judge_configs([v for v, _, _ in item_rows])
    configs = sorted({cfg(v) for v, _, _ in item_rows})
    # each configuration's units, in their order (one pass, not one per table cell)
    rows_of: dict[tuple[str, str, str], list[tuple[VerdictDetail, bool, str]]] = defaultdict(list)
    for row in rows:
        rows_of[cfg(row[0])].append(row)

    def f1_by_repeat(config: tuple[str, str, str], sub: str | None) -> dict[int, float]:
        """Repeat number -> F1 (NaN when undefined: no PASS among labels or verdicts)."""
        by_repeat: dict[int, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
        for v, label, s in rows_of.get(config, ()):
            if sub is not None and s != sub:
                continue
            by_repeat[v.repeat][0].append(label)
            by_repeat[v.repeat][1].append(v.verdict == "PASS")
        return {k: binary_metrics(t, p).f1 for k, (t, p) in sorted(by_repeat.items())}

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
            "pooled F1: one F1 over every unit of every subdomain (weighs large subdomains "
            "more). PASS is the positive class; n: judged units (runs; a search answer is "
            "one unit). F1 is undefined (n/a) where there are no positives, no PASS among "
            "labels or verdicts, and left out of the means. A judge model whose verdicts "
            "were made under different settings (tool budget, modality, ...) has one row per "
            f"setting. {errors} verdict(s) were errors and are left out"
            + (
                f"; so are {unlabelled} verdict(s) on runs with no pass/fail label."
                if unlabelled
                else "."
            )
        ],
    )
    if search_items:
        main.notes.append(
            "Search subdomains are scored per answer (trajectory), as AJ-Bench does: an "
            "answer passes when every one of its items passes, by its labels and by the "
            "judge's verdicts, and F1 is over answers"
            + (
                f"; {partial} answer(s) left out: an item has no verdict or no label."
                if partial
                else "."
            )
            + " The item-level F1 is in its own table, labelled."
        )
    f1_means: dict[tuple[str, str, str], dict[str, float]] = {}
    for config in configs:
        model, kind, setting = config
        per_sub_runs = {s: f1_by_repeat(config, s) for s in subs}
        per_sub = {s: _nanmean(list(per_sub_runs[s].values())) * 100 for s in subs}
        # repeats are paired by their number: repeat k of every subdomain that has one
        repeats = sorted({k for s in subs for k in per_sub_runs[s]})
        per_repeat = []
        for k in repeats:
            here = {s: per_sub_runs[s][k] for s in subs if k in per_sub_runs[s]}
            if any(not math.isnan(x) for x in here.values()):
                per_repeat.append(macro_f1(here))
        present = {s: x for s, x in per_sub.items() if not math.isnan(x)}
        overall = macro_f1(present) if present else math.nan
        lo, hi = (
            t_ci(per_repeat, confidence, bounds=(0.0, 1.0))
            if len(per_repeat) > 1
            else (math.nan, math.nan)
        )
        pooled = f1_by_repeat(config, None)
        n = len(rows_of.get(config, ()))
        main.rows.append(
            [
                model,
                "✓" if kind == "agent" else "✗",
                setting,
                *[per_sub[s] for s in subs],
                overall,
                lo * 100,
                hi * 100,
                _nanmean(list(pooled.values())) * 100,
                len(per_repeat),
                n,
            ]
        )
        f1_means[config] = per_sub
    # agent minus LLM judge of the same model, when the model has one LLM configuration;
    # both overalls over the subdomains where both have an F1, never over different sets
    for model in sorted({m for m, _, _ in configs}):
        llm = [c for c in configs if c[:2] == (model, "llm")]
        agents = [c for c in configs if c[:2] == (model, "agent")]
        if agents and len(llm) > 1:
            main.notes.append(
                f"No improvement row for {model}: its LLM-judge verdicts were made under "
                f"{len(llm)} settings, so there is no one LLM judge to subtract."
            )
        for agent in agents if len(llm) == 1 else ():
            a, b = f1_means[agent], f1_means[llm[0]]
            shared = [s for s in subs if not math.isnan(a[s]) and not math.isnan(b[s])]
            diff = [a[s] - b[s] if s in shared else math.nan for s in subs]
            gain = (
                macro_f1({s: a[s] for s in shared}) - macro_f1({s: b[s] for s in shared})
                if shared
                else math.nan
            )
            main.rows.append([model, "improvement", agent[2], *diff, gain, *[None] * 5])
            if len(shared) < len(subs):
                main.notes.append(
                    f"Improvement of {model}"
                    + (f" [{agent[2]}]" if agent[2] else "")
                    + f": over {len(shared)} of {len(subs)} subdomains, the ones where both "
                    "the agent and the LLM judge have an F1 (both overalls recomputed over "
                    "that set)."
                )
    sec.tables.append(main)
    sec.plots["aj_f1"] = (
        subs,
        {
            (f"{m} [{st}]" if st else m, k): [
                *(vals[s] for s in subs),
                _row_overall(main, (m, k, st)),
            ]
            for (m, k, st), vals in f1_means.items()
        },
    )
    if search_items:
        sec.tables.append(_item_level(search_items, cfg, configs))

    detail = Table(
        slug="aj_metrics",
        title="FPR, FNR, precision and recall (%) by subdomain, all repeats pooled "
        "(search: per answer)",
        columns=["judge model", "agentic", "metric", "judge settings", *subs, "overall"],
    )
    for config in configs:
        model, kind, setting = config
        mine = [(lab, v.verdict == "PASS", s) for v, lab, s in rows_of.get(config, ())]
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
        for v, label, _ in item_rows
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


def _row_overall(table: Table, config: tuple[str, str, str]) -> float:
    """The overall F1 of a configuration's row (for the plot)."""
    model, kind, setting = config
    agentic = "✓" if kind == "agent" else "✗"
    col = table.columns.index("overall")
    for row in table.rows:
        if row[:3] == [model, agentic, setting]:
            value = row[col]
            return float(value) if isinstance(value, int | float) else math.nan
    return math.nan


def _item_level(
    rows: Sequence[tuple[VerdictDetail, bool, str]],
    cfg: Callable[[VerdictDetail], tuple[str, str, str]],
    configs: list[tuple[str, str, str]],
) -> Table:
    """Search subdomains scored per item (lhbench's figure, not AJ-Bench's)."""
    subs = sorted({s for _, _, s in rows})
    table = Table(
        slug="aj_search_items",
        title="Search subdomains, item level: F1 (%) over single items, mean over repeats "
        "(not AJ-Bench's figure)",
        columns=["judge model", "agentic", "judge settings", *subs, "items"],
        digits=2,
        notes=[
            "Each item of an answer counted as its own unit. AJ-Bench scores the search "
            "domain per answer (the F1 table above); this item-level F1 is lhbench's, for "
            "diagnosis. Verdicts that are errors are left out."
        ],
    )
    for config in configs:
        mine = [(v, lab, s) for v, lab, s in rows if cfg(v) == config and v.verdict is not None]
        if not mine:
            continue
        cells: list[Cell] = []
        for sub in subs:
            by_repeat: dict[int, tuple[list[bool], list[bool]]] = defaultdict(lambda: ([], []))
            for v, lab, s in mine:
                if s == sub:
                    by_repeat[v.repeat][0].append(lab)
                    by_repeat[v.repeat][1].append(v.verdict == "PASS")
            f1s = [binary_metrics(t, p).f1 for t, p in by_repeat.values()]
            cells.append(_nanmean(f1s) * 100)
        model, kind, setting = config
        table.rows.append([model, "✓" if kind == "agent" else "✗", setting, *cells, len(mine)])
    return table
