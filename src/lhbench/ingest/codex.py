"""Codex CLI: ``codex exec --json`` event streams and rollout session files.

``--json`` (``ThreadEvent``): ``thread.started``, ``turn.started``, ``turn.completed``
(usage), ``turn.failed``, ``item.started|updated|completed`` with items
``agent_message``, ``reasoning``, ``command_execution`` (command, aggregated output, exit
code, status), ``file_change``, ``mcp_tool_call``, ``collab_tool_call``, ``web_search``,
``todo_list``, ``error`` (a non-fatal notice: Codex emits its warnings this way); and a
fatal top-level ``error``. The stream carries no timestamps, cost or model.

Rollout files (``$CODEX_HOME/sessions/…/rollout-*.jsonl``): ``{timestamp, type, payload}``
lines: ``session_meta`` (id, CLI version), ``turn_context`` (model), ``response_item``
(message, reasoning, function_call / function_call_output, custom_tool_call / _output),
``event_msg`` (token_count, error, warning), ``compacted``.

Tool outputs come as JSON text with ``metadata.exit_code``, as text opening with
``Exit code: N`` or carrying ``Process exited with code N``, or as a list of
``input_text`` parts (joined). Codex counts cached tokens inside its input count: they
are taken out (see docs/transcripts.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import (
    ASSISTANT,
    COMPACTION,
    ERROR,
    HARNESS,
    MESSAGE,
    SYSTEM,
    THINKING,
    USER,
)
from lhbench.ingest.roles import is_harness_text
from lhbench.ingest.sessions import Item, LineSession, line_items
from lhbench.ingest.steps import steps_into
from lhbench.ingest.usage import Tally
from lhbench.ingest.values import Clock, as_count, as_id, as_text, short, text_of
from lhbench.schema import RunStatus, Step

__all__ = ["codex_items", "exit_code_in", "read_codex", "sniff_codex"]

FORMAT = "codex"
_ROLLOUT_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d{1,10})\s*$", re.MULTILINE)
_HEAD = 600  # the exit line sits in the output's header


def sniff_codex(objs: list[dict[str, Any]]) -> bool:
    """``thread.started``/``item.*`` events, or rollout lines with a payload."""
    for o in objs:
        t = str(o.get("type", ""))
        if t in ("thread.started", "turn.started", "turn.completed") or t.startswith("item."):
            return True
        if t in _ROLLOUT_TYPES and isinstance(o.get("payload"), dict):
            return True
    return False


def read_codex(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Codex ``exec --json`` stream or rollout file, its sessions merged."""
    return steps_into(info, codex_items(ctx))


def exit_code_in(text: str) -> int | None:
    """The exit code a Codex tool output states in its header, if any."""
    m = _EXIT.search(text[:_HEAD])
    if m is None:
        return None
    code = int(m.group(1))
    return code if -(2**31) <= code < 2**31 else None


def _output(raw: Any) -> tuple[str, int | None]:
    """(text, exit code) of a function-call output in any of Codex's shapes."""
    if type(raw) is str:
        if raw.startswith("{"):
            try:
                doc = orjson.loads(raw)
            except orjson.JSONDecodeError:
                doc = None
            if type(doc) is dict and "output" in doc:
                meta = doc.get("metadata")
                code = meta.get("exit_code") if type(meta) is dict else None
                text = as_text(doc.get("output"))
                return text, code if type(code) is int else exit_code_in(text)
        return raw, exit_code_in(raw)
    if type(raw) is dict and "content" in raw and "output" not in raw:
        raw = raw["content"]
    if type(raw) is dict:
        text = as_text(raw.get("output"))
        meta = raw.get("metadata")
        code = meta.get("exit_code") if type(meta) is dict else None
        return text, code if type(code) is int else exit_code_in(text)
    text = text_of(raw)  # a list of input_text / input_image parts
    return text, exit_code_in(text)


def _args(raw: Any) -> Any:
    if type(raw) is str:
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"input": raw}
        return parsed if type(parsed) is dict else {"input": parsed}
    return raw


class _Session(LineSession):
    FORMAT = FORMAT

    def __init__(self, ctx: ImportContext, clock: Clock) -> None:
        super().__init__(ctx, clock)
        self.open_items: set[str] = set()
        self.turn_ended = False
        self.rollout = False
        self.threads = 0
        self.model: str | None = None
        self.last_total: Tally | None = None
        self.failed_last = False

    def starts_session(self, obj: dict[str, Any]) -> bool:
        """A ``thread.started`` after the first, or a ``session_meta`` with a new id."""
        t = obj.get("type")
        if t == "session_meta" and "payload" in obj:
            p = obj["payload"]
            sid = self.info.session_id
            return type(p) is dict and bool(sid) and p.get("id") != sid
        return t == "thread.started" and self.threads > 0

    def line(self, obj: dict[str, Any]) -> None:
        """A rollout line (with a payload) or an ``exec --json`` event."""
        t = obj.get("type")
        if t in _ROLLOUT_TYPES and "payload" in obj:
            self.rollout = True
            self.rollout_line(t, obj["payload"], self.time(obj.get("timestamp")))
        else:
            self.event(obj)

    # --- exec --json -------------------------------------------------------------------

    def event(self, obj: dict[str, Any]) -> None:
        ctx, info, b = self.ctx, self.info, self.b
        t = obj.get("type")
        if t == "thread.started":
            self.threads += 1
            info.session_id = as_id(ctx, obj.get("thread_id"), "thread_id")
        elif t == "turn.started":
            self.turn_ended = False
        elif t == "turn.completed":
            u = obj.get("usage")
            u = u if type(u) is dict else {}
            cached = as_count(ctx, u.get("cached_input_tokens"), "usage.cached_input_tokens")
            total_in = as_count(ctx, u.get("input_tokens"), "usage.input_tokens")
            self.tokens.add(
                None,
                Tally(
                    max(0, total_in - cached),
                    as_count(ctx, u.get("output_tokens"), "usage.output_tokens"),
                    cached,
                    reasoning=as_count(
                        ctx, u.get("reasoning_output_tokens"), "usage.reasoning_output_tokens"
                    ),
                    requests=1,
                ),
            )
            self.turn_ended = True
            info.status, info.error = RunStatus.COMPLETED, None
        elif t == "turn.failed":
            err = obj.get("error")
            msg = as_text(err.get("message") if type(err) is dict else err) or "turn failed"
            info.error, info.status = msg, RunStatus.FAILED
            self.turn_ended = True
            b.step(HARNESS, ERROR, msg, is_error=True)
        elif t == "error":
            msg = as_text(obj.get("message")) or "error"
            info.error = msg
            b.step(HARNESS, ERROR, msg, is_error=True)
        elif t in ("item.started", "item.updated"):
            item = obj["item"]
            if type(item) is not dict:
                raise TypeError(f"item is {short(item)}, not an object")
            iid = as_id(ctx, item.get("id"), "item.id")
            if iid is not None and len(self.open_items) < 100_000:
                self.open_items.add(iid)
        elif t == "item.completed":
            item = obj["item"]
            if type(item) is not dict:
                raise TypeError(f"item is {short(item)}, not an object")
            self.open_items.discard(str(item.get("id")))
            self.item(item)

    def item(self, item: dict[str, Any]) -> None:
        ctx, b = self.ctx, self.b
        kind = item["type"]
        iid = item.get("id")
        status = item.get("status")
        if kind == "agent_message":
            b.step(ASSISTANT, MESSAGE, as_text(item.get("text")))
        elif kind in ("reasoning", "plan"):
            b.step(ASSISTANT, THINKING, as_text(item.get("text")), meta={"item": kind})
        elif kind == "command_execution":
            text = as_text(item.get("aggregated_output"))
            code = item.get("exit_code")
            if code is None:
                code = exit_code_in(text)
            b.call("shell", iid, {"command": item.get("command")})
            failed = status in ("failed", "declined") or (
                type(code) is int and not isinstance(code, bool) and code != 0
            )
            b.result(iid, text, exit_code=code, is_error=failed, meta={"status": status})
        elif kind == "file_change":
            changes = item.get("changes")
            changes = changes if type(changes) is list else []
            b.call("apply_patch", iid, {"changes": changes})
            summary = "\n".join(
                f"{c.get('kind')} {c.get('path')}" for c in changes if type(c) is dict
            )
            b.result(iid, summary, is_error=status == "failed")
        elif kind == "mcp_tool_call":
            name = f"mcp__{as_text(item.get('server'))}__{as_text(item.get('tool'))}"
            args = _args(item.get("arguments"))
            b.call(name, iid, args if args is not None else {})
            error = item.get("error")
            result = item.get("result")
            if error:
                output = as_text(error.get("message") if type(error) is dict else error)
            else:
                output = text_of(result.get("content")) if type(result) is dict else ""
            b.result(iid, output, is_error=bool(error) or status == "failed")
        elif kind == "collab_tool_call":
            tool = as_text(item.get("tool")) or "collab"
            b.call(
                tool,
                iid,
                {"prompt": item.get("prompt"), "receivers": item.get("receiver_thread_ids")},
            )
            states = item.get("agents_states")
            b.result(iid, text_of(states) if states else "", is_error=status == "failed")
        elif kind == "web_search":
            b.call("web_search", iid, {"query": item.get("query")})
            b.result(iid, text_of(item.get("action")))
        elif kind == "todo_list":
            todo = item.get("items")
            lines = [
                f"[{'x' if t.get('completed') else ' '}] {as_text(t.get('text'))}"
                for t in (todo if type(todo) is list else [])
                if type(t) is dict
            ]
            b.step(ASSISTANT, THINKING, "\n".join(lines), meta={"item": "todo_list"})
        elif kind == "error":
            # a non-fatal notice (config warnings, model reroutes, compaction notes)
            b.step(HARNESS, MESSAGE, as_text(item.get("message")), meta={"severity": "warning"})
        else:
            b.step(HARNESS, MESSAGE, text_of(item), meta={"item": as_id(ctx, kind, "item.type")})

    # --- rollout files -----------------------------------------------------------------

    def rollout_line(self, t: str, p: Any, ts: Any) -> None:
        ctx, info, b = self.ctx, self.info, self.b
        if type(p) is not dict:
            raise TypeError(f"payload is {short(p)}, not an object")
        if t == "session_meta":
            info.session_id = as_id(ctx, p.get("id"), "session id") or info.session_id
            version = p.get("cli_version")
            if type(version) is str and version:
                info.harness_version = version[:100]
            for k in ("cwd", "originator", "model_provider"):
                if type(p.get(k)) is str:
                    info.metadata[k] = p[k]
        elif t == "turn_context":
            model = p.get("model")
            if type(model) is str and model:
                self.model = model[:200]
                info.model = self.model
        elif t == "compacted":
            b.step(HARNESS, COMPACTION, as_text(p.get("message")) or "context compacted", ts=ts)
        elif t == "event_msg":
            self.event_msg(p, ts)
        elif t == "response_item":
            self.response_item(p, ts)

    def event_msg(self, p: dict[str, Any], ts: Any) -> None:
        ctx, info, b = self.ctx, self.info, self.b
        kind = p.get("type")
        if kind == "token_count":
            info_ = p.get("info")
            total = info_.get("total_token_usage") if type(info_) is dict else None
            if type(total) is dict:
                cached = as_count(ctx, total.get("cached_input_tokens"), "cached_input_tokens")
                now = Tally(
                    max(0, as_count(ctx, total.get("input_tokens"), "input_tokens") - cached),
                    as_count(ctx, total.get("output_tokens"), "output_tokens"),
                    cached,
                    reasoning=as_count(
                        ctx, total.get("reasoning_output_tokens"), "reasoning_output_tokens"
                    ),
                )
                # the count is the session's running total: the model of the turn gets the rise
                prev = self.last_total or Tally()
                delta = Tally(
                    max(0, now.input - prev.input),
                    max(0, now.output - prev.output),
                    max(0, now.cache_read - prev.cache_read),
                    reasoning=max(0, now.reasoning - prev.reasoning),
                )
                self.tokens.add(self.model, delta)
                self.last_total = now
        elif kind == "error":
            msg = as_text(p.get("message")) or "error"
            info.error = msg
            self.failed_last = True
            b.step(HARNESS, ERROR, msg, is_error=True, ts=ts)
        elif kind == "warning":
            b.step(HARNESS, MESSAGE, as_text(p.get("message")), ts=ts, meta={"severity": "warning"})
        elif kind in ("task_complete", "turn_complete"):
            self.failed_last = False

    def response_item(self, p: dict[str, Any], ts: Any) -> None:
        info, b = self.info, self.b
        pt = p.get("type")
        if pt == "message":
            role = p.get("role")
            text = text_of(p.get("content"))
            if role == "assistant":
                b.step(ASSISTANT, MESSAGE, text, ts=ts)
            elif role == "user":
                if is_harness_text(text):
                    b.step(HARNESS, MESSAGE, text, ts=ts)
                else:
                    info.task_text = info.task_text or text
                    b.step(USER, MESSAGE, text, ts=ts)
                    self.failed_last = False
            elif role == "developer":
                b.step(HARNESS, MESSAGE, text, ts=ts)
            else:
                b.step(SYSTEM, MESSAGE, text, ts=ts)
        elif pt == "reasoning":
            b.step(ASSISTANT, THINKING, text_of(p.get("summary")), ts=ts)
        elif pt in ("function_call", "custom_tool_call", "local_shell_call"):
            raw = p.get("arguments", p.get("input", p.get("action")))
            b.call(p.get("name") or pt, p.get("call_id") or p.get("id"), _args(raw), ts=ts)
        elif pt in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            text, code = _output(p.get("output"))
            failed = type(code) is int and code != 0
            b.result(p.get("call_id"), text, exit_code=code, is_error=failed, ts=ts)
        elif pt == "web_search_call":
            b.call(
                "web_search", p.get("id") or p.get("call_id"), {"action": p.get("action")}, ts=ts
            )

    def finish(self) -> Item:
        info = self.info
        if self.rollout:
            if self.failed_last:
                info.status = RunStatus.FAILED
            else:
                info.status = RunStatus.INCOMPLETE if self.b.open_calls else RunStatus.COMPLETED
                info.error = None
        elif not self.turn_ended or self.open_items:
            info.status = RunStatus.INCOMPLETE
        if self.ctx.truncated:
            info.status = RunStatus.INCOMPLETE
        return self.end()


def codex_items(ctx: ImportContext) -> Iterator[Item]:
    """Rows and session ends of a Codex transcript.

    Each ``thread.started`` after the first, or a ``session_meta`` with a new id, starts
    another session.
    """
    clock = Clock()
    return line_items(ctx, lambda: _Session(ctx, clock))
