"""The lhbench web app: leaderboard, runs and transcripts, judges, and the preference arena."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Form, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.middleware.sessions import SessionMiddleware

from lhbench.errors import LhbenchError
from lhbench.judges import TierKey, panel_scores, tier_keys
from lhbench.report import (
    agreement_section,
    aj_section,
    arena_section,
    fmt,
    leaderboard_rows,
)
from lhbench.schema import GradeStatus, StepKind
from lhbench.stats import error_events
from lhbench.store import Store
from lhbench.web.arena import (
    artifact_token,
    get_comparison,
    next_comparison,
    record_vote,
    side_artifacts,
)
from lhbench.web.auth import csrf_ok, new_csrf_token, verify_user
from lhbench.web.views import StoreCache

__all__ = ["create_app"]

HERE = Path(__file__).parent


def create_app(store: Store, *, secret: str | None = None, https_only: bool = False) -> FastAPI:
    """The app over an opened store. ``secret`` signs session cookies (random if not given)."""
    secret = secret or secrets.token_urlsafe(32)
    app = FastAPI(title="lhbench", docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(
        SessionMiddleware,
        secret_key=secret,
        same_site="strict",
        https_only=https_only,
        max_age=8 * 3600,
    )
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.filters["fmt"] = fmt
    cache = StoreCache(store)

    def user(request: Request) -> str | None:
        return request.session.get("user")

    def csrf(request: Request) -> str:
        token = request.session.get("csrf")
        if not token:
            token = new_csrf_token()
            request.session["csrf"] = token
        return str(token)

    def render(request: Request, name: str, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(
            request,
            name,
            {
                "user": user(request),
                "is_admin": request.session.get("admin", False),
                "csrf": csrf(request),
                **ctx,
            },
        )

    @app.get("/", response_class=HTMLResponse)
    def index(request: Request) -> HTMLResponse:
        counts = store.counts()
        keys = cache.get("tier_keys", lambda d: tier_keys(d.grades))
        return render(request, "index.html", counts=counts, keys=keys)

    @app.get("/leaderboard", response_class=HTMLResponse)
    def leaderboard(
        request: Request,
        tier: str | None = None,
        by: str = "harness,model",
        sort: str = "score",
        pack: str = "",
    ) -> HTMLResponse:
        keys = cache.get("tier_keys", lambda d: tier_keys(d.grades))
        if not keys:
            return render(
                request, "leaderboard.html", keys=[], rows=[], key=None, by=by, judges=[], dims=[]
            )
        key = next((k for k in keys if ":".join(k) == tier), keys[0])
        group_by = [k.strip() for k in by.split(",") if k.strip()] or ["harness", "model"]
        packs = cache.get("packs", lambda d: sorted({r.pack_id for r in d.runs.values()}))
        pack_id = pack or None
        rows = cache.get(
            ("lb", key, tuple(group_by), pack_id),
            lambda d: leaderboard_rows(d, key, group_by, pack_id=pack_id),
        )
        runs_by_group = cache.get(
            ("lbruns", key, tuple(group_by)), lambda d: _runs_by_group(d, key, group_by)
        )
        order = {"score": lambda r: -r.mean, "group": lambda r: r.group, "n": lambda r: -r.n}.get(
            sort, lambda r: -r.mean
        )
        judges = sorted({j for r in rows for j in r.judge_means})
        dims = sorted({d for r in rows for d in r.dimension_means})
        return render(
            request,
            "leaderboard.html",
            keys=keys,
            key=key,
            rows=sorted(rows, key=order),
            by=",".join(group_by),
            judges=judges,
            dims=dims,
            tier=":".join(key),
            runs_by_group=runs_by_group,
            sort=sort,
            packs=packs,
            pack=pack,
        )

    @app.get("/runs/{run_id}", response_class=HTMLResponse)
    def run_page(request: Request, run_id: str) -> HTMLResponse:
        try:
            run = store.get_run(run_id)
        except LhbenchError:
            raise HTTPException(404, "no such run") from None
        traj = store.get_trajectory(run_id)
        events = {e.step: e for e in error_events(traj)}
        recovered_from = {
            e.recovered_at: e.step for e in events.values() if e.recovered_at is not None
        }
        artifacts = store.list_artifacts(run_id)
        grades = store.list_grades(run_id=run_id)
        grade_tables = _grade_tables(grades)
        return render(
            request,
            "run.html",
            run=run,
            steps=traj.steps,
            events=events,
            recovered_from=recovered_from,
            artifacts=artifacts,
            grade_tables=grade_tables,
            StepKind=StepKind,
        )

    @app.get("/runs/{run_id}/artifacts/{name:path}")
    def run_artifact(run_id: str, name: str) -> Response:
        for a in store.list_artifacts(run_id):
            if a.name == name and a.content is not None:
                return Response(a.content, media_type=a.media_type)
        raise HTTPException(404, "no such artifact")

    @app.get("/judges", response_class=HTMLResponse)
    def judges_page(request: Request) -> HTMLResponse:
        def compute(d: Any) -> Any:
            from lhbench.report.plots import kappa_heatmap_svg

            sec, results = agreement_section(d)
            svgs = [kappa_heatmap_svg(k.title, a) for k, a in results.items()]
            return sec, svgs, aj_section(d)

        sec, svgs, aj = cache.get("judges", compute)
        return render(request, "judges.html", sec=sec, svgs=svgs, aj=aj)

    @app.get("/arena/results", response_class=HTMLResponse)
    def arena_results(request: Request) -> HTMLResponse:
        def compute(d: Any) -> Any:
            from lhbench.report.plots import elo_svg

            sec, elo = arena_section(d, ["harness", "model"])
            return sec, (elo_svg(elo) if elo else None)

        sec, svg = cache.get("arena", compute)
        return render(request, "arena_results.html", sec=sec, svg=svg)

    # the arena ------------------------------------------------------------------------

    @app.get("/login", response_class=HTMLResponse)
    def login_form(request: Request, next: str = "/arena") -> HTMLResponse:
        return render(
            request, "login.html", next=next if next.startswith("/") else "/arena", error=None
        )

    @app.post("/login", response_model=None)
    def login(
        request: Request,
        name: str = Form(...),
        password: str = Form(...),
        csrf_token: str = Form(""),
        next: str = Form("/arena"),
    ) -> Response:
        if not csrf_ok(request.session.get("csrf"), csrf_token):
            raise HTTPException(403, "missing or invalid CSRF token")
        row = verify_user(store, name, password)
        if row is None:
            return render(request, "login.html", next=next, error="Wrong name or password.")
        request.session.clear()
        request.session.update({"user": row.name, "admin": row.is_admin, "csrf": new_csrf_token()})
        return RedirectResponse(next if next.startswith("/") else "/arena", status_code=303)

    @app.post("/logout", response_model=None)
    def logout(request: Request, csrf_token: str = Form("")) -> Response:
        if not csrf_ok(request.session.get("csrf"), csrf_token):
            raise HTTPException(403, "missing or invalid CSRF token")
        request.session.clear()
        return RedirectResponse("/", status_code=303)

    @app.get("/arena", response_model=None)
    def arena(request: Request) -> Response:
        who = user(request)
        if who is None:
            return RedirectResponse("/login?next=/arena", status_code=303)
        comp = next_comparison(store, who)
        if comp is None:
            return render(request, "arena.html", comp=None)
        pack_hash = store.latest_pack_hash(comp.pack_id)
        task = store.get_task(pack_hash, comp.task_id) if pack_hash else None
        sides = {}
        for side, run_id in (("left", comp.left_run), ("right", comp.right_run)):
            items = []
            for a in side_artifacts(store, run_id):
                tok = artifact_token(secret, comp.token, side, a.name)
                if a.media_type.startswith("image/"):
                    items.append({"kind": "image", "src": f"/arena/a/{comp.token}/{side}/{tok}"})
                elif a.content is not None:
                    items.append(
                        {
                            "kind": "text",
                            "text": a.content.decode("utf-8", errors="replace")[:20_000],
                        }
                    )
            if not items:
                final = next(
                    (
                        s.content
                        for s in reversed(store.get_trajectory(run_id).steps)
                        if s.role.value == "assistant" and s.kind == StepKind.MESSAGE and s.content
                    ),
                    "",
                )
                items.append({"kind": "text", "text": final or "(no output)"})
            sides[side] = items
        return render(request, "arena.html", comp=comp, task=task, sides=sides)

    @app.get("/arena/a/{token}/{side}/{art}")
    def arena_asset(request: Request, token: str, side: str, art: str) -> Response:
        who = user(request)
        row = get_comparison(store, token, who) if who else None
        if row is None or side not in ("left", "right"):
            raise HTTPException(404, "not found")
        run_id = (
            (row.run_a if row.left == "a" else row.run_b)
            if side == "left"
            else (row.run_b if row.left == "a" else row.run_a)
        )
        for a in side_artifacts(store, run_id):
            if artifact_token(secret, token, side, a.name) == art and a.content is not None:
                return Response(
                    a.content, media_type=a.media_type, headers={"Cache-Control": "no-store"}
                )
        raise HTTPException(404, "not found")

    @app.post("/arena/vote", response_model=None)
    def vote(
        request: Request,
        token: str = Form(...),
        choice: str = Form(...),
        quality: int | None = Form(None),
        csrf_token: str = Form(""),
    ) -> Response:
        who = user(request)
        if who is None:
            return RedirectResponse("/login?next=/arena", status_code=303)
        if not csrf_ok(request.session.get("csrf"), csrf_token):
            raise HTTPException(403, "missing or invalid CSRF token")
        if choice not in ("left", "right", "tie") or (
            quality is not None and not 1 <= quality <= 5
        ):
            raise HTTPException(400, "choice must be left, right or tie; quality 1 to 5")
        if record_vote(store, token, who, choice, quality) is None:
            raise HTTPException(409, "this comparison is not yours or was already voted")
        return RedirectResponse("/arena", status_code=303)

    @app.get("/arena/history", response_class=HTMLResponse)
    def arena_history(request: Request) -> HTMLResponse:
        if not request.session.get("admin"):
            raise HTTPException(403, "admins only")
        votes = store.list_votes(rater_kind="human")
        runs = {r.id: r for r in store.list_runs()}
        return render(request, "history.html", votes=votes, runs=runs)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app


def _runs_by_group(data: Any, key: TierKey, by: list[str]) -> dict[str, list[str]]:
    from lhbench.report import group_label

    out: dict[str, list[str]] = {}
    for run_id in panel_scores(data.grades, key):
        run = data.runs.get(run_id)
        if run is not None:
            out.setdefault(group_label(run, by), []).append(run_id)
    return {g: sorted(v)[:50] for g, v in out.items()}


def _grade_tables(grades: list[Any]) -> list[dict[str, Any]]:
    """Per rubric tier: dimensions × judges, with the panel mean and variance per dimension."""
    import statistics

    tables: dict[tuple[str, str, str], dict[str, Any]] = {}
    for g in grades:
        key = (g.rubric_id, g.rubric_version, g.tier.value)
        t = tables.setdefault(
            key, {"key": key, "judges": [], "dims": {}, "failed": [], "tier_scores": {}}
        )
        if g.status != GradeStatus.OK:
            t["failed"].append(g)
            continue
        label = g.judge.model + (f" #{g.repeat}" if g.repeat else "")
        t["judges"].append(label)
        t["tier_scores"][label] = g.tier_score
        for s in g.scores:
            t["dims"].setdefault(s.dimension_id, {})[label] = s
    for t in tables.values():
        for by_judge in t["dims"].values():
            vals = [s.score for s in by_judge.values() if s.score is not None]
            by_judge["__mean"] = statistics.fmean(vals) if vals else None
            by_judge["__var"] = statistics.pvariance(vals) if len(vals) > 1 else 0.0
            by_judge["__disagree"] = bool(vals) and max(vals) - min(vals) >= 2
        scores = [v for v in t["tier_scores"].values() if v is not None]
        t["mean"] = statistics.fmean(scores) if scores else None
        t["var"] = statistics.pvariance(scores) if len(scores) > 1 else 0.0
    return list(tables.values())
