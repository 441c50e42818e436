"""The Gemini API (``generateContent`` / ``streamGenerateContent``) for the model stub.

Facts from ``shared/reference/cli-offline-probe.md`` §3: Gemini CLI posts to
``/v1beta/models/{model}:streamGenerateContent?alt=sse`` (one request per turn) and, when
the model is not pinned, ``:generateContent`` for its router. Requests carry ``contents``
(``role`` user/model; parts ``text``, ``functionCall{id,name,args}``,
``functionResponse{id,name,response}``), ``systemInstruction`` and ``tools`` with
``functionDeclarations``. The stream is unnamed ``data:`` chunks of
GenerateContentResponse; one chunk with the candidate, ``finishReason``,
``usageMetadata`` and ``modelVersion`` is enough.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lhbench.testing.wire import joined_text

__all__ = ["from_gemini", "gemini_events", "gemini_response"]


def from_gemini(model: str, body: dict[str, Any]) -> dict[str, Any]:
    """A Gemini request as an OpenAI-chat-shaped body (what StubRequest reads)."""
    messages: list[dict[str, Any]] = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if isinstance(system, dict):
        messages.append({"role": "system", "content": joined_text(system.get("parts"))})
    for turn in body.get("contents", []):
        parts = turn.get("parts", []) or []
        calls = [p["functionCall"] for p in parts if "functionCall" in p]
        results = [p["functionResponse"] for p in parts if "functionResponse" in p]
        text = joined_text(parts)
        if turn.get("role") == "model":
            messages.append(
                {
                    "role": "assistant",
                    "content": text or None,
                    **(
                        {
                            "tool_calls": [
                                {
                                    "id": c.get("id", ""),
                                    "type": "function",
                                    "function": {
                                        "name": c.get("name", ""),
                                        "arguments": json.dumps(c.get("args", {})),
                                    },
                                }
                                for c in calls
                            ]
                        }
                        if calls
                        else {}
                    ),
                }
            )
            continue
        for r in results:
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": r.get("id", ""),
                    "content": json.dumps(r.get("response", {})),
                }
            )
        if text:
            messages.append({"role": "user", "content": text})
    tools = [
        {"type": "function", "function": {"name": d.get("name", "")}}
        for t in body.get("tools", []) or []
        for d in t.get("functionDeclarations", []) or []
    ]
    return {"model": model, "messages": messages, "tools": tools, "stream": False}


def gemini_response(completion: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-chat completion (as the stub builds it) as a GenerateContentResponse."""
    msg = completion["choices"][0]["message"]
    parts: list[dict[str, Any]] = []
    if msg.get("content"):
        parts.append({"text": msg["content"]})
    for c in msg.get("tool_calls", []):
        try:
            args = json.loads(c["function"]["arguments"])
        except json.JSONDecodeError:
            args = {"_unparsed": c["function"]["arguments"]}
        parts.append({"functionCall": {"id": c["id"], "name": c["function"]["name"], "args": args}})
    usage = completion["usage"]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": usage["prompt_tokens"],
            "candidatesTokenCount": usage["completion_tokens"],
            "totalTokenCount": usage["total_tokens"],
        },
        "modelVersion": completion["model"],
        "responseId": completion["id"],
    }


def gemini_events(response: dict[str, Any]) -> Iterator[str]:
    """The SSE stream: one ``data:`` chunk with the whole response."""
    yield f"data: {json.dumps(response)}\n\n"
