"""Codex CLI: ``codex exec --json`` event streams and rollout session files.

``--json`` (``ThreadEvent``): ``thread.started``, ``turn.started``, ``turn.completed``
(usage), ``turn.failed``, ``item.started|updated|completed`` with items
``agent_message``, ``reasoning``, ``command_execution`` (command, aggregated output, exit
code, status), ``file_change``, ``mcp_tool_call``, ``web_search``, ``todo_list``,
``error``; and fatal ``error``. The stream carries no timestamps, cost or model.

Rollout files (``$CODEX_HOME/sessions/…/rollout-*.jsonl``): ``{timestamp, type, payload}``
lines: ``session_meta``, ``turn_context`` (model), ``response_item`` (message, reasoning,
function_call / function_call_output, custom_tool_call / _output), ``event_msg``
(token_count), ``compacted``.
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
    text_of,
)
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

__all__ = ["read_codex", "sniff_codex"]

FORMAT = "codex"
_ROLLOUT_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}


def sniff_codex(objs: list[dict[str, Any]]) -> bool:
    """``thread.started``/``item.*`` events, or rollout lines with a payload."""
    for o in objs:
        t = str(o.get("type", ""))
        if t in ("thread.started", "turn.started", "turn.completed") or t.startswith("item."):
            return True
        if t in _ROLLOUT_TYPES and isinstance(o.get("payload"), dict):
            return True
    return False


def _item_steps(b: StepBuilder, item: dict[str, Any]) -> Iterator[Step]:
    kind = item["type"]
    iid = str(item.get("id", ""))
    if kind == "agent_message":
        yield b.make(Role.ASSISTANT, StepKind.MESSAGE, content=item.get("text", ""))
    elif kind in ("reasoning", "plan"):
        yield b.make(
            Role.ASSISTANT, StepKind.THINKING, content=item.get("text", ""), metadata={"item": kind}
        )
    elif kind == "command_execution":
        status = item.get("status")
        code = item.get("exit_code")
        yield b.make(
            Role.ASSISTANT,
            StepKind.TOOL_CALL,
            tool_name="shell",
            tool_call_id=iid,
            tool_input={"command": item["command"]},
        )
        yield b.make(
            Role.TOOL,
            StepKind.TOOL_RESULT,
            tool_call_id=iid,
            tool_output=item.get("aggregated_output", ""),
            exit_code=code,
            is_error=status in ("failed", "declined") or (code is not None and code != 0),
            metadata={"status": status},
        )
    elif kind == "file_change":
        changes = item.get("changes") or []
        yield b.make(
            Role.ASSISTANT,
            StepKind.TOOL_CALL,
            tool_name="apply_patch",
            tool_call_id=iid,
            tool_input={"changes": changes},
        )
        summary = "\n".join(f"{c.get('kind')} {c.get('path')}" for c in changes)
        yield b.make(
            Role.TOOL,
            StepKind.TOOL_RESULT,
            tool_call_id=iid,
            tool_output=summary,
            is_error=item.get("status") == "failed",
        )
    elif kind == "mcp_tool_call":
        name = f"mcp__{item['server']}__{item['tool']}"
        args = item.get("arguments")
        if isinstance(args, str):
            args = json.loads(args) if args.strip().startswith("{") else {"arguments": args}
        yield b.make(
            Role.ASSISTANT,
            StepKind.TOOL_CALL,
            tool_name=name,
            tool_call_id=iid,
            tool_input=args or {},
        )
        error = item.get("error")
        result = item.get("result") or {}
        output = (error or {}).get("message") if error else text_of(result.get("content"))
        yield b.make(
            Role.TOOL,
            StepKind.TOOL_RESULT,
            tool_call_id=iid,
            tool_output=output or "",
            is_error=bool(error) or item.get("status") == "failed",
        )
    elif kind == "web_search":
        yield b.make(
            Role.ASSISTANT,
            StepKind.TOOL_CALL,
            tool_name="web_search",
            tool_call_id=iid,
            tool_input={"query": item.get("query")},
        )
        yield b.make(
            Role.TOOL,
            StepKind.TOOL_RESULT,
            tool_call_id=iid,
            tool_output=json.dumps(item.get("action") or {}),
        )
    elif kind == "todo_list":
        todo = "\n".join(
            f"[{'x' if t.get('completed') else ' '}] {t.get('text')}" for t in item.get("items", [])
        )
        yield b.make(
            Role.ASSISTANT, StepKind.THINKING, content=todo, metadata={"item": "todo_list"}
        )
    elif kind == "error":
        yield b.make(Role.HARNESS, StepKind.ERROR, content=item.get("message", ""), is_error=True)
    else:
        yield b.make(
            Role.HARNESS, StepKind.MESSAGE, content=json.dumps(item), metadata={"item": kind}
        )


def _rollout_steps(
    b: StepBuilder, info: TranscriptInfo, t: str, p: dict[str, Any], ts: Any
) -> Iterator[Step]:
    if t == "session_meta":
        info.session_id = p.get("id") or info.session_id
        info.harness_version = p.get("cli_version") or info.harness_version
        info.metadata.update({k: p[k] for k in ("cwd", "originator", "model_provider") if k in p})
    elif t == "turn_context":
        info.model = p.get("model") or info.model
    elif t == "compacted":
        yield b.make(
            Role.HARNESS,
            StepKind.COMPACTION,
            content=str(p.get("message", "context compacted")),
            timestamp=ts,
        )
    elif t == "event_msg" and p.get("type") == "token_count":
        total = ((p.get("info") or {}).get("total_token_usage")) or {}
        if total:
            info.usage = Usage(
                input_tokens=int(total.get("input_tokens") or 0),
                output_tokens=int(total.get("output_tokens") or 0),
                cache_read_tokens=int(total.get("cached_input_tokens") or 0),
                reasoning_tokens=int(total.get("reasoning_output_tokens") or 0),
            )
    elif t == "response_item":
        pt = p["type"]
        if pt == "message":
            role = p["role"]
            text = text_of(p.get("content"))
            if role == "assistant":
                yield b.make(Role.ASSISTANT, StepKind.MESSAGE, content=text, timestamp=ts)
            elif role == "user":
                info.task_text = info.task_text or text
                yield b.make(Role.USER, StepKind.MESSAGE, content=text, timestamp=ts)
            else:
                yield b.make(Role.SYSTEM, StepKind.MESSAGE, content=text, timestamp=ts)
        elif pt == "reasoning":
            yield b.make(
                Role.ASSISTANT, StepKind.THINKING, content=text_of(p.get("summary")), timestamp=ts
            )
        elif pt in ("function_call", "custom_tool_call", "local_shell_call"):
            raw = p.get("arguments", p.get("input"))
            args: dict[str, Any]
            if isinstance(raw, str):
                try:
                    parsed = json.loads(raw)
                    args = parsed if isinstance(parsed, dict) else {"input": parsed}
                except json.JSONDecodeError:
                    args = {"input": raw}
            else:
                args = raw or {}
            yield b.make(
                Role.ASSISTANT,
                StepKind.TOOL_CALL,
                tool_name=p.get("name", pt),
                tool_call_id=p["call_id"],
                tool_input=args,
                timestamp=ts,
            )
        elif pt in ("function_call_output", "custom_tool_call_output"):
            out = p.get("output")
            code = None
            text = out if isinstance(out, str) else json.dumps(out)
            if isinstance(out, str) and out.strip().startswith("{"):
                try:
                    doc = json.loads(out)
                    text = str(doc.get("output", text))
                    code = (doc.get("metadata") or {}).get("exit_code")
                except json.JSONDecodeError:
                    pass
            yield b.make(
                Role.TOOL,
                StepKind.TOOL_RESULT,
                tool_call_id=p["call_id"],
                tool_output=text,
                exit_code=code,
                is_error=code is not None and code != 0,
                timestamp=ts,
            )


def read_codex(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Codex ``exec --json`` stream or rollout file."""
    b = StepBuilder()
    total = Usage()
    open_items: set[str] = set()
    ended = False
    rollout = False
    for lineno, obj in iter_json_lines(ctx):

        def handle(obj: dict[str, Any] = obj) -> Iterator[Step]:
            nonlocal total, ended, rollout
            t = obj["type"]
            if t in _ROLLOUT_TYPES and "payload" in obj:
                rollout = True
                ts = parse_time(obj.get("timestamp"))
                if ts:
                    info.started_at = info.started_at or ts
                    info.ended_at = ts
                yield from _rollout_steps(b, info, t, obj["payload"], ts)
                return
            if t == "thread.started":
                info.session_id = obj.get("thread_id")
            elif t == "turn.started":
                ended = False
            elif t == "turn.completed":
                u = obj.get("usage") or {}
                total = total + Usage(
                    input_tokens=int(u.get("input_tokens") or 0),
                    output_tokens=int(u.get("output_tokens") or 0),
                    cache_read_tokens=int(u.get("cached_input_tokens") or 0),
                    reasoning_tokens=int(u.get("reasoning_output_tokens") or 0),
                    requests=1,
                )
                ended = True
                info.status = RunStatus.COMPLETED
            elif t == "turn.failed":
                msg = (obj.get("error") or {}).get("message", "turn failed")
                info.error = msg
                info.status = RunStatus.FAILED
                ended = True
                yield b.make(Role.HARNESS, StepKind.ERROR, content=msg, is_error=True)
            elif t == "error":
                info.error = obj.get("message", "")
                yield b.make(Role.HARNESS, StepKind.ERROR, content=info.error or "", is_error=True)
            elif t in ("item.started", "item.updated"):
                open_items.add(str(obj["item"]["id"]))
            elif t == "item.completed":
                item = obj["item"]
                open_items.discard(str(item.get("id")))
                yield from _item_steps(b, item)

        yield from guarded(ctx, lineno, FORMAT, handle)
    if rollout:
        info.status = RunStatus.INCOMPLETE if b.open_calls else RunStatus.COMPLETED
    else:
        info.usage = total
        if not ended or open_items:
            info.status = RunStatus.INCOMPLETE
    if ctx.truncated:
        info.status = RunStatus.INCOMPLETE
