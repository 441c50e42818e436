"""Claude Code: ``--output-format stream-json --verbose`` output and session JSONL files.

Shapes followed (see ``fixtures/README.md`` in the tests for sources and versions):
``system/init`` (session, model, version), ``assistant`` lines carrying one content block
each and repeating ``message.id`` (grouped; usage counted once per message id),
``user`` lines with the prompt echo or ``tool_result`` blocks (``tool_use_id``,
``is_error``), ``system`` hook and ``compact_boundary`` events, and the final ``result``
(cost, usage, turns, session id; an API failure can arrive as ``subtype: success`` with
``is_error: true``). Session files carry the same messages with ``sessionId`` and a
timestamp on every line.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from lhbench.ingest.base import (
    ImportContext,
    StepBuilder,
    TranscriptInfo,
    guarded,
    iter_json_lines,
    parse_time,
    text_of,
)
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

__all__ = ["read_claude_code", "sniff_claude_code"]

FORMAT = "claude-code"
_RECENT = 256


def sniff_claude_code(objs: list[dict[str, Any]]) -> bool:
    """Stream-json (system/init, assistant, result) or a session file (sessionId, parentUuid)."""
    for o in objs:
        t = o.get("type")
        if t == "system" and o.get("subtype") == "init" and "session_id" in o:
            return True
        if (
            t in ("assistant", "user")
            and isinstance(o.get("message"), dict)
            and ("session_id" in o or "sessionId" in o)
        ):
            return True
        if t == "result" and "num_turns" in o:
            return True
    return False


_RESULT_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read_tokens": "cache_read_input_tokens",
    "cache_write_tokens": "cache_creation_input_tokens",
}


def _usage(u: dict[str, Any]) -> Usage:
    return Usage(
        input_tokens=int(u.get("input_tokens") or 0),
        output_tokens=int(u.get("output_tokens") or 0),
        cache_read_tokens=int(u.get("cache_read_input_tokens") or 0),
        cache_write_tokens=int(u.get("cache_creation_input_tokens") or 0),
        requests=1,
    )


class _MessageUsage:
    """Usage counted once per message id (it repeats on every line of a message).

    Lines of one message are adjacent, so only recent ids are remembered: memory stays
    constant however long the transcript.
    """

    def __init__(self) -> None:
        self._recent: OrderedDict[str, Usage] = OrderedDict()
        self._settled = Usage()

    def see(self, message_id: str, usage: Usage) -> None:
        self._recent[message_id] = usage
        self._recent.move_to_end(message_id)
        while len(self._recent) > _RECENT:
            self._settled = self._settled + self._recent.popitem(last=False)[1]

    def total(self) -> Usage:
        out = self._settled
        for u in self._recent.values():
            out = out + u
        return out


def read_claude_code(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Claude Code transcript; ``info`` is filled as the file is read."""
    b = StepBuilder()
    usage = _MessageUsage()
    saw_result = False
    session_file = False
    last_stop: str | None = None
    for lineno, obj in iter_json_lines(ctx):

        def handle(obj: dict[str, Any] = obj) -> Iterator[Step]:
            nonlocal saw_result, session_file, last_stop
            t = obj["type"]
            session_file = session_file or "sessionId" in obj
            ts = parse_time(obj.get("timestamp"))
            if ts and info.started_at is None:
                info.started_at = ts
            if ts:
                info.ended_at = ts
            info.session_id = info.session_id or obj.get("session_id") or obj.get("sessionId")
            if t == "system":
                sub = obj.get("subtype")
                if sub == "init":
                    info.model = obj.get("model") or info.model
                    info.harness_version = obj.get("claude_code_version") or info.harness_version
                    info.metadata.update({"cwd": obj.get("cwd"), "tools": obj.get("tools", [])})
                elif sub in ("hook_started", "hook_response"):
                    yield b.make(
                        Role.HARNESS,
                        StepKind.HOOK,
                        content=str(obj.get("output") or obj.get("hook_name") or ""),
                        tool_name=obj.get("hook_event") or obj.get("hook_name"),
                        exit_code=obj.get("exit_code"),
                        is_error=obj.get("outcome") in ("error", "blocked"),
                        timestamp=ts,
                        metadata={"subtype": sub},
                    )
                elif sub == "compact_boundary":
                    meta = obj.get("compact_metadata") or obj.get("compactMetadata") or {}
                    yield b.make(
                        Role.HARNESS,
                        StepKind.COMPACTION,
                        content="context compacted",
                        timestamp=ts,
                        metadata=dict(meta),
                    )
            elif t == "assistant":
                msg = obj["message"]
                if not isinstance(msg, dict):
                    raise TypeError("assistant.message is not an object")
                mid = msg.get("id")
                if mid and isinstance(msg.get("usage"), dict):
                    usage.see(mid, _usage(msg["usage"]))
                info.model = info.model or msg.get("model")
                last_stop = msg.get("stop_reason") or last_stop
                for block in msg.get("content") or []:
                    kind = block["type"]
                    meta = {"message_id": mid} if mid else {}
                    if kind == "text":
                        yield b.make(
                            Role.ASSISTANT,
                            StepKind.MESSAGE,
                            content=block["text"],
                            timestamp=ts,
                            metadata=meta,
                        )
                    elif kind in ("thinking", "redacted_thinking"):
                        yield b.make(
                            Role.ASSISTANT,
                            StepKind.THINKING,
                            content=block.get("thinking", ""),
                            timestamp=ts,
                            metadata=meta,
                        )
                    elif kind in ("tool_use", "server_tool_use"):
                        inp = block.get("input")
                        yield b.make(
                            Role.ASSISTANT,
                            StepKind.TOOL_CALL,
                            tool_name=block["name"],
                            tool_call_id=block["id"],
                            tool_input=inp if isinstance(inp, dict) else {"input": inp},
                            timestamp=ts,
                            metadata=meta,
                        )
                if obj.get("error"):
                    yield b.make(
                        Role.ASSISTANT,
                        StepKind.ERROR,
                        content=str(obj["error"]),
                        is_error=True,
                        timestamp=ts,
                    )
            elif t == "user":
                msg = obj["message"]
                content = msg["content"]
                if isinstance(content, str):
                    info.task_text = info.task_text or content
                    yield b.make(Role.USER, StepKind.MESSAGE, content=content, timestamp=ts)
                    return
                for block in content:
                    if block.get("type") == "tool_result":
                        yield b.make(
                            Role.TOOL,
                            StepKind.TOOL_RESULT,
                            tool_call_id=block["tool_use_id"],
                            tool_output=text_of(block.get("content")),
                            is_error=bool(block.get("is_error")),
                            timestamp=ts,
                        )
                    elif block.get("type") == "text":
                        info.task_text = info.task_text or block["text"]
                        yield b.make(
                            Role.USER, StepKind.MESSAGE, content=block["text"], timestamp=ts
                        )
            elif t == "result":
                saw_result = True
                if obj.get("total_cost_usd") is not None:
                    info.cost_usd = float(obj["total_cost_usd"])
                info.metadata.update(
                    {
                        k: obj[k]
                        for k in (
                            "num_turns",
                            "duration_ms",
                            "duration_api_ms",
                            "subtype",
                            "terminal_reason",
                            "api_error_status",
                        )
                        if k in obj
                    }
                )
                failed = bool(obj.get("is_error")) or str(obj.get("subtype", "")).startswith(
                    "error"
                )
                if failed:
                    detail = obj.get("errors") or obj.get("result") or obj.get("subtype")
                    info.error = detail if isinstance(detail, str) else json.dumps(detail)
                    yield b.make(
                        Role.HARNESS,
                        StepKind.ERROR,
                        content=info.error,
                        is_error=True,
                        timestamp=ts,
                    )
                sub = str(obj.get("subtype", ""))
                info.status = (
                    RunStatus.LIMIT_EXCEEDED
                    if sub in ("error_max_turns", "error_max_budget_usd")
                    else RunStatus.FAILED
                    if failed
                    else RunStatus.COMPLETED
                )
                if isinstance(obj.get("usage"), dict):
                    info.metadata["result_usage"] = obj["usage"]

        yield from guarded(ctx, lineno, FORMAT, handle)
    info.usage = usage.total().model_copy(update={"cost_usd": info.cost_usd})
    if isinstance(final := info.metadata.get("result_usage"), dict):
        # stream-json assistant lines carry the usage of message_start (output tokens not yet
        # counted); the result line's totals are the session's own count, field by field
        summed = info.usage.model_dump()
        info.usage = Usage(
            **{
                k: int(final[src]) if isinstance(final.get(src), int) else summed[k]
                for k, src in _RESULT_FIELDS.items()
            },
            reasoning_tokens=info.usage.reasoning_tokens,
            requests=info.usage.requests,
            cost_usd=info.cost_usd,
        )
    if session_file and not saw_result and last_stop == "end_turn" and not b.open_calls:
        # session files have no result line: a final end_turn with no call left open is the end
        info.status = RunStatus.COMPLETED
    elif not saw_result:
        info.status = RunStatus.INCOMPLETE
    if ctx.truncated:
        info.status = RunStatus.INCOMPLETE
