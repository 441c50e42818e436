"""Annotators vote blind: no route tells them which agent made a run.

LH-Bench's expert compared outputs "without access to LLM scores or agent identity"
(App. K). The rule here: an annotator (an account without the admin role) never sees a
harness, a harness version, a model, a version tag or a run id (which names its harness),
on any route: pages, titles, JSON, files, headers, file names, redirects. They have the
arena (their own pair, under opaque tokens), the annotation tool and their account.

Checked over every GET route the router lists (tests/security/web_routes.py), with real
run ids, comparison tokens and artifact names and with payloads in every parameter, on a
store where the annotator has a pending pair (tests/security/web_hostile.py).
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote, unquote_plus, urlsplit

import httpx
import pytest

from lhbench.config import Settings
from lhbench.testing import ThreadedServer
from lhbench.web import create_app
from lhbench.web.auth import LoginPolicy
from tests.security.web_hostile import SECRET
from tests.security.web_routes import Hostile, hostile, http_client

__all__ = ["hostile"]  # the module-scoped fixture used here


def shown(r: httpx.Response) -> str:
    """Everything a response tells: headers and body, as sent and decoded."""
    head = "\n".join(f"{k}: {v}" for k, v in r.headers.items())
    body = r.content.decode("utf-8", "replace")
    return "\n".join((head, unquote_plus(head), body, html.unescape(body), unquote_plus(body)))


def leaks(
    hostile: Hostile, name: str | None, urls: list[str] | None = None
) -> dict[str, list[str]]:
    """Identity marks each URL's answer holds that the URL itself did not carry."""
    marks = hostile.world.identity_marks()
    out: dict[str, list[str]] = {}
    with http_client(hostile.url, name) as c:
        for url in hostile.urls if urls is None else urls:
            text = shown(c.get(url))
            typed = unquote_plus(url)
            found = {
                f"{what} ({m[:30]})" for m, what in marks.items() if m in text and m not in typed
            }
            if found:
                out[url[:100]] = sorted(found)
    return out


@pytest.mark.parametrize("who", ["annotator", "signed out"])
def test_blind_no_route_shows_an_annotator_who_made_a_run(hostile: Hostile, who: str) -> None:
    """Every GET route, every parameter: no harness, model, version tag or run id."""
    name = hostile.world.annotator if who == "annotator" else None
    assert leaks(hostile, name) == {}


def test_blind_admins_see_who_made_each_run(hostile: Hostile) -> None:
    """The same routes name the agents for an admin (so the search above can find them)."""
    w = hostile.world
    pair = [f"/runs/{quote(rid, safe='')}" for rid in w.pair]
    found = leaks(hostile, w.admin, ["/runs", "/", *pair])
    for url in ("/runs", "/"):
        said = " ".join(found[url])
        assert "claude-code's identity" in said and "the hostile agent's identity" in said
    assert "a run id" in " ".join(found["/runs"])
    assert all(url[:100] in found for url in pair)


def test_blind_pending_pair_run_ids_answer_like_made_up_ones(hostile: Hostile) -> None:
    """No oracle: a pending run's id gets the same answer as an id that does not exist."""
    w = hostile.world
    with http_client(hostile.url, w.annotator) as c:
        for rid in w.pair:
            fake = rid[:-6] + "zzzzzz"
            for template in (
                "/runs/{}",
                "/files/{}/report.md",
                "/compare?a={}&b={}",
                "/runs?model={}",
            ):
                a = c.get(template.format(quote(rid, safe=""), quote(rid, safe="")))
                b = c.get(template.format(quote(fake, safe=""), quote(fake, safe="")))
                assert a.status_code == b.status_code == 403, template
                assert a.text == b.text
                assert "annotators see the arena" in html.unescape(a.text)


def test_blind_annotator_pages_link_only_to_what_they_may_open(hostile: Hostile) -> None:
    """Navigation, buttons and error pages never send an annotator to a refused page."""
    w = hostile.world
    with http_client(hostile.url, w.annotator) as c:
        # the open pair is on the arena page (the hostile agent's output among it)
        arena = c.get("/arena").text
        assert f'name="token" value="{w.token}"' in arena and 'id="vote-form"' in arena
        hrefs: set[str] = set()
        for path in ("/arena", "/annotate", "/account", "/runs", "/nope"):
            hrefs |= set(re.findall(r'href="([^"#][^"]*)"', c.get(path).text))
        local = {html.unescape(h) for h in hrefs if h.startswith("/")}
        assert "/arena" in local and "/annotate" in local
        for h in local:
            r = c.get(h, follow_redirects=True)
            assert r.status_code == 200, h
        # the overview is the arena for an annotator
        r = c.get("/")
        assert r.status_code == 303 and r.headers["location"] == "/arena"


def test_blind_public_leaderboard_names_agents_but_no_run(hostile: Hostile) -> None:
    """A published leaderboard is public (annotators too); runs and files stay closed."""
    app: Any = create_app(
        hostile.store,
        secret=SECRET,
        settings=Settings(home=hostile.tmp, web_public_leaderboard=True),  # type: ignore[call-arg]
        login_policy=LoginPolicy(floor_s=0.0),
    )
    w = hostile.world
    with ThreadedServer(app) as srv, http_client(srv.url, w.annotator) as c:
        page = c.get("/")
        assert page.status_code == 200 and 'id="overview"' in page.text
        run_ids = [m for m, what in w.identity_marks().items() if what == "a run id"]
        assert not [m for m in run_ids if m in shown(page)]
        for url in hostile.urls:
            path = urlsplit(url).path
            if path.startswith(
                ("/runs", "/files", "/compare", "/tasks", "/judges", "/arena/results")
            ):
                assert c.get(url).status_code == 403, url
