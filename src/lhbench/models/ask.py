"""What a single-shot judge asks a model, and what the model answered, in no one's wire format.

An :class:`Ask` is one structured question: system instructions, the user's content (text
and images), the one output tool the answer must come through, and the earlier attempts
with the feedback each got (a re-ask continues the conversation). A :class:`Reply` is what
came back: the output tool's arguments as the model wrote them (possibly not JSON), any
text, and the tokens. Replies are what the response cache keeps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import BaseModel

__all__ = ["Ask", "Exchange", "ImagePart", "OutputSchema", "PreparedRequest", "Reply", "UserPart"]


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image in the user's content."""

    data: bytes
    media_type: str


UserPart = str | ImagePart


def _strip_titles(schema: Any) -> Any:
    """The JSON schema without ``title`` keys (noise to a model, bytes on every request)."""
    if isinstance(schema, dict):
        return {
            k: _strip_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


@dataclass(frozen=True, slots=True)
class OutputSchema:
    """The one tool the answer must be given through, with the answer's JSON schema."""

    name: str
    description: str
    json_schema: Mapping[str, Any]

    @classmethod
    def of(cls, answer: type[BaseModel], name: str = "final_result") -> OutputSchema:
        """The output tool for a pydantic answer model (its docstring is the description)."""
        schema = _strip_titles(answer.model_json_schema())
        description = str(schema.pop("description", "") or answer.__doc__ or "").strip()
        _close_objects(schema)
        return cls(name=name, description=description, json_schema=schema)


def _close_objects(schema: Any) -> None:
    """Forbid properties the answer does not have (``additionalProperties: false``), in place."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" and "properties" in schema:
            schema.setdefault("additionalProperties", False)
        for v in schema.values():
            _close_objects(v)
    elif isinstance(schema, list):
        for v in schema:
            _close_objects(v)


@dataclass(frozen=True, slots=True)
class Reply:
    """A model's answer to one request: the output tool's arguments and/or text, and tokens.

    ``tool_args`` is the argument text exactly as the model wrote it (it may not be JSON);
    None when the model did not call the output tool.
    """

    tool_args: str | None
    text: str = ""
    call_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0

    def raw(self, tool_name: str) -> str:
        """What the model said, for failure records: its text and its tool call."""
        parts = [self.text] if self.text else []
        if self.tool_args is not None:
            parts.append(f"{tool_name}({self.tool_args})")
        return "\n".join(parts)

    def to_doc(self) -> dict[str, Any]:
        """The cached form."""
        return {
            "v": 1,
            "tool_args": self.tool_args,
            "text": self.text,
            "call_id": self.call_id,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
        }

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> Reply | None:
        """A cached reply, or None when the document is not one (another kind of cache row)."""
        if doc.get("v") != 1:
            return None
        return cls(
            tool_args=doc.get("tool_args"),
            text=str(doc.get("text") or ""),
            call_id=doc.get("call_id"),
            input_tokens=int(doc.get("input_tokens") or 0),
            output_tokens=int(doc.get("output_tokens") or 0),
        )


@dataclass(frozen=True, slots=True)
class Exchange:
    """An earlier attempt: the model's reply and the feedback it was given (a re-ask)."""

    reply: Reply
    feedback: str


@dataclass(frozen=True, slots=True)
class Ask:
    """One structured question: instructions, user content, the output tool, earlier attempts."""

    instructions: str
    user: tuple[UserPart, ...]
    output: OutputSchema
    history: tuple[Exchange, ...] = field(default=())

    def then(self, reply: Reply, feedback: str) -> Ask:
        """The same question continued: the model's reply and what was wrong with it."""
        return Ask(
            self.instructions, self.user, self.output, (*self.history, Exchange(reply, feedback))
        )


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """An ask encoded once for one endpoint: the request bytes and the cache key from them."""

    ask: Ask
    body: bytes
    key: str


def request_digest(salt: str, endpoint: str | None, body: bytes) -> str:
    """The response-cache key of a request: its bytes, the endpoint, and the salt.

    The body already holds the model, its settings, the messages and the output tool; the
    endpoint makes two servers behind one model name two judges; the salt keeps a judge's
    repeats apart.
    """
    h = hashlib.sha256(orjson.dumps([salt, endpoint]))
    h.update(body)
    return h.hexdigest()
