"""Signing in and out, and a user's own account (password, sessions).

The login form is protected by a pre-session CSRF cookie (double submit); every other form
by the session's CSRF token. A successful sign-in starts a new server-side session (any
session the browser had is ended first), and redirects only to a path on this site.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from lhbench.web.auth import change_password, csrf_ok, login, new_session
from lhbench.web.deps import CsrfChecked, SignedIn, viewer, web
from lhbench.web.security import safe_next, same_origin_post

__all__ = ["router"]

router = APIRouter()


def _client(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _login_page(
    request: Request, next_path: str, *, error: str | None = None, status: int = 200
) -> Response:
    app = web(request)
    token = request.cookies.get(app.login_cookie)
    if not token or len(token) > 100:
        token = secrets.token_urlsafe(32)
    no_users = not app.store.list_users()
    response = app.render(
        request,
        viewer(request),
        "login.html",
        status=status,
        next=next_path,
        error=error,
        login_csrf=token,
        no_users=no_users,
    )
    response.set_cookie(
        app.login_cookie,
        token,
        httponly=True,
        samesite="strict",
        secure=app.secure,
        path="/",
        max_age=3600,
    )
    return response


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, next: str = "/") -> Response:
    """The sign-in form (or who is signed in)."""
    return _login_page(request, safe_next(next))


@router.post("/login", response_model=None)
def login_post(
    request: Request,
    name: str = Form(""),
    password: str = Form(""),
    csrf_token: str = Form(""),
    next: str = Form("/"),
) -> Response:
    """Check a sign-in; start a session and go back where the user was headed."""
    app = web(request)
    target = safe_next(next)
    if not same_origin_post(request.headers, request.headers.get("host")) or not csrf_ok(
        request.cookies.get(app.login_cookie), csrf_token
    ):
        return _login_page(
            request,
            target,
            error="The sign-in form expired. Please try again.",
            status=403,
        )
    result = login(app.store, name.strip(), password, _client(request), app.login_policy)
    if result.outcome != "ok" or result.user is None:
        message = (
            "Too many failed sign-ins for this account or from this address. "
            f"Wait {int(app.login_policy.window.total_seconds() // 60)} minutes and try again."
            if result.outcome == "limited"
            else "Wrong name or password."
        )
        return _login_page(
            request, target, error=message, status=429 if result.outcome == "limited" else 401
        )
    old = viewer(request)
    if old.session_id:
        app.store.delete_session(old.session_id)
    token, _ = new_session(app.store, result.user.name, app.session_lifetime)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        app.session_cookie,
        token,
        httponly=True,
        samesite="lax",
        secure=app.secure,
        path="/",
        max_age=int(app.session_lifetime.total_seconds()),
    )
    response.delete_cookie(app.login_cookie, path="/")
    return response


@router.post("/logout", response_model=None)
def logout(request: Request, v: CsrfChecked) -> Response:
    """End this session (server-side: the cookie stops working everywhere)."""
    app = web(request)
    if v.session_id:
        app.store.delete_session(v.session_id)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(app.session_cookie, path="/")
    return response


@router.get("/account", response_class=HTMLResponse)
def account_page(request: Request, v: SignedIn, done: str = "") -> Response:
    """Change the password; sign out everywhere."""
    app = web(request)
    user = app.store.get_user(v.user or "")
    sessions = app.store.count_sessions(v.user or "")
    return app.render(
        request, v, "account.html", account=user, sessions=sessions, done=done, error=None
    )


@router.post("/account/password", response_model=None)
def account_password(
    request: Request,
    v: CsrfChecked,
    current: str = Form(""),
    new: str = Form(""),
    confirm: str = Form(""),
) -> Response:
    """Set a new password: every session of the user ends; this browser gets a new one."""
    app = web(request)
    user = app.store.get_user(v.user or "")
    if user is None:
        return RedirectResponse("/login", status_code=303)
    error = "The two new passwords differ." if new != confirm else None
    error = error or change_password(app.store, user, current, new)
    if error:
        return app.render(
            request,
            v,
            "account.html",
            status=400,
            account=user,
            sessions=app.store.count_sessions(user.name),
            done="",
            error=error,
        )
    token, _ = new_session(app.store, user.name, app.session_lifetime)
    response = RedirectResponse("/account?done=password", status_code=303)
    response.set_cookie(
        app.session_cookie,
        token,
        httponly=True,
        samesite="lax",
        secure=app.secure,
        path="/",
        max_age=int(app.session_lifetime.total_seconds()),
    )
    return response


@router.post("/account/sessions", response_model=None)
def account_sessions(request: Request, v: CsrfChecked) -> Response:
    """Sign out everywhere, this browser included."""
    app = web(request)
    app.store.revoke_sessions(v.user or "")
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(app.session_cookie, path="/")
    return response
