"""The Anthropic Messages wire protocol for the model stub (Claude Code speaks it).

Requests are turned into the OpenAI-chat shape scripts already read (messages with
``tool_calls`` and ``tool`` results, ``tools`` with function names), so one script serves
every protocol; replies are rendered back as a Messages response or its SSE stream.
Facts from ``shared/reference/cli-offline-probe.md`` §2: ``POST /v1/messages?beta=true``,
``role: system`` entries inside ``messages``, and the event order ``message_start``,
``content_block_start``, ``content_block_delta``, ``content_block_stop``,
``message_delta``, ``message_stop``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lhbench.testing.wire import joined_text

__all__ = ["anthropic_error", "anthropic_events", "anthropic_message", "from_anthropic"]


def from_anthropic(body: dict[str, Any]) -> dict[str, Any]:
    """A Messages request as an OpenAI-chat-shaped body (what StubRequest reads)."""
    messages: list[dict[str, Any]] = []
    system = body.get("system")
    if system:
        messages.append({"role": "system", "content": joined_text(system)})
    for m in body.get("messages", []):
        role, content = m.get("role"), m.get("content")
        if role == "system":
            messages.append({"role": "system", "content": joined_text(content)})
            continue
        if isinstance(content, str):
            messages.append({"role": role, "content": content})
            continue
        texts, calls = [], []
        for b in content or []:
            kind = b.get("type")
            if kind == "text":
                texts.append(b.get("text", ""))
            elif kind == "tool_use":
                calls.append(
                    {
                        "id": b["id"],
                        "type": "function",
                        "function": {
                            "name": b["name"],
                            "arguments": json.dumps(b.get("input", {})),
                        },
                    }
                )
            elif kind == "tool_result":
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": b.get("tool_use_id"),
                        "content": joined_text(b.get("content")),
                    }
                )
        if role == "assistant":
            messages.append(
                {
                    "role": "assistant",
                    "content": "\n".join(texts) or None,
                    **({"tool_calls": calls} if calls else {}),
                }
            )
        elif texts:
            messages.append({"role": "user", "content": "\n".join(texts)})
    tools = [
        {"type": "function", "function": {"name": t.get("name", "")}}
        for t in body.get("tools", []) or []
    ]
    return {
        "model": body.get("model", ""),
        "messages": messages,
        "tools": tools,
        "stream": bool(body.get("stream")),
    }


def anthropic_message(completion: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-chat completion (as the stub builds it) as a Messages response."""
    msg = completion["choices"][0]["message"]
    content: list[dict[str, Any]] = []
    if msg.get("content"):
        content.append({"type": "text", "text": msg["content"]})
    for c in msg.get("tool_calls", []):
        try:
            args = json.loads(c["function"]["arguments"])
        except json.JSONDecodeError:
            args = {"_unparsed": c["function"]["arguments"]}
        content.append(
            {
                "type": "tool_use",
                "id": c["id"].replace("call_", "toolu_"),
                "name": c["function"]["name"],
                "input": args,
            }
        )
    usage = completion["usage"]
    return {
        "id": completion["id"].replace("chatcmpl", "msg"),
        "type": "message",
        "role": "assistant",
        "model": completion["model"],
        "content": content,
        "stop_reason": "tool_use" if msg.get("tool_calls") else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "output_tokens": usage["completion_tokens"],
        },
    }


def anthropic_events(message: dict[str, Any]) -> Iterator[str]:
    """The SSE stream of a Messages response."""

    def event(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": message["usage"]["input_tokens"], "output_tokens": 0},
    }
    yield event("message_start", {"message": start})
    for i, block in enumerate(message["content"]):
        if block["type"] == "text":
            yield event(
                "content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}
            )
            yield event(
                "content_block_delta",
                {"index": i, "delta": {"type": "text_delta", "text": block["text"]}},
            )
        else:
            yield event(
                "content_block_start", {"index": i, "content_block": {**block, "input": {}}}
            )
            yield event(
                "content_block_delta",
                {
                    "index": i,
                    "delta": {
                        "type": "input_json_delta",
                        "partial_json": json.dumps(block["input"]),
                    },
                },
            )
        yield event("content_block_stop", {"index": i})
    yield event(
        "message_delta",
        {
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield event("message_stop", {})


def anthropic_error(status: int, message: str) -> dict[str, Any]:
    """An error body in the Messages API's shape."""
    kind = {429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}
