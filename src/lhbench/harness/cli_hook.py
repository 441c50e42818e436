r"""One post-tool verification hook program for Claude Code, Codex CLI and Gemini CLI.

Each CLI runs it after a tool call with the hook input on stdin. It runs the task's check
on the workspace, answers in that CLI's feedback form, and appends its own JSON record to
a log (hook runs do not reliably appear in the CLIs' output streams).

    python -m lhbench.harness.cli_hook --cli claude|codex|gemini --check CHECK.py \\
        --root WORKSPACE --log hooks.jsonl [--after-tool GLOB]

Forms (``shared/reference/agent-cli-formats.md`` §1.4, §2.6, §3.5): Claude Code and Codex
read ``hookSpecificOutput.additionalContext`` (and, for a failed check, ``decision:
"block"`` with a ``reason`` the model sees); Gemini CLI appends
``hookSpecificOutput.additionalContext`` to the tool result of an ``AfterTool`` event.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path
from typing import Any

from lhbench.harness.hooks import run_hooks
from lhbench.schema import HookSpec, utcnow

__all__ = ["EVENTS", "hook_config", "hook_output", "main"]

EVENTS = {"claude": "PostToolUse", "codex": "PostToolUse", "gemini": "AfterTool"}


def hook_output(cli: str, event: str, ok: bool, feedback: str) -> dict[str, Any]:
    """What the CLI expects on stdout."""
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": feedback}
    }
    if not ok and cli in ("claude", "codex"):
        out.update({"decision": "block", "reason": feedback})
    return out


def hook_config(cli: str, command: str, matcher: str) -> dict[str, Any]:
    """The hooks block for the CLI's settings (Claude/Gemini settings.json, Codex hooks.json)."""
    if cli == "gemini":
        return {
            "hooks": {
                "AfterTool": [
                    {
                        "matcher": matcher,
                        "hooks": [
                            {
                                "type": "command",
                                "command": command,
                                "name": "lhbench-verify",
                                "timeout": 60000,
                            }
                        ],
                    }
                ]
            }
        }
    events = ["PostToolUse", "PostToolUseFailure"] if cli == "claude" else ["PostToolUse"]
    return {
        "hooks": {
            e: [
                {
                    "matcher": matcher,
                    "hooks": [{"type": "command", "command": command, "timeout": 60}],
                }
            ]
            for e in events
        }
    }


def main(argv: list[str] | None = None) -> int:
    """Run as a hook: read stdin, check, answer, log. Never fails the CLI's tool call itself."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.harness.cli_hook")
    ap.add_argument("--cli", choices=sorted(EVENTS), required=True)
    ap.add_argument("--check", type=Path, required=True)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--log", type=Path, required=True)
    ap.add_argument("--after-tool", default="*")
    args = ap.parse_args(argv)
    try:
        payload = json.loads(sys.stdin.read() or "{}")
    except json.JSONDecodeError as exc:
        print(f"lhbench hook: stdin is not JSON: {exc}", file=sys.stderr)
        return 1
    tool = str(payload.get("tool_name", ""))
    event = str(payload.get("hook_event_name") or EVENTS[args.cli])
    if not fnmatch.fnmatch(tool, args.after_tool):
        return 0
    spec = HookSpec(after_tool="*", check=args.check.name)
    # the CLI (and so this program) already runs in the run's sandbox
    [result] = run_hooks([spec], tool, args.check.parent, args.root, sandbox=None)
    record = {
        "time": utcnow().isoformat(),
        "cli": args.cli,
        "event": event,
        "tool_name": tool,
        "tool_use_id": payload.get("tool_use_id"),
        "tool_input": payload.get("tool_input"),
        "ok": result.ok,
        "diagnosis": result.diagnosis,
        "next_action": result.next_action,
    }
    args.log.parent.mkdir(parents=True, exist_ok=True)
    with args.log.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    print(json.dumps(hook_output(args.cli, event, result.ok, result.feedback())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
