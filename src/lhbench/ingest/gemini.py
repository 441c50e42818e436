"""Gemini CLI: ``--output-format stream-json`` events and ``--output-format json`` documents.

stream-json: every event has ``type`` and ``timestamp``: ``init`` (session, model),
``message`` (assistant text arrives as ``delta`` chunks to join), ``tool_use`` (tool name,
id, parameters), ``tool_result`` (joined on tool id, status, output or error), ``error``
(severity), ``result`` (status, stats with token counts). json: one object
``{session_id, response, stats, error}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lhbench.ingest.base import (
    ImportContext,
    StepBuilder,
    TranscriptInfo,
    guarded,
    iter_json_lines,
    parse_time,
)
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

__all__ = ["read_gemini", "sniff_gemini"]

FORMAT = "gemini-cli"


def sniff_gemini(objs: list[dict[str, Any]]) -> bool:
    """stream-json events (init/tool_use/…) or the single json document (response + stats)."""
    for o in objs:
        t = o.get("type")
        if t == "init" and "session_id" in o:
            return True
        if t in ("tool_use", "tool_result") and "tool_id" in o:
            return True
        if t is None and ("response" in o or "stats" in o) and ("session_id" in o or "stats" in o):
            return True
    return False


def _stats_usage(stats: dict[str, Any]) -> Usage:
    if "input_tokens" in stats or "output_tokens" in stats:
        return Usage(
            input_tokens=int(stats.get("input_tokens") or 0),
            output_tokens=int(stats.get("output_tokens") or 0),
            cache_read_tokens=int(stats.get("cached") or 0),
        )
    total = Usage()
    for m in (stats.get("models") or {}).values():
        tok = m.get("tokens") or {}
        api = m.get("api") or {}
        total = total + Usage(
            input_tokens=int(tok.get("prompt") or tok.get("input") or 0),
            output_tokens=int(tok.get("candidates") or 0),
            cache_read_tokens=int(tok.get("cached") or 0),
            reasoning_tokens=int(tok.get("thoughts") or 0),
            requests=int(api.get("totalRequests") or 0),
        )
    return total


def _read_document(ctx: ImportContext, info: TranscriptInfo, doc: dict[str, Any]) -> Iterator[Step]:
    b = StepBuilder()

    def handle() -> Iterator[Step]:
        info.session_id = doc.get("session_id")
        stats = doc.get("stats") or {}
        if not isinstance(stats, dict):
            raise TypeError("stats is not an object")
        info.usage = _stats_usage(stats)
        models = list((stats.get("models") or {}).keys())
        info.model = models[0] if models else None
        if doc.get("response") is not None:
            yield b.make(Role.ASSISTANT, StepKind.MESSAGE, content=str(doc["response"]))
        if doc.get("error"):
            err = doc["error"]
            info.error = err.get("message") if isinstance(err, dict) else str(err)
            yield b.make(Role.HARNESS, StepKind.ERROR, content=info.error or "", is_error=True)
            info.status = RunStatus.FAILED
        else:
            info.status = (
                RunStatus.COMPLETED if doc.get("response") is not None else RunStatus.INCOMPLETE
            )
        info.metadata["tool_stats"] = stats.get("tools")

    yield from guarded(ctx, 1, FORMAT, handle)


def read_gemini(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Gemini CLI transcript (either output format)."""
    with ctx.path.open("rb") as f:
        first = next((line for line in f if line.strip()), b"")
    try:
        json.loads(first)
        line_format = True
    except (json.JSONDecodeError, UnicodeDecodeError):
        # the json output is one document, pretty-printed over many lines
        line_format = not first.strip().startswith(b"{")
    if not line_format:
        try:
            doc = json.loads(ctx.path.read_bytes())
        except (json.JSONDecodeError, UnicodeDecodeError):
            doc = None  # not one document after all: read it line by line
        if isinstance(doc, dict):
            yield from _read_document(ctx, info, doc)
            return
    b = StepBuilder()
    pending: list[str] = []
    pending_ts = None
    saw_result = False

    def flush() -> Iterator[Step]:
        nonlocal pending_ts
        if pending:
            yield b.make(
                Role.ASSISTANT, StepKind.MESSAGE, content="".join(pending), timestamp=pending_ts
            )
            pending.clear()
            pending_ts = None

    for lineno, obj in iter_json_lines(ctx):

        def handle(obj: dict[str, Any] = obj) -> Iterator[Step]:
            nonlocal pending_ts, saw_result
            t = obj["type"]
            ts = parse_time(obj.get("timestamp"))
            if ts:
                info.started_at = info.started_at or ts
                info.ended_at = ts
            if t == "message" and obj.get("role") == "assistant":
                pending.append(str(obj.get("content") or ""))
                pending_ts = pending_ts or ts
                if not obj.get("delta"):
                    yield from flush()
                return
            yield from flush()
            if t == "init":
                info.session_id = obj.get("session_id")
                info.model = obj.get("model")
            elif t == "message":
                text = str(obj.get("content") or "")
                info.task_text = info.task_text or text
                yield b.make(Role.USER, StepKind.MESSAGE, content=text, timestamp=ts)
            elif t == "tool_use":
                params = obj.get("parameters")
                yield b.make(
                    Role.ASSISTANT,
                    StepKind.TOOL_CALL,
                    tool_name=obj["tool_name"],
                    tool_call_id=obj["tool_id"],
                    tool_input=params if isinstance(params, dict) else {"parameters": params},
                    timestamp=ts,
                )
            elif t == "tool_result":
                err = obj.get("error") or {}
                failed = obj.get("status") == "error"
                yield b.make(
                    Role.TOOL,
                    StepKind.TOOL_RESULT,
                    tool_call_id=obj["tool_id"],
                    tool_output=str(
                        obj.get("output")
                        if obj.get("output") is not None
                        else err.get("message", "")
                    ),
                    is_error=failed,
                    timestamp=ts,
                    metadata={"error_type": err.get("type")} if err else {},
                )
            elif t == "error":
                yield b.make(
                    Role.HARNESS,
                    StepKind.ERROR,
                    content=str(obj.get("message", "")),
                    is_error=obj.get("severity", "error") == "error",
                    timestamp=ts,
                    metadata={"severity": obj.get("severity")},
                )
            elif t == "result":
                saw_result = True
                stats = obj.get("stats") or {}
                info.usage = _stats_usage(stats)
                if obj.get("status") == "error":
                    err = obj.get("error") or {}
                    info.error = err.get("message") if isinstance(err, dict) else str(err)
                    info.status = RunStatus.FAILED
                else:
                    info.status = RunStatus.COMPLETED

        yield from guarded(ctx, lineno, FORMAT, handle)
    yield from flush()
    if not saw_result or ctx.truncated:
        info.status = RunStatus.INCOMPLETE
