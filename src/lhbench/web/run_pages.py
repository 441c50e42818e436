"""One run, its files, and two runs side by side.

A run page shows everything said about the run: transcript (tool calls folded, errors
linked to the step that recovered), artifacts rendered by type, checks, every grade with
its evidence, verdicts and cost. Files are served from their own path under a sandboxing
policy. All three are for admins only: a run id names its harness, and annotators vote
blind (the arena serves an annotator's pair under opaque tokens).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, Response

from lhbench._gc import collector_paused
from lhbench.judges import TierKey, panel_scores
from lhbench.schema import Artifact, Grade, GradeStatus, Run, RunStatus, StepKind
from lhbench.stats import run_failures
from lhbench.web.analysis import Analysis
from lhbench.web.deps import Admin, web
from lhbench.web.front import RunContext
from lhbench.web.render import final_answer, fold_transcript, markdown, render_artifact
from lhbench.web.security import FILE_CSP, INLINE_MEDIA, content_disposition

__all__ = ["file_response", "router"]

router = APIRouter()

MAX_BLOCKS = 500  # blocks a run page shows at a time (the rest a page further, or ?all=true)


# one run -----------------------------------------------------------------------------------


def _open_run(request: Request, run_id: str) -> Run:
    run = web(request).store.find_run(run_id)
    if run is None:
        raise HTTPException(404, "No such run.")
    return run


def _grade_tables(
    a: Analysis | RunContext, pack_id: str, grades: list[Grade]
) -> list[dict[str, Any]]:
    """Per rubric tier: dimensions × judges with evidence, the panel mean and variance."""
    tables: dict[TierKey, dict[str, Any]] = {}
    for g in grades:
        gkey = TierKey(g.rubric_id, g.rubric_version, g.tier.value, g.rubric_hash)
        t = tables.setdefault(
            gkey,
            {
                "key": gkey,
                "current": [],
                "stale": [],
                "failed": [],
            },
        )
        if g.status != GradeStatus.OK:
            t["failed"].append(g)
        elif a.is_current(pack_id, g):
            t["current"].append(g)
        else:
            t["stale"].append(g)
    out = []
    for key, t in sorted(tables.items(), key=lambda kv: (not kv[1]["current"], kv[0])):
        current: list[Grade] = t["current"]
        score = panel_scores(current, key).get(current[0].run_id) if current else None
        judges = []
        for g in sorted(
            current, key=lambda g: (a.judge_names.get(g.judge.key, g.judge.label), g.repeat)
        ):
            label = a.judge_names.get(g.judge.key, g.judge.label)
            judges.append((label + (f" #{g.repeat}" if g.repeat else ""), g))
        dims: list[str] = []
        for g in current:
            for s in g.scores:
                if s.dimension_id not in dims:
                    dims.append(s.dimension_id)
        spread = {}
        for d in dims:
            vals = [
                s.score
                for _, g in judges
                for s in g.scores
                if s.dimension_id == d and s.score is not None
            ]
            spread[d] = (max(vals) - min(vals)) >= 2 if vals else False
        out.append(
            {
                "key": key,
                "judges": judges,
                "dims": dims,
                "score": score,
                "spread": spread,
                "stale": t["stale"],
                "failed": t["failed"],
                "cost": sum(g.cost_usd or 0.0 for g in current + t["failed"]),
            }
        )
    return out


@router.get("/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request, v: Admin, run_id: str, all: bool = False, start: int = 0
) -> Response:
    """A run: transcript, artifacts, checks, grades side by side, verdicts, cost.

    The transcript is shown ``MAX_BLOCKS`` blocks at a time from block ``start``
    (``all``: every block); its counts and error marks are the whole run's.
    """
    # 5,000 steps make tens of thousands of objects that live as long as the page: the
    # collector walked them, and the whole heap, several times a page (150 ms of 300)
    with collector_paused():
        app = web(request)
        run = _open_run(request, run_id)
        a = app.run_context(run)
        steps = app.store.step_views(run_id)
        events = run_failures(steps).events
        start = 0 if all else max(0, start) // MAX_BLOCKS * MAX_BLOCKS
        blocks = fold_transcript(
            steps, events, render=None if all else range(start, start + MAX_BLOCKS)
        )
        if start and start >= len(blocks):  # past the end: the last window
            start = max(0, len(blocks) - 1) // MAX_BLOCKS * MAX_BLOCKS
            blocks = fold_transcript(steps, events, render=range(start, start + MAX_BLOCKS))
        n_blocks = len(blocks)
        window = range(n_blocks) if all else range(start, min(n_blocks, start + MAX_BLOCKS))
        # a link to a step: on this page, or on the page of the window that shows it
        page_of = {
            i: b // MAX_BLOCKS * MAX_BLOCKS for b, block in enumerate(blocks) for i in block.anchors
        }

        def step_href(i: int) -> str:
            at = page_of.get(i, start)
            return f"#step-{i}" if all or at == start else f"?start={at}#step-{i}"

        artifacts = [
            render_artifact(x, x.name, _file_url(run_id, x))
            for x in app.store.list_artifacts(run_id)
        ]
        grades = app.store.list_grades(run_id=run_id)
        tables = _grade_tables(a, run.pack_id, grades)
        verdicts = app.store.list_verdicts(run_id=run_id)
        labels = app.store.list_labels(run_id=run_id)
        task = a.tasks.get((run.pack_id, run.task_id))
        judge_cost = sum(g.cost_usd or 0.0 for g in grades) + sum(
            x.cost_usd or 0.0 for x in verdicts
        )
        answer = final_answer(steps)
        return app.render(
            request,
            v,
            "run.html",
            run=run,
            task=task,
            agent=a.agent_of.get(run.id, ""),
            blocks=blocks[window.start : window.stop],
            window=window,
            n_blocks=n_blocks,
            page_size=MAX_BLOCKS,
            step_href=step_href,
            n_steps=len(steps),
            n_errors=len(events),
            n_recovered=sum(1 for e in events if e.recovered),
            n_tools=sum(1 for s in steps if s.kind == StepKind.TOOL_CALL),
            artifacts=artifacts,
            tables=tables,
            verdicts=verdicts,
            labels=labels,
            outcome=a.labels.get(run.id),
            judge_cost=judge_cost,
            answer=markdown(answer) if answer else None,
            instruction=markdown("\n\n".join(task.user_turns)) if task else None,
        )


def _file_url(run_id: str, a: Artifact) -> str | None:
    if a.content is None:
        return None
    return f"/files/{quote(run_id, safe='')}/{quote(a.name, safe='/')}"


@router.get("/files/{run_id}/{name:path}")
def run_file(request: Request, v: Admin, run_id: str, name: str) -> Response:
    """A run's file, sandboxed: shown inline only if an image or a framed HTML page."""
    app = web(request)
    _open_run(request, run_id)
    for art in app.store.list_artifacts(run_id):
        if art.name == name and art.content is not None:
            return file_response(art.content, art.media_type, name)
    raise HTTPException(404, "No such file.")


def file_response(content: bytes, media_type: str, name: str | None) -> Response:
    """Bytes a run wrote, under the files' sandbox policy."""
    inline = media_type in INLINE_MEDIA
    served = media_type if inline else "application/octet-stream"
    return Response(
        content,
        media_type=served,
        headers={
            "Content-Security-Policy": FILE_CSP,
            "Content-Disposition": content_disposition("inline" if inline else "attachment", name),
            "X-Frame-Options": "SAMEORIGIN",
            "Cache-Control": "private, no-store",
        },
    )


# compare ---------------------------------------------------------------------------------


@router.get("/compare", response_class=HTMLResponse)
def compare_page(request: Request, v: Admin, a: str = "", b: str = "") -> Response:
    """Two runs side by side: outcome, scores, verdicts, cost, and the same files."""
    # two transcripts' steps: out of the collector's way, as on the run page
    with collector_paused():
        return _compare(request, v, a, b)


def _compare(request: Request, v: Admin, a: str, b: str) -> Response:
    app = web(request)
    an = app.analysis()
    if not a or not b:
        default = _default_pair(an)
        if default is None:
            return app.render(request, v, "compare.html", sides=None, rows=[], an=an, a=a, b=b)
        a, b = default
    sides: list[dict[str, Any]] = []
    for run_id in (a, b):
        run = _open_run(request, run_id)
        steps = app.store.step_views(run_id)
        events = run_failures(steps).events
        answer = final_answer(steps)
        sides.append(
            {
                "run": run,
                "agent": an.agent_of.get(run_id, ""),
                "outcome": an.labels.get(run_id),
                "scores": {k: an.scores[k].get(run_id) for k in an.tier_keys},
                "verdicts": app.store.list_verdicts(run_id=run_id),
                "steps": len(steps),
                "tools": sum(1 for s in steps if s.kind == StepKind.TOOL_CALL),
                "errors": len(events),
                "recovered": sum(1 for e in events if e.recovered),
                "answer": markdown(answer) if answer else None,
                "files": {x.name: x for x in app.store.list_artifacts(run_id)},
            }
        )
    names = sorted(set(sides[0]["files"]) | set(sides[1]["files"]))
    rows = []
    for n in names:
        pair = [s["files"].get(n) for s in sides]
        same = pair[0] is not None and pair[1] is not None and pair[0].sha256 == pair[1].sha256
        rendered = [
            render_artifact(f, n, _file_url(s["run"].id, f) if f is not None else None)
            for s, f in zip(sides, pair, strict=True)
        ]
        rows.append((n, rendered, same))
    same_task = (sides[0]["run"].pack_id, sides[0]["run"].task_id) == (
        sides[1]["run"].pack_id,
        sides[1]["run"].task_id,
    )
    return app.render(
        request,
        v,
        "compare.html",
        sides=sides,
        rows=rows,
        an=an,
        a=a,
        b=b,
        same_task=same_task,
        task=an.tasks.get((sides[0]["run"].pack_id, sides[0]["run"].task_id)),
    )


def _default_pair(a: Analysis) -> tuple[str, str] | None:
    """Two completed runs of one task by different agents (the first such pair)."""
    by_task: dict[tuple[str, str], list[str]] = defaultdict(list)
    for run in a.runs.values():
        if run.status == RunStatus.COMPLETED.value:
            by_task[(run.pack_id, run.task_id)].append(run.id)
    for _, ids in sorted(by_task.items()):
        for i, x in enumerate(ids):
            for y in ids[i + 1 :]:
                if a.agent_of[x] != a.agent_of[y]:
                    return x, y
    return None
