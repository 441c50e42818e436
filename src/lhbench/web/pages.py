"""The pages a team reads: overview, per-task matrix, runs list, judges.

Each page answers one question and defaults to showing data whenever the store has any;
with nothing to show it names the command that fills it. (One run and compare: run_pages.)
They name agents and show judges' scores, so they are for admins only; an annotator
opening the overview is sent to the arena (unless the leaderboard is public).
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from lhbench.judges import TierKey, noise_floor
from lhbench.reporting import (
    agreement_section,
    ci_bar,
    forest,
    grading_health_section,
    kappa_heatmap,
)
from lhbench.schema import GradeStatus, RunStatus, judge_labels
from lhbench.web.analysis import Analysis, Front, parse_group_by, sort_agents
from lhbench.web.deps import Admin, signed_in, viewer, web
from lhbench.web.judges_aj import aj_view

__all__ = ["router"]

router = APIRouter()

PAGE_SIZE = 50


def _domain(values: list[float]) -> tuple[float, float]:
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return 0.0, 1.0
    lo, hi = min(finite), max(finite)
    pad = max(1e-6, (hi - lo) * 0.08)
    return lo - pad, hi + pad


def _tier_names(keys: list[TierKey]) -> list[str]:
    """Short, unique column names for tiers (``figma-to-code v1.2 · process``)."""
    return [k.title for k in keys]


# overview ------------------------------------------------------------------------------


@router.get("/", response_class=HTMLResponse)
def overview(request: Request, by: str = "", sort: str = "") -> Response:
    """One row per agent: tier scores, pass rate, Elo, agent-judge agreement, noise, cost."""
    app = web(request)
    v = viewer(request)
    if not app.public_leaderboard:
        v = signed_in(request)
        if not v.is_admin:
            # an annotator's home is the arena: the overview names agents and their scores
            return RedirectResponse("/arena", status_code=303)
    # from the front saved at this version, if any: a restart answers without the summary
    a = app.overview(parse_group_by(by))
    rows, metric = sort_agents(a, sort)
    tiers = a.tier_keys
    domains = {
        k: _domain([x for r in rows if (e := r.scores.get(k)) for x in (e.lo, e.hi)]) for k in tiers
    }
    elo_domain = _domain([x for r in rows if r.elo for x in (r.elo.lo, r.elo.hi)])
    bars: dict[tuple[str, str], Any] = {}
    for r in rows:
        for i, k in enumerate(tiers):
            e = r.scores.get(k)
            if e:
                bars[(r.label, f"tier:{i}")] = ci_bar(e.value, e.lo, e.hi, domains[k])
        if r.pass_rate:
            p = r.pass_rate
            bars[(r.label, "pass")] = ci_bar(p.value, p.lo, p.hi, (0.0, 1.0))
        if r.elo:
            bars[(r.label, "elo")] = ci_bar(r.elo.value, r.elo.lo, r.elo.hi, elo_domain)
    chart = None
    chosen = [
        (r.label, e.value, e.lo, e.hi)
        for r in rows
        if (e := _metric_estimate(a, r, metric)) is not None
    ]
    if len(chosen) >= 2:
        axis = {
            "pass": "check pass rate (95% Wilson CI)",
            "elo": "Bradley–Terry Elo (95% bootstrap CI)",
            "aj": "agent-judge agreement with checks (95% Wilson CI)",
        }.get(metric, "mean panel score (95% bootstrap CI over tasks)")
        chart = forest(chosen, axis=axis, reference=1000.0 if metric == "elo" else None)
    return app.render(
        request,
        v,
        "overview.html",
        a=a,
        rows=rows,
        metric=metric,
        tiers=tiers,
        tier_names=_tier_names(tiers),
        bars=bars,
        chart=chart,
        by=",".join(a.by),
        by_param=by,
        n_tasks=a.tasks,
        n_verdicts=a.verdicts,
        notes=a.notes,
        tier_notes=list(zip(tiers, a.tier_notes, strict=True)),
        has_noise=any(r.noise is not None for r in rows),
        has_aj=any(r.aj for r in rows),
        has_elo=any(r.elo for r in rows),
        has_pass=any(r.pass_rate for r in rows),
        has_cost=any(r.cost_per_run is not None for r in rows),
    )


def _metric_estimate(a: Front, row: Any, metric: str) -> Any:
    if metric.startswith("tier:"):
        i = int(metric[5:])
        return row.scores.get(a.tier_keys[i]) if i < len(a.tier_keys) else None
    return {"pass": row.pass_rate, "elo": row.elo, "aj": row.aj}.get(metric)


# per-task matrix -------------------------------------------------------------------------


def _default_pack(a: Analysis) -> str | None:
    """The pack most agents ran (then the one with most runs): the most to compare."""
    agents: dict[str, set[str]] = defaultdict(set)
    runs: dict[str, int] = defaultdict(int)
    for r in a.runs.values():
        agents[r.pack_id].add(a.agent_of[r.id])
        runs[r.pack_id] += 1
    if not runs:
        return None
    return max(sorted(runs), key=lambda p: (len(agents[p]), runs[p]))


@router.get("/tasks", response_class=HTMLResponse)
def tasks_page(
    request: Request,
    v: Admin,
    tier: str = "",
    pack: str = "",
    by: str = "",
    sort: str = "",
) -> Response:
    """Agents × tasks of one pack: pass/fail counts and mean panel score, sortable."""
    app = web(request)
    a = app.analysis(parse_group_by(by))
    packs = sorted({r.pack_id for r in a.runs.values()})
    pack = pack if pack in packs else (_default_pack(a) or "")
    default = a.default_tier()
    key = a.tier_keys[int(tier)] if tier.isdigit() and int(tier) < len(a.tier_keys) else default
    scores = a.scores.get(key, {}) if key else {}
    pack_runs = [r for r in a.runs.values() if r.pack_id == pack]
    task_ids = sorted({(r.pack_id, r.task_id) for r in pack_runs})
    cells: dict[tuple[str, tuple[str, str]], dict[str, Any]] = defaultdict(
        lambda: {"runs": 0, "passed": 0, "checked": 0, "scores": []}
    )
    for run in pack_runs:
        c = cells[(a.agent_of[run.id], (run.pack_id, run.task_id))]
        c["runs"] += 1
        outcome = a.labels.get(run.id)
        if outcome is not None:
            c["checked"] += 1
            c["passed"] += int(outcome)
        if run.id in scores:
            c["scores"].append(scores[run.id].mean)
    for c in cells.values():
        c["score"] = sum(c["scores"]) / len(c["scores"]) if c["scores"] else None
        c["rate"] = c["passed"] / c["checked"] if c["checked"] else None
        # heat bucket 0..10 from the pass rate, else from the score on its scale
        value = c["rate"]
        if value is None and c["score"] is not None and key is not None:
            value = c["score"] / _scale_max(a, key)
        c["heat"] = None if value is None else max(0, min(10, round(10 * value)))
    present = {a.agent_of[r.id] for r in pack_runs}
    agents = [r.label for r in a.agents if r.label in present]
    # the agent's mean panel score over its runs of this pack (-1: none scored)
    pack_scores: dict[str, list[float]] = defaultdict(list)
    for run in pack_runs:
        if run.id in scores:
            pack_scores[a.agent_of[run.id]].append(scores[run.id].mean)
    overall = {
        label: sum(pack_scores[label]) / len(pack_scores[label]) if pack_scores[label] else -1.0
        for label in agents
    }
    if sort.startswith("task:") and sort[5:].isdigit() and int(sort[5:]) < len(task_ids):
        t = task_ids[int(sort[5:])]

        def by_task(label: str) -> tuple[float, float, str]:
            c = cells.get((label, t))
            return (
                -(c["rate"] if c and c["rate"] is not None else -1.0),
                -(c["score"] if c and c["score"] is not None else -1.0),
                label,
            )

        agents.sort(key=by_task)
    elif sort == "agent":
        agents.sort()
    else:
        agents.sort(key=lambda label: (-overall[label], label))
    return app.render(
        request,
        v,
        "tasks.html",
        a=a,
        key=key,
        tier_index=a.tier_keys.index(key) if key else None,
        task_ids=task_ids,
        agents=agents,
        cells=cells,
        sort=sort,
        by_param=by,
        overall=overall,
        packs=packs,
        pack=pack,
    )


def _scale_max(a: Analysis, key: TierKey) -> float:
    """The top of a tier's score scale, from the scores seen (5 for 1–5 rubrics)."""
    top = max((s.mean for s in a.scores.get(key, {}).values()), default=1.0)
    return 5.0 if top > 2.0 else 2.0 if top > 1.0 else 1.0


# runs list ---------------------------------------------------------------------------------


def _parse_versions(text: str) -> dict[str, str] | None:
    out = {}
    for part in text.split(","):
        if "=" in part:
            k, _, val = part.partition("=")
            if k.strip() and val.strip():
                out[k.strip()] = val.strip()
    return out or None


@router.get("/runs", response_class=HTMLResponse)
def runs_page(
    request: Request,
    v: Admin,
    pack: str = "",
    task: str = "",
    harness: str = "",
    model: str = "",
    status: str = "",
    versions: str = "",
    sort: str = "",
    desc: bool | None = None,
    page: int = 1,
    per: int = PAGE_SIZE,
) -> Response:
    """Every run, filtered and paged in the database (newest first by default)."""
    app = web(request)
    a = app.analysis()
    page = max(1, page)
    per = min(200, max(5, per))
    if not sort:
        sort, desc = "started", True if desc is None else desc
    desc = bool(desc)
    facts, total = app.store.run_page(
        pack_id=pack or None,
        task_id=task or None,
        harness=harness or None,
        model=model or None,
        status=status or None,
        versions=_parse_versions(versions),
        sort=sort,
        descending=desc,
        offset=(page - 1) * per,
        limit=per,
    )
    counts = app.store.step_counts([r.id for r in facts])
    pages = max(1, math.ceil(total / per))
    filters = {
        "pack": pack,
        "task": task,
        "harness": harness,
        "model": model,
        "status": status,
        "versions": versions,
    }
    return app.render(
        request,
        v,
        "runs.html",
        a=a,
        runs=facts,
        counts=counts,
        total=total,
        page=page,
        pages=pages,
        page_size=per,
        filters=filters,
        active={k: val for k, val in filters.items() if val},
        sort=sort,
        desc=desc,
        options={
            "pack": a.values("pack_id"),
            "task": a.values("task_id"),
            "harness": a.values("harness"),
            "model": a.values("model"),
            "status": [s.value for s in RunStatus],
        },
        version_values=a.version_values(),
    )


# judges ------------------------------------------------------------------------------------


@router.get("/judges", response_class=HTMLResponse)
def judges_page(request: Request, v: Admin) -> Response:
    """Agreement (κ, α), noise floor, parse errors and stale grades per judge; AJ meta-eval."""
    app = web(request)

    def compute() -> dict[str, Any]:
        data = app.report_data()
        sec, results = agreement_section(data)
        maps = []
        for key, agree in results.items():
            maps.append((key, agree, kappa_heatmap(agree, title=f"pairwise κ, {key.title}")))
        health = grading_health_section(data)
        per_judge: dict[str, dict[str, int]] = defaultdict(
            lambda: {"ok": 0, "parse": 0, "error": 0, "stale": 0, "total": 0}
        )
        current = {g.key for g in data.grades}
        names = judge_labels(g.judge for g in data.all_grades)
        for g in data.all_grades:
            c = per_judge[names[g.judge.key]]
            c["total"] += 1
            c["ok"] += g.status == GradeStatus.OK
            c["parse"] += g.status == GradeStatus.PARSE_ERROR
            c["error"] += g.status == GradeStatus.ERROR
            c["stale"] += g.key not in current
        return {
            "agreement": sec,
            "maps": maps,
            "health": health,
            "aj": aj_view(data),
            "noise": noise_floor(data.grades),
            "per_judge": dict(sorted(per_judge.items())),
            "notes": data.excluded.notes(),
            "any": bool(data.all_grades or data.verdicts),
        }

    ctx = app.cached("judges", compute)
    return app.render(request, v, "judges.html", **ctx)
