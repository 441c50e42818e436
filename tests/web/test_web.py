"""The app over HTTP: signing in, a vote through the forms, and the exact answer to each mistake."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.web.conftest import PASSWORD, Served


def form_token(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF token in the page"
    return match.group(1)


@contextmanager
def signed_in(base: str, name: str = "ann") -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, follow_redirects=False) as c:
        token = form_token(c.get("/login").text)
        r = c.post("/login", data={"name": name, "password": PASSWORD, "csrf_token": token})
        assert r.status_code == 303 and r.headers["location"] == "/"
        yield c


def test_logged_out_get_goes_to_login_and_back(served: Served) -> None:
    with httpx.Client(base_url=served.url, follow_redirects=False) as c:
        r = c.get("/arena")
        assert r.status_code == 303 and r.headers["location"] == "/login?next=/arena"
        token = form_token(c.get("/login?next=/arena").text)
        r = c.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": token, "next": "/arena"},
        )
        assert r.status_code == 303 and r.headers["location"] == "/arena"
        assert c.get("/arena").status_code == 200


def test_wrong_password_is_refused_with_401_and_no_session(served: Served) -> None:
    with httpx.Client(base_url=served.url, follow_redirects=False) as c:
        token = form_token(c.get("/login").text)
        r = c.post("/login", data={"name": "ann", "password": "nope", "csrf_token": token})
        # the password was checked (the CSRF token was right): 401, the form again
        assert r.status_code == 401
        assert "Wrong name or password." in r.text
        assert "lhb_session" not in r.headers.get("set-cookie", "")
        assert served.store.count_sessions("ann") == 0
        # an unknown name gets the very same answer
        r2 = c.post("/login", data={"name": "nobody", "password": "nope", "csrf_token": token})
        assert r2.status_code == 401 and "Wrong name or password." in r2.text


def test_login_without_its_csrf_token_is_refused_with_403(served: Served) -> None:
    with httpx.Client(base_url=served.url, follow_redirects=False) as anon:
        r = anon.post("/login", data={"name": "ann", "password": PASSWORD})
        assert r.status_code == 403 and "expired" in r.text
        assert served.store.count_sessions("ann") == 0


def test_vote_through_the_forms_and_the_answer_to_a_second_one(served: Served) -> None:
    with signed_in(served.url) as c:
        assert (
            c.post("/arena/next", data={"csrf_token": form_token(c.get("/arena").text)}).status_code
            == 303
        )
        page = c.get("/arena").text
        token = re.search(r'name="token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        csrf = form_token(page)
        vote = {"token": token, "choice": "right", "quality": "5", "csrf_token": csrf}
        r = c.post("/arena/vote", data=vote)
        assert r.status_code == 303 and r.headers["location"] == "/arena?recorded=right&q=5"
        assert len([v for v in served.store.list_votes() if v.annotator == "ann"]) == 1
        # the same comparison again: 409 with a clear answer, nothing stored twice
        r = c.post("/arena/vote", data=vote)
        assert r.status_code == 409 and "already decided" in r.text
        assert len([v for v in served.store.list_votes() if v.annotator == "ann"]) == 1
        # a quality outside 1..5, or no choice: 400, nothing stored
        page = c.get("/arena").text
        token = re.search(r'name="token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
        bad = {"token": token, "choice": "left", "quality": "9", "csrf_token": csrf}
        assert c.post("/arena/vote", data=bad).status_code == 400
        assert c.post("/arena/vote", data={**bad, "choice": "", "quality": "3"}).status_code == 400
        assert served.store.get_comparison(token).voted_at is None  # type: ignore[union-attr]


def test_old_leaderboard_link_and_health(served: Served) -> None:
    r = httpx.get(f"{served.url}/leaderboard?sort=pass", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/?sort=pass"
    assert httpx.get(f"{served.url}/healthz").json() == {"status": "ok"}
    r = httpx.get(f"{served.url}/no-such-page")
    assert r.status_code == 404 and "Not found" in r.text
