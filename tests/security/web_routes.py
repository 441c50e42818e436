"""The app's GET routes, read from FastAPI's router, filled with real ids and with payloads.

:func:`get_routes` lists every GET route the app serves; :func:`urls_for` fills each path
parameter with real values (so the page renders its data) and with a payload (so its
error page does), and every text query parameter with a payload. A new route is covered
without touching this file; a route with a path parameter this file has no value for
fails :func:`missing_fillers` until one is added. Also here: the hostile store served on
127.0.0.1 (uvicorn), Debian's headless Chromium, and a client signed in through the form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import Mount

from lhbench.config import Settings
from lhbench.store import Store
from lhbench.testing import ThreadedServer
from lhbench.web import create_app
from lhbench.web.arena import artifact_token
from lhbench.web.auth import LoginPolicy
from tests.security.web_hostile import PASSWORD, SECRET, World, seed
from tests.web.conftest import chromium_path

# routes --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    """One GET route: its path template and the names (and types) of its parameters."""

    path: str
    path_params: tuple[str, ...]
    query_params: tuple[tuple[str, Any], ...]


def _walk(dep: Any) -> Iterator[Any]:
    yield dep
    for sub in dep.dependencies:
        yield from _walk(sub)


def get_routes(app: FastAPI) -> list[Route]:
    """Every GET route the app serves (static files as one route with a file name)."""
    out: list[Route] = []
    for ctx in iter_route_contexts(app.routes):
        route = ctx.original_route
        if isinstance(route, APIRoute) and "GET" in route.methods:
            deps = list(_walk(route.dependant))
            out.append(
                Route(
                    str(ctx.path),
                    tuple(dict.fromkeys(p.alias for d in deps for p in d.path_params)),
                    tuple(
                        dict.fromkeys(
                            (p.alias, p.field_info.annotation) for d in deps for p in d.query_params
                        )
                    ),
                )
            )
        elif isinstance(route, Mount):
            out.append(Route(f"{route.path}/{{path}}", ("path",), ()))
    return out


def _path_values(world: World, secret: str) -> dict[str, list[dict[str, str]]]:
    """Real values per route path, as lists of parameter sets (one URL each)."""
    t = world.target
    # the annotator's pair, a hostile run of a stored pack and of an unknown one, a run of
    # each agent and the failed run (the other hostile runs hold the same payloads)
    runs = list(
        dict.fromkeys(
            [
                *world.pair,
                world.evil_run_ids[0],
                world.evil_run_ids[-1],
                *world.run_ids[:1],
                *world.run_ids[-2:],
            ]
        )
    )
    with_files = [world.evil_run_ids[0], world.run_ids[0]]
    left, right = world.pair
    arts = []
    for side, rid in (("left", left), ("right", right)):
        for name in world.artifact_names[rid]:
            arts.append(
                {
                    "token": world.token,
                    "side": side,
                    "art": artifact_token(secret, world.token, side, name),
                }
            )
    return {
        "/runs/{run_id}": [{"run_id": r} for r in runs],
        "/files/{run_id}/{name:path}": [
            {"run_id": r, "name": n} for r in with_files for n in world.artifact_names[r]
        ],
        "/arena/f/{token}/{side}/{art}": arts,
        "/annotate/{pack_id}/{task_id}": [{"pack_id": t.pack_id, "task_id": t.task_id}],
        "/annotate/{pack_id}/{task_id}/state": [{"pack_id": t.pack_id, "task_id": t.task_id}],
        "/annotate/{pack_id}/{task_id}/export": [{"pack_id": t.pack_id, "task_id": t.task_id}],
        "/annotate/{pack_id}/{task_id}/sources/{source_id}": [
            {"pack_id": t.pack_id, "task_id": t.task_id, "source_id": s} for s in world.source_ids
        ],
        "/static/{path}": [{"path": "app.js"}, {"path": "annotate.js"}, {"path": "style.css"}],
    }


def missing_fillers(routes: list[Route], world: World) -> list[str]:
    """Routes with path parameters this module has no real values for."""
    known = _path_values(world, SECRET)
    return [r.path for r in routes if r.path_params and r.path not in known]


def _fill(path: str, values: dict[str, str]) -> str:
    out = path
    for name, value in values.items():
        safe = "/" if name in ("name", "path") else ""
        for pattern in (f"{{{name}}}", f"{{{name}:path}}"):
            out = out.replace(pattern, quote(value, safe=safe))
    return out


def _query_value(name: str, annotation: Any, world: World) -> str:
    """A payload for a text parameter; a valid value for a typed one (else the page is a 400)."""
    if str in getattr(annotation, "__args__", (annotation,)):
        return world.sidecar.setdefault(f"q:{name}", world.payloads.full(f"query parameter {name}"))
    return "1" if annotation in (int, int | None) else "true"


def urls_for(route: Route, world: World, secret: str = SECRET) -> list[str]:
    """URLs for one route: real path values with hostile queries, and hostile path values."""
    sets = _path_values(world, secret).get(route.path, [{}]) if route.path_params else [{}]
    query = {name: _query_value(name, ann, world) for name, ann in route.query_params}
    qs = f"?{urlencode(query)}" if query else ""
    urls = []
    for values in sets:
        urls.append(_fill(route.path, values))
        if qs:
            urls.append(_fill(route.path, values) + qs)
    if route.path_params:
        hostile = {
            name: world.sidecar.setdefault(
                f"p:{name}", world.payloads.full(f"path parameter {name}", slash=False)
            )
            for name in route.path_params
        }
        urls.append(_fill(route.path, hostile) + qs)
    # real values for text queries that name things (a filter on a hostile model, a run)
    extra = {
        "/": [{"by": "harness,model,versions.skill"}, {"sort": "elo"}, {"sort": "pass"}],
        "/runs": [
            {"model": world.evil.model},
            {"harness": world.evil.harness},
            {"versions": ",".join(f"{k}={v}" for k, v in world.evil.versions.items())},
            {"pack": "x", "page": "2", "per": "5"},
            {"sort": "agent"},
        ],
        "/tasks": [{"sort": "task:0"}, {"tier": "0"}],
        "/compare": [
            {"a": world.run_ids[0], "b": world.evil_run_ids[0]},
            {"a": world.evil_run_ids[0], "b": world.evil_run_ids[-1]},
        ],
        "/arena": [{"recorded": "left", "q": "3"}],
        "/runs/{run_id}": [{"all": "true"}],
    }.get(route.path, [])
    for params in extra:
        base = _fill(route.path, sets[0]) if route.path_params else route.path
        urls.append(f"{base}?{urlencode(params)}")
    return list(dict.fromkeys(urls))


# the served hostile store ---------------------------------------------------------------------


@dataclass
class Hostile:
    """The hostile store served, with what was seeded and every URL to load."""

    url: str
    store: Store
    world: World
    routes: list[Route]
    urls: list[str]
    tmp: Path


@contextmanager
def serve_hostile(tmp: Path) -> Iterator[Hostile]:
    """Seed a hostile store under ``tmp`` and serve it on 127.0.0.1 (uvicorn)."""
    store = Store.open(f"sqlite:///{tmp / 'web.db'}")
    try:
        world = seed(store, tmp)
        app = create_app(
            store,
            secret=SECRET,
            settings=Settings(home=tmp, pack_paths=[tmp / "packs"]),  # type: ignore[call-arg]
            login_policy=LoginPolicy(floor_s=0.0),
        )
        routes = get_routes(app)
        urls = [u for r in routes for u in urls_for(r, world)]
        with ThreadedServer(app) as srv:
            yield Hostile(srv.url, store, world, routes, urls, tmp)
    finally:
        store.close()


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hostile]:
    """The hostile store, served once per test module."""
    with serve_hostile(tmp_path_factory.mktemp("hostile")) as h:
        yield h


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium (no sandbox: CI runs as root)."""
    exe = chromium_path()
    if exe is None:
        pytest.skip("no Chromium found (CI installs Debian's chromium-headless-shell)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=exe,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        try:
            yield b
        finally:
            b.close()


@contextmanager
def http_client(base: str, name: str | None) -> Iterator[httpx.Client]:
    """An HTTP client signed in through the login form (``None``: signed out)."""
    with httpx.Client(base_url=base, follow_redirects=False, timeout=60) as c:
        if name is not None:
            page = c.get("/login").text
            token = re.search(r'name="csrf_token" value="([^"]+)"', page)
            assert token, "no CSRF token on the login page"
            data = {"name": name, "password": PASSWORD, "csrf_token": token.group(1)}
            r = c.post("/login", data=data)
            assert r.status_code == 303, r.text[:300]
        yield c


def browser_login(context: Any, base: str, name: str) -> Any:
    """A page of ``context`` signed in through the login form."""
    page = context.new_page()
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-submit")
    page.wait_for_load_state()
    assert "/login" not in page.url
    return page
