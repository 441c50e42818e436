"""The OpenAI Responses API for the model stub (what Codex CLI speaks).

Facts from ``shared/reference/cli-offline-probe.md`` §1: ``POST {base}/responses`` with
``stream: true``; the system prompt arrives as ``input`` messages with role ``developer``;
tool results come back as ``function_call_output`` / ``custom_tool_call_output`` items;
``apply_patch`` is a freeform (``custom``) tool answered with a ``custom_tool_call``. The
SSE events sent: ``response.created``, ``response.output_item.added``,
``response.output_text.delta`` (text), ``response.output_item.done`` (the full item) and
``response.completed`` (with ``usage``); Codex takes items from ``output_item.done`` and
treats a stream without ``response.completed`` as an error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lhbench.testing.wire import joined_text

__all__ = ["from_responses", "responses_events", "responses_object"]


def from_responses(body: dict[str, Any]) -> dict[str, Any]:
    """A Responses request as an OpenAI-chat-shaped body (what StubRequest reads)."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": str(body["instructions"])})
    items = body.get("input", [])
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for it in items:
        kind = it.get("type", "message")
        if kind == "message":
            role = it.get("role", "user")
            messages.append(
                {
                    "role": "system" if role == "developer" else role,
                    "content": joined_text(it.get("content")),
                }
            )
        elif kind in ("function_call", "custom_tool_call"):
            args = it.get("arguments") if kind == "function_call" else it.get("input")
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": it.get("call_id"),
                            "type": "function",
                            "function": {
                                "name": "__".join(
                                    x for x in (it.get("namespace"), it.get("name", "")) if x
                                ),
                                "arguments": args or "",
                            },
                        }
                    ],
                }
            )
        elif kind in ("function_call_output", "custom_tool_call_output"):
            out = it.get("output")
            messages.append(
                {"role": "tool", "tool_call_id": it.get("call_id"), "content": joined_text(out)}
            )
    tools = []
    for t in body.get("tools", []) or []:
        if t.get("type") == "namespace":  # e.g. an MCP server's tools: NS__TOOL to a script
            for sub in t.get("tools", []) or []:
                name = f"{t.get('name')}__{sub.get('name')}"
                tools.append({"type": "function", "function": {"name": name, "kind": "ns"}})
        elif t.get("name"):
            tools.append(
                {"type": "function", "function": {"name": t["name"], "kind": t.get("type")}}
            )
    return {
        "model": body.get("model", ""),
        "messages": messages,
        "tools": tools,
        "stream": bool(body.get("stream")),
    }


def responses_object(
    completion: dict[str, Any], custom_tools: set[str], namespaced: set[str] | None = None
) -> dict[str, Any]:
    """An OpenAI-chat completion (as the stub builds it) as a Responses ``response``."""
    msg = completion["choices"][0]["message"]
    output: list[dict[str, Any]] = []
    for c in msg.get("tool_calls", []):
        name, args = c["function"]["name"], c["function"]["arguments"]
        if name in custom_tools:  # freeform: the script's string is the input
            item = {"type": "custom_tool_call", "name": name, "input": args}
        elif name in (namespaced or set()):
            ns, _, tool = name.rpartition("__")
            item = {"type": "function_call", "namespace": ns, "name": tool, "arguments": args}
        else:
            item = {"type": "function_call", "name": name, "arguments": args}
        output.append({"id": f"fc_{c['id']}", "call_id": c["id"], "status": "completed", **item})
    if msg.get("content"):
        output.append(
            {
                "id": f"msg_{completion['id']}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": msg["content"], "annotations": []}],
            }
        )
    usage = completion["usage"]
    return {
        "id": completion["id"].replace("chatcmpl", "resp"),
        "object": "response",
        "created_at": completion["created"],
        "status": "completed",
        "model": completion["model"],
        "output": output,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        },
    }


def responses_events(response: dict[str, Any]) -> Iterator[str]:
    """The SSE stream of a Responses response."""
    seq = 0

    def event(name: str, data: dict[str, Any]) -> str:
        nonlocal seq
        seq += 1
        return (
            f"event: {name}\ndata: {json.dumps({'type': name, 'sequence_number': seq, **data})}\n\n"
        )

    yield event(
        "response.created",
        {"response": {**response, "status": "in_progress", "output": [], "usage": None}},
    )
    for i, item in enumerate(response["output"]):
        if item["type"] == "message":
            yield event(
                "response.output_item.added",
                {"output_index": i, "item": {**item, "status": "in_progress", "content": []}},
            )
            yield event(
                "response.output_text.delta",
                {
                    "item_id": item["id"],
                    "output_index": i,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                },
            )
        else:
            yield event("response.output_item.added", {"output_index": i, "item": item})
        yield event("response.output_item.done", {"output_index": i, "item": item})
    yield event("response.completed", {"response": response})
