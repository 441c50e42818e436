"""Transcript values into stored ones. Each check reports what was wrong and never raises.

A transcript is untrusted input: a token count can be a string, a timestamp the year
30000, an exit code 2**70, a tool input nested a thousand levels deep. Each helper here
takes the raw JSON value and returns one the store can keep (or a neutral one), and a
value it cannot keep is reported as a problem at the current line (``ImportContext.bad``).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from lhbench.ingest.base import ImportContext

__all__ = [
    "MAX_COUNT",
    "MAX_ID",
    "Clock",
    "as_cost",
    "as_count",
    "as_exit_code",
    "as_id",
    "as_text",
    "json_text",
    "short",
    "text_of",
]

MAX_COUNT = 2**53  # a token count beyond this is a corrupt number, not a long run
MAX_ID = 200  # the store's width for tool names, call ids and agent ids
_INT32 = 2**31
_EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
_LATEST = datetime(2200, 1, 1, tzinfo=UTC)
_TEXT_DEPTH = 8


def short(value: Any, limit: int = 60) -> str:
    """A value as a short quote for a problem message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_count(ctx: ImportContext, value: Any, what: str) -> int:
    """A token or request count: a non-negative integer (an integral float is accepted)."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value
    if value is None:
        return 0
    if type(value) is float and value.is_integer() and 0 <= value <= MAX_COUNT:
        return int(value)
    ctx.bad(f"{what}: {short(value)} is not a token count (a whole number from 0 to 2**53)")
    return 0


def as_cost(ctx: ImportContext, value: Any, what: str) -> float | None:
    """A cost in USD: a finite non-negative number, or None."""
    if value is None:
        return None
    if type(value) in (int, float) and math.isfinite(value) and 0 <= value < 1e12:
        return float(value)
    ctx.bad(f"{what}: {short(value)} is not a cost in USD")
    return None


def as_exit_code(ctx: ImportContext, value: Any, what: str = "exit code") -> int | None:
    """A process exit code (a 32-bit integer), or None."""
    if value is None:
        return None
    if type(value) is int and -_INT32 <= value < _INT32:
        return value
    if type(value) is float and value.is_integer() and -_INT32 <= value < _INT32:
        return int(value)
    ctx.bad(f"{what}: {short(value)} is not an exit code")
    return None


def as_id(ctx: ImportContext, value: Any, what: str) -> str | None:
    """A tool name, call id or agent id: text of at most 200 characters, or None."""
    if value is None or value == "":
        return None
    if type(value) is str:
        if len(value) <= MAX_ID:
            return value
        ctx.bad(f"{what}: longer than {MAX_ID} characters; cut")
        return value[:MAX_ID]
    if type(value) is int and not isinstance(value, bool):
        return str(value)[:MAX_ID]
    ctx.bad(f"{what}: {short(value)} is not text")
    return None


def as_text(value: Any) -> str:
    """Text of a value that should be text: strings as they are, parts joined, else JSON."""
    if type(value) is str:
        return value
    if value is None:
        return ""
    if isinstance(value, list | dict):
        return text_of(value)
    return str(value)


def text_of(content: Any, depth: int = 0) -> str:
    """The text of a content value: a string, or content parts joined by newlines.

    Parts are the shapes the CLIs and APIs use: ``{"type": "text" | "input_text" |
    "output_text", "text"}``, a nested ``content`` (tool results), images as
    ``[image]``. Anything else is kept as its JSON.
    """
    if type(content) is str:
        return content
    if content is None:
        return ""
    if depth > _TEXT_DEPTH:
        return "[nested too deep]"
    if isinstance(content, list):
        parts = [text_of(p, depth + 1) for p in content]
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        kind = content.get("type")
        if isinstance(content.get("text"), str):
            return str(content["text"])
        if kind in ("image", "input_image", "image_url"):
            return "[image]"
        if "content" in content:
            return text_of(content["content"], depth + 1)
        if kind in ("thinking", "reasoning"):
            return as_text(content.get("thinking") or content.get("reasoning"))
        try:
            return orjson.dumps(content).decode()
        except orjson.JSONEncodeError:
            return "[unreadable value]"
    if isinstance(content, bool | int | float):
        return str(content)
    return ""


def json_text(ctx: ImportContext, value: Any, what: str) -> str:
    """JSON text of a value parsed from JSON (huge integers and deep nesting reported)."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError as exc:
        ctx.bad(f"{what}: cannot be stored ({exc}); replaced by a note")
        return orjson.dumps({"unreadable": str(exc)}).decode()


class Clock:
    """Timestamps to aware UTC datetimes, each distinct raw value converted once.

    Transcripts repeat a timestamp on every line of a message (and importers hand the
    same datetime object to every step it stamps, so the store converts it once too).
    Accepted: ISO-8601 text (``Z`` or an offset; naive is taken as UTC), epoch seconds or
    milliseconds, or text in ``fmt`` when one is given. Outside 1970–2200 is reported.
    """

    def __init__(self, fmt: str | None = None) -> None:
        self._fmt = fmt
        self._cache: dict[Any, datetime | None] = {}

    def __call__(self, ctx: ImportContext, raw: Any, what: str = "timestamp") -> datetime | None:
        """The UTC datetime of ``raw`` (None when absent or unreadable)."""
        if raw is None or raw == "":
            return None
        key = raw if type(raw) in (str, int, float) else None
        if key is not None:
            try:
                return self._cache[key]
            except KeyError:
                pass
        value, problem = self._convert(raw)
        if problem:
            ctx.bad(f"{what}: {short(raw)} {problem}")
        if key is not None:
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = value
        return value

    def _convert(self, raw: Any) -> tuple[datetime | None, str | None]:
        try:
            if type(raw) is str:
                if self._fmt is not None:
                    dt = datetime.strptime(raw, self._fmt)  # noqa: DTZ007 - naive is UTC here
                else:
                    dt = datetime.fromisoformat(raw)
            elif type(raw) in (int, float) and math.isfinite(raw):
                seconds = raw / 1000 if abs(raw) > 1e11 else raw
                dt = datetime.fromtimestamp(seconds, UTC)
            else:
                return None, "is not a timestamp (ISO-8601 text or epoch seconds)"
            dt = dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)
        except (ValueError, OverflowError, OSError):
            return None, "is not a readable timestamp"
        if not _EARLIEST <= dt < _LATEST:
            return None, "is out of range (1970–2200)"
        return dt, None
