"""The arena's pages: a pair to judge, the vote, results, and (for admins) the history.

``GET /arena`` only reads: it shows the annotator's open pair, or a start button. The
next pair is chosen and recorded by the POST that starts the arena or decides the
previous pair, which then redirects to ``GET /arena`` with a short confirmation. No page,
URL, header or file name an annotator can reach says which agent made which side.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from lhbench.reporting import arena_section, elo_forest
from lhbench.schema import Artifact
from lhbench.web.arena import (
    CHOICES,
    artifact_token,
    current_comparison,
    get_comparison,
    next_comparison,
    progress,
    record_vote,
    side_sets,
    skip_comparison,
)
from lhbench.web.deps import Admin, CsrfChecked, SignedIn, Viewer, web
from lhbench.web.render import final_answer, markdown, render_artifact
from lhbench.web.run_pages import file_response

__all__ = ["router"]

router = APIRouter()


def _side_url(secret: str, token: str, side: str, a: Artifact | None) -> str | None:
    if a is None or a.content is None:
        return None
    return f"/arena/f/{token}/{side}/{artifact_token(secret, token, side, a.name)}"


@router.get("/arena", response_class=HTMLResponse)
def arena(
    request: Request,
    v: SignedIn,
    recorded: str = "",
    q: int | None = None,
) -> Response:
    """The annotator's open pair (or where to start); reads only."""
    app = web(request)
    user = v.user or ""
    comp = current_comparison(app.store, user)
    prog = progress(app.store, user)
    confirmation = None
    if recorded in (*CHOICES, "skip"):
        confirmation = {
            "left": "Vote recorded: the left output is better",
            "right": "Vote recorded: the right output is better",
            "tie": "Vote recorded: a tie",
            "both_bad": "Vote recorded: both outputs are bad",
            "skip": "Pair skipped: it will not come back this round",
        }[recorded]
        if q is not None and recorded in ("left", "right", "tie") and 1 <= q <= 5:
            confirmation += f", quality {q}"
        confirmation += "."
    if comp is None:
        return app.render(
            request, v, "arena.html", comp=None, progress=prog, confirmation=confirmation
        )
    pack_hash = app.store.latest_pack_hash(comp.pack_id)
    task = app.store.get_task(pack_hash, comp.task_id) if pack_hash else None
    left_files = app.store.list_artifacts(comp.left_run)
    right_files = app.store.list_artifacts(comp.right_run)
    sides, with_answer = side_sets(task, left_files, right_files)
    items = [
        {
            "name": s.name,
            "left": render_artifact(
                s.left, s.name, _side_url(app.secret, comp.token, "left", s.left)
            ),
            "right": render_artifact(
                s.right, s.name, _side_url(app.secret, comp.token, "right", s.right)
            ),
        }
        for s in sides
    ]
    answers = None
    if with_answer:
        left = final_answer(app.store.get_trajectory(comp.left_run))
        right = final_answer(app.store.get_trajectory(comp.right_run))
        answers = {
            "left": markdown(left) if left else None,
            "right": markdown(right) if right else None,
        }
    return app.render(
        request,
        v,
        "arena.html",
        comp=comp,
        task=task,
        instruction=markdown("\n\n".join(task.user_turns)) if task else None,
        items=items,
        answers=answers,
        progress=prog,
        confirmation=confirmation,
    )


@router.post("/arena/next", response_model=None)
def arena_next(request: Request, v: CsrfChecked) -> Response:
    """Start (or continue): choose the next pair unless one is already open."""
    app = web(request)
    user = v.user or ""
    if current_comparison(app.store, user) is None:
        next_comparison(app.store, user)
    return RedirectResponse("/arena", status_code=303)


def _decided_elsewhere(request: Request, v: Viewer) -> Response:
    app = web(request)
    return app.render(
        request,
        v,
        "error.html",
        status=409,
        code=409,
        message="This pair was already decided (in another tab, or by a second click): "
        "only the first decision counts. The next pair is waiting.",
        next_link="/arena",
    )


@router.post("/arena/vote", response_model=None)
def arena_vote(
    request: Request,
    v: CsrfChecked,
    token: str = Form(...),
    choice: str = Form(""),
    action: str = Form("vote"),
    quality: int | None = Form(None),
) -> Response:
    """Record a vote (left, right, tie with a quality; or both bad), then the next pair."""
    app = web(request)
    user = v.user or ""
    if action == "both_bad":
        choice = "both_bad"
    if choice not in CHOICES:
        raise HTTPException(400, "Choose left, right or tie (or both bad).")
    if choice != "both_bad" and (quality is None or not 1 <= quality <= 5):
        raise HTTPException(400, "Rate the quality of the preferred output from 1 to 5.")
    if get_comparison(app.store, token, user) is None:
        raise HTTPException(404, "No such pair for you.")
    if record_vote(app.store, token, user, choice, quality) is None:
        return _decided_elsewhere(request, v)
    next_comparison(app.store, user)
    params: dict[str, Any] = {"recorded": choice}
    if choice != "both_bad":
        params["q"] = quality
    return RedirectResponse(f"/arena?{urlencode(params)}", status_code=303)


@router.post("/arena/skip", response_model=None)
def arena_skip(request: Request, v: CsrfChecked, token: str = Form(...)) -> Response:
    """Skip a pair (no vote), then the next one."""
    app = web(request)
    user = v.user or ""
    if get_comparison(app.store, token, user) is None:
        raise HTTPException(404, "No such pair for you.")
    if not skip_comparison(app.store, token, user):
        return _decided_elsewhere(request, v)
    next_comparison(app.store, user)
    return RedirectResponse("/arena?recorded=skip", status_code=303)


@router.get("/arena/f/{token}/{side}/{art}")
def arena_file(request: Request, v: SignedIn, token: str, side: str, art: str) -> Response:
    """One side's file of the annotator's own pair, under an opaque name."""
    app = web(request)
    row = get_comparison(app.store, token, v.user or "")
    if row is None or side not in ("left", "right"):
        raise HTTPException(404, "Not found.")
    run_id = row.left_run if side == "left" else row.right_run
    for a in app.store.list_artifacts(run_id):
        if a.content is not None and artifact_token(app.secret, token, side, a.name) == art:
            # no file name: it could say more than the page does
            return file_response(a.content, a.media_type, None)
    raise HTTPException(404, "Not found.")


@router.get("/arena/results", response_class=HTMLResponse)
def arena_results(request: Request, v: Admin) -> Response:
    """Elo with CIs, win rates, position bias, cycles, winner quality (the report's).

    Admins only: it names the agents, and annotators vote blind.
    """
    app = web(request)

    def compute() -> dict[str, Any]:
        data = app.report_data()
        by = list(app.analysis().by)
        sec, elo = arena_section(data, by)
        chart = elo_forest(elo) if elo else None
        outcomes: dict[str, int] = {}
        for c in app.store.list_comparisons():
            if c.decided:
                outcomes[c.outcome or "vote"] = outcomes.get(c.outcome or "vote", 0) + 1
        return {"sec": sec, "chart": chart, "outcomes": outcomes, "elo": elo}

    return app.render(request, v, "arena_results.html", **app.cached("arena-results", compute))


@router.get("/arena/history", response_class=HTMLResponse)
def arena_history(request: Request, v: Admin) -> Response:
    """Every human vote with who was shown where (admins only)."""
    app = web(request)
    votes = app.store.list_votes(rater_kind="human")
    runs = app.analysis().runs
    outcomes = {c.vote_id: c.outcome for c in app.store.list_comparisons() if c.vote_id}
    return app.render(
        request, v, "history.html", votes=list(reversed(votes)), runs=runs, outcomes=outcomes
    )
