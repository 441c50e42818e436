"""The three wire protocols a single-shot judge speaks: OpenAI chat, Anthropic Messages, Gemini.

Each protocol turns an :class:`~lhbench.models.ask.Ask` into request bytes (built once per
request; the response-cache key is their hash) and a response body into a
:class:`~lhbench.models.ask.Reply`. URLs and headers follow the providers' SDKs, so a model
string reaches the same server on this path as through pydantic-ai: an OpenAI base URL ends
in ``/v1``; Anthropic's and Gemini's are the host, the path is added.

A body that is not JSON (a cut-off response) raises ``ModelAPIError`` (retried, and a
retryable failure if it persists); an answer without the output tool's call is a Reply
without ``tool_args`` (the judge re-asks).
"""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar, Protocol

import orjson
from pydantic_ai.exceptions import ModelAPIError

from lhbench.models.ask import Ask, Reply
from lhbench.models.spec import ModelSpec

__all__ = ["WIRES", "AnthropicMessages", "GeminiGenerate", "OpenAIChat", "WireProtocol", "wire_for"]

_ANTHROPIC_MAX_TOKENS = 4096


def _json(body: bytes, model: str) -> dict[str, Any]:
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise ModelAPIError(
            model, f"response body is not JSON (cut off after {len(body)} bytes?)"
        ) from None
    if not isinstance(doc, dict):
        raise ModelAPIError(model, "response body is not a JSON object")
    if doc.get("error") and not doc.get("choices") and not doc.get("candidates"):
        raise ModelAPIError(model, f"error in a 200 response: {str(doc['error'])[:500]}")
    return doc


def _args_text(args: Any) -> str:
    """Arguments as text: a string as the model wrote it, an object as ``json.dumps`` writes it."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def _args_object(args: str | None) -> dict[str, Any]:
    """Arguments as an object, for protocols that send them back parsed."""
    if args is None:
        return {}
    try:
        value = orjson.loads(args)
    except orjson.JSONDecodeError:
        return {"_unparsed": args}
    return value if isinstance(value, dict) else {"_value": value}


class WireProtocol(Protocol):
    """How one provider's API is spoken."""

    name: ClassVar[str]

    def url(self, spec: ModelSpec) -> str:
        """Where requests go."""
        ...

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Headers of every request."""
        ...

    def encode(self, spec: ModelSpec, ask: Ask) -> bytes:
        """The request body."""
        ...

    def decode(self, body: bytes, model: str) -> Reply:
        """The reply in a 200 response body."""
        ...


class OpenAIChat:
    """OpenAI chat completions (and every OpenAI-compatible server: vLLM, Ollama, the stub)."""

    name: ClassVar[str] = "openai-chat"

    def url(self, spec: ModelSpec) -> str:
        """``{base}/chat/completions``; the base defaults as the OpenAI SDK's does."""
        base = spec.endpoint or "https://api.openai.com/v1"
        return base.rstrip("/") + "/chat/completions"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Bearer authorization."""
        h = {"content-type": "application/json"}
        if api_key:
            h["authorization"] = f"Bearer {api_key}"
        return h

    def encode(self, spec: ModelSpec, ask: Ask) -> bytes:
        """System and user messages, the earlier attempts, the output tool as required."""
        texts = [p for p in ask.user if isinstance(p, str)]
        if len(texts) == len(ask.user) == 1:
            user: Any = texts[0]
        else:
            user = [
                {"type": "text", "text": p}
                if isinstance(p, str)
                else {
                    "type": "image_url",
                    "image_url": {
                        "url": f"data:{p.media_type};base64,{base64.b64encode(p.data).decode()}"
                    },
                }
                for p in ask.user
            ]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": ask.instructions},
            {"role": "user", "content": user},
        ]
        tool = ask.output.name
        for k, ex in enumerate(ask.history):
            r = ex.reply
            if r.tool_args is not None:
                call_id = r.call_id or f"call_{k}"
                messages.append(
                    {
                        "role": "assistant",
                        "content": r.text or None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": tool, "arguments": r.tool_args},
                            }
                        ],
                    }
                )
                messages.append({"role": "tool", "tool_call_id": call_id, "content": ex.feedback})
            else:
                messages.append({"role": "assistant", "content": r.text})
                messages.append({"role": "user", "content": ex.feedback})
        body: dict[str, Any] = {
            "model": spec.name,
            "messages": messages,
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": tool,
                        "description": ask.output.description,
                        "parameters": ask.output.json_schema,
                    },
                }
            ],
            "tool_choice": "required",
        }
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        if spec.seed is not None:
            body["seed"] = spec.seed
        return orjson.dumps(body)

    def decode(self, body: bytes, model: str) -> Reply:
        """The first call of the output tool (or any tool) and the message text."""
        doc = _json(body, model)
        try:
            message = doc["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            raise ModelAPIError(model, "response has no choices[0].message") from None
        usage = doc.get("usage") or {}
        content = message.get("content")
        text = content if isinstance(content, str) else ""
        calls = message.get("tool_calls") or []
        call = calls[0] if calls else None
        return Reply(
            tool_args=_args_text(call["function"].get("arguments") or "") if call else None,
            text=text,
            call_id=call.get("id") if call else None,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
        )


class AnthropicMessages:
    """Anthropic Messages."""

    name: ClassVar[str] = "anthropic-messages"

    def url(self, spec: ModelSpec) -> str:
        """``{host}/v1/messages``, as the Anthropic SDK builds it."""
        base = spec.endpoint or "https://api.anthropic.com"
        return base.rstrip("/") + "/v1/messages"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """Key and API version."""
        h = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
        if api_key:
            h["x-api-key"] = api_key
        return h

    def encode(self, spec: ModelSpec, ask: Ask) -> bytes:
        """System prompt, user blocks, earlier attempts as tool_use/tool_result, one tool."""
        user: list[dict[str, Any]] = [
            {"type": "text", "text": p}
            if isinstance(p, str)
            else {
                "type": "image",
                "source": {
                    "type": "base64",
                    "media_type": p.media_type,
                    "data": base64.b64encode(p.data).decode(),
                },
            }
            for p in ask.user
        ]
        messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
        tool = ask.output.name
        for k, ex in enumerate(ask.history):
            r = ex.reply
            blocks: list[dict[str, Any]] = [{"type": "text", "text": r.text}] if r.text else []
            if r.tool_args is not None:
                call_id = r.call_id or f"toolu_{k}"
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call_id,
                        "name": tool,
                        "input": _args_object(r.tool_args),
                    }
                )
                feedback: list[dict[str, Any]] = [
                    {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": ex.feedback,
                        "is_error": True,
                    }
                ]
            else:
                feedback = [{"type": "text", "text": ex.feedback}]
            messages.append(
                {"role": "assistant", "content": blocks or [{"type": "text", "text": "-"}]}
            )
            messages.append({"role": "user", "content": feedback})
        body: dict[str, Any] = {
            "model": spec.name,
            "max_tokens": _ANTHROPIC_MAX_TOKENS,
            "system": ask.instructions,
            "messages": messages,
            "tools": [
                {
                    "name": tool,
                    "description": ask.output.description,
                    "input_schema": ask.output.json_schema,
                }
            ],
            "tool_choice": {"type": "any"},
        }
        if spec.temperature is not None:
            body["temperature"] = spec.temperature
        return orjson.dumps(body)

    def decode(self, body: bytes, model: str) -> Reply:
        """The first tool_use block and the text blocks."""
        doc = _json(body, model)
        blocks = doc.get("content")
        if not isinstance(blocks, list):
            raise ModelAPIError(model, "response has no content blocks")
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        call = next((b for b in blocks if b.get("type") == "tool_use"), None)
        usage = doc.get("usage") or {}
        return Reply(
            tool_args=_args_text(call.get("input", {})) if call else None,
            text=text,
            call_id=call.get("id") if call else None,
            input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
        )


class GeminiGenerate:
    """Gemini ``models/{model}:generateContent``."""

    name: ClassVar[str] = "gemini-generate"

    def url(self, spec: ModelSpec) -> str:
        """``{host}/v1beta/models/{model}:generateContent``, as the google-genai SDK builds it."""
        base = spec.base_url or "https://generativelanguage.googleapis.com"
        return f"{base.rstrip('/')}/v1beta/models/{spec.name}:generateContent"

    def headers(self, api_key: str | None) -> dict[str, str]:
        """The API key header."""
        h = {"content-type": "application/json"}
        if api_key:
            h["x-goog-api-key"] = api_key
        return h

    def encode(self, spec: ModelSpec, ask: Ask) -> bytes:
        """System instruction, contents, earlier attempts as functionCall/functionResponse."""
        user: list[dict[str, Any]] = [
            {"text": p}
            if isinstance(p, str)
            else {
                "inlineData": {
                    "mimeType": p.media_type,
                    "data": base64.b64encode(p.data).decode(),
                }
            }
            for p in ask.user
        ]
        contents: list[dict[str, Any]] = [{"role": "user", "parts": user}]
        tool = ask.output.name
        for ex in ask.history:
            r = ex.reply
            parts: list[dict[str, Any]] = [{"text": r.text}] if r.text else []
            if r.tool_args is not None:
                call: dict[str, Any] = {"name": tool, "args": _args_object(r.tool_args)}
                if r.call_id:
                    call["id"] = r.call_id
                parts.append({"functionCall": call})
                response: dict[str, Any] = {"name": tool, "response": {"error": ex.feedback}}
                if r.call_id:
                    response["id"] = r.call_id
                feedback: list[dict[str, Any]] = [{"functionResponse": response}]
            else:
                feedback = [{"text": ex.feedback}]
            contents.append({"role": "model", "parts": parts or [{"text": "-"}]})
            contents.append({"role": "user", "parts": feedback})
        generation: dict[str, Any] = {}
        if spec.temperature is not None:
            generation["temperature"] = spec.temperature
        body: dict[str, Any] = {
            "systemInstruction": {"parts": [{"text": ask.instructions}]},
            "contents": contents,
            "tools": [
                {
                    "functionDeclarations": [
                        {
                            "name": tool,
                            "description": ask.output.description,
                            "parametersJsonSchema": ask.output.json_schema,
                        }
                    ]
                }
            ],
            "toolConfig": {
                "functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": [tool]}
            },
            "generationConfig": generation,
        }
        return orjson.dumps(body)

    def decode(self, body: bytes, model: str) -> Reply:
        """The first functionCall part and the text parts of the first candidate."""
        doc = _json(body, model)
        candidates = doc.get("candidates") or []
        parts = ((candidates[0].get("content") or {}).get("parts") or []) if candidates else []
        text = "\n".join(str(p["text"]) for p in parts if "text" in p)
        call = next((p["functionCall"] for p in parts if "functionCall" in p), None)
        usage = doc.get("usageMetadata") or {}
        return Reply(
            tool_args=_args_text(call.get("args", {})) if call else None,
            text=text,
            call_id=call.get("id") if call else None,
            input_tokens=int(usage.get("promptTokenCount") or 0),
            output_tokens=int(usage.get("candidatesTokenCount") or 0),
        )


WIRES: dict[str, WireProtocol] = {
    "openai": OpenAIChat(),
    "anthropic": AnthropicMessages(),
    "google-gla": GeminiGenerate(),
}


def wire_for(spec: ModelSpec) -> WireProtocol | None:
    """The wire protocol of a spec's provider (None for providers without one: ``test``)."""
    return WIRES.get(spec.provider)
