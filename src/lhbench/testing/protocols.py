"""The stub's wire protocols: each one object that reads its requests and renders replies.

Every protocol turns its request into the chat-completions shape the scripts see
(``parse``) and the script's reply, a chat completion, back into its own response
document and stream events (``render``), faults included. The stub dispatches by path
(``ModelStub`` routes each protocol's ``path``); a new protocol is one more object here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, ClassVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from lhbench.testing.anthropic_wire import (
    anthropic_error,
    anthropic_events,
    anthropic_message,
    from_anthropic,
)
from lhbench.testing.gemini_wire import from_gemini, gemini_events, gemini_response
from lhbench.testing.responses_wire import from_responses, responses_events, responses_object

__all__ = [
    "PROTOCOLS",
    "AnthropicMessages",
    "Gemini",
    "OpenAIChat",
    "OpenAIResponses",
    "WireProtocol",
]

_RETRY = {"retry-after-ms": "10"}


def _half(text: str) -> str:
    return text[: max(1, len(text) // 2)]


class WireProtocol:
    """One wire protocol of the stub (this base speaks OpenAI's error shape)."""

    name: ClassVar[str]
    path: ClassVar[str]

    def error(self, status: int, message: str) -> dict[str, Any]:
        """An error body in this protocol."""
        return {"error": {"message": message}}

    async def parse(self, request: Request) -> dict[str, Any] | Response:
        """The request as a chat-completions body, or the error response to send instead."""
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return JSONResponse(self.error(400, "body is not JSON"), status_code=400)
        return self.convert(request, body)

    def convert(self, request: Request, body: Any) -> dict[str, Any] | Response:
        """A parsed request body as a chat-completions body."""
        return body  # type: ignore[no-any-return]

    def fault(self, fault: str) -> Response:
        """A ``"429"`` or ``"500"`` fault in this protocol."""
        if fault == "429":
            return JSONResponse(
                {
                    "error": {
                        "message": "rate limited (stub)",
                        "type": "rate_limit_error",
                        "code": "rate_limit_exceeded",
                    }
                },
                status_code=429,
                headers=_RETRY,
            )
        return JSONResponse(
            {"error": {"message": "internal error (stub)", "type": "server_error"}},
            status_code=500,
        )

    def document(self, completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """The script's reply (a chat completion) as this protocol's response document."""
        raise NotImplementedError

    def events(self, doc: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
        """The response document as this protocol's server-sent events."""
        raise NotImplementedError

    def render(
        self, completion: dict[str, Any], body: dict[str, Any], *, truncated: bool
    ) -> Response:
        """The reply as JSON (cut off mid-way when ``truncated``), or as SSE events."""
        doc = self.document(completion, body)
        if body.get("stream"):
            return StreamingResponse(self.events(doc, body), media_type="text/event-stream")
        text = json.dumps(doc)
        return Response(_half(text) if truncated else text, media_type="application/json")


class OpenAIChat(WireProtocol):
    """OpenAI chat completions (plain, SSE chunks, or a body cut off mid-way)."""

    name = "openai"
    path = "/v1/chat/completions"

    def document(self, completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """The chat completion itself."""
        return completion

    def events(self, doc: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
        """OpenAI's SSE chunks (usage last when ``stream_options.include_usage``)."""
        return _chunks(doc, body)


class OpenAIResponses(WireProtocol):
    """OpenAI Responses (custom and namespaced tools kept apart, as that API does)."""

    name = "responses"
    path = "/v1/responses"

    def convert(self, request: Request, body: Any) -> dict[str, Any] | Response:
        """A Responses request as a chat-completions body."""
        return from_responses(body)

    def document(self, completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A Responses object (the request's tool kinds say how each call is sent)."""
        tools = body.get("tools", [])
        custom = {t["function"]["name"] for t in tools if t["function"].get("kind") == "custom"}
        namespaced = {t["function"]["name"] for t in tools if t["function"].get("kind") == "ns"}
        return responses_object(completion, custom, namespaced)

    def events(self, doc: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
        """Responses' SSE events."""
        return responses_events(doc)


class AnthropicMessages(WireProtocol):
    """Anthropic Messages (plain, SSE events, or a body cut off mid-way)."""

    name = "anthropic"
    path = "/v1/messages"

    def error(self, status: int, message: str) -> dict[str, Any]:
        """An Anthropic error body."""
        return anthropic_error(status, message)

    def convert(self, request: Request, body: Any) -> dict[str, Any] | Response:
        """A Messages request as a chat-completions body."""
        return from_anthropic(body)

    def fault(self, fault: str) -> Response:
        """Rate limits and server errors as Anthropic sends them (both with a retry hint)."""
        code = int(fault)
        return JSONResponse(
            self.error(code, f"stub fault {code}"), status_code=code, headers=_RETRY
        )

    def document(self, completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A Message."""
        return anthropic_message(completion)

    def events(self, doc: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
        """Messages' SSE events."""
        return anthropic_events(doc)


class Gemini(WireProtocol):
    """Gemini ``models/M:generateContent`` and ``:streamGenerateContent``."""

    name = "gemini"
    path = "/v1beta/models/{call:path}"

    def convert(self, request: Request, body: Any) -> dict[str, Any] | Response:
        """A generateContent request as a chat-completions body (the method says: stream?)."""
        model, _, method = str(request.path_params["call"]).partition(":")
        converted = from_gemini(model, body)
        converted["stream"] = method == "streamGenerateContent"
        return converted

    async def parse(self, request: Request) -> dict[str, Any] | Response:
        """An unknown method is refused before the body is read."""
        method = str(request.path_params["call"]).partition(":")[2]
        if method not in ("generateContent", "streamGenerateContent"):
            return JSONResponse(self.error(404, f"no method {method!r}"), status_code=404)
        return await super().parse(request)

    def document(self, completion: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        """A GenerateContentResponse."""
        return gemini_response(completion)

    def events(self, doc: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
        """Gemini's SSE events (``alt=sse``)."""
        return gemini_events(doc)


PROTOCOLS: tuple[WireProtocol, ...] = (
    OpenAIChat(),
    AnthropicMessages(),
    OpenAIResponses(),
    Gemini(),
)


def _chunks(completion: dict[str, Any], body: dict[str, Any]) -> Iterator[str]:
    """A chat completion as OpenAI's SSE chunks (text in pieces, each call in two)."""
    base = {k: completion[k] for k in ("id", "created", "model")}
    base["object"] = "chat.completion.chunk"
    msg = completion["choices"][0]["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        data = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(data)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    if msg.get("content"):
        text = msg["content"]
        for start in range(0, len(text), 16):
            yield chunk({"content": text[start : start + 16]})
    for k, call in enumerate(msg.get("tool_calls", [])):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": k,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": ""},
                    }
                ]
            }
        )
        yield chunk(
            {"tool_calls": [{"index": k, "function": {"arguments": call["function"]["arguments"]}}]}
        )
    yield chunk({}, completion["choices"][0]["finish_reason"])
    if (body.get("stream_options") or {}).get("include_usage"):
        yield f"data: {json.dumps({**base, 'choices': [], 'usage': completion['usage']})}\n\n"
    yield "data: [DONE]\n\n"
