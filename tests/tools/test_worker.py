"""The judges' tool worker: the MCP servers' tools and answers, without the MCP SDK.

Its answers equal the MCP server's for the same calls (refusals included), it starts
without importing the SDK, and bad requests get an error line, never a crash. The judge's
side (:class:`ToolWorker`) is attacked with hostile workers: lines too long, not JSON,
a wrong id, a death mid-call, a hang; each call fails with a reason and no process stays.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelRetry

from lhbench.judges.tool_worker import ToolWorker, ToolWorkerError
from lhbench.sandbox import Prepared
from lhbench.schema import Role, Step, StepKind, Trajectory
from lhbench.tools import build_state_server
from lhbench.tools.registry import Image, McpTools, ToolSet
from lhbench.tools.worker import MAX_REQUEST_BYTES, build_tools, serve
from tests.tools.test_servers import _root, call, table_db


def _state(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = _root(tmp_path)  # ok.txt, sub/, link-file -> ../secret.txt
    db = table_db(tmp_path)
    traj = tmp_path / "t.json"
    steps = [Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="do it")]
    traj.write_text(Trajectory(run_id="r", steps=steps).model_dump_json())
    return root, db, traj


def _served(tools: ToolSet, lines: list[bytes]) -> list[dict[str, Any]]:
    out = io.StringIO()
    serve(tools, io.BytesIO(b"".join(lines)), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("list_directory", {}),
    ("list_directory", {"path": "sub"}),
    ("read_file", {"path": "ok.txt", "start_line": 2, "end_line": 3}),
    ("read_file", {"path": "../secret.txt"}),
    ("read_file", {"path": "link-file"}),
    ("read_file", {"path": "ok.txt", "start_line": "two"}),
    ("read_file", {}),
    ("search_files", {"pattern": "*.txt", "content": "line"}),
    ("search_files", {"pattern": "*", "content": "(unclosed"}),
    ("get_file_info", {"path": "ok.txt"}),
    ("directory_tree", {}),
    ("list_tables", {}),
    ("describe_table", {"table": "t"}),
    ("describe_table", {"table": "nope"}),
    ("query", {"sql": "SELECT a, b FROM t ORDER BY a LIMIT 3"}),
    ("query", {"sql": "SELECT a FROM t", "max_rows": 500}),
    ("query", {"sql": "DELETE FROM t"}),
    ("view_trajectory_step", {"i": 0}),
    ("view_trajectory_step", {"i": 9}),
    ("trajectory_length", {}),
]


def test_worker_answers_equal_the_mcp_servers(tmp_path: Path) -> None:
    root, db, traj = _state(tmp_path)
    url = f"sqlite:///{db}"
    tools = build_tools(["state", "--root", str(root), "--db", url, "--trajectory", str(traj)])
    lines = [
        json.dumps({"id": i, "tool": n, "args": a}).encode() + b"\n"
        for i, (n, a) in enumerate(CALLS)
    ]
    hello, *answers = _served(tools, lines)
    server = build_state_server(root=root, db_url=url, trajectory=traj)
    # the same tools, with the same parameters, in the same order
    mcp_tools = asyncio.run(server.list_tools())
    assert [t["name"] for t in hello["tools"]] == [t.name for t in mcp_tools]
    for mine, theirs in zip(hello["tools"], mcp_tools, strict=True):
        assert mine["description"] == theirs.description
        assert mine["parameters"]["properties"].keys() == theirs.input_schema["properties"].keys()
        assert set(mine["parameters"].get("required", [])) == set(
            theirs.input_schema.get("required", [])
        )
    errors = 0
    for (name, args), got in zip(CALLS, answers, strict=True):
        res = call(server, name, args)
        text = res.content[0].text
        if res.is_error:
            errors += 1
            assert got.get("error") == text, (name, args)
        else:
            assert got.get("ok") == text, (name, args)
    assert errors >= 6  # the refusals were compared too
    assert [a["id"] for a in answers] == list(range(len(CALLS)))


def test_bad_requests_get_an_error_line_and_the_worker_goes_on(tmp_path: Path) -> None:
    root, _, _ = _state(tmp_path)
    tools = build_tools(["state", "--root", str(root)])

    def crash() -> str:
        raise RuntimeError("internal detail /secret/path")

    tools.functions["crash"] = crash
    lines = [
        b"not json\n",
        b"[1, 2]\n",
        b'{"id": 1}\n',
        b'{"id": 2, "tool": "rm_rf", "args": {}}\n',
        b'{"id": 3, "tool": "__init__", "args": {}}\n',
        b'{"id": 4, "tool": "list_directory", "args": "not an object"}\n',
        b'{"id": 5, "tool": "crash", "args": {}}\n',
        b'{"id": 6, "tool": "list_directory", "args": {}}\n',
        b'{"id": 7, "tool": "read_file", "args": {"path": "' + b"x" * MAX_REQUEST_BYTES + b'"}}\n',
        b'{"id": 8, "tool": "list_directory", "args": {}}\n',
    ]
    _, *answers = _served(tools, lines)
    assert [a["id"] for a in answers] == [None, None, None, 2, 3, 4, 5, 6, None]
    assert all("error" in a for a in answers[:6])
    assert "no tool named 'rm_rf'" in answers[3]["error"]
    # a crash says only that it crashed: nothing of the exception reaches the judge
    assert answers[6]["error"] == "Error executing tool crash: the tool crashed"
    assert "ok.txt" in answers[7]["ok"]
    # the oversized line ends the worker: what follows it is not read as requests
    assert "over" in answers[8]["error"]


def test_worker_starts_without_the_mcp_sdk(tmp_path: Path) -> None:
    root, db, traj = _state(tmp_path)
    probe = (
        "import sys, runpy; sys.argv = ['w'] + sys.argv[1:]\n"
        "try:\n    runpy.run_module('lhbench.tools.worker', run_name='__main__')\n"
        "finally:\n    print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mcp', 'mcp_types', 'fastmcp', 'pydantic_ai')), file=sys.stderr)\n"
    )
    argv = ["state", "--root", str(root), "--db", f"sqlite:///{db}", "--trajectory", str(traj)]
    done = subprocess.run(
        [sys.executable, "-I", "-c", probe, *argv], input=b"", capture_output=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["tools"]
    assert done.stderr.decode().strip().splitlines()[-1] == "[]"


def test_a_target_that_cannot_be_served_says_why(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-m", "lhbench.tools.worker", "state", "--trajectory",
         str(tmp_path / "missing.json")],
        input=b"", capture_output=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    said = json.loads(done.stdout)
    assert "missing.json" in said["error"] and "FileNotFoundError" in said["error"]


# --- the judge's side against hostile workers -------------------------------------------

HELLO = {"tools": [{"name": "t", "description": "d", "parameters": {"type": "object"}}]}


def _fake(tmp_path: Path, body: str) -> Prepared:
    """A worker that says HELLO, then behaves as ``body`` (Python, reading sys.stdin)."""
    script = tmp_path / "fake.py"
    script.write_text(
        "import json, sys, time, os\n"
        f"print(json.dumps({HELLO!r}), flush=True)\n" + textwrap.dedent(body)
    )
    return Prepared([sys.executable, str(script)], dict(os.environ), str(tmp_path), "none")


def _run(prepared: Prepared, tmp_path: Path, **kw: Any) -> tuple[Any, int]:
    async def go() -> tuple[Any, int]:
        worker = ToolWorker(prepared, tmp_path / "log", start_timeout=kw.pop("start", 20), **kw)
        async with worker as toolset:
            assert list(toolset.tools) == ["t"]
            proc = worker._proc
            assert proc is not None
            try:
                got: Any = await worker.call("t", {})
            except ModelRetry as exc:
                got = exc
            try:
                again: Any = await worker.call("t", {})
            except ModelRetry as exc:
                again = exc
        return (got, again), proc.pid

    return asyncio.run(go())


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ("sys.stdin.readline(); print('x' * (33 << 20), flush=True)\n", "bytes"),
        ("sys.stdin.readline(); print('not json', flush=True)\n", "not JSON"),
        ("sys.stdin.readline(); print('[1]', flush=True)\n", "not an object"),
        ("sys.stdin.readline(); print(json.dumps({'id': 99, 'ok': 'x'}), flush=True)\n",
         "protocol"),
        ("sys.stdin.readline(); os._exit(3)\n", "exit 3"),
        ("sys.stdin.readline(); time.sleep(60)\n", "did not answer in 1 s"),
    ],
)  # fmt: skip
def test_a_hostile_worker_fails_the_call_and_is_stopped(
    tmp_path: Path, body: str, said: str
) -> None:
    (got, again), pid = _run(_fake(tmp_path, body), tmp_path, call_timeout=1)
    assert isinstance(got, ModelRetry) and said in str(got), got
    # every later call fails with the same reason, without asking the dead worker
    assert isinstance(again, ModelRetry) and str(again) == str(got)
    assert _gone(pid)


def test_a_refusal_is_the_tools_text_and_the_worker_goes_on(tmp_path: Path) -> None:
    body = """
    for n, line in enumerate(sys.stdin):
        rid = json.loads(line)["id"]
        doc = {"id": rid, "error": "refused: no"} if n == 0 else {"id": rid, "ok": "fine"}
        print(json.dumps(doc), flush=True)
    """
    (got, again), pid = _run(_fake(tmp_path, body), tmp_path)
    assert isinstance(got, ModelRetry) and str(got) == "refused: no"
    assert again == "fine"
    assert _gone(pid)


def _tool(name: str = "t", description: str = "d", **schema: Any) -> dict[str, Any]:
    return {"name": name, "description": description, "parameters": {"type": "object", **schema}}


@pytest.mark.parametrize(
    ("hello", "said", "final"),
    [
        ('{"error": "PgRoleError: the role can write"}', "did not start: PgRoleError", True),
        ('{"error": "' + "x" * 5000 + '"}', "did not start: x+$", True),
        ('{"tools": "all of them"}', "not a list of tools", True),
        ('{"tools": [{"name": 1}]}', "not a list of tools", True),
        ('{"tools": []}', "not a list of tools", True),
        (json.dumps({"tools": [_tool(), _tool()]}), "not a list of tools", True),
        (json.dumps({"tools": [_tool("final_result_VerdictAnswer")]}), "not a list", True),
        (json.dumps({"tools": [_tool("rm -rf /")]}), "not a list of tools", True),
        (json.dumps({"tools": [_tool(description="x" * 5000)]}), "not a list of tools", True),
        (json.dumps({"tools": [_tool(properties={"a": {"description": "x" * 30000}})]}),
         "not a list of tools", True),
        (json.dumps({"tools": [_tool() for _ in range(65)]}), "not a list of tools", True),
        ("", r"ended \(exit 0\) at its start", False),
    ],
)  # fmt: skip
def test_a_worker_that_does_not_start_is_a_tool_worker_error(
    tmp_path: Path, hello: str, said: str, final: bool
) -> None:
    script = tmp_path / "w.py"
    script.write_text(f"print({hello!r})\n" if hello else "")
    prepared = Prepared([sys.executable, str(script)], dict(os.environ), str(tmp_path), "none")

    async def go() -> None:
        async with ToolWorker(prepared, tmp_path / "log", start_timeout=20):
            pass

    with pytest.raises(ToolWorkerError, match=said) as failed:
        asyncio.run(go())
    # a refusal is final (a verdict it fails is not retried); a death at start may pass
    assert failed.value.final is final
    assert len(str(failed.value)) <= 500


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))


def _picture_tools(registrar: Any) -> None:
    @registrar.tool()
    def picture(n: int = 1) -> list[str | Image]:
        """Text and ``n`` images."""
        return [f"{n} page(s)", *(Image(PNG) for _ in range(n))]

    @registrar.tool()
    def none_here() -> list[str | Image]:
        """Text alone, in a list."""
        return ["(nothing drawn)"]


def test_images_reach_the_judge_as_through_mcp(tmp_path: Path) -> None:
    from mcp.server.mcpserver import MCPServer

    tools = ToolSet()
    _picture_tools(tools)
    server = MCPServer("pictures")
    _picture_tools(McpTools(server))
    lines = [
        b'{"id": 1, "tool": "picture", "args": {"n": 2}}\n',
        b'{"id": 2, "tool": "none_here", "args": {}}\n',
    ]
    hello, first, second = _served(tools, lines)
    assert [t["name"] for t in hello["tools"]] == ["picture", "none_here"]
    mcp = call(server, "picture", {"n": 2})
    assert [c.type for c in mcp.content] == ["text", "image", "image"]
    assert [p.get("text") for p in first["ok"]] == [mcp.content[0].text, None, None]
    assert [p.get("image") for p in first["ok"][1:]] == [c.data for c in mcp.content[1:]]
    assert second["ok"] == [{"text": "(nothing drawn)"}]

    # the judge's side gives pydantic-ai text and BinaryContent, as its MCP toolset does
    script = tmp_path / "w.py"
    script.write_text(
        "import sys, json\n"
        f"print(json.dumps({hello!r}), flush=True)\n"
        f"sys.stdin.readline(); print(json.dumps({first!r}), flush=True)\n"
        "sys.stdin.readline()\n"
        "print(json.dumps({'id': 2, 'ok': [{'image': '!!not base64', 'format': 'png'}]}))\n"
    )
    prepared = Prepared([sys.executable, str(script)], dict(os.environ), str(tmp_path), "none")

    async def go() -> tuple[Any, Any]:
        worker = ToolWorker(prepared, tmp_path / "log", start_timeout=20)
        async with worker:
            got = await worker.call("picture", {"n": 2})
            with pytest.raises(ModelRetry, match="protocol") as bad:
                await worker.call("picture", {"n": 1})
        return got, bad.value

    got, _ = asyncio.run(go())
    assert got[0] == "2 page(s)"
    assert [(b.media_type, b.data) for b in got[1:]] == [("image/png", PNG)] * 2


def test_a_file_name_that_is_not_utf8_does_not_end_the_worker(tmp_path: Path) -> None:
    root, _, _ = _state(tmp_path)
    (root / os.fsdecode(b"bad\xffname.txt")).write_text("x")
    prepared = Prepared(
        [sys.executable, "-I", "-m", "lhbench.tools.worker", "state", "--root", str(root)],
        dict(os.environ), str(tmp_path), "none",
    )  # fmt: skip

    async def go() -> tuple[Any, Any]:
        worker = ToolWorker(prepared, tmp_path / "log", start_timeout=60)
        async with worker:
            listing = await worker.call("list_directory", {})
            found = await worker.call("search_files", {"pattern": "*name*"})
            after = await worker.call("read_file", {"path": "ok.txt"})
        return (listing, found), after

    (listing, found), after = asyncio.run(go())
    assert "bad?name.txt" in listing and found == "bad?name.txt"  # the bad byte replaced
    assert after.startswith("inside")
    listing.encode("utf-8")  # nothing a model request cannot carry


def test_the_judges_side_bounds_requests_and_a_worker_that_stops_reading(tmp_path: Path) -> None:
    # a worker that never reads its input again: a large request fills the pipe
    prepared = _fake(tmp_path, "time.sleep(60)\n")

    async def go() -> tuple[str, str, str]:
        worker = ToolWorker(prepared, tmp_path / "log", start_timeout=20, call_timeout=2)
        async with worker:
            with pytest.raises(ModelRetry) as too_big:
                await worker.call("t", {"x": "y" * (2 << 20)})
            with pytest.raises(ModelRetry) as stuck:
                await worker.call("t", {"x": "y" * (512 << 10)})
            with pytest.raises(ModelRetry) as after:
                await worker.call("t", {})
        return str(too_big.value), str(stuck.value), str(after.value)

    too_big, stuck, after = asyncio.run(go())
    assert "over 1 MB" in too_big  # refused here, the worker untouched
    assert "did not answer in 2 s" in stuck and after == stuck


def test_a_cancelled_call_never_hands_its_answer_to_the_next(tmp_path: Path) -> None:
    body = """
    for line in sys.stdin:
        time.sleep(0.5)
        print(json.dumps({"id": json.loads(line)["id"], "ok": "late"}), flush=True)
    """
    prepared = _fake(tmp_path, body)

    async def go() -> str:
        worker = ToolWorker(prepared, tmp_path / "log", start_timeout=20)
        async with worker:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(worker.call("t", {}), 0.1)
            with pytest.raises(ModelRetry) as after:
                await worker.call("t", {})
        return str(after.value)

    assert "cancelled" in asyncio.run(go())
