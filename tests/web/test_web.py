import httpx
import numpy as np
from sqlalchemy.orm import Session

from lhbench.store.tables import ComparisonRow
from tests.web.conftest import GROUPS, PASSWORD


def login(page, base: str, name: str = "ann") -> None:
    page.goto(f"{base}/arena")
    assert "/login" in page.url
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/arena")


def not_blank(png_bytes: bytes) -> float:
    import io

    import matplotlib.image as mpimg

    img = mpimg.imread(io.BytesIO(png_bytes), format="png")
    return float(np.std(img))


def test_login_and_one_full_vote_is_stored_with_winner_and_left(served, browser) -> None:
    base, store, _ids = served
    page = browser.new_page()
    login(page, base)
    token = page.locator("input[name=token]").input_value()
    assert (
        page.locator("#side-left img").count() == 1 and page.locator("#side-right img").count() == 1
    )
    page.check("input[name=choice][value=left]")
    page.check("input[name=quality][value='4']")
    page.click("#submit-vote")
    page.wait_for_url(f"{base}/arena")
    [vote] = store.list_votes(rater_kind="human")
    with Session(store.engine) as s:
        comp = s.get(ComparisonRow, token)
    assert comp is not None and comp.voted_at is not None
    assert (vote.run_a, vote.run_b, vote.left) == (comp.run_a, comp.run_b, comp.left)
    assert vote.winner == comp.left  # the run shown left won
    assert vote.quality == 4 and vote.annotator == "ann" and vote.task_id == comp.task_id
    # the next comparison is another pair, not the one just voted
    assert page.locator("input[name=token]").input_value() != token


def test_no_identity_reaches_the_page_or_any_response(served, browser) -> None:
    base, _store, ids = served
    forbidden = (
        [h for h, _ in GROUPS]
        + [m for _, m in GROUPS]
        + [m.split(":")[1] for _, m in GROUPS]
        + list(ids.values())
    )
    page = browser.new_page()
    login(page, base)
    bodies: list[tuple[str, bytes]] = []
    page.on("response", lambda r: bodies.append((r.url, r.body() if r.status < 300 else b"")))
    page.goto(f"{base}/arena")
    page.wait_for_load_state("networkidle")
    html = page.content()
    assert "input" in html and bodies
    for needle in forbidden:
        assert needle not in html, needle
        assert needle not in page.url
        for url, body in bodies:
            assert needle not in url and needle.encode() not in body, (needle, url)
    page.check("input[name=choice][value=tie]")
    page.check("input[name=quality][value='3']")
    with page.expect_response(lambda r: r.url.endswith("/arena/vote")) as info:
        page.click("#submit-vote")
    for needle in forbidden:
        assert needle not in str(info.value.headers)


def test_csrf_and_logged_out_redirect(served) -> None:
    base, store, _ = served
    with httpx.Client(base_url=base, follow_redirects=False) as c:
        r = c.get("/arena")
        assert r.status_code == 303 and r.headers["location"].startswith("/login")
        # log in properly, with the form's CSRF token
        page = c.get("/login").text
        csrf = page.split('name="csrf_token" value="')[1].split('"')[0]
        r = c.post(
            "/login",
            data={"name": "ann", "password": PASSWORD, "csrf_token": csrf, "next": "/arena"},
        )
        assert r.status_code == 303
        arena = c.get("/arena").text
        token = arena.split('name="token" value="')[1].split('"')[0]
        assert (
            c.post(
                "/arena/vote", data={"token": token, "choice": "left", "quality": "5"}
            ).status_code
            == 403
        )
        assert (
            c.post(
                "/arena/vote",
                data={"token": token, "choice": "left", "quality": "5", "csrf_token": "forged"},
            ).status_code
            == 403
        )
        assert store.list_votes() == []
        good_csrf = arena.split('name="csrf_token" value="')[1].split('"')[0]
        assert (
            c.post(
                "/arena/vote",
                data={"token": token, "choice": "right", "quality": "5", "csrf_token": good_csrf},
            ).status_code
            == 303
        )
        assert len(store.list_votes()) == 1
        # the same comparison cannot be voted twice
        assert (
            c.post(
                "/arena/vote",
                data={"token": token, "choice": "right", "quality": "5", "csrf_token": good_csrf},
            ).status_code
            == 409
        )
        # a wrong password is refused, and a login without CSRF too
        assert c.post(
            "/login", data={"name": "ann", "password": "nope", "csrf_token": good_csrf}
        ).status_code in (200, 403)
    with httpx.Client(base_url=base) as anon:
        assert anon.post("/login", data={"name": "ann", "password": PASSWORD}).status_code == 403
        assert anon.get("/arena/history").status_code == 403


def test_leaderboard_and_run_pages_render_seeded_data(served, browser) -> None:
    base, _store, ids = served
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{base}/leaderboard")
    rows = page.locator("#leaderboard tbody tr")
    assert rows.count() == 2
    first = rows.nth(0).inner_text()
    assert "gemini-cli / google-gla:gemini-3.1-pro" in first  # the better-scored group is on top
    shot = page.screenshot(full_page=True)
    assert not_blank(shot) > 0.05
    page.goto(f"{base}/leaderboard?pack=figma-mini")
    assert page.locator("#leaderboard tbody tr").count() == 2
    page.goto(f"{base}/leaderboard?pack=another-pack")
    assert page.locator("#leaderboard tbody tr").count() == 0
    page.goto(f"{base}/leaderboard?by=harness,versions.skill")
    assert "claude-code / skill=v1" in page.locator("#leaderboard").inner_text()
    run_id = ids["claude-code-t1"]
    page.goto(f"{base}/runs/{run_id}")
    text = page.inner_text("main")
    assert run_id in text and "design_inspection" in text and "anthropic:judge" in text
    assert page.locator("li.step").count() == 7 and page.locator("li.step.failed").count() == 1
    assert "recovered at" in page.locator("#step-2").inner_text()
    assert page.locator(".artifacts img").count() == 1
    assert page.evaluate("document.querySelector('.artifacts img').naturalWidth") > 0
    assert not_blank(page.screenshot(full_page=True)) > 0.05
    assert page.goto(f"{base}/runs/nope").status == 404
    for path in ("/judges", "/arena/results", "/"):
        assert page.goto(f"{base}{path}").status == 200
