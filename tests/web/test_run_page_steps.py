"""What a run page shows of a many-step transcript, on each backend.

Every shown step is on the page: its anchor, its role and kind (the block's actor and
title), and its content, escaped. Hostile content (markup, template syntax, NUL) is shown
as text, never interpreted. Blocks past the page's window are counted, and shown a window
further on (``?start=``) or all at once (``?all=true``). Written once through the store's
row path and once through importers' flat rows: both read back to the same page.
"""

from __future__ import annotations

import json
import re
from dataclasses import fields
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text as sql_text

from lhbench.errors import StoreError
from lhbench.schema import Role, Run, RunStatus, Step, StepKind, StepView, Trajectory
from lhbench.stats import run_failures
from lhbench.store import Store
from lhbench.store import runs as runs_module
from lhbench.web import add_user, create_app, run_pages
from lhbench.web.auth import LoginPolicy
from lhbench.web.render import fold_transcript
from tests.web.conftest import settings

PAIRS = 30
HOSTILE = [
    "<script>window.__xss=1</script>",
    "{{ 'tem' ~ 'plated' }} {% if true %}jinja{% endif %}",
    "nul\x00byte",
    "a & b < c > d \" e ' f",
]


def _steps(hostile: list[str]) -> list[Step]:
    steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="go " + HOSTILE[0])]

    def add(**kw: object) -> None:
        steps.append(Step(index=len(steps), **kw))  # type: ignore[arg-type]

    for k in range(PAIRS):
        bad = hostile[k % len(hostile)]
        tool_input: dict[str, object] = {"command": f"run {k} {bad}", "timeout": k}
        if k % 5 == 4:  # nested and fractional: the inputs that go through Pygments
            tool_input = {"argv": ["run", str(k), bad], "ratio": k / 8}
        add(
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name=f"Bash{k}",
            tool_call_id=f"c{k}",
            tool_input=tool_input,
        )
        add(
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_call_id=f"c{k}",
            tool_name=f"Bash{k}",
            tool_output=f"out {k} {bad}\r\n",
            is_error=k % 7 == 3,
            exit_code=2 if k % 7 == 3 else 0,
        )
        if k % 6 == 0:
            add(role=Role.ASSISTANT, kind=StepKind.THINKING, content=f"think {k} {bad}")
        if k % 6 == 1:
            add(role=Role.HARNESS, kind=StepKind.HOOK, tool_name=f"hook{k}", content=f"h {bad}")
        if k % 6 == 2:
            add(role=Role.HARNESS, kind=StepKind.ERROR, content=f"boom {k} {bad}", is_error=True)
        if k % 6 == 3:
            add(role=Role.HARNESS, kind=StepKind.COMPACTION, content=f"compact {k}")
    add(role=Role.ASSISTANT, kind=StepKind.MESSAGE, content="done " + HOSTILE[1])
    return steps


def _client(store: Store, tmp: Path) -> TestClient:
    add_user(store, "boss", "a long enough password", admin=True)
    app = create_app(
        store, secret="s", settings=settings(tmp), login_policy=LoginPolicy(floor_s=0.0)
    )
    c = TestClient(app)
    token = c.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    r = c.post(
        "/login",
        data={"name": "boss", "password": "a long enough password", "csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    return c


def _run(run_id: str) -> Run:
    return Run(
        id=run_id,
        pack_id="p",
        task_id="t",
        harness="h",
        model="m",
        status=RunStatus.COMPLETED,
        started_at=datetime(2026, 11, 28, tzinfo=UTC),
    )


def _page(c: TestClient, run_id: str, query: str = "") -> str:
    r = c.get(f"/runs/{run_id}{query}")
    assert r.status_code == 200
    return r.text


def _anchors(page: str) -> list[int]:
    """The step indices a page's transcript holds, in order."""
    return [int(m) for m in re.findall(r'id="step-(\d+)"', page)]


def _shown(page: str, s: Step) -> None:
    """The step's anchor, actor and content are on the page, escaped."""
    assert f'id="step-{s.index}"' in page
    if s.kind == StepKind.TOOL_RESULT:  # folded into its call's block
        assert escape(s.tool_output or "", quote=False).replace("\r\n", "\n") in page
        return
    title = {
        StepKind.MESSAGE: s.role.value,
        StepKind.TOOL_CALL: s.tool_name,
        StepKind.THINKING: "thinking",
        StepKind.HOOK: s.tool_name,
        StepKind.ERROR: "error",
        StepKind.COMPACTION: "context compacted",
    }[s.kind]
    assert f'<span class="actor {s.role.value}">{title}</span>' in page
    if s.kind == StepKind.TOOL_CALL:
        for value in (s.tool_input or {}).values():
            for v in value if isinstance(value, list) else [value]:
                assert escape(json.dumps(v), quote=False) in page
    else:
        # Markdown shows a NUL as U+FFFD; highlighted text keeps it
        text = escape(s.content, quote=False)
        assert text in page or text.replace("\x00", "\ufffd") in page


def test_many_step_page_shows_every_step_escaped(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL's text holds no NUL (the store refuses such a step there)
    nul = store.engine.dialect.name == "sqlite"
    steps = _steps([h for h in HOSTILE if nul or "\x00" not in h])
    store.save_run(_run("rows"))
    store.save_trajectory(Trajectory(run_id="rows", steps=steps))
    store.save_run(_run("flat"))
    store.append_steps("flat", steps)
    # windows that end at an error: its recovery is on the next one
    blocks = fold_transcript(steps, run_failures(steps).events)
    limit = 1 + next(i for i, b in enumerate(blocks) if b.error and b.error.recovered and i > 30)
    monkeypatch.setattr(run_pages, "MAX_BLOCKS", limit)
    c = _client(store, tmp_path)
    whole = _page(c, "rows", "?all=true")
    page = _page(c, "rows")
    # both write paths read back to the same page
    assert _page(c, "flat", "?all=true") == whole.replace("rows", "flat")
    for s in steps:
        _shown(whole, s)
    # the page shows its first blocks whole, counts the rest and links the next window
    n_blocks = whole.count('<li class="block ')
    assert n_blocks == len(steps) - PAIRS > limit
    assert page.count('<li class="block ') == limit
    assert f"Blocks 1–{limit} of {n_blocks} ({len(steps)} steps;" in page
    assert f'href="?start={limit}#transcript"' in page and "Previous" not in page
    assert "Blocks 1–" not in whole and "?start=" not in whole
    # the windows after it show every block once, in order, as the whole page does
    windows, start = [page], limit
    while start < n_blocks:
        windows.append(_page(c, "rows", f"?start={start}"))
        assert f"Blocks {start + 1}–{min(n_blocks, start + limit)} of {n_blocks}" in windows[-1]
        start += limit
    previous = (len(windows) - 2) * limit
    assert f'href="?start={previous}#transcript"' in windows[-1] and "Next" not in windows[-1]
    shown = [_anchors(w) for w in windows]
    assert [a for w in shown for a in w] == _anchors(whole)
    for s in steps:
        [w] = [w for w, anchors in zip(windows, shown, strict=True) if s.index in anchors]
        _shown(w, s)
    # every link to a step leads to it: on the same window, or on the one that shows it
    links = 0
    for w, anchors in zip(windows, shown, strict=True):
        for at, i in re.findall(r'href="(?:\?start=(\d+))?#step-(\d+)"', w):
            target = shown[int(at) // limit] if at else anchors
            assert int(i) in target and (not at or target is not anchors)
            links += 1
    # each block's own anchor, the errors' recovery links, one of them to the next window
    assert links > n_blocks and f'href="?start={limit}#step-' in page
    # the page's rows are the steps as written, field for field
    assert (
        store.step_views("rows")
        == store.step_views("flat")
        == [StepView(*(getattr(x, f.name) for f in fields(StepView))) for x in steps]
    )
    if nul:  # SQLite: what it cannot give as one JSON array is read row by row, the same
        as_json = store.step_views("rows")
        monkeypatch.setattr(runs_module, "_STEPS_AS_JSON", "SELECT no_such_function(1)")
        assert store.step_views("rows") == as_json
    # a start past the end or before the first block: the last and the first window
    assert _anchors(_page(c, "rows", "?start=100000")) == shown[-1]
    assert _anchors(_page(c, "rows", f"?start={limit + 1}")) == shown[1]
    assert _anchors(_page(c, "rows", "?start=-7")) == shown[0]
    assert c.get("/runs/rows?start=x").status_code == 400
    # a run without steps, asked for a window past its end: the empty first one
    store.save_run(_run("empty"))
    empty = _page(c, "empty", f"?start={limit}")
    assert "No steps stored for this run." in empty and "Blocks " not in empty
    assert _anchors(empty) == [] and "?start=-" not in empty
    # hostile content is text: no script element, no template evaluated
    for p in (page, whole):
        assert "<script>window.__xss" not in p
        assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in p
        assert "{{ &#39;tem&#39; ~ &#39;plated&#39; }}" in p or "{{ 'tem' ~ 'plated' }}" in p
        assert "templated" not in p
        assert "{% if true %}jinja{% endif %}" in p
    assert ("nul\x00byte" in whole) == nul
    assert f"{len(steps)} steps" in page


def test_a_step_of_an_unknown_kind_is_a_store_error_naming_the_run(store: Store) -> None:
    store.save_run(_run("odd"))
    store.save_trajectory(Trajectory(run_id="odd", steps=_steps(["x"])[:3]))
    with store.engine.begin() as conn:
        conn.execute(sql_text("UPDATE steps SET kind = 'mystery' WHERE run_id = 'odd' AND idx = 1"))
    with pytest.raises(StoreError, match=r"run 'odd'.*'mystery'"):
        store.step_views("odd")
