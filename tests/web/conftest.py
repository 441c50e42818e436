"""A seeded store, the app served on 127.0.0.1, and headless Chromium (Debian's).

The seed is one pack (the bundled sample tasks, with a task that declares its arena
artifacts, and rubric text, a task title, a model name and a run id that carry markup and
mathtext) and three agents' runs with trajectories that fail and recover, artifacts of
every type (HTML and SVG with scripts, Markdown with raw HTML, an image, code, lhbench's
own manifest.json), a three-judge panel with repeats, a stale grade, a tier holding only
parse errors, checks, agent-judge verdicts and human votes. It is written once per
session and copied for each test that writes.
"""

from __future__ import annotations

import hashlib
import io
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lhbench.config import Settings
from lhbench.schema import (
    ArenaSpec,
    Artifact,
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Role,
    Run,
    RunStatus,
    Step,
    StepKind,
    TaskPack,
    TierKind,
    Trajectory,
    Usage,
    Verdict,
    grade_key,
    verdict_key,
)
from lhbench.store import Store
from lhbench.testing import ThreadedServer
from lhbench.web import add_user, create_app
from lhbench.web.auth import LoginPolicy

PASSWORD = "correct horse battery"
PACK = "lhbench-samples"
ARENA_TASK = "csv-region-totals"
EVIL_MODEL = "openai:$x^2$<script>window.__xss='model'</script>"
AGENTS = [
    ("claude-code", "anthropic:claude-opus-4-6"),
    ("gemini-cli", "google-gla:gemini-3.1-pro"),
    ("native", EVIL_MODEL),
]
JUDGES = ["openai:judge-a", "anthropic:judge-b", "google-gla:judge-c"]
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
SCREENS = Path(__file__).resolve().parents[2] / ".lhbench" / "screens"
XSS_TITLE = "Sales totals <script>window.__xss='task'</script> per region"
XSS_VERSION = "1.0<script>window.__xss='rubric'</script>"


def png(color: tuple[int, int, int], label: str) -> bytes:
    from PIL import Image, ImageDraw, ImageFont

    # a coloured panel on a white page with the label written in, as a screenshot would be
    img = Image.new("RGB", (192, 120), "white")
    draw = ImageDraw.Draw(img)
    draw.rectangle((24, 14, 172, 106), fill=color)
    draw.text((98, 60), label, fill="white", anchor="mm", font=ImageFont.load_default(size=16))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def run_id(harness: str, task: str) -> str:
    # the third agent's run ids carry markup too
    if harness == "native":
        return f"native-<img src=x onerror=window.__xss='runid'>-{task}"
    return f"{harness}-{task}"


def artifact(rid: str, name: str, media_type: str, data: bytes) -> Artifact:
    return Artifact(
        run_id=rid,
        name=name,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content=data,
    )


def trajectory(rid: str, instruction: str) -> Trajectory:
    steps = [
        Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content=instruction, timestamp=T0),
        Step(
            index=1,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="Bash",
            tool_call_id="c1",
            tool_input={
                "command": "npm run build",
                "note": "<script>window.__xss='input'</script>",
            },
        ),
        Step(
            index=2,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name="Bash",
            tool_call_id="c1",
            tool_output="error TS2304: Cannot find name <img src=x onerror=window.__xss='output'>",
            is_error=True,
            exit_code=2,
        ),
        Step(
            index=3,
            role=Role.ASSISTANT,
            kind=StepKind.MESSAGE,
            content="Fixing the type: <script>window.__xss='message'</script> **now**.",
        ),
        Step(
            index=4,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="Bash",
            tool_call_id="c2",
            tool_input={"command": "npm run build"},
        ),
        Step(
            index=5,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name="Bash",
            tool_call_id="c2",
            tool_output="built in 1.2 s",
            exit_code=0,
        ),
        Step(
            index=6,
            role=Role.ASSISTANT,
            kind=StepKind.MESSAGE,
            content="Wrote report.md. [details](javascript:window.__xss='link')",
        ),
    ]
    return Trajectory(run_id=rid, steps=steps)


def seed_pack(store: Store) -> TaskPack:
    from lhbench.packs import bundled_pack_dirs, load_pack

    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == PACK))
    tasks = []
    for t in pack.tasks:
        if t.id == ARENA_TASK:
            t = t.model_copy(
                update={
                    "title": XSS_TITLE,
                    "arena": ArenaSpec(
                        artifacts=["report.md", "page.html", "shots/*.png", "evil.svg", "src/**"],
                        final_answer=True,
                    ),
                }
            )
        tasks.append(t)
    rubrics = []
    for r in pack.rubrics:
        if r.id == "samples-process":
            r = r.model_copy(update={"version": XSS_VERSION, "content_hash": "a" * 64})
        rubrics.append(r)
    pack = pack.model_copy(update={"tasks": tasks, "rubrics": rubrics, "content_hash": "b" * 64})
    store.save_pack(pack)
    return pack


def seed(store: Store) -> dict[str, list[str]]:
    """The seeded store; returns run ids per agent harness (and 'all')."""
    pack = seed_pack(store)
    process = pack.rubric("samples-process")
    output = pack.rubric("samples-output")
    ids: dict[str, list[str]] = {"all": []}
    colors = [(59, 91, 219), (230, 119, 0), (47, 158, 68)]
    grades: list[Grade] = []
    labels: list[Label] = []
    verdicts: list[Verdict] = []
    for g, (harness, model) in enumerate(AGENTS):
        for k, task in enumerate(pack.tasks):
            rid = run_id(harness, task.id)
            run = Run(
                id=rid,
                pack_id=PACK,
                pack_hash=pack.content_hash,
                task_id=task.id,
                harness=harness,
                harness_version="2.1.0",
                model=model,
                versions={"skill": "v1"},
                status=RunStatus.COMPLETED,
                started_at=T0 + timedelta(minutes=10 * (3 * k + g)),
                ended_at=T0 + timedelta(minutes=10 * (3 * k + g) + 7),
                usage=Usage(input_tokens=12000 + 1000 * g, output_tokens=3400),
                cost_usd=0.12 + 0.05 * g,
            )
            store.save_run(run)
            store.save_trajectory(trajectory(rid, task.user_turns[0]))
            ids.setdefault(harness, []).append(rid)
            ids["all"].append(rid)
            files = [
                artifact(
                    rid,
                    "report.md",
                    "text/markdown",
                    (
                        f"# Report by side {g}\n\nnorth: 155.80\n\n"
                        "<script>window.__xss='md'</script>\n\n"
                        "[open](javascript:window.__xss='mdlink')\n\n"
                        "<img src=x onerror=window.__xss='mdimg'>\n"
                    ).encode(),
                ),
                artifact(
                    rid,
                    "page.html",
                    "text/html",
                    b"<h1>Totals</h1><script>window.parent.__xss='html';</script>"
                    b"<img src=x onerror=\"window.top.__xss='htmlimg'\">",
                ),
                artifact(
                    rid,
                    "evil.svg",
                    "image/svg+xml",
                    b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40">'
                    b"<script>window.top.__xss='svg'</script><circle cx='20' cy='20' r='15'/>"
                    b"</svg>",
                ),
                artifact(rid, "shots/home.png", "image/png", png(colors[g], f"side {g}")),
                artifact(
                    rid,
                    "manifest.json",
                    "application/json",
                    b'{"completed_steps": ["report"], "harness": "native"}',
                ),
                artifact(
                    rid,
                    "src/app.tsx",
                    "text/plain",
                    b"export function App() {\n  return <main>totals</main>;\n}\n",
                ),
            ]
            for f in files:
                store.save_artifact(f)
            # three judges on the process tier; the first judges twice (its noise floor)
            for j, judge in enumerate(JUDGES):
                ident = JudgeIdentity(kind=JudgeKind.LLM, model=judge, family=judge.split(":")[0])
                for repeat in range(2 if j == 0 else 1):
                    scores = [min(5, 1 + g + (k + j + repeat) % 3) for _ in range(3)]
                    tier = process.tier("process")
                    grades.append(
                        Grade(
                            id=f"g-{rid}-{j}-{repeat}",
                            run_id=rid,
                            rubric_id=process.id,
                            rubric_version=process.version,
                            rubric_hash=process.content_hash,
                            tier=TierKind.PROCESS,
                            judge=ident,
                            scores=[
                                DimensionScore(
                                    dimension_id=d.id,
                                    scale=d.scale,
                                    score=s,
                                    matched_level=d.anchors[s],
                                    evidence=(
                                        f"saw {d.id} <script>window.__xss='evidence'</script>"
                                    ),
                                )
                                for d, s in zip(tier.dimensions, scores, strict=True)
                            ],
                            tier_score=sum(
                                d.weight * s for d, s in zip(tier.dimensions, scores, strict=True)
                            ),
                            repeat=repeat,
                            key=grade_key(rid, ident.key, process.content_hash, "process", repeat),
                            cost_usd=0.002,
                            created_at=T0 + timedelta(hours=1, seconds=j),
                        )
                    )
                # the output tier: every answer failed to parse
                grades.append(
                    Grade(
                        id=f"g-{rid}-{j}-out",
                        run_id=rid,
                        rubric_id=output.id,
                        rubric_version=output.version,
                        rubric_hash=output.content_hash,
                        tier=TierKind.OUTPUT,
                        judge=ident,
                        status=GradeStatus.PARSE_ERROR,
                        raw_output="<script>window.__xss='raw'</script> not json",
                        error="the answer was not the JSON asked for",
                        key=grade_key(rid, ident.key, output.content_hash, "output", 0),
                        created_at=T0 + timedelta(hours=1, seconds=j),
                    )
                )
            passed = (g + k) % 3 != 2
            labels.append(
                Label(
                    run_id=rid,
                    passed=passed,
                    source=f"verify:{task.id}/verify.py",
                    detail="totals match" if passed else "north: expected 155.80, got 150.00",
                )
            )
            if harness != "native":
                ident = JudgeIdentity(kind=JudgeKind.AGENT, model="openai:aj-judge")
                verdicts.append(
                    Verdict(
                        id=f"v-{rid}",
                        run_id=rid,
                        judge=ident,
                        verdict="PASS" if (passed or k == 0) else "FAIL",
                        evidence=["report.md lists every region <b>bold</b>"],
                        tool_calls=4,
                        key=verdict_key(rid, ident.key, "state", 0),
                    )
                )
    # a stale grade: made with an earlier content of the rubric
    stale_run = ids["claude-code"][0]
    ident = JudgeIdentity(kind=JudgeKind.LLM, model=JUDGES[1], family="anthropic")
    judge_b = next(g for g in grades if g.run_id == stale_run and g.judge.model == JUDGES[1])
    grades.append(
        judge_b.model_copy(
            update={
                "id": "g-stale",
                "rubric_hash": "0" * 64,
                "key": grade_key(stale_run, ident.key, "0" * 64, "process", 0),
            }
        )
    )
    store.save_grades(grades)
    store.save_labels(labels)
    store.save_verdicts(verdicts)
    # a failed run and a running one: never paired in the arena
    for status in (RunStatus.FAILED, RunStatus.RUNNING):
        rid = f"claude-code-{status.value}"
        store.save_run(
            Run(
                id=rid,
                pack_id=PACK,
                task_id=ARENA_TASK,
                harness="claude-code",
                model="anthropic:claude-opus-4-6",
                versions={"skill": "v1"},
                status=status,
                error="the agent stopped" if status == RunStatus.FAILED else None,
            )
        )
    # human votes from an earlier annotator: claude-code wins three of four
    for k, task in enumerate(pack.tasks):
        a, b = run_id("claude-code", task.id), run_id("gemini-cli", task.id)
        store.save_vote(
            PreferenceVote(
                id=f"seed-vote-{k}",
                pack_id=PACK,
                task_id=task.id,
                run_a=a,
                run_b=b,
                left="a" if k % 2 else "b",
                winner="a" if k < 3 else "b",
                quality=4,
                annotator="seed",
            )
        )
    add_user(store, "ann", PASSWORD)
    add_user(store, "bob", PASSWORD)
    add_user(store, "boss", PASSWORD, admin=True)
    return ids


@dataclass
class Served:
    """A running app over a store."""

    url: str
    store: Store
    ids: dict[str, list[str]]


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[str]]]:
    path = tmp_path_factory.mktemp("seed") / "web.db"
    with Store.open(f"sqlite:///{path}") as store:
        ids = seed(store)
    return path, ids


def settings(tmp: Path, **kw: object) -> Settings:
    return Settings(home=tmp, **kw)  # type: ignore[arg-type]


def serve(
    store: Store, tmp: Path, *, policy: LoginPolicy | None = None, **kw: object
) -> ThreadedServer:
    return ThreadedServer(
        create_app(
            store,
            secret="test-secret",
            settings=settings(tmp, **kw),
            login_policy=policy or LoginPolicy(floor_s=0.0),
        )
    )


@pytest.fixture
def served(tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]) -> Iterator[Served]:
    """The seeded store (a fresh copy) served on 127.0.0.1."""
    template, ids = seeded_template
    db = tmp_path / "web.db"
    shutil.copy(template, db)
    store = Store.open(f"sqlite:///{db}")
    with serve(store, tmp_path) as srv:
        yield Served(srv.url, store, ids)
    store.close()


@pytest.fixture(scope="session")
def shared(
    tmp_path_factory: pytest.TempPathFactory,
    seeded_template: tuple[Path, dict[str, list[str]]],
) -> Iterator[Served]:
    """One seeded copy for tests that only read (served once per session)."""
    template, ids = seeded_template
    tmp = tmp_path_factory.mktemp("shared")
    db = tmp / "web.db"
    shutil.copy(template, db)
    store = Store.open(f"sqlite:///{db}")
    with serve(store, tmp) as srv:
        yield Served(srv.url, store, ids)
    store.close()


def chromium_path() -> str | None:
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        path = shutil.which(name) or (
            f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None
        )
        if path:
            return path
    return None


@pytest.fixture(scope="package")
def browser() -> Iterator[object]:
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


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    """A fresh browser context (its own cookies) and page; fails the test on a JS error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # type: ignore[attr-defined]
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    context.close()
    assert errors == [], errors


def login(page: object, base: str, name: str = "ann", next_path: str = "/") -> None:
    page.goto(f"{base}/login?next={next_path}")  # type: ignore[attr-defined]
    page.fill("input[name=name]", name)  # type: ignore[attr-defined]
    page.fill("input[name=password]", PASSWORD)  # type: ignore[attr-defined]
    page.click("#login-submit")  # type: ignore[attr-defined]
    page.wait_for_load_state()  # type: ignore[attr-defined]
    assert "/login" not in page.url, page.url  # type: ignore[attr-defined]


def screenshot(page: object, name: str) -> Path:
    """A full-page screenshot under .lhbench/screens/ for reviewers."""
    SCREENS.mkdir(parents=True, exist_ok=True)
    path = SCREENS / f"{name}.png"
    # a viewport as tall as the page: sticky parts (the vote bar) sit where a reader
    # scrolled to the end would see them, and lazy frames load
    size = page.viewport_size  # type: ignore[attr-defined]
    height = page.evaluate("document.documentElement.scrollHeight")  # type: ignore[attr-defined]
    page.set_viewport_size({"width": size["width"], "height": min(height, 12000)})  # type: ignore[attr-defined]
    page.wait_for_timeout(150)  # type: ignore[attr-defined]
    page.screenshot(path=str(path))  # type: ignore[attr-defined]
    page.set_viewport_size(size)  # type: ignore[attr-defined]
    return path


def no_xss(page: object) -> None:
    """No payload ran: every one sets window.__xss (in the page or, from a frame, its top)."""
    assert page.evaluate("window.__xss === undefined"), page.evaluate("window.__xss")  # type: ignore[attr-defined]
