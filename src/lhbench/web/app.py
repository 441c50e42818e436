"""The lhbench web app: overview, per-task matrix, runs, judges, compare, and the arena.

Server-rendered (FastAPI + Jinja2) with one stylesheet and one small script of its own.
Every page needs an account except the overview when ``web_public_leaderboard`` is set;
annotators (accounts without the admin role) vote blind: they have the arena, the
annotation tool and their account, and no page that names agents or shows judges'
scores. Every response carries a strict Content-Security-Policy; no GET writes to the
store.
"""

from __future__ import annotations

import secrets
import threading
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from lhbench.config import Settings, load_settings
from lhbench.reporting.data import configured_panel
from lhbench.store import Store
from lhbench.web import account, annotate_pages, arena_pages, pages, run_pages
from lhbench.web.auth import LoginPolicy
from lhbench.web.deps import LoginRequired, WebApp, viewer
from lhbench.web.render import code_css
from lhbench.web.security import SecurityHeaders

__all__ = ["create_app"]

HERE = Path(__file__).parent


def create_app(
    store: Store,
    *,
    secret: str | None = None,
    settings: Settings | None = None,
    login_policy: LoginPolicy | None = None,
    warm: bool = False,
    front_dir: Path | None = None,
) -> FastAPI:
    """The app over an opened store.

    Args:
        store: The store (the app reads it through the Store facade only).
        secret: Keys the arena's opaque artifact names (random if not given).
        settings: Settings (``web_public_leaderboard``, ``web_secure_cookies``,
            ``judge_panel``); read from lhbench.toml and the environment if not given.
        login_policy: Sign-in rate limits and answer time.
        warm: Compile the page templates, then start summarising the store for the
            overview at once, on a thread (at 1,000,000 grades the whole summary takes
            seconds; the first request then waits only for what is left of it, and later
            writes update it).
        front_dir: Where the overview's front is saved, signed with ``secret``, for the
            next start to answer its first overview and run pages from (None: not saved).
    """
    settings = settings or load_settings()
    state = WebApp(
        store=store,
        settings=settings,
        secret=secret or secrets.token_urlsafe(32),
        panel=configured_panel(settings),
        login_policy=login_policy or LoginPolicy(),
        front_dir=front_dir,
    )
    app = FastAPI(title="lhbench", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.web = state
    app.add_middleware(SecurityHeaders, hsts=settings.web_secure_cookies)

    @app.exception_handler(LoginRequired)
    async def _login(request: Request, exc: LoginRequired) -> Response:
        from urllib.parse import quote

        return RedirectResponse(f"/login?next={quote(exc.next_path, safe='/')}", status_code=303)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code in (301, 302, 303, 307, 308):
            return Response(status_code=exc.status_code, headers=exc.headers)
        return state.render(
            request,
            viewer(request),
            "error.html",
            status=exc.status_code,
            code=exc.status_code,
            message=str(exc.detail),
        )

    @app.exception_handler(RequestValidationError)
    async def _bad_request(request: Request, exc: RequestValidationError) -> Response:
        fields = sorted({".".join(str(p) for p in e["loc"][1:]) for e in exc.errors()})
        return state.render(
            request,
            viewer(request),
            "error.html",
            status=400,
            code=400,
            message=f"The request is missing or has a malformed value: {', '.join(fields)}.",
        )

    css = code_css()

    @app.get("/code.css", include_in_schema=False)
    def _code_css() -> Response:
        return Response(
            css, media_type="text/css", headers={"Cache-Control": "public, max-age=3600"}
        )

    @app.get("/healthz", include_in_schema=False)
    def _healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/favicon.ico", include_in_schema=False)
    def _favicon() -> Response:
        return Response(status_code=204)

    app.include_router(account.router)
    app.include_router(pages.router)
    app.include_router(run_pages.router)
    app.include_router(arena_pages.router)
    app.include_router(annotate_pages.router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")

    @app.get("/leaderboard", include_in_schema=False, response_class=HTMLResponse)
    def _leaderboard(request: Request) -> Response:
        # the overview is the leaderboard; old links keep working
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(f"/{query}", status_code=303)

    if warm:
        # before the server listens: no page compiles one while the summary runs
        state.compile_templates()
        threading.Thread(target=state.analysis, name="lhbench-warm", daemon=True).start()
    return app
