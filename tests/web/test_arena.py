"""The arena as an annotator uses it, in Chromium: start, vote, confirmation, skip, both bad;
the same named files on both sides; no identity in any HTML, header, URL or file name."""

from __future__ import annotations

from lhbench.web.arena import next_comparison, record_vote
from tests.web.conftest import (
    AGENTS,
    ARENA_TASK,
    EVIL_MODEL,
    Served,
    login,
    no_xss,
    screenshot,
)

# images first, then by name
DECLARED = ["evil.svg", "shots/home.png", "page.html", "report.md", "src/app.tsx"]


def start(page: object, base: str) -> str:
    page.goto(f"{base}/arena")  # type: ignore[attr-defined]
    page.click("#start")  # type: ignore[attr-defined]
    page.wait_for_load_state()  # type: ignore[attr-defined]
    return page.locator("input[name=token]").input_value()  # type: ignore[attr-defined,no-any-return]


def names_on(page: object, side: str) -> list[str]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined,no-any-return]
        f"#side-{side} .item .fhead", "hs => hs.map(h => h.innerText.trim())"
    )


def test_vote_then_confirmation_and_the_next_pair(served: Served, page: object) -> None:
    login(page, served.url, "ann")
    page.goto(f"{served.url}/arena")
    assert "How it works" in page.inner_text("main")
    screenshot(page, "arena-start")
    token = start(page, served.url)
    assert page.url == f"{served.url}/arena"
    left, right = names_on(page, "left"), names_on(page, "right")
    assert left == right  # the same named set on both sides
    assert "manifest.json" not in left  # harness-internal: never shown
    assert page.locator(".artifact.html iframe[sandbox='']").count() == 2
    page.wait_for_load_state("networkidle")
    no_xss(page)
    screenshot(page, "arena")
    page.check("input[name=choice][value=left]", force=True)
    page.check("input[name=quality][value='4']", force=True)
    page.click("#submit-vote")
    page.wait_for_load_state()
    assert page.url == f"{served.url}/arena?recorded=left&q=4"
    assert page.inner_text("#confirmation") == (
        "Vote recorded: the left output is better, quality 4. Here is the next pair."
    )
    assert page.locator("input[name=token]").input_value() != token
    assert "1 of 12 pairs" in page.inner_text(".progress")
    screenshot(page, "arena-confirmation")
    comp = served.store.get_comparison(token)
    assert comp is not None and comp.outcome == "left" and comp.vote_id is not None
    [vote] = [v for v in served.store.list_votes(rater_kind="human") if v.annotator == "ann"]
    assert (vote.id, vote.run_a, vote.run_b, vote.left) == (
        comp.vote_id,
        comp.run_a,
        comp.run_b,
        comp.left,
    )
    assert vote.winner == comp.left and vote.quality == 4  # the run shown left won


def test_keyboard_votes(served: Served, page: object) -> None:
    login(page, served.url, "ann")
    token = start(page, served.url)
    page.keyboard.press("3")  # right
    page.keyboard.press("t")  # quality 5
    page.keyboard.press("Enter")
    page.wait_for_url(f"{served.url}/arena?recorded=right&q=5")
    comp = served.store.get_comparison(token)
    assert comp is not None and comp.outcome == "right"
    [vote] = [v for v in served.store.list_votes(rater_kind="human") if v.annotator == "ann"]
    assert vote.winner == ("b" if comp.left == "a" else "a") and vote.quality == 5


def test_skip_and_both_bad(served: Served, page: object) -> None:
    login(page, served.url, "bob")
    token = start(page, served.url)
    page.click("#skip")
    page.wait_for_url(f"{served.url}/arena?recorded=skip")
    assert "Pair skipped" in page.inner_text("#confirmation")
    skipped = served.store.get_comparison(token)
    assert skipped is not None and skipped.outcome == "skip" and skipped.vote_id is None
    assert not [v for v in served.store.list_votes() if v.annotator == "bob"]
    second = page.locator("input[name=token]").input_value()
    assert second != token
    page.click("#both-bad")  # no choice or quality needed
    page.wait_for_url(f"{served.url}/arena?recorded=both_bad")
    assert "both outputs are bad" in page.inner_text("#confirmation")
    [vote] = [v for v in served.store.list_votes() if v.annotator == "bob"]
    comp = served.store.get_comparison(second)
    assert comp is not None and comp.outcome == "both_bad"
    assert vote.winner == "tie" and vote.quality is None and vote.id == comp.vote_id
    # a skipped pair does not come back this round
    seen = {(c.run_a, c.run_b) for c in served.store.list_comparisons(annotator="bob")}
    assert len(seen) == 3


def test_identity_hidden_in_html_headers_urls_and_file_names(served: Served, page: object) -> None:
    forbidden = {h for h, _ in AGENTS} | {m for _, m in AGENTS}
    forbidden |= {m.split(":", 1)[1] for _, m in AGENTS} | {"claude", "gemini", "opus"}
    forbidden |= set(served.ids["all"])
    login(page, served.url, "ann")
    seen: list[tuple[str, str, bytes]] = []

    def keep(r: object) -> None:
        body = b""
        try:
            body = r.body()  # type: ignore[attr-defined]
        except Exception:
            body = b""
        seen.append((r.url, str(r.headers), body))  # type: ignore[attr-defined]

    page.on("response", keep)
    for _ in range(3):  # three pairs: the first page, then two votes
        if page.locator("input[name=token]").count() == 0:
            start(page, served.url)
        page.wait_for_load_state("networkidle")
        html = page.content()
        shown = names_on(page, "left")
        assert shown == names_on(page, "right")
        assert all(n in DECLARED or n == "Final answer" for n in shown), shown
        for needle in forbidden:
            assert needle not in html, needle
            assert needle not in page.url
        page.check("input[name=choice][value=tie]", force=True)
        page.check("input[name=quality][value='3']", force=True)
        page.click("#submit-vote")
        page.wait_for_load_state()
    assert len(seen) > 10
    for url, headers, body in seen:
        for needle in forbidden:
            assert needle not in url and needle not in headers, (needle, url)
            assert needle.encode() not in body, (needle, url)
    # the arena's own file URLs carry no name: opaque tokens only
    files = [u for u, _, _ in seen if "/arena/f/" in u]
    assert files and not any(n in u for u in files for n in ("home.png", "evil.svg", "page"))
    disposition = [h for u, h, _ in seen if "/arena/f/" in u]
    assert all("filename" not in h for h in disposition)


def test_declared_set_on_the_declaring_task(served: Served, page: object) -> None:
    # every pair of the arena task shows exactly the declared files both runs produced
    login(page, served.url, "ann")
    for _ in range(12):
        comp = next_comparison(served.store, "ann")
        assert comp is not None
        if comp.task_id == ARENA_TASK:
            break
        record_vote(served.store, comp.token, "ann", "tie", 3)
    page.goto(f"{served.url}/arena")
    assert page.inner_text(".task h2").startswith("Sales totals <script>")  # the title, as text
    names = names_on(page, "left")
    assert names == ["Final answer", *DECLARED]
    no_xss(page)


def test_annotators_never_open_runs_even_after_voting(served: Served, page: object) -> None:
    # blind for good: the arena's rounds bring every pair back, so no run opens after a vote
    target = served.ids["gemini-cli"][0]
    other = served.ids["claude-code"][0]
    login(page, served.url, "ann")
    closed = [
        f"/runs/{target}",
        f"/files/{target}/report.md",
        f"/compare?a={other}&b={target}",
        "/runs",
        "/tasks",
        "/judges",
        "/arena/results",
    ]
    for path in closed:
        assert page.goto(f"{served.url}{path}").status == 403, path
    assert "annotators see the arena" in page.inner_text("main")
    # the annotator's navigation offers the arena and the annotation tool only
    assert page.locator("header nav a").all_inner_texts() == ["Arena", "Annotate"]
    page.goto(f"{served.url}/")
    assert page.url.endswith("/arena")
    assert page.locator("a[href='/arena/results']").count() == 0
    for _ in range(12):
        comp = next_comparison(served.store, "ann")
        assert comp is not None
        record_vote(served.store, comp.token, "ann", "left", 3)
    for path in closed:
        assert page.goto(f"{served.url}{path}").status == 403, path
    # an admin sees every run
    page.context.clear_cookies()
    login(page, served.url, "boss")
    assert page.goto(f"{served.url}/runs/{target}").status == 200
    assert page.goto(f"{served.url}/runs/{served.ids['native'][0]}").status == 200
    # the evil model name is shown as text on the admin's history
    page.goto(f"{served.url}/arena/history")
    assert EVIL_MODEL in page.inner_text("#history")
    no_xss(page)


def test_only_completed_runs_are_paired(served: Served) -> None:
    pairs = set()
    for _ in range(12):
        comp = next_comparison(served.store, "bob")
        assert comp is not None
        pairs.add(tuple(sorted((comp.left_run, comp.right_run))))
        record_vote(served.store, comp.token, "bob", "tie", 3)
    assert len(pairs) == 12  # every pair once in a round: 3 agents × 4 tasks
    runs = {r for p in pairs for r in p}
    assert runs == set(served.ids["all"])
    assert "claude-code-failed" not in runs and "claude-code-running" not in runs
