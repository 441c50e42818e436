"""Every page in Debian's Chromium: the figures a team reads, defaults with data, empty states.

Each test writes a screenshot of its page to .lhbench/screens/ for reviewers.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np

from lhbench.store import Store
from tests.web.conftest import (
    ARENA_TASK,
    EVIL_MODEL,
    PASSWORD,
    Served,
    add_user,
    login,
    no_xss,
    run_id,
    screenshot,
    serve,
)


def not_blank(path: Path) -> float:
    from PIL import Image

    # the screenshot's own channels, in [0, 1]
    with Image.open(path) as img:
        return float(np.std(np.asarray(img, dtype=float) / 255))


def cells(page: object, selector: str) -> list[list[str]]:
    return page.eval_on_selector_all(  # type: ignore[attr-defined]
        f"{selector} tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))",
    )


def test_overview_one_row_per_agent_with_every_figure(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/")
    head = page.inner_text("#overview thead")
    # the default column is the tier that holds scores, never the parse-error-only tier
    assert "Process score" in head and "Output score" not in head
    rows = cells(page, "#overview")
    assert len(rows) == 3
    # best panel score first: the third agent (scores 1 higher per agent)
    assert rows[0][0].startswith("1") and EVIL_MODEL.split(":")[1] in rows[0][1]
    assert [r[0].split()[0] for r in rows] == ["1", "2", "3"]
    claude = next(r for r in rows if "claude-code" in r[1])
    assert "2.04" in claude[2]  # panel score
    assert "3/4" in claude[3]  # pass rate k/n
    assert "1,095" in claude[4] and "4 games" in claude[4]  # human Elo
    assert "4/4 verdicts" in claude[5]  # agent judge agrees with checks
    assert "0.625" in claude[6]  # noise floor from judge-a's repeats
    assert "$0.1200" in claude[7]  # cost per run
    assert "6 runs · 4 tasks" in claude[1]
    # the stale grade is named, not counted
    assert "1 grade(s) for rubric samples-process" in page.inner_text("main")
    # the model name with mathtext and markup is shown as characters
    assert EVIL_MODEL in page.inner_text("#overview")
    no_xss(page)
    assert not_blank(screenshot(page, "overview")) > 0.05


def test_overview_marks_ranks_no_ci_separates(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/?sort=elo")
    rows = cells(page, "#overview")
    ranked = [r for r in rows if "games" in r[4]]
    # four votes cannot separate claude-code from gemini-cli: one rank, both marked tied
    assert len(ranked) == 2
    assert all(r[0] == "1 tied" for r in ranked), ranked
    assert page.locator("svg.chart").count() == 1  # the Elo forest plot
    page.goto(f"{shared.url}/?sort=tier:0")
    assert "tied" not in page.inner_text("#overview tbody")


def test_tasks_matrix_sorts_by_a_task(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/tasks")
    heads = page.eval_on_selector_all("#matrix thead th", "hs => hs.map(h => h.innerText)")
    assert len(heads) == 2 + 4  # agent, mean score, four tasks of the default pack
    rows = cells(page, "#matrix")
    assert len(rows) == 3
    claude = next(r for r in rows if "claude-code" in r[0])
    # csv-region-totals is the first task: claude-code passed it; panel score
    # mean(judge-a (1+2)/2, judge-b 2, judge-c 3) = 2.17
    assert claude[2].split() == ["1/1", "2.17"]
    before = [r[0] for r in rows]
    # click a task: agents sorted by that task's pass rate, then score (client side)
    page.click("#matrix thead th:nth-child(5)")
    after = [r[0] for r in cells(page, "#matrix")]
    col = [r[4] for r in cells(page, "#matrix")]
    rates = [int(c.split()[0].split("/")[0]) for c in col]
    assert rates == sorted(rates, reverse=True) and sorted(after) == sorted(before)
    screenshot(page, "tasks")


def test_runs_list_filters_and_pages(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/runs")
    assert "1–14 of 14 runs" in page.inner_text("main")
    rows = cells(page, "#runs")
    # newest first; runs that never started come last
    assert rows[0][0] == run_id("native", "ini-to-json") and rows[-1][0].startswith("claude-code-")
    screenshot(page, "runs")
    page.select_option("select[name=harness]", "gemini-cli")
    page.click("form.filters button[type=submit]")
    assert all(
        "gemini-cli" in r[2] for r in cells(page, "#runs")
    ) and "of 4 runs" in page.inner_text("main")
    page.goto(f"{shared.url}/runs?status=failed")
    assert [r[0] for r in cells(page, "#runs")] == ["claude-code-failed"]
    page.goto(f"{shared.url}/runs?versions=skill%3Dv2")
    assert "No run matches these filters." in page.inner_text("main")
    page.goto(f"{shared.url}/runs?per=5")
    first = [r[0] for r in cells(page, "#runs")]
    assert len(first) == 5 and "Page 1 of 3" in page.inner_text(".pager")
    page.click("a[rel=next]")
    second = [r[0] for r in cells(page, "#runs")]
    assert len(second) == 5 and not set(first) & set(second)
    assert "Page 2 of 3" in page.inner_text(".pager")


def test_run_page_transcript_artifacts_grades_verdicts(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    rid = run_id("claude-code", ARENA_TASK)
    page.goto(f"{shared.url}/runs/{rid}")
    page.wait_for_load_state("networkidle")
    # transcript: 7 steps in 5 blocks, each tool call folded with its result
    assert page.locator("ol.timeline > li").count() == 5
    tool_blocks = page.locator("li.block.tool")
    assert tool_blocks.count() == 2
    assert page.locator("li.block.tool details[open]").count() == 1  # the failed one
    failed = page.locator("#step-1")
    assert "failed" in (failed.get_attribute("class") or "")
    link = failed.locator("a", has_text="recovered at step 5")
    assert link.get_attribute("href") == "#step-5"
    assert "recovers the error at step 2" in page.inner_text("#step-4")
    assert page.locator("#step-5").count() == 1  # the result folded into step 4's block
    # artifacts by type
    md = page.locator(".artifact.markdown").first
    assert md.locator("h1").inner_text() == "Report by side 0"
    assert "<script>window.__xss='md'</script>" in md.inner_text()  # raw HTML shown as text
    assert md.locator("a[href^=javascript]").count() == 0
    assert page.locator(".artifact.code pre.hl span").count() > 3  # highlighted tokens
    frame = page.locator(".artifact.html iframe")
    assert frame.count() == 1 and frame.get_attribute("sandbox") == ""
    imgs = page.locator(".artifact.image img")
    assert imgs.count() == 2  # the PNG and the SVG, both as images
    png = page.locator("img[alt='shots/home.png']")
    assert page.evaluate("el => el.naturalWidth", png.element_handle()) > 0
    # grades side by side: 3 judges, judge-a twice, with evidence; failures and stale named
    heads = page.eval_on_selector_all("table.grades thead th", "hs => hs.map(h => h.innerText)")
    assert heads[1:5] == [
        "anthropic:judge-b",
        "google-gla:judge-c",
        "openai:judge-a",
        "openai:judge-a #1",
    ]
    assert "saw inspection <script>" in page.text_content("table.grades")  # folded evidence
    assert page.locator("p.error-line", has_text="parse error").count() == 3
    assert "1 stale grade(s) not counted" in page.inner_text("#grades")
    assert "PASS" in page.inner_text("#verdicts") and "openai:aj-judge" in page.inner_text(
        "#verdicts"
    )
    assert "totals match" in page.inner_text("#checks")
    no_xss(page)
    screenshot(page, "run")
    assert page.goto(f"{shared.url}/runs/no-such-run").status == 404


def test_compare_two_runs_side_by_side(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/compare")
    # the default shows a pair: two completed runs of one task by different agents
    links = page.eval_on_selector_all("table.compare thead a", "as => as.map(a => a.innerText)")
    assert len(links) == 2 and links[0] != links[1]
    a, b = run_id("claude-code", ARENA_TASK), run_id("gemini-cli", ARENA_TASK)
    page.goto(f"{shared.url}/compare?a={a}&b={b}")
    text = page.inner_text("table.compare")
    assert "claude-code" in text and "gemini-cli" in text and "2.04" not in text
    heads = page.eval_on_selector_all(
        ".pair > .fhead",
        "hs => hs.map(h => [h.querySelector('.mono').innerText,"
        " h.querySelector('.badge').innerText])",
    )
    # every file of both runs, sorted; only the report and the screenshot differ by side
    assert heads == [
        ["evil.svg", "identical"],
        ["manifest.json", "identical"],
        ["page.html", "identical"],
        ["report.md", "differs"],
        ["shots/home.png", "differs"],
        ["src/app.tsx", "identical"],
    ]
    assert page.locator(".pair .sides").first.locator(".side").count() == 2
    no_xss(page)
    screenshot(page, "compare")


def test_judges_page_agreement_noise_parse_errors_stale(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/judges")
    rows = {r[0]: r for r in cells(page, "#per-judge")}
    assert set(rows) == {"anthropic:judge-b", "google-gla:judge-c", "openai:judge-a"}
    a = rows["openai:judge-a"]
    # judge-a: 12 runs × (2 process repeats + 1 output) = 36 grades; 12 parse errors
    assert a[1] == "36" and a[2] == "24" and a[3].startswith("12") and a[6] == "0.625"
    assert rows["anthropic:judge-b"][5] == "1"  # the stale grade
    assert "mean pairwise κ" in page.inner_text("main")
    assert page.locator(".maps svg").count() == 1
    assert "Agent-as-a-Judge" in page.inner_text("main")
    no_xss(page)
    screenshot(page, "judges")


def test_arena_results_page(shared: Served, page: object) -> None:
    login(page, shared.url, "boss")
    page.goto(f"{shared.url}/arena/results")
    assert page.locator("svg.chart").count() == 1
    assert "Bradley–Terry Elo from 4 human votes" in page.inner_text("main")
    assert "Position bias" in page.inner_text("main")
    no_xss(page)
    screenshot(page, "arena-results")
    page.goto(f"{shared.url}/arena/history")
    assert page.locator("#history tbody tr").count() == 4
    screenshot(page, "arena-history")


def test_account_page(shared: Served, page: object) -> None:
    login(page, shared.url, "bob")
    page.goto(f"{shared.url}/account")
    assert "Annotator" in page.inner_text("main") and "Change password" in page.inner_text("main")
    screenshot(page, "account")


def test_empty_store_every_page_names_the_command(tmp_path: Path, page: object) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'empty.db'}")
    with serve(store, tmp_path) as srv:
        page.goto(f"{srv.url}/login")
        assert "lhbench users add NAME --admin" in page.inner_text("main")
        screenshot(page, "empty-login")
        add_user(store, "boss", PASSWORD, admin=True)
        login(page, srv.url, "boss")
        expect = {
            "/": "lhbench run lhbench-samples",
            "/tasks": "lhbench run",
            "/runs": "lhbench import auto",
            "/compare": "lhbench run lhbench-samples --harness native --model MODEL_A",
            "/judges": "lhbench judge --pack PACK --tier process",
            "/arena": "lhbench run lhbench-samples --harness native --model MODEL_B",
            "/arena/results": "lhbench users add NAME",
        }
        for path, command in expect.items():
            page.goto(f"{srv.url}{path}")
            assert command in page.inner_text("main"), path
            name = "empty-" + (path.strip("/").replace("/", "-") or "overview")
            screenshot(page, name)
    store.close()


def test_public_leaderboard_is_a_setting(tmp_path: Path, shared: Served) -> None:
    # off by default: the overview needs an account like every page
    assert (
        httpx.get(f"{shared.url}/", follow_redirects=False).headers["location"] == "/login?next=/"
    )
    store = Store.open(f"sqlite:///{shared.store.engine.url.database}")
    with serve(store, tmp_path, web_public_leaderboard=True) as srv:
        r = httpx.get(f"{srv.url}/")
        assert r.status_code == 200 and 'id="overview"' in r.text
        for path in (
            "/runs",
            "/tasks",
            "/judges",
            "/arena",
            f"/runs/{run_id('gemini-cli', ARENA_TASK)}",
        ):
            r = httpx.get(f"{srv.url}{path}", follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"].startswith("/login"), path
    store.close()
