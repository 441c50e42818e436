"""A restarted server answers its overview and run pages from the saved front, never stale.

The front (what the overview shows, and what a run page reads of the analysis) is saved
signed beside the store's version after each analysis. A second app over the same store
answers from it byte for byte as a full computation would, without making the summary;
any write, an edited or foreign file, another secret or panel, and it is ignored.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from lhbench.schema import Label
from lhbench.store import Store
from lhbench.web import create_app
from lhbench.web import deps as web_deps
from lhbench.web.analysis import Analysis, analyse
from lhbench.web.auth import LoginPolicy
from lhbench.web.front import front_path, load_front
from tests.web.conftest import PASSWORD, settings
from tests.web.test_analysis import _disturb

SORTS = ["", "pass", "elo", "aj", "cost", "name", "tier:0"]


@pytest.fixture
def store(tmp_path: Path, seeded_template: tuple[Path, dict[str, list[str]]]) -> Iterator[Store]:
    db = tmp_path / "copy.db"
    shutil.copy(seeded_template[0], db)
    with Store.open(f"sqlite:///{db}") as s:
        _disturb(s)  # an infrastructure failure, a stale label, a judge with a failed grade
        yield s


def client(store: Store, tmp: Path, secret: str = "s1", **kw: Any) -> TestClient:
    app = create_app(
        store,
        secret=secret,
        settings=settings(tmp),
        login_policy=LoginPolicy(floor_s=0.0),
        front_dir=tmp / "fronts",
        **kw,
    )
    c = TestClient(app)
    token = c.get("/login").text.split('name="csrf_token" value="')[1].split('"')[0]
    r = c.post(
        "/login",
        data={"name": "boss", "password": PASSWORD, "csrf_token": token},
        follow_redirects=False,
    )
    assert r.status_code == 303
    return c


def pages(c: TestClient, run_ids: list[str]) -> dict[str, str]:
    out = {}
    for path in [f"/?sort={s}" for s in SORTS] + [f"/runs/{r}" for r in run_ids]:
        r = c.get(path)
        assert r.status_code == 200, path
        out[path] = same(r.text)
    return out


def same(page: str) -> str:
    """The page as any session sees it (each session has its own CSRF token)."""
    return re.sub(r'name="csrf_token" value="[^"]*"', "", page)


def no_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> Analysis:
        raise AssertionError("the summary was made")

    monkeypatch.setattr(web_deps, "analyse", refuse)
    monkeypatch.setattr(web_deps, "refresh", refuse)


def test_a_restart_answers_as_a_full_computation_without_making_the_summary(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [r.id for r in store.list_runs()]
    first = client(store, tmp_path)
    full = pages(first, runs)
    assert "incomplete panel" in full["/?sort="]
    # the stale label's run, the infrastructure failure's, a checked one: all asked
    a = analyse(store)
    assert any(r not in a.agent_of for r in runs) and any(r in a.labels for r in runs)
    saved = front_path(tmp_path / "fronts", store)
    assert saved.exists()
    no_summary(monkeypatch)
    again = pages(client(store, tmp_path), runs)
    assert again == full


def test_a_saved_front_is_ignored_once_the_store_moves(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [r.id for r in store.list_runs()]
    before = pages(client(store, tmp_path), runs)
    path = front_path(tmp_path / "fronts", store)
    assert load_front(path, "s1", store, None) is not None
    # a label that changes a pass rate: the saved figures are now stale
    checked = analyse(store)
    run = next(r for r in runs if checked.labels.get(r) is True)
    for lab in store.list_labels(run_id=run):
        store.save_label(lab.model_copy(update={"passed": False}))
    assert load_front(path, "s1", store, None) is None
    fresh = pages(client(store, tmp_path / "other"), runs)
    restarted = pages(client(store, tmp_path), runs)
    assert restarted == fresh
    # the write shows: the old front would have answered differently
    assert restarted["/?sort=pass"] != before["/?sort=pass"]
    assert restarted[f"/runs/{run}"] != before[f"/runs/{run}"]


def _edited(path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    sig, _, text = path.read_text().partition("\n")
    doc = json.loads(text)
    edit(doc)
    path.write_text(sig + "\n" + json.dumps(doc))


@pytest.mark.parametrize(
    "forge",
    ["figure", "version", "unsigned", "other secret", "other panel", "garbage", "other store"],
)
def test_an_edited_or_foreign_front_is_ignored(
    store: Store, tmp_path: Path, forge: str, seeded_template: tuple[Path, dict[str, list[str]]]
) -> None:
    runs = [r.id for r in store.list_runs()][:3]
    full = pages(client(store, tmp_path), runs)
    path = front_path(tmp_path / "fronts", store)
    assert load_front(path, "s1", store, None) is not None
    secret, panel = "s1", None
    if forge == "figure":
        _edited(path, lambda d: d["front"]["agents"][0].update(label="forged agent"))
    elif forge == "version":
        _edited(path, lambda d: d["tag"].update(version=d["tag"]["version"] + 1))
    elif forge == "unsigned":
        path.write_text(path.read_text().partition("\n")[2])
    elif forge == "other secret":
        secret = "s2"
    elif forge == "other panel":
        panel = {"some-judge-key"}
    elif forge == "garbage":
        path.write_bytes(b"\x80\x04\x95 not json \n\x00")
    else:
        # another store (same content, another URL) finds nothing of this one's
        db = tmp_path / "twin.db"
        shutil.copy(seeded_template[0], db)
        with Store.open(f"sqlite:///{db}") as twin:
            assert load_front(front_path(tmp_path / "fronts", twin), "s1", twin, None) is None
            shutil.copy(path, front_path(tmp_path / "fronts", twin))
            assert load_front(front_path(tmp_path / "fronts", twin), "s1", twin, None) is None
        return
    assert load_front(path, secret, store, panel) is None
    if forge in ("figure", "version", "unsigned", "garbage"):
        # the app ignores it: its answer is the full computation's, never the file's
        assert pages(client(store, tmp_path), runs) == full


def test_run_pages_and_the_overview_answer_while_the_summary_is_made(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [r.id for r in store.list_runs()]
    full = pages(client(store, tmp_path), runs)
    release = threading.Event()
    started = threading.Event()
    made: list[int] = []

    def slow(*a: Any, **k: Any) -> Analysis:
        started.set()
        assert release.wait(60)
        made.append(1)
        return analyse(*a, **k)

    monkeypatch.setattr(web_deps, "analyse", slow)
    c = client(store, tmp_path, warm=True)
    assert started.wait(30)
    answers: dict[str, str] = {}

    def ask() -> None:
        answers.update(pages(c, runs))

    asking = threading.Thread(target=ask)
    asking.start()
    asking.join(60)
    # answered while the start's summary is still held: nothing waited for it
    assert not asking.is_alive() and answers == full
    # a write now: the overview after it waits for that summary and updates it
    run = runs[0]
    store.save_label(Label(run_id=run, passed=True, source="verify:after-start.py"))
    after: list[str] = []
    waiting = threading.Thread(target=lambda: after.append(same(c.get("/").text)))
    waiting.start()
    waiting.join(1.0)
    assert waiting.is_alive()
    release.set()
    waiting.join(60)
    assert made == [1]  # one summary, updated after the write, not a second one beside it
    assert after == [pages(client(store, tmp_path / "fresh"), [])["/?sort="]]


def test_warm_compiles_every_page_template_before_the_summary(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted server compiles its templates before it listens, not in a first page."""
    import jinja2

    events: list[tuple[str, str]] = []
    compile_ = jinja2.Environment.compile

    def compiling(self: Any, source: Any, name: Any = None, *a: Any, **k: Any) -> Any:
        events.append((threading.current_thread().name, f"compile {name}"))
        return compile_(self, source, name, *a, **k)

    def counting(*a: Any, **k: Any) -> Analysis:
        events.append((threading.current_thread().name, "summary"))
        return analyse(*a, **k)

    monkeypatch.setattr(jinja2.Environment, "compile", compiling)
    monkeypatch.setattr(web_deps, "analyse", counting)
    app = create_app(
        store, secret="s1", settings=settings(tmp_path), front_dir=tmp_path / "f", warm=True
    )
    # compiled by create_app itself, before it returns (and so before any request)
    env = app.state.web.templates.env
    pages_ = env.list_templates(filter_func=lambda n: n.endswith(".html"))
    me = threading.current_thread().name
    assert len(pages_) > 10
    assert {f"compile {n}" for n in pages_} <= {what for who, what in events if who == me}
    for _ in range(600):
        if ("lhbench-warm", "summary") in events:
            break
        threading.Event().wait(0.05)
    assert ("lhbench-warm", "summary") in events
    # pages asked now compile nothing
    before = len(events)
    c = TestClient(app)
    assert c.get("/login").status_code == 200
    assert not [e for e in events[before:] if e[1].startswith("compile")]
