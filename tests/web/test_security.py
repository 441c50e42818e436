"""The web app under attack: each case named after the attack, asserting what must not happen.

XSS through artifacts, transcripts, run ids, rubric text, task titles and model names
(checked in Chromium: every payload sets ``window.__xss``); CSRF on every state-changing
route; sessions that must die (logout, password change, role change, removal); login rate
limits and equal-time answers; open redirects; headers; IDOR on votes and arena files;
concurrent votes on both backends; GETs that must write nothing.
"""

from __future__ import annotations

import hashlib
import re
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import text

from lhbench.store import Store
from lhbench.store.tables import Base
from lhbench.web.auth import LoginPolicy
from lhbench.web.security import FILE_CSP, PAGE_CSP
from tests.conftest import PG_URL, _pg_database
from tests.web.conftest import (
    ARENA_TASK,
    EVIL_MODEL,
    PASSWORD,
    Served,
    login,
    no_xss,
    run_id,
    seed,
    serve,
)

CLAUDE = run_id("claude-code", ARENA_TASK)
EVIL_RUN = run_id("native", ARENA_TASK)
PAGES = [
    "/",
    "/tasks",
    "/runs",
    f"/runs/{quote(CLAUDE)}",
    f"/runs/{quote(EVIL_RUN, safe='')}",
    "/compare",
    "/judges",
    "/arena",
    "/arena/results",
    "/arena/history",
    "/account",
]


def form_token(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "no CSRF token in the page"
    return match.group(1)


@contextmanager
def client(base: str, name: str | None = None, password: str = PASSWORD) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base, follow_redirects=False, timeout=30) as c:
        if name is not None:
            token = form_token(c.get("/login").text)
            r = c.post("/login", data={"name": name, "password": password, "csrf_token": token})
            assert r.status_code == 303, r.text[:300]
        yield c


def dump(store: Store) -> str:
    """Every row of every table, hashed: equal before and after means nothing was written."""
    h = hashlib.sha256()
    with store.engine.connect() as conn:
        for table in sorted(Base.metadata.tables):
            for row in conn.execute(text(f'SELECT * FROM "{table}" ORDER BY 1')):
                h.update(repr(tuple(row)).encode())
    return h.hexdigest()


def open_pair(c: httpx.Client) -> tuple[str, str]:
    """Start the arena; the open pair's token and the session's CSRF token."""
    csrf = form_token(c.get("/account").text)
    assert c.post("/arena/next", data={"csrf_token": csrf}).status_code == 303
    page = c.get("/arena").text
    return re.search(r'name="token" value="([^"]+)"', page).group(1), csrf  # type: ignore[union-attr]


# XSS ---------------------------------------------------------------------------------------


def test_xss_through_artifacts_html_svg_markdown_never_runs(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    page.goto(f"{served.url}/runs/{CLAUDE}")
    page.wait_for_load_state("networkidle")
    page.locator(".artifact.html iframe").scroll_into_view_if_needed()
    page.wait_for_timeout(300)
    no_xss(page)
    # the HTML is in a frame with every sandbox flag on; the SVG is an image
    assert page.locator("iframe:not([sandbox=''])").count() == 0
    assert page.locator("img[alt='evil.svg']").count() == 1
    assert page.locator("script").count() == 1  # the app's own script only


def test_xss_opening_an_artifact_directly_runs_no_script(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    for name in ("page.html", "evil.svg"):
        r = page.goto(f"{served.url}/files/{CLAUDE}/{name}")
        assert r.status == 200
        assert "sandbox" in r.headers["content-security-policy"]
        page.wait_for_timeout(200)
        no_xss(page)


def test_xss_through_transcript_is_text(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    page.goto(f"{served.url}/runs/{CLAUDE}")
    text_all = page.text_content("#transcript") or ""
    for payload in ("window.__xss='input'", "window.__xss='output'", "window.__xss='message'"):
        assert payload in text_all
    assert page.locator("#transcript a[href^=javascript]").count() == 0
    assert page.locator("#transcript img").count() == 0
    no_xss(page)


def test_xss_through_run_id(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    page.goto(f"{served.url}/runs")
    assert EVIL_RUN in page.inner_text("#runs")
    page.goto(f"{served.url}/runs/{quote(EVIL_RUN, safe='')}")
    assert page.inner_text("h1") == EVIL_RUN
    page.goto(f"{served.url}/compare?a={quote(EVIL_RUN, safe='')}&b={CLAUDE}")
    assert EVIL_RUN in page.inner_text("table.compare")
    no_xss(page)


def test_xss_through_model_name(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    for path in ("/", "/?sort=elo", "/tasks", "/runs", "/arena/results", "/arena/history"):
        page.goto(f"{served.url}{path}")
        assert page.locator("script").count() == 1, path
        no_xss(page)
    page.goto(f"{served.url}/")
    assert EVIL_MODEL in page.inner_text("#overview")
    # the chart's labels are text nodes of the SVG, escaped
    assert "$x^2$<script>" in (page.text_content("svg.chart") or "")


def test_xss_through_rubric_text(served: Served, page: object) -> None:
    login(page, served.url, "boss")
    for path in ("/", "/judges", f"/runs/{CLAUDE}", "/tasks"):
        page.goto(f"{served.url}{path}")
        assert "window.__xss='rubric'" in (page.text_content("main") or ""), path
        assert page.locator("script").count() == 1, path
        no_xss(page)
    page.goto(f"{served.url}/runs/{CLAUDE}")
    assert "window.__xss='evidence'" in (page.text_content("table.grades") or "")


def test_xss_through_task_title_in_the_arena(served: Served, page: object) -> None:
    login(page, served.url, "ann")
    page.goto(f"{served.url}/arena")
    page.click("#start")
    for _ in range(12):
        comp = served.store.open_comparison("ann")
        if comp is not None and comp.task_id == ARENA_TASK:
            break
        page.click("#skip")
        page.wait_for_load_state()
    page.wait_for_load_state("networkidle")
    assert "window.__xss='task'" in page.inner_text(".task h2")
    assert page.locator("script").count() == 1
    no_xss(page)


# CSRF --------------------------------------------------------------------------------------

POSTS = [
    "/logout",
    "/account/password",
    "/account/sessions",
    "/arena/next",
    "/arena/vote",
    "/arena/skip",
]


@pytest.mark.parametrize("route", POSTS)
@pytest.mark.parametrize("token", ["missing", "forged"])
def test_csrf_every_state_changing_route_refuses_a_post_without_the_token(
    served: Served, route: str, token: str
) -> None:
    with client(served.url, "ann") as c:
        pair, csrf = open_pair(c)
        before = dump(served.store)
        data = {
            "token": pair,
            "choice": "left",
            "quality": "4",
            "current": PASSWORD,
            "new": "another password",
            "confirm": "another password",
        }
        if token == "forged":
            data["csrf_token"] = csrf[:-2] + ("AA" if not csrf.endswith("AA") else "BB")
        r = c.post(route, data=data)
        assert r.status_code == 403, (route, r.status_code)
        assert dump(served.store) == before
        assert c.get("/arena").status_code == 200  # still signed in


def test_csrf_login_needs_its_own_token(served: Served) -> None:
    with client(served.url) as c:
        c.get("/login")  # the login cookie is set, but the form field is not sent
        r = c.post("/login", data={"name": "ann", "password": PASSWORD, "csrf_token": "x"})
        assert r.status_code == 403 and served.store.count_sessions("ann") == 0


@pytest.mark.parametrize(
    "headers",
    [{"Origin": "https://evil.example"}, {"Sec-Fetch-Site": "cross-site"}, {"Origin": "null"}],
)
def test_csrf_cross_site_post_refused_even_with_the_token(
    served: Served, headers: dict[str, str]
) -> None:
    with client(served.url, "ann") as c:
        pair, csrf = open_pair(c)
        before = dump(served.store)
        r = c.post(
            "/arena/vote",
            data={"token": pair, "choice": "left", "quality": "4", "csrf_token": csrf},
            headers=headers,
        )
        assert r.status_code == 403 and dump(served.store) == before


# sessions ----------------------------------------------------------------------------------


def test_session_revoked_on_logout(served: Served) -> None:
    with client(served.url, "ann") as c:
        cookie = c.cookies["lhb_session"]
        assert (
            c.post("/logout", data={"csrf_token": form_token(c.get("/arena").text)}).status_code
            == 303
        )
    with httpx.Client(base_url=served.url, cookies={"lhb_session": cookie}) as stolen:
        r = stolen.get("/runs", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_session_revoked_on_password_change(served: Served) -> None:
    with client(served.url, "ann") as a, client(served.url, "ann") as b:
        csrf = form_token(a.get("/account").text)
        r = a.post(
            "/account/password",
            data={
                "current": PASSWORD,
                "new": "new password 1",
                "confirm": "new password 1",
                "csrf_token": csrf,
            },
        )
        assert r.status_code == 303 and r.headers["location"] == "/account?done=password"
        assert b.get("/arena").status_code == 303  # the other browser is signed out
        assert a.get("/arena").status_code == 200  # this one got a fresh session
        assert served.store.count_sessions("ann") == 1
    with client(served.url, "ann", "new password 1") as c:
        assert c.get("/arena").status_code == 200


def test_session_revoked_on_role_change(served: Served) -> None:
    with client(served.url, "ann") as c:
        assert c.get("/arena/history").status_code == 403
        user = served.store.get_user("ann")
        assert user is not None
        # what `lhbench users passwd ann --admin` changes, keeping the same password hash
        served.store.put_user("ann", user.password_hash, admin=True)
        r = c.get("/arena/history")
        assert r.status_code == 303 and r.headers["location"].startswith("/login")


def test_session_revoked_on_user_removal_and_sign_out_everywhere(served: Served) -> None:
    with client(served.url, "bob") as a, client(served.url, "bob") as b:
        r = a.post("/account/sessions", data={"csrf_token": form_token(a.get("/account").text)})
        assert r.status_code == 303
        assert a.get("/runs").status_code == 303 and b.get("/runs").status_code == 303
    with client(served.url, "bob") as c:
        served.store.delete_user("bob")
        assert c.get("/runs").status_code == 303
        assert served.store.count_sessions("bob") == 0


def test_session_cookie_flags_and_secure_setting(served: Served, tmp_path: Path) -> None:
    with httpx.Client(base_url=served.url) as c:
        token = form_token(c.get("/login").text)
        r = c.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": token},
            follow_redirects=False,
        )
        cookie = next(
            v for k, v in r.headers.multi_items() if k == "set-cookie" and "lhb_session" in v
        )
        assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/" in cookie
        assert "Secure" not in cookie
    store = Store.open(f"sqlite:///{served.store.engine.url.database}")
    with (
        serve(store, tmp_path, web_secure_cookies=True) as srv,
        httpx.Client(base_url=srv.url) as c,
    ):
        r = c.get("/login")
        assert "Secure" in r.headers["set-cookie"] and "__Host-lhb_login" in r.headers["set-cookie"]
        assert r.headers["strict-transport-security"].startswith("max-age=")
        token = form_token(r.text)
        r = c.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": token},
            headers={"cookie": f"__Host-lhb_login={token}"},
            follow_redirects=False,
        )
        cookie = next(v for k, v in r.headers.multi_items() if k == "set-cookie" and "session" in v)
        assert cookie.startswith("__Host-lhb_session=") and "Secure" in cookie
    store.close()


# login limits ------------------------------------------------------------------------------


def _attempt(c: httpx.Client, name: str, password: str) -> httpx.Response:
    token = form_token(c.get("/login").text)
    return c.post("/login", data={"name": name, "password": password, "csrf_token": token})


def test_login_rate_limited_per_user(served: Served, tmp_path: Path) -> None:
    policy = LoginPolicy(per_name=3, per_address=100, floor_s=0.0)
    with serve(served.store, tmp_path, policy=policy) as srv, client(srv.url) as c:
        for _ in range(3):
            assert _attempt(c, "ann", "wrong password").status_code == 401
        # the right password no longer helps for this name, and the answer says why
        r = _attempt(c, "ann", PASSWORD)
        assert r.status_code == 429 and "Too many failed sign-ins" in r.text
        assert served.store.count_sessions("ann") == 0
        # another name from the same address is not locked out
        assert _attempt(c, "bob", PASSWORD).status_code == 303


def test_login_rate_limited_per_address(served: Served, tmp_path: Path) -> None:
    policy = LoginPolicy(per_name=100, per_address=4, floor_s=0.0)
    with serve(served.store, tmp_path, policy=policy) as srv, client(srv.url) as c:
        for name in ("ann", "bob", "nobody", "root"):
            assert _attempt(c, name, "wrong password").status_code == 401
        assert _attempt(c, "boss", PASSWORD).status_code == 429


def test_login_answers_take_equal_time(served: Served, tmp_path: Path) -> None:
    # the three answers are timed interleaved (one of each per round, two servers up at once)
    # so that a change in the machine's load falls on all three alike
    policy = LoginPolicy(per_name=1000, per_address=1000, floor_s=0.3)
    locked = LoginPolicy(per_name=0, per_address=1000, floor_s=0.3)
    times: dict[str, list[float]] = {"unknown": [], "wrong": [], "locked": []}
    with (
        serve(served.store, tmp_path, policy=policy) as srv,
        serve(served.store, tmp_path, policy=locked) as lsrv,
        client(srv.url) as c,
        client(lsrv.url) as lc,
    ):
        attempts = (
            ("unknown", c, "nobody-here", "x" * 12, 401),
            ("wrong", c, "ann", "x" * 12, 401),
            ("locked", lc, "ann", PASSWORD, 429),
        )
        for _ in range(7):
            for kind, cl, name, password, status in attempts:
                token = form_token(cl.get("/login").text)
                t0 = time.perf_counter()
                r = cl.post(
                    "/login", data={"name": name, "password": password, "csrf_token": token}
                )
                times[kind].append(time.perf_counter() - t0)
                assert r.status_code == status
    medians = {k: statistics.median(v) for k, v in times.items()}
    assert all(m >= 0.3 for m in medians.values()), medians
    assert max(medians.values()) - min(medians.values()) < 0.05, medians


# open redirect -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example",
        "\\\\evil.example",
        "javascript:alert(1)",
        "/\t/evil.example",
        "http:/evil.example",
    ],
)
def test_open_redirect_after_login_stays_on_site(served: Served, target: str) -> None:
    with client(served.url) as c:
        page = c.get(f"/login?next={quote(target, safe='')}").text
        assert 'name="next" value="/"' in page
        token = form_token(page)
        r = c.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": token, "next": target},
        )
        assert r.status_code == 303 and r.headers["location"] == "/"


# headers -----------------------------------------------------------------------------------


def test_headers_every_page_has_strict_csp_and_nosniff(served: Served) -> None:
    with client(served.url, "boss") as c:
        for path in [*PAGES, "/login", "/no-such-page", "/static/style.css"]:
            r = c.get(path)
            assert r.status_code in (200, 404), path
            csp = r.headers["content-security-policy"]
            assert csp == PAGE_CSP, path
            assert "'unsafe-inline'" not in csp and "script-src 'self'" in csp
            assert r.headers["x-content-type-options"] == "nosniff"
            assert r.headers["x-frame-options"] == "DENY"
            assert r.headers["referrer-policy"] == "same-origin"
            if not path.startswith("/static/"):
                assert r.headers["cache-control"] == "no-store", path


def test_headers_artifacts_sandboxed_and_downloaded(served: Served) -> None:
    with client(served.url, "boss") as c:
        html = c.get(f"/files/{CLAUDE}/page.html")
        assert html.headers["content-security-policy"] == FILE_CSP
        assert html.headers["content-type"].startswith("text/html")
        assert html.headers["content-disposition"].startswith("inline")
        code = c.get(f"/files/{CLAUDE}/src/app.tsx")
        assert code.headers["content-type"] == "application/octet-stream"
        assert code.headers["content-disposition"].startswith("attachment;")
        assert 'filename="app.tsx"' in code.headers["content-disposition"]
        svg = c.get(f"/files/{CLAUDE}/evil.svg")
        assert svg.headers["content-type"] == "image/svg+xml"
        assert "sandbox" in svg.headers["content-security-policy"]
        for r in (html, code, svg):
            assert r.headers["x-content-type-options"] == "nosniff"
        # only a stored artifact's exact name is served: no path tricks reach anything else
        for name in ("%2E%2E/%2E%2E/etc/passwd", "page.html%00", "..%2Fweb-secret"):
            assert c.get(f"/files/{CLAUDE}/{name}").status_code == 404, name


# access control ----------------------------------------------------------------------------


def test_login_required_everywhere_but_the_public_leaderboard(served: Served) -> None:
    with client(served.url) as anon:
        for path in [*PAGES, f"/files/{CLAUDE}/page.html", "/arena/f/x/left/y"]:
            r = anon.get(path)
            assert r.status_code == 303 and r.headers["location"].startswith("/login?next="), path


def test_idor_vote_on_another_annotators_pair_refused(served: Served) -> None:
    with client(served.url, "ann") as ann, client(served.url, "bob") as bob:
        pair, _ = open_pair(ann)
        files = re.findall(r'src="(/arena/f/[^"]+)"', ann.get("/arena").text)
        assert files and all(ann.get(f).status_code == 200 for f in files)
        bob_csrf = form_token(bob.get("/account").text)
        before = dump(served.store)
        for route, data in (
            ("/arena/vote", {"token": pair, "choice": "left", "quality": "5"}),
            ("/arena/skip", {"token": pair}),
        ):
            r = bob.post(route, data={**data, "csrf_token": bob_csrf})
            assert r.status_code == 404, route
        assert dump(served.store) == before
        assert all(bob.get(f).status_code == 404 for f in files)
        assert bob.get("/arena/history").status_code == 403


def test_gets_write_nothing(served: Served) -> None:
    with client(served.url, "ann") as ann, client(served.url, "boss") as boss:
        open_pair(ann)  # a pair is open: /arena shows it
        before = dump(served.store)
        version = served.store.data_version()
        for c in (ann, boss):
            for path in [*PAGES, "/login", "/arena?recorded=left&q=4"]:
                # an annotator's overview is the arena (a redirect); admin pages are refused
                assert c.get(path).status_code in ((200, 303, 403) if c is ann else (200,)), path
        assert dump(served.store) == before and served.store.data_version() == version


# concurrency -------------------------------------------------------------------------------


def _race(base: str, n: int = 8) -> tuple[list[int], str]:
    with client(base, "ann") as c:
        pair, csrf = open_pair(c)
        cookies = dict(c.cookies)
    barrier = threading.Barrier(n)
    codes: list[int] = []
    lock = threading.Lock()

    def vote() -> None:
        with httpx.Client(base_url=base, cookies=cookies, timeout=60) as c:
            data = {"token": pair, "choice": "left", "quality": "4", "csrf_token": csrf}
            barrier.wait()
            r = c.post("/arena/vote", data=data)
            with lock:
                codes.append(r.status_code)

    threads = [threading.Thread(target=vote) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes, pair


def test_concurrent_votes_one_kept_sqlite(served: Served) -> None:
    codes, pair = _race(served.url)
    assert sorted(codes) == [303] + [409] * 7, codes
    votes = [v for v in served.store.list_votes() if v.annotator == "ann"]
    assert len(votes) == 1 and served.store.get_comparison(pair).vote_id == votes[0].id  # type: ignore[union-attr]


@pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set (CI sets it)")
def test_concurrent_votes_one_kept_postgresql(tmp_path: Path) -> None:
    database = _pg_database()
    store = Store.open(next(database))
    try:
        seed(store)
        with serve(store, tmp_path) as srv:
            codes, pair = _race(srv.url)
        assert sorted(codes) == [303] + [409] * 7, codes
        votes = [v for v in store.list_votes() if v.annotator == "ann"]
        assert len(votes) == 1 and store.get_comparison(pair).vote_id == votes[0].id  # type: ignore[union-attr]
    finally:
        store.close()
        database.close()  # drops the throwaway database
