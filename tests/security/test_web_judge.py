"""The search judge's recorded web asked to reach what is not in the corpus."""

from __future__ import annotations

import asyncio
import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from pydantic_ai import ModelRetry

from lhbench.envs.web import NOT_RECORDED, build_index, load_corpus
from lhbench.judges import StateRef, VerdictItem
from lhbench.judges.search_item import SearchItemJudge
from lhbench.judges.tool_worker import ToolWorker
from lhbench.models import resolve_model
from lhbench.packs import resolve_pack_dir
from lhbench.schema import Run, Trajectory
from lhbench.tools.web_server import build_web_server
from tests.security.helpers import CANARY


class _Canary(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        body = f"<html><body>{CANARY}</body></html>".encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def live_site() -> Iterator[str]:
    """A real web server on loopback holding the canary: the judge must never reach it."""
    _Canary.hits = 0
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Canary)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    assert _Canary.hits == 0, "the judge's tools fetched a live page"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("web") / "corpus.sqlite"
    return build_index(load_corpus(resolve_pack_dir("aj-search-mini") / "corpus"), out)


def attacks(site: str) -> list[tuple[str, dict[str, object]]]:
    return [
        ("open_url", {"url": f"{site}/secret"}),
        ("open_url", {"url": "file:///etc/passwd"}),
        ("open_url", {"url": "https://karsk-alpine-club.example/../../../etc/passwd"}),
        ("open_url", {"url": f"https://karsk-alpine-club.example@{site[7:]}/secret"}),
        ("open_url", {"url": "data:text/html,<b>x</b>"}),
        ("find_in_page", {"url": f"{site}/secret", "text": CANARY}),
        ("find_in_page", {"url": "file:///etc/passwd", "text": "root"}),
        ("search", {"query": f"{CANARY} {site}"}),
        ("search", {"query": "\" OR 1=1; ATTACH DATABASE '/tmp/x' AS x; --"}),
        ("search", {"query": "a " * 100_000}),
        ("open_url", {"url": "https://karsk-alpine-club.example/" + "x" * 100_000}),
    ]


def _assert_refused(tool: str, text: str) -> None:
    assert CANARY not in text and "root:" not in text
    if tool != "search":
        assert NOT_RECORDED in text, text[:300]
    else:
        assert "127.0.0.1" not in text


def test_tools_never_leave_the_recorded_web(index: Path, live_site: str) -> None:
    before = hashlib.sha256(index.read_bytes()).hexdigest()

    async def go() -> None:
        async with Client(build_web_server(index)) as c:
            for tool, args in attacks(live_site):
                res = await c.call_tool(tool, args, raise_on_error=False)
                _assert_refused(tool, res.content[0].text)
            ok = await c.call_tool(
                "open_url", {"url": "https://wikimirror.example/wiki/holm-light"}
            )
            assert "Holm Light" in ok.content[0].text

    asyncio.run(go())
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before


def test_sandboxed_judge_server_is_confined(index: Path, live_site: str, tmp_path: Path) -> None:
    """The server exactly as the agent judge starts it: in the sandbox, no network."""
    spec = resolve_model("openai:judge@http://127.0.0.1:9/v1", {})
    judge = SearchItemJudge(
        object(),  # type: ignore[arg-type]  # no model is asked here
        spec,
        index=index,
        items={},
        agentic=True,
    )
    traj = tmp_path / "trajectory.json"
    traj.write_text(Trajectory(run_id="r").model_dump_json())
    run = Run(id="r", pack_id="p", task_id="t", harness="fixture", model="m")
    item = VerdictItem(run, None, Trajectory(run_id="r"), StateRef("s", tmp_path, None, traj))
    [prepared] = judge._tool_commands(item)
    before = hashlib.sha256(index.read_bytes()).hexdigest()

    async def go() -> None:
        # the judge's side of the worker, as the agent judge runs it
        worker = ToolWorker(prepared, tmp_path / "tools.log", start_timeout=120)
        async with worker as toolset:
            names = set(toolset.tools)
            assert names >= {"search", "open_url", "find_in_page"}
            assert not names & {"read_file", "query", "fetch", "write_file"}
            for tool, args in attacks(live_site)[:8]:
                try:
                    text = await worker.call(tool, args)
                except ModelRetry as exc:
                    text = str(exc)
                _assert_refused(tool, text)

    try:
        asyncio.run(go())
    finally:
        prepared.close()
    assert hashlib.sha256(index.read_bytes()).hexdigest() == before
