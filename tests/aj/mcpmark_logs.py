"""Synthetic MCPMark run logs of the published shapes, written here for the tests.

Shapes as MCPMark writes them (``src/evaluator.py``, ``src/agents/mcpmark_agent.py``):
``messages.json`` holds Responses items (``function_call`` with ``call_id``/``arguments``,
``function_call_output`` whose ``output`` is ``{"type": "text", "text": <CallToolResult as
JSON>}``) or OpenAI chat messages; ``meta.json`` holds ``task_name`` (``<category>__<task>``),
``mcp``, ``model_name`` and ``execution_result``. The filesystem server is started on the
task's copy ``/home/<user>/.mcpmark_backups/backup_filesystem_<category>_<task>_<pid>``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).parent / "fixtures" / "mcpmark"
ROOT = "/home/alice/.mcpmark_backups/backup_filesystem_notes_make_summary_4242"


def call_result(text: str, *, is_error: bool = False, wrapped: bool = True) -> str:
    """A tool result as MCPMark logs it: the MCP CallToolResult as JSON, wrapped once more."""
    result = json.dumps(
        {
            "meta": None,
            "content": [{"type": "text", "text": text, "annotations": None, "meta": None}],
            "structuredContent": None,
            "isError": is_error,
        }
    )
    return json.dumps({"type": "text", "text": result}) if wrapped else result


def items(*calls: tuple[str, dict[str, Any], str, bool]) -> list[dict[str, Any]]:
    """A Responses-items log: the user's task, then (tool, args, result text, failed) calls."""
    out: list[dict[str, Any]] = [
        {"content": "Create summary.txt listing the notes.", "role": "user"},
        {
            "id": "__fake_id__",
            "content": [{"annotations": [], "text": "Let me look.", "type": "output_text"}],
            "role": "assistant",
            "status": "completed",
            "type": "message",
        },
    ]
    for n, (name, args, text, failed) in enumerate(calls):
        cid = f"toolu_{n:02d}"
        out.append(
            {
                "arguments": json.dumps(args),
                "call_id": cid,
                "name": name,
                "type": "function_call",
                "id": "__fake_id__",
            }
        )
        out.append(
            {
                "call_id": cid,
                "output": call_result(text, is_error=failed),
                "type": "function_call_output",
            }
        )
    return out


def meta(task_name: str, mcp: str, success: bool, **result: Any) -> dict[str, Any]:
    """A run's meta.json."""
    return {
        "task_name": task_name,
        "model_name": "synthetic-model",
        "mcp": mcp,
        "execution_result": {
            "success": success,
            "error_message": None,
            "verification_error": None if success else "Verification failed",
            "verification_output": "Task verification: PASS" if success else "FAIL",
            **result,
        },
        "token_usage": {},
        "turn_count": 3,
    }


def layout(
    tmp: Path, logs: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]], *, postgres: bool
) -> Path:
    """An MCPMark folder: the fixture's tasks and states, and these logs under results/."""
    src = tmp / "src"
    shutil.copytree(FIXTURE, src)
    shutil.rmtree(src / "results")
    if not postgres:
        shutil.rmtree(src / "tasks" / "postgres")
    for rel, (messages, doc) in logs.items():
        d = src / "results" / rel
        d.mkdir(parents=True)
        (d / "messages.json").write_text(json.dumps(messages))
        (d / "meta.json").write_text(json.dumps(doc))
    return src
