"""MCPMark run logs: ``messages.json`` as trajectory steps, ``meta.json``'s recorded outcome.

``messages.json`` holds OpenAI chat messages (``role: tool`` results) or Responses items
(``function_call`` / ``function_call_output``), as MCPMark's agents write them. A tool
result is the MCP ``CallToolResult`` as JSON, sometimes wrapped once more in a text part;
MCPMark's own failures are ``"Error: …"``. ``meta.json``'s ``execution_result.success`` is
MCPMark's verify.py on the live final state.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from lhbench.errors import PackError, Problem
from lhbench.schema import REPLAY_REFUSED_KEY, RecordedOutcome

__all__ = ["messages_to_steps", "recorded_outcome", "tool_output"]


def _text(content: Any) -> str:
    """A message's content as text (a string, or OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else json.dumps(content)


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def tool_output(output: Any) -> tuple[str, bool]:
    """A tool result's text and whether the call failed, as MCPMark records it.

    MCPMark writes the MCP ``CallToolResult`` as JSON, sometimes wrapped once more in a
    ``{"type": "text", "text": …}`` part, and its own failures (a timeout, a refused
    argument) as ``"Error: …"``. A call failed when the result says ``isError`` or its text
    starts with ``Error`` (servers such as postgres-mcp report a failed statement that way
    with ``isError`` false).
    """
    text = _text(output)
    doc = _loads(text) if text.lstrip().startswith("{") else None
    if isinstance(doc, dict) and doc.get("type") == "text" and isinstance(doc.get("text"), str):
        text = doc["text"]
        doc = _loads(text) if text.lstrip().startswith("{") else None
    is_error = False
    if isinstance(doc, dict) and isinstance(doc.get("content"), list) and "isError" in doc:
        is_error = doc.get("isError") is True
        text = "\n".join(
            str(p.get("text", "")) for p in doc["content"] if isinstance(p, dict)
        ) or json.dumps(doc.get("structuredContent"))
    return text, is_error or text.lstrip().startswith("Error")


def messages_to_steps(messages: Any, where: Path) -> list[dict[str, Any]]:
    """MCPMark chat messages (OpenAI chat or Responses items) as generic-JSONL steps.

    Tool results say whether the call failed (``is_error``); a call id used twice is made
    unique (each result pairs with the latest call of its id), so one failure never hides
    another call; a call with no result is marked not replayable (whether it ran is unknown).
    """
    if not isinstance(messages, list):
        raise PackError([Problem(where, "expected a JSON list of messages")])
    steps: list[dict[str, Any]] = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise PackError([Problem(where, "a message is not an object", where=f"[{i}]")])
        role, kind = m.get("role"), m.get("type")
        if kind == "function_call":
            steps.append(_call(m.get("call_id") or m.get("id"), m.get("name"), m.get("arguments")))
        elif kind == "function_call_output":
            steps.append(_result(m.get("call_id"), m.get("output")))
        elif kind == "reasoning":
            continue  # a model's hidden reasoning item: nothing the tools saw
        elif role == "tool":
            steps.append(_result(m.get("tool_call_id"), m.get("content")))
        elif role in ("user", "assistant", "system"):
            text = _text(m.get("content"))
            if text.strip():
                steps.append({"role": role, "kind": "message", "content": text})
            for c in m.get("tool_calls") or []:
                fn = c.get("function", {}) if isinstance(c, dict) else {}
                cid = c.get("id") if isinstance(c, dict) else None
                steps.append(_call(cid, fn.get("name"), fn.get("arguments")))
        else:
            raise PackError(
                [Problem(where, f"unknown message (role {role!r}, type {kind!r})", where=f"[{i}]")]
            )
    _unique_call_ids(steps)
    answered = {s["tool_call_id"] for s in steps if s["kind"] == "tool_result"}
    for s in steps:
        if s["kind"] == "tool_call" and s["tool_call_id"] not in answered:
            s["metadata"] = {REPLAY_REFUSED_KEY: "the log has no result for this call"}
    return steps


def _unique_call_ids(steps: list[dict[str, Any]]) -> None:
    calls = Counter(s["tool_call_id"] for s in steps if s["kind"] == "tool_call")
    if all(n == 1 and cid for cid, n in calls.items()):
        return
    seen: Counter[str] = Counter()
    latest: dict[str, str] = {}
    for s in steps:
        cid = s.get("tool_call_id")
        if cid is None:
            continue
        if s["kind"] == "tool_call":
            seen[cid] += 1
            latest[cid] = s["tool_call_id"] = f"{cid or 'call'}#{seen[cid]}"
        elif cid in latest:
            s["tool_call_id"] = latest.pop(cid)


def _call(call_id: Any, name: Any, arguments: Any) -> dict[str, Any]:
    args = arguments
    if isinstance(arguments, str):
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            args = {"raw": arguments}
    return {
        "role": "assistant",
        "kind": "tool_call",
        "tool_name": str(name or "unknown"),
        "tool_call_id": str(call_id or ""),
        "tool_input": args if isinstance(args, dict) else {"value": args},
    }


def _result(call_id: Any, output: Any) -> dict[str, Any]:
    text, is_error = tool_output(output)
    return {
        "role": "tool",
        "kind": "tool_result",
        "tool_call_id": str(call_id or ""),
        "tool_output": text,
        "is_error": is_error,
    }


def recorded_outcome(meta: Any, log: str) -> RecordedOutcome | None:
    """MCPMark's recorded outcome of a run (``execution_result.success``), or None.

    ``success`` is MCPMark's verify.py on the live final state. When MCPMark never got to
    verify (its own setup failed: ``verification_output`` and ``verification_error`` null,
    an ``error_message`` such as ``State Duplication Error``) the false it records is no
    verdict on the agent: ``passed`` is then None and ``detail`` says why.
    """
    result = meta.get("execution_result") if isinstance(meta, dict) else None
    if not isinstance(result, dict) or not isinstance(result.get("success"), bool):
        return None
    source = f"mcpmark:{log}/meta.json#execution_result.success"
    error = str(result.get("error_message") or "")
    unverified = (
        result["success"] is False
        and "verification_output" in result
        and result.get("verification_output") is None
        and result.get("verification_error") is None
    )
    if unverified:
        return RecordedOutcome(
            passed=None,
            source=source,
            detail=f"MCPMark did not verify this run ({error or 'no verification output'})",
        )
    out = str(result.get("verification_output") or "").strip().splitlines()
    detail = " | ".join(x for x in [error, out[-1] if out else ""] if x)
    return RecordedOutcome(passed=result["success"], source=source, detail=detail[:500])
