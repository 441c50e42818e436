"""The real CLIs, installed from the npm registry, run a task end to end against the stub."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from lhbench.cli import app
from lhbench.harness.cli_agents import CLI_AGENTS, install_cli
from lhbench.models import resolve_model
from lhbench.schema import RunStatus, StepKind
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest
from lhbench.testing.stub import LoggedRequest
from tests.harness.helpers import write_harness_pack

# temp files the CLIs were seen to leave outside their directories (cli-offline-probe.md)
LEAKS = ("claude-", "gemini-client-error")
CACHE = Path(__file__).resolve().parents[2] / ".lhbench" / "npm-cli"


class _RefusingProxy(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def _refuse(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_CONNECT = do_GET = do_POST = do_HEAD = _refuse

    def log_message(self, *args: object) -> None:
        pass


def mcp_call(req: StubRequest) -> StubReply | None:
    """Step 0 of every script: call our MCP server's get_file_info, whatever the CLI names it."""
    if req.tool_results():
        return None
    [name] = [
        t["function"]["name"] for t in req.body["tools"] if "get_file_info" in t["function"]["name"]
    ]
    return StubReply.call(name, {"path": "README.md"})


def claude_script(req: StubRequest) -> StubReply:
    if not req.body.get("tools"):
        return StubReply(content='{"title": "greeting"}')  # auxiliary calls (titles)
    if first := mcp_call(req):
        return first
    n = len(req.tool_results()) - 1
    if n == 0:
        return StubReply.call("Bash", {"command": "echo hello > out.txt", "description": "w"})
    if n == 1:
        return StubReply.call("Write", {"file_path": "greeting.txt", "content": "hi\n"})
    if n == 2:
        return StubReply.call("Write", {"file_path": "greeting.txt", "content": "hello, world\n"})
    return StubReply(content="greeting.txt says hello, world")


def codex_script(req: StubRequest) -> StubReply:
    if first := mcp_call(req):
        return first
    n = len(req.tool_results()) - 1
    if n == 0:
        return StubReply.call("exec_command", {"cmd": "echo hello > out.txt"})
    if n == 1:
        return StubReply.call(
            "apply_patch", "*** Begin Patch\n*** Add File: greeting.txt\n+hi\n*** End Patch\n"
        )
    if n == 2:
        patch = "*** Begin Patch\n*** Update File: greeting.txt\n@@\n-hi\n+hello, world\n"
        patch += "*** End Patch\n"
        return StubReply.call("apply_patch", patch)
    return StubReply(content="greeting.txt says hello, world")


def gemini_script(req: StubRequest) -> StubReply:
    if first := mcp_call(req):
        return first
    n = len(req.tool_results()) - 1
    if n == 0:
        return StubReply.call("run_shell_command", {"command": "echo hello > out.txt"})
    if n == 1:
        return StubReply.call("write_file", {"file_path": "greeting.txt", "content": "hi\n"})
    if n == 2:
        args = {"file_path": "greeting.txt", "content": "hello, world\n"}
        return StubReply.call("write_file", args)
    return StubReply(content="greeting.txt says hello, world")


VERSIONS = {"claude-code": "2.1.197", "codex": "0.169.0", "gemini-cli": "0.61.0"}
# where a CLI would write if it ignored the home and config directories we gave it
REAL_HOME_STATE = (".claude", ".claude.json", ".codex", ".gemini", ".agents")


def _mtimes() -> dict[str, float]:
    home = Path.home()
    out = {}
    for name in REAL_HOME_STATE:
        top = home / name
        if top.exists():
            for p in [top, *top.rglob("*")] if top.is_dir() else [top]:
                out[str(p)] = p.stat().st_mtime
    return out


CASES = {
    # harness: (script, model string prefix, tool calls in the normalized trajectory)
    "claude-code": (claude_script, "anthropic:stub-sonnet", ["Bash", "Write", "Write"]),
    "codex": (codex_script, "openai:gpt-5.5", ["shell", "apply_patch", "apply_patch"]),
    "gemini-cli": (
        gemini_script,
        "google-gla:gemini-2.5-flash",
        ["run_shell_command", "write_file", "write_file"],
    ),
}


@pytest.mark.parametrize("harness", list(CASES))
def test_cli_end_to_end(tmp_path: Path, harness: str, monkeypatch: pytest.MonkeyPatch) -> None:
    script, model_ref, expected_calls = CASES[harness]
    binary = install_cli(CLI_AGENTS[harness], CACHE / harness)
    pack = write_harness_pack(tmp_path / "pack", mcp=True)
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _RefusingProxy)
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    proxy_url = f"http://127.0.0.1:{proxy.server_address[1]}"
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.setenv(var, proxy_url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv(CLI_AGENTS[harness].env_var, str(binary))
    home_before = _mtimes()
    tmp_before = {p.name for p in Path("/tmp").iterdir() if p.name.startswith(LEAKS)}
    try:
        with ModelStub(script) as stub:
            model = resolve_model(f"{model_ref}@{stub.base_url}")
            monkeypatch.chdir(tmp_path)  # the store and run directories go to ./.lhbench
            res = CliRunner().invoke(
                app, ["run", str(pack), "--harness", harness, "--model", model.ref]
            )
            assert res.exit_code == 0, res.output
            log = stub.requests
    finally:
        proxy.shutdown()

    # the run as stored: run, normalized trajectory, artifacts
    with Store.open(f"sqlite:///{tmp_path / '.lhbench' / 'lhbench.db'}") as store:
        [run] = store.list_runs()
        out = SimpleNamespace(
            run=run,
            trajectory=store.get_trajectory(run.id),
            artifacts=store.list_artifacts(run.id),
        )
    ws = Path(out.run.metadata["workspace"])
    run_dir = ws.parent
    # the CLI's own tools did the work: a shell command and file writes
    assert (ws / "out.txt").read_text() == "hello\n"
    assert (ws / "greeting.txt").read_text() == "hello, world\n"
    # the skill is where the CLI looks for it, and reached the model
    if harness in ("claude-code", "gemini-cli"):
        where = ".claude" if harness == "claude-code" else ".gemini"
        assert (ws / where / "skills" / "greeter" / "SKILL.md").is_file()
        assert any("greeter" in json.dumps(r.body) for r in log)
    else:
        assert any("SKILL-DEFAULT" in json.dumps(r.body) for r in log)
    # the hook ran after each Write; its failure reached the model in the next request
    hooks = [json.loads(x) for x in (run_dir / "hooks.jsonl").read_text().splitlines()]
    assert [h["ok"] for h in hooks] == [False, True]

    def results(r: LoggedRequest) -> int:
        return sum(1 for m in r.body["messages"] if m.get("role") == "tool")

    after_mcp = json.dumps(next(r for r in log if results(r) == 1).body)
    assert "path: README.md" in after_mcp and "lines: 1" in after_mcp
    after_bad_write = json.dumps(next(r for r in log if results(r) == 3).body)
    assert (
        "expected 'hello, world'" in after_bad_write and "rewrite greeting.txt" in after_bad_write
    )
    # the normalized transcript: tool calls, results and the final answer, with usage
    steps = out.trajectory.steps
    calls = [s.tool_name for s in steps if s.kind == StepKind.TOOL_CALL]
    assert "get_file_info" in (calls[0] or "") and calls[1:] == expected_calls
    assert out.run.status == RunStatus.COMPLETED
    assert out.run.usage.input_tokens > 0 and out.run.usage.output_tokens > 0
    assert {a.name for a in out.artifacts} >= {"out.txt", "greeting.txt"}
    # contained: no connection attempt beyond 127.0.0.1, no temp files outside the run
    assert _RefusingProxy.seen == []
    assert {p.name for p in Path("/tmp").iterdir() if p.name.startswith(LEAKS)} == tmp_before
    assert _mtimes() == home_before
    assert all(r.body.get("model") == model.name for r in log)
    assert out.run.harness_version == VERSIONS[harness]
