"""The Claude Code adapter: the real CLI as a subprocess, headless, in the run's workspace.

Settings (``shared/reference/cli-offline-probe.md`` §2, ``agent-cli-formats.md`` §1):
``claude -p PROMPT --output-format stream-json --verbose --dangerously-skip-permissions``
with stdin closed; its own config directory per run (``CLAUDE_CONFIG_DIR``), its temp
files inside the run directory (``CLAUDE_CODE_TMPDIR``), no nonessential traffic, and the
model's base URL from the model spec (``ANTHROPIC_BASE_URL``). Skills sit in
``.claude/skills``; post-tool checks are ``PostToolUse``/``PostToolUseFailure`` hooks that
run :mod:`lhbench.harness.cli_hook`. The stream-json stdout is kept as the run's transcript
and normalized by the Claude Code importer.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from lhbench.harness.cli_hook import hook_config
from lhbench.harness.workspace import Workspace
from lhbench.ingest import ImportContext, TranscriptInfo
from lhbench.ingest.claude_code import read_claude_code
from lhbench.models import ModelSpec
from lhbench.schema import HookSpec, Step

__all__ = [
    "CLAUDE_CODE_PACKAGE",
    "CliRun",
    "claude_code_binary",
    "install_claude_code",
    "run_claude_code",
]

# the newest release whose engines field accepts Node 20 (later ones need Node >= 22)
CLAUDE_CODE_PACKAGE = "@anthropic-ai/claude-code@2.1.197"

# our tool names (what packs name in hooks) -> Claude Code's
_TOOL_NAMES = {
    "write_file": "Write",
    "edit_file": "Edit|MultiEdit",
    "read_file": "Read",
    "shell": "Bash",
    "run_shell": "Bash",
}


class CliNotInstalled(RuntimeError):
    """The CLI binary is not where it was looked for."""


@dataclass
class CliRun:
    """What one CLI run left: exit code, transcript, normalized steps, hook records."""

    exit_code: int | None
    timed_out: bool
    transcript: Path
    stderr: str
    info: TranscriptInfo
    steps: list[Step]
    hook_log: list[dict[str, object]] = field(default_factory=list)


def claude_code_binary(prefix: Path | None = None) -> Path:
    """``$LHBENCH_CLAUDE_BIN``, else ``PREFIX/node_modules/.bin/claude``, else PATH's ``claude``."""
    if env := os.environ.get("LHBENCH_CLAUDE_BIN"):
        return Path(env)
    if prefix is not None and (prefix / "node_modules" / ".bin" / "claude").exists():
        return prefix / "node_modules" / ".bin" / "claude"
    found = shutil.which("claude")
    if found is None:
        raise CliNotInstalled(
            "Claude Code is not installed: run `npm i --prefix DIR "
            f"{CLAUDE_CODE_PACKAGE}` and set LHBENCH_CLAUDE_BIN=DIR/node_modules/.bin/claude"
        )
    return Path(found)


def install_claude_code(prefix: Path, package: str = CLAUDE_CODE_PACKAGE) -> Path:
    """Install the CLI from the npm registry into ``prefix`` (kept; a second call is a no-op)."""
    binary = prefix / "node_modules" / ".bin" / "claude"
    if not binary.exists():
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "i", "--no-audit", "--no-fund", "--prefix", str(prefix), package],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    return binary


def _matcher(after_tool: str) -> str:
    if after_tool in ("*", ""):
        return "*"
    return _TOOL_NAMES.get(after_tool, after_tool)


def _settings(ws: Workspace, task_dir: Path, hooks: list[HookSpec]) -> dict[str, object]:
    blocks: dict[str, list[object]] = {}
    for h in hooks:
        command = shlex.join(
            [
                sys.executable,
                "-m",
                "lhbench.harness.cli_hook",
                "--cli",
                "claude",
                "--check",
                str(task_dir / h.check),
                "--root",
                str(ws.root),
                "--log",
                str(ws.run_dir / "hooks.jsonl"),
            ]
        )
        for event, entries in hook_config("claude", command, _matcher(h.after_tool))[
            "hooks"
        ].items():
            blocks.setdefault(event, []).extend(entries)
    return {"hooks": blocks} if blocks else {}


async def run_claude_code(
    *,
    binary: Path,
    ws: Workspace,
    task_dir: Path,
    prompt: str,
    model: ModelSpec,
    env: dict[str, str],
    hooks: list[HookSpec],
    wall_seconds: float | None = None,
) -> CliRun:
    """Run the CLI once on ``prompt`` in ``ws.root``; the transcript goes to the run directory."""
    if not model.base_url:
        raise ValueError(f"model {model.ref!r} has no base URL for ANTHROPIC_BASE_URL")
    config = ws.home / ".claude"
    tmp = ws.run_dir / "tmp"
    for d in (config, tmp):
        d.mkdir(parents=True, exist_ok=True)
    settings = ws.run_dir / "claude-settings.json"
    settings.write_text(json.dumps(_settings(ws, task_dir, hooks), indent=2))
    key = os.environ.get(model.api_key_env, "") if model.api_key_env else ""
    run_env = {
        **env,
        "ANTHROPIC_BASE_URL": model.base_url.removesuffix("/").removesuffix("/v1"),
        "ANTHROPIC_API_KEY": key or "local",
        "CLAUDE_CONFIG_DIR": str(config),
        "CLAUDE_CODE_TMPDIR": str(tmp),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(model.max_retries),
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",
    }
    argv = [
        str(binary),
        "-p",
        prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        "--model",
        model.name,
        "--settings",
        str(settings),
    ]
    transcript = ws.run_dir / "claude-code.jsonl"
    with transcript.open("wb") as out:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=ws.root,
            env=run_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        timed_out = False
        try:
            _, err = await asyncio.wait_for(proc.communicate(), wall_seconds)
        except TimeoutError:
            timed_out = True
            proc.kill()
            _, err = await proc.communicate()
    ctx = ImportContext(transcript)
    info = TranscriptInfo(source=str(transcript))
    steps = list(read_claude_code(ctx, info))
    log = ws.run_dir / "hooks.jsonl"
    records = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
    return CliRun(
        proc.returncode, timed_out, transcript, err.decode(errors="replace"), info, steps, records
    )
