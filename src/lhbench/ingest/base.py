"""What every importer shares: line reading with line numbers, a step builder, the result.

Importers are streaming: they read a file line by line and yield Steps as they go, so a
transcript of any size is imported in constant memory. A line that cannot be read
becomes a TranscriptError naming the file and line; by default it is skipped and counted,
with ``strict`` it stops the import. A last line cut off mid-write (a run killed while
writing) is not an error: the transcript is marked incomplete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from lhbench.errors import TranscriptError
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

__all__ = [
    "ImportContext",
    "StepBuilder",
    "TranscriptInfo",
    "guarded",
    "iter_json_lines",
    "parse_time",
    "text_of",
]


@dataclass
class TranscriptInfo:
    """What a transcript says about its run, filled in while it is read."""

    source: str
    key: str = ""
    session_id: str | None = None
    model: str | None = None
    harness_version: str | None = None
    task_text: str | None = None
    status: RunStatus = RunStatus.INCOMPLETE
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    error: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportContext:
    """Per-file state: where errors go and whether they stop the import."""

    path: Path
    strict: bool = False
    skipped: list[TranscriptError] = field(default_factory=list)
    truncated: bool = False

    def problem(self, line: int, message: str) -> None:
        """Record (or, with strict, raise) a problem at a line."""
        err = TranscriptError(self.path, line, message)
        if self.strict:
            raise err
        self.skipped.append(err)


def iter_json_lines(ctx: ImportContext) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every JSON-object line; blank lines are skipped."""
    with ctx.path.open("rb") as f:
        pending: tuple[int, bytes] | None = None
        for lineno, raw in enumerate(f, 1):
            if pending is not None:
                yield from _decode(ctx, *pending, last=False)
            pending = (lineno, raw)
        if pending is not None:
            yield from _decode(ctx, *pending, last=True)


def _decode(
    ctx: ImportContext, lineno: int, raw: bytes, *, last: bool
) -> Iterator[tuple[int, dict[str, Any]]]:
    if not raw.strip():
        return
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if last and not raw.endswith(b"\n"):
            # killed mid-write: keep what came before, mark the transcript incomplete
            ctx.truncated = True
            ctx.skipped.append(
                TranscriptError(ctx.path, lineno, "truncated last line (run killed mid-write?)")
            )
            return
        ctx.problem(lineno, f"not valid JSON: {exc}")
        return
    if not isinstance(obj, dict):
        ctx.problem(lineno, f"expected a JSON object, found {type(obj).__name__}")
        return
    yield lineno, obj


def guarded(
    ctx: ImportContext, lineno: int, fmt: str, handler: Callable[[], Iterator[Step]]
) -> Iterator[Step]:
    """Run one line's handler; a shape it cannot read becomes a TranscriptError at that line."""
    try:
        yield from handler()
    except TranscriptError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ValidationError) as exc:
        what = f"missing field {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        ctx.problem(lineno, f"{fmt}: unexpected event shape: {what}")


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 or epoch timestamp as aware UTC (naive input is taken as UTC)."""
    if value is None or value == "":
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, UTC)
    if not isinstance(value, str):
        raise ValueError(f"timestamp {value!r} is not text or a number")
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def text_of(content: Any) -> str:
    """Text of a string, or of a list of content blocks (``{"type": "text", "text": …}``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        return str(content.get("text") or content.get("content") or "")
    return str(content)


class StepBuilder:
    """Gives steps contiguous indices and remembers tool-call ids, so results get their tool."""

    def __init__(self) -> None:
        self.count = 0
        self.tool_names: dict[str, str] = {}
        self.open_calls: set[str] = set()

    def make(self, role: Role, kind: StepKind, **fields: Any) -> Step:
        """A Step with the next index."""
        if kind == StepKind.TOOL_CALL and fields.get("tool_call_id"):
            self.tool_names[fields["tool_call_id"]] = fields.get("tool_name") or ""
            self.open_calls.add(fields["tool_call_id"])
        if kind == StepKind.TOOL_RESULT and fields.get("tool_call_id"):
            # forget answered calls: memory stays bounded by the calls still open
            fields.setdefault(
                "tool_name", self.tool_names.pop(fields["tool_call_id"], None) or None
            )
            self.open_calls.discard(fields["tool_call_id"])
        step = Step(index=self.count, role=role, kind=kind, **fields)
        self.count += 1
        return step
