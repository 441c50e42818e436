"""The real CLIs, installed from the npm registry, run a task end to end against the stub."""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from types import SimpleNamespace
from typing import Any

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

CACHE = Path(__file__).resolve().parents[2] / ".lhbench" / "npm-cli"
# the first run installs the three CLIs from the npm registry into CACHE (network needed)
pytestmark = pytest.mark.npm
# what the CLIs were seen to create in /tmp when unconfined (cli-offline-probe.md)
CLI_TMP = ("claude-", "gemini-client-error", "codex-")
TURNS = ["Write greeting.txt saying hello, world.", "TURN-2: now write done.txt saying done."]


def _messages(req: StubRequest | LoggedRequest) -> list[dict[str, Any]]:
    return list(req.body.get("messages", []))


def _second_turn(req: StubRequest | LoggedRequest) -> bool:
    return any(
        m.get("role") == "user" and "TURN-2" in json.dumps(m.get("content")) for m in _messages(req)
    )


def _results_this_turn(req: StubRequest) -> int:
    """Tool results since this turn's user prompt (a resumed session carries the earlier ones)."""
    start = 0
    if _second_turn(req):
        start = max(
            i
            for i, m in enumerate(_messages(req))
            if m.get("role") == "user" and "TURN-2" in json.dumps(m.get("content"))
        )
    return sum(1 for m in _messages(req)[start:] if m.get("role") == "tool")


def mcp_call(req: StubRequest) -> StubReply | None:
    """Step 0 of every script: call our MCP server's get_file_info, whatever the CLI names it."""
    if req.tool_results():
        return None
    [name] = [
        t["function"]["name"] for t in req.body["tools"] if "get_file_info" in t["function"]["name"]
    ]
    return StubReply.call(name, {"path": "README.md"})


def turn_two(req: StubRequest, shell: str, args: dict[str, str]) -> StubReply:
    """The second turn: one shell command, then an answer."""
    if _results_this_turn(req) == 0:
        return StubReply.call(shell, args)
    return StubReply(content="done.txt written")


def claude_script(req: StubRequest) -> StubReply:
    if not req.body.get("tools"):
        return StubReply(content='{"title": "greeting"}')  # auxiliary calls (titles)
    if _second_turn(req):
        return turn_two(req, "Bash", {"command": "echo done > done.txt", "description": "d"})
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
    if _second_turn(req):
        return turn_two(req, "exec_command", {"cmd": "echo done > done.txt"})
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
    if _second_turn(req):
        return turn_two(req, "run_shell_command", {"command": "echo done > done.txt"})
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
    "claude-code": (claude_script, "anthropic:stub-sonnet", ["Bash", "Write", "Write", "Bash"]),
    "codex": (codex_script, "openai:gpt-5.5", ["shell", "apply_patch", "apply_patch", "shell"]),
    "gemini-cli": (
        gemini_script,
        "google-gla:gemini-2.5-flash",
        ["run_shell_command", "write_file", "write_file", "run_shell_command"],
    ),
}


# Codex waits 10 s for an MCP server by default; on a loaded machine a server can take longer
SLOW_START_S = 12.0


@contextmanager
def busy_cpus() -> Iterator[None]:
    """Every core busy twice over, as on a loaded CI machine."""
    spin = [sys.executable, "-c", "while True: pass"]
    procs = [subprocess.Popen(spin) for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """An empty directory with a short path: the Unix sockets made under it fit their 107
    bytes, which a worker's tmp_path (``/tmp/pytest-of-root/pytest-N/popen-gw0/...``) may not.
    """
    path = Path(tempfile.mkdtemp(prefix="lhb-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def _installed(harness: str) -> Path:
    """The CLI, installed once into CACHE; parallel workers (pytest -n) wait for each other."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{harness}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return install_cli(CLI_AGENTS[harness], CACHE / harness)


@pytest.mark.parametrize(
    ("harness", "loaded"),
    [("claude-code", False), ("codex", False), ("gemini-cli", False), ("codex", True)],
    ids=["claude-code", "codex", "gemini-cli", "codex-cpu-busy"],
)
def test_cli_two_turns_in_the_sandbox(
    tmp_path: Path,
    short_tmp: Path,
    harness: str,
    loaded: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI plays both turns inside the sandbox, resuming its own session for the second.

    ``codex-cpu-busy``: every core busy and the pack's MCP server slow to start (past
    Codex's own 10 s default); the pack's ``startup_timeout_s`` lets the tools arrive.
    """
    script, model_ref, expected_calls = CASES[harness]
    binary = _installed(harness)
    pack = write_harness_pack(
        tmp_path / "pack", mcp=True, turns=TURNS, mcp_delay_s=SLOW_START_S if loaded else 0.0
    )
    monkeypatch.setenv(CLI_AGENTS[harness].env_var, str(binary))
    # a secret in lhbench's environment: the CLI must not see it (the stub logs every body)
    monkeypatch.setenv("LHBENCH_CANARY_TOKEN", "canary-5f1e")
    # lhbench's own temporary files (env files, sockets, private homes) go to a directory
    # of this test's: after the run it must be empty, whatever else runs on the machine
    host_tmp = short_tmp
    monkeypatch.setenv("TMPDIR", str(host_tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(host_tmp))
    home_before = _mtimes()
    cli_tmp_before = {p for p in os.listdir("/tmp") if p.startswith(CLI_TMP)}
    with ModelStub(script) as stub, busy_cpus() if loaded else nullcontext():
        model = resolve_model(f"{model_ref}@{stub.base_url}")
        monkeypatch.chdir(tmp_path)  # the store and run directories go to ./.lhbench
        res = CliRunner().invoke(
            app, ["run", str(pack), "--harness", harness, "--model", model.ref]
        )
        assert res.exit_code == 0, res.output
        log = stub.requests

    # the run as stored: run, normalized trajectory, artifacts
    with Store.open(f"sqlite:///{tmp_path / '.lhbench' / 'lhbench.db'}") as store:
        [run] = store.list_runs()
        out = SimpleNamespace(
            run=run,
            trajectory=store.get_trajectory(run.id),
            artifacts=store.list_artifacts(run.id),
        )
    assert out.run.metadata["sandbox"] == "bubblewrap"
    ws = Path(out.run.metadata["workspace"])
    run_dir = ws.parent
    # the CLI's own tools did the work: a shell command and file writes, in both turns
    assert (ws / "out.txt").read_text() == "hello\n"
    assert (ws / "greeting.txt").read_text() == "hello, world\n"
    assert (ws / "done.txt").read_text() == "done\n"
    # turn by turn: one transcript each; the second turn resumed the session (the model saw
    # the first turn's answer), and the first turn never saw the second prompt
    assert sorted(p.name for p in run_dir.glob(f"{harness}-turn*.jsonl")) == [
        f"{harness}-turn1.jsonl",
        f"{harness}-turn2.jsonl",
    ]
    first = [r for r in log if not _second_turn(r)]
    second = [r for r in log if _second_turn(r)]
    assert first and second and log.index(second[0]) > log.index(first[-1])
    assert all("greeting.txt says hello, world" in json.dumps(r.body) for r in second)
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

    # the pack's MCP tool was offered and answered (for Codex also with every core busy)
    after_mcp = json.dumps(next(r for r in first if results(r) == 1).body)
    assert "path: README.md" in after_mcp and "lines: 1" in after_mcp
    after_bad_write = json.dumps(next(r for r in first if results(r) == 3).body)
    assert (
        "expected 'hello, world'" in after_bad_write and "rewrite greeting.txt" in after_bad_write
    )
    # the normalized transcript: both turns' tool calls, results and answers, with usage
    steps = out.trajectory.steps
    calls = [s.tool_name for s in steps if s.kind == StepKind.TOOL_CALL]
    assert "get_file_info" in (calls[0] or "") and calls[1:] == expected_calls
    assert out.run.status == RunStatus.COMPLETED
    assert out.run.usage.input_tokens > 0 and out.run.usage.output_tokens > 0
    assert {a.name for a in out.artifacts} >= {"out.txt", "greeting.txt", "done.txt"}
    # contained: the secret never reached the CLI; the CLIs' temp files stayed in the
    # sandbox's own /tmp, lhbench cleaned up its own, and the real home's CLI state is
    # untouched
    assert not any("canary-5f1e" in json.dumps(r.body) for r in log)
    assert os.listdir(host_tmp) == []
    assert {p for p in os.listdir("/tmp") if p.startswith(CLI_TMP)} == cli_tmp_before
    assert _mtimes() == home_before
    assert all(r.body.get("model") == model.name for r in log)
    assert out.run.harness_version == VERSIONS[harness]
