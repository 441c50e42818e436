import json
import subprocess
import sys
from pathlib import Path

import pytest

from lhbench.harness.cli_hook import hook_config
from tests.harness.helpers import CHECK

# stdin forms per shared/reference/agent-cli-formats.md (§1.4 Claude, §2.6 Codex, §3.5 Gemini)
STDIN = {
    "claude": {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": "greeting.txt", "content": "hi"},
        "tool_use_id": "toolu_01",
        "cwd": ".",
    },
    "codex": {
        "session_id": "s1",
        "hook_event_name": "PostToolUse",
        "tool_name": "apply_patch",
        "tool_input": {"input": "*** Begin Patch"},
        "tool_use_id": "call_1",
        "cwd": ".",
    },
    "gemini": {
        "session_id": "s1",
        "hook_event_name": "AfterTool",
        "tool_name": "write_file",
        "tool_input": {"file_path": "greeting.txt", "content": "hi"},
        "cwd": ".",
    },
}


def _run(cli: str, tmp: Path, stdin: str, after_tool: str = "*") -> tuple[int, str, Path]:
    (tmp / "check.py").write_text(CHECK)
    root = tmp / "ws"
    root.mkdir(exist_ok=True)
    log = tmp / "hooks.jsonl"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "lhbench.harness.cli_hook",
            "--cli",
            cli,
            "--check",
            str(tmp / "check.py"),
            "--root",
            str(root),
            "--log",
            str(log),
            "--after-tool",
            after_tool,
        ],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return proc.returncode, proc.stdout, log


@pytest.mark.parametrize("cli", ["claude", "codex", "gemini"])
def test_hook_answers_in_each_clis_form_and_logs(tmp_path: Path, cli: str) -> None:
    code, out, log = _run(cli, tmp_path, json.dumps(STDIN[cli]))
    assert code == 0
    doc = json.loads(out)
    ctx = doc["hookSpecificOutput"]
    assert ctx["hookEventName"] == STDIN[cli]["hook_event_name"]
    assert "FAILED" in ctx["additionalContext"] and "hello, world" in ctx["additionalContext"]
    if cli == "gemini":
        assert "decision" not in doc
    else:
        assert doc["decision"] == "block" and doc["reason"] == ctx["additionalContext"]
    [rec] = [json.loads(line) for line in log.read_text().splitlines()]
    assert rec["ok"] is False and rec["tool_name"] == STDIN[cli]["tool_name"]

    # fix the file: the next call passes and nothing blocks
    (tmp_path / "ws" / "greeting.txt").write_text("hello, world\n")
    code, out, log = _run(cli, tmp_path, json.dumps(STDIN[cli]))
    doc = json.loads(out)
    assert "decision" not in doc and "passed" in doc["hookSpecificOutput"]["additionalContext"]
    assert [json.loads(x)["ok"] for x in log.read_text().splitlines()] == [False, True]


def test_unmatched_tool_is_silent_and_bad_stdin_is_an_error(tmp_path: Path) -> None:
    code, out, log = _run("claude", tmp_path, json.dumps(STDIN["claude"]), after_tool="Edit")
    assert code == 0 and out == "" and not log.exists()
    code, out, log = _run("claude", tmp_path, "not json")
    assert code == 1 and out == "" and not log.exists()


def test_hook_config_shapes() -> None:
    g = hook_config("gemini", "cmd", "write_file|replace")["hooks"]
    assert list(g) == ["AfterTool"] and g["AfterTool"][0]["hooks"][0]["command"] == "cmd"
    c = hook_config("claude", "cmd", "Write|Edit")["hooks"]
    assert set(c) == {"PostToolUse", "PostToolUseFailure"}
    assert list(hook_config("codex", "cmd", "apply_patch")["hooks"]) == ["PostToolUse"]


def test_hook_program_stays_light_and_the_package_names_all_resolve() -> None:
    # it runs after every tool call of a CLI agent: no pydantic-ai, MCP or Ray imports
    probe = (
        "import sys, lhbench.harness.cli_hook; "
        "print(sorted(m for m in ('pydantic_ai', 'mcp', 'fastmcp', 'ray') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stdout + out.stderr
    import lhbench.harness as harness

    assert all(getattr(harness, name) is not None for name in harness.__all__)
