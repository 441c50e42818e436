"""What every route shares: the app's state, who is asking, and rendering.

``WebApp`` holds the store, settings, templates and caches; routes reach it through
``request.app.state.web``. A request's viewer comes from its session cookie, looked up in
the store (sessions are server-side: logout, a password change or a role change ends
them). Routes declare what they need: :func:`viewer` (anyone), :func:`signed_in`
(redirects to the login page), :func:`admin`, and :func:`csrf_checked` for every form.

Annotators (accounts without the admin role) are blind, as LH-Bench's expert was: every
page that shows agent identity (harness, model, version tags, run ids, which name the
harness) or judge scores needs :func:`admin`; an annotator has the arena, the annotation
tool and their account.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Form, HTTPException, Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from lhbench.config import Settings
from lhbench.reporting import ReportData, fmt
from lhbench.schema import Run
from lhbench.store import Store
from lhbench.web.analysis import Analysis, Front, SavedSummary, analyse, pack_tasks, refresh
from lhbench.web.auth import LoginPolicy, csrf_ok, hash_token
from lhbench.web.front import (
    RunContext,
    front_path,
    load_front,
    load_summary,
    run_context,
    save_front,
    save_summary,
    summary_path,
)
from lhbench.web.security import same_origin_post
from lhbench.web.views import StoreCache

__all__ = [
    "BLIND",
    "Admin",
    "CsrfChecked",
    "LoginRequired",
    "SignedIn",
    "Viewer",
    "WebApp",
    "admin",
    "csrf_checked",
    "signed_in",
    "viewer",
    "web",
]

HERE = Path(__file__).parent


class LoginRequired(Exception):
    """Raised by :func:`signed_in`: answered with a redirect to the login page."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a signed-in user (with their session's CSRF token) or nobody."""

    user: str | None = None
    is_admin: bool = False
    csrf: str | None = None
    session_id: str | None = None

    @property
    def signed_in(self) -> bool:
        """Whether a live session came with the request."""
        return self.user is not None


def _num(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.{digits}f}"


def _pct(value: Any, digits: int = 0) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{100 * value:.{digits}f}%"


def _money(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def _tokens(value: Any) -> str:
    if value is None:
        return "—"
    v = float(value)
    if v >= 1e6:
        return f"{v / 1e6:.1f}M"
    if v >= 1e3:
        return f"{v / 1e3:.1f}k"
    return f"{v:.0f}"


def _when(value: datetime | None) -> str:
    return "—" if value is None else value.strftime("%Y-%m-%d %H:%M")


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


@dataclass
class WebApp:
    """The app's shared state."""

    store: Store
    settings: Settings
    secret: str
    panel: set[str] | None = None
    login_policy: LoginPolicy = field(default_factory=LoginPolicy)
    session_lifetime: timedelta = timedelta(hours=12)
    templates: Jinja2Templates = field(init=False)
    cache: StoreCache = field(init=False)
    # packs are checked against their directories at most this often (seconds)
    pack_check_interval: float = 2.0
    # where the overview's front is saved for the next start (None: not saved)
    front_dir: Path | None = None
    _packs_checked: float = field(init=False, default=-math.inf)
    _analysis_locks: dict[tuple[str, ...] | None, threading.Lock] = field(
        init=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self.templates = Jinja2Templates(directory=HERE / "templates")
        env = self.templates.env
        env.autoescape = True
        env.filters.update(
            fmt=fmt,
            num=_num,
            pct=_pct,
            money=_money,
            tokens=_tokens,
            when=_when,
            duration=_duration,
            q=lambda v: quote(str(v), safe=""),
        )
        self.cache = StoreCache(self.store)

    def compile_templates(self) -> None:
        """Compile every page template now (0.15 s), not in the first page that needs it.

        A restarted server's first run page spent 40 ms of its CPU compiling ``run.html``,
        while the start's summary shared the interpreter with it.
        """
        env = self.templates.env
        for name in env.list_templates(filter_func=lambda n: n.endswith(".html")):
            env.get_template(name)

    @property
    def secure(self) -> bool:
        """Cookies are Secure (the app is served over HTTPS)."""
        return self.settings.web_secure_cookies

    @property
    def public_leaderboard(self) -> bool:
        """The overview is open to anyone."""
        return self.settings.web_public_leaderboard

    @property
    def session_cookie(self) -> str:
        """The session cookie's name (``__Host-`` bound to this origin over HTTPS)."""
        return "__Host-lhb_session" if self.secure else "lhb_session"

    @property
    def login_cookie(self) -> str:
        """The pre-login CSRF cookie's name."""
        return "__Host-lhb_login" if self.secure else "lhb_login"

    def check_packs(self) -> None:
        """Re-register packs edited on disk since registration (at most once an interval).

        A rubric or verify script edited while the app runs is noticed on the next page
        that reads figures: the re-registration changes the store's version, so every
        cached figure is computed again, with the old content's grades stale.
        """
        now = time.monotonic()
        if now - self._packs_checked < self.pack_check_interval:
            return
        self._packs_checked = now
        from lhbench.jobs.packs import refresh_packs

        refresh_packs(self.store)

    def analysis(self, by: tuple[str, ...] | None = None) -> Analysis:
        """The overview figures at the store's current version.

        One summary of a grouping is made at a time: a request after a write waits for
        one still being made (the start's, on its thread) and updates it, rather than
        making a second one beside it.
        """
        self.check_packs()
        with self._analysis_locks.setdefault(by, threading.Lock()):
            return self.cache.get(
                ("analysis", by),
                lambda: self._saved(by, lambda: self._analyse(by)),
                lambda previous: self._saved(by, lambda: refresh(self.store, previous)),
            )

    def _analyse(self, by: tuple[str, ...] | None) -> Analysis:
        """A whole summary; of the default grouping from what the last one saved."""
        if by is not None or self.front_dir is None:
            return analyse(self.store, by=by, panel=self.panel)
        path = summary_path(self.front_dir, self.store)

        def save(state: SavedSummary) -> None:
            # failing, only the next start's summary is slower
            with contextlib.suppress(OSError):
                save_summary(path, self.secret, self.store, state)

        def load() -> SavedSummary | None:
            state = load_summary(path, self.secret, self.store)
            if state is not None and self.front_dir is not None:
                # the front's rows, if it is valid at this mark (read first: a write
                # between the two reads leaves the mark older than the front's, unused)
                mark = self.store.change_mark()
                front = load_front(
                    front_path(self.front_dir, self.store), self.secret, self.store, self.panel
                )
                if front is not None:
                    state.front, state.front_mark = front, mark
            return state

        return analyse(self.store, by=by, panel=self.panel, load=load, save=save)

    def _saved(self, by: tuple[str, ...] | None, make: Any) -> Analysis:
        """An analysis made by ``make``, its front saved for the next start (default grouping)."""
        if by is not None or self.front_dir is None:
            out: Analysis = make()
            return out
        # read before the summary reads the store: a write during it leaves the file unused
        version, mark = self.store.data_version(), self.store.change_mark()
        out = make()
        # failing, only the next start's first overview is slower
        with contextlib.suppress(OSError):
            save_front(
                front_path(self.front_dir, self.store),
                self.secret,
                self.store,
                out.front,
                version=version,
                mark=mark,
                panel=self.panel,
            )
        return out

    def saved_front(self) -> Front | None:
        """The front saved for the store's current version, if there is a valid one."""
        if self.front_dir is None:
            return None
        path = front_path(self.front_dir, self.store)
        front: Front | None = self.cache.get(
            "saved front", lambda: load_front(path, self.secret, self.store, self.panel)
        )
        return front

    def overview(self, by: tuple[str, ...] | None = None) -> Front:
        """What the overview shows: saved at this version, or from the analysis."""
        self.check_packs()
        # one lookup of the store's version on a warm request, as before the front
        front: Front = self.cache.get(("overview", by), lambda: self._front(by))
        return front

    def _front(self, by: tuple[str, ...] | None) -> Front:
        if by is None and (saved := self.saved_front()) is not None:
            return saved
        return self.analysis(by).front

    def run_context(self, run: Run) -> Analysis | RunContext:
        """What a run page reads of the analysis: from the saved front while there is one.

        A restarted server makes its summary on a thread; a run page asks only for its
        run's agent and outcome and the grade policy, and need not wait for it.
        """
        self.check_packs()
        saved = self.saved_front()
        if saved is None:
            return self.analysis()
        tasks = self.cache.get("tasks", lambda: pack_tasks(self.store))
        return run_context(self.store, saved, tasks, run)

    def report_data(self) -> ReportData:
        """Everything the report reads (current judgements), at the store's version."""
        self.check_packs()
        return self.cache.get(
            "report",
            lambda: ReportData.from_store(self.store, panel=self.panel, check_packs=False),
        )

    def cached(self, key: Hashable, compute: Any) -> Any:
        """Any value, cached until the store changes."""
        return self.cache.get(key, compute)

    def render(
        self, request: Request, v: Viewer, name: str, *, status: int = 200, **ctx: Any
    ) -> HTMLResponse:
        """A page from a template, with the viewer, navigation and CSRF token."""
        return self.templates.TemplateResponse(
            request,
            name,
            {
                "viewer": v,
                "csrf": v.csrf or "",
                "path": request.url.path,
                "public": self.public_leaderboard,
                **ctx,
            },
            status_code=status,
        )


def web(request: Request) -> WebApp:
    """The app's state."""
    state: WebApp = request.app.state.web
    return state


def viewer(request: Request) -> Viewer:
    """Who is asking (looked up once per request)."""
    cached = getattr(request.state, "viewer", None)
    if isinstance(cached, Viewer):
        return cached
    app = web(request)
    token = request.cookies.get(app.session_cookie)
    v = Viewer()
    if token and len(token) < 200:
        sid = hash_token(token)
        rec = app.store.get_session(sid)
        if rec is not None:
            v = Viewer(rec.user, rec.is_admin, rec.csrf, sid)
    request.state.viewer = v
    return v


def _here(request: Request) -> str:
    path = request.url.path
    return path + (f"?{request.url.query}" if request.url.query else "")


def signed_in(request: Request) -> Viewer:
    """The viewer, who must be signed in (a GET is sent to the login page and back)."""
    v = viewer(request)
    if not v.signed_in:
        raise LoginRequired(_here(request) if request.method == "GET" else "/")
    return v


# LH-Bench's human baseline voted "without access to LLM scores or agent identity"
BLIND = (
    "This page shows which agent made which run, or what the judges scored: annotators "
    "see the arena and the annotation tool only, so that nothing sways their votes. "
    "An admin account sees every page."
)


def admin(request: Request) -> Viewer:
    """The viewer, who must be an admin (checked before any lookup: no existence oracle)."""
    v = signed_in(request)
    if not v.is_admin:
        raise HTTPException(403, BLIND)
    return v


def csrf_checked(request: Request, csrf_token: str = Form("")) -> Viewer:
    """The signed-in viewer of a form post that carries their session's CSRF token."""
    v = viewer(request)
    if not v.signed_in:
        raise LoginRequired("/")
    if not same_origin_post(request.headers, request.headers.get("host")) or not csrf_ok(
        v.csrf, csrf_token
    ):
        raise HTTPException(403, "This form expired or came from another site.")
    return v


# route parameters: who is asking, checked as the route needs
SignedIn = Annotated[Viewer, Depends(signed_in)]
Admin = Annotated[Viewer, Depends(admin)]
CsrfChecked = Annotated[Viewer, Depends(csrf_checked)]
