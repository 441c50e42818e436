"""The generic JSONL form any harness can write (documented in ``docs/transcripts.md``).

One JSON object per line:

- optional first line ``{"type": "run", "session_id", "model", "harness_version",
  "started_at", "metadata"}`` (a later ``run`` line starts another session);
- step lines: the fields of ``lhbench.schema.Step`` without ``index`` (``role``, ``kind``,
  ``content``, ``tool_name``, ``tool_call_id``, ``tool_input``, ``tool_output``,
  ``is_error``, ``exit_code``, ``timestamp``, ``usage``, ``metadata``, ``agent_id``),
  optionally with ``"type": "step"``;
- optional last line ``{"type": "end", "status": "completed"|"failed"|…, "usage": {...},
  "model_usage": {model: usage}, "cost_usd", "error", "ended_at"}``. Without it the run
  is imported as incomplete.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from lhbench.ingest.base import ImportContext
from lhbench.ingest.builder import MESSAGE, TOOL_CALL, TOOL_RESULT, USER
from lhbench.ingest.sessions import Item, LineSession, line_items
from lhbench.ingest.usage import Tally
from lhbench.ingest.values import Clock, as_cost, as_count, as_id, as_text, json_text, short
from lhbench.schema import STEP_ROW, Role, RunStatus, StepKind

__all__ = ["generic_items", "sniff_generic"]

FORMAT = "jsonl"
_STEP_FIELDS = frozenset(STEP_ROW) - {"index"}  # a step line's fields: Step's but its index
_ROLES = {r.value for r in Role}
_KINDS = {k.value for k in StepKind}
_FINAL = {
    s.value
    for s in (
        RunStatus.COMPLETED,
        RunStatus.FAILED,
        RunStatus.TIMED_OUT,
        RunStatus.LIMIT_EXCEEDED,
        RunStatus.INCOMPLETE,
    )
}
_USAGE = {
    "input_tokens": "input",
    "output_tokens": "output",
    "cache_read_tokens": "cache_read",
    "cache_write_tokens": "cache_write",
    "reasoning_tokens": "reasoning",
    "requests": "requests",
}


def _usage(ctx: ImportContext, raw: Any, what: str) -> Tally:
    if type(raw) is not dict:
        raise TypeError(f"{what} is {short(raw)}, not an object")
    t = Tally()
    for key, value in raw.items():
        if key in _USAGE:
            setattr(t, _USAGE[key], as_count(ctx, value, f"{what}.{key}"))
        elif key == "cost_usd":
            t.cost = as_cost(ctx, value, f"{what}.cost_usd")
        else:
            ctx.bad(f"{what}: unknown field {short(key, 40)}")
    return t


def sniff_generic(objs: list[dict[str, Any]]) -> bool:
    """A run header or lines with role and kind."""
    return any(o.get("type") == "run" or ("role" in o and "kind" in o) for o in objs)


class _Session(LineSession):
    FORMAT = FORMAT
    SHAPE = ""  # a line's problem here is named as what it is, not as an unexpected event

    def __init__(self, ctx: ImportContext, clock: Clock) -> None:
        super().__init__(ctx, clock)
        self.ended = False
        self.header = False
        self.end_usage: Tally | None = None

    def starts_session(self, obj: dict[str, Any]) -> bool:
        """A ``run`` line after the header, the end or any step starts a session."""
        return obj.get("type") == "run" and bool(self.header or self.ended or self.b.count)

    def line(self, obj: dict[str, Any]) -> None:
        ctx, info = self.ctx, self.info
        t = obj.get("type", "step")
        if t == "run":
            self.header = True
            info.session_id = as_id(ctx, obj.get("session_id"), "session_id")
            model = obj.get("model")
            info.model = model[:200] if type(model) is str and model else None
            version = obj.get("harness_version")
            info.harness_version = version[:100] if type(version) is str and version else None
            self.time(obj.get("started_at"))
            meta = obj.get("metadata")
            if type(meta) is dict:
                info.metadata.update(meta)
        elif t == "end":
            self.ended = True
            status = obj.get("status", "completed")
            if status not in _FINAL:
                raise ValueError(f"status {short(status)} is not one of {sorted(_FINAL)}")
            info.status = RunStatus(status)
            if obj.get("usage"):
                self.end_usage = _usage(ctx, obj["usage"], "usage")
            models = obj.get("model_usage")
            if type(models) is dict:
                for name, u in list(models.items())[:64]:
                    self.tokens.models[name[:200]] = _usage(ctx, u, "model_usage")
            info.cost_usd = as_cost(ctx, obj.get("cost_usd"), "cost_usd")
            err = obj.get("error")
            info.error = None if err is None else as_text(err)
            self.time(obj.get("ended_at"))
        elif t == "step":
            self.step(obj)
        else:
            raise ValueError(f"unknown line type {short(t)} (expected run, step or end)")

    def step(self, obj: dict[str, Any]) -> None:
        ctx, info, b = self.ctx, self.info, self.b
        unknown = set(obj) - _STEP_FIELDS - {"type"}
        if unknown:
            raise ValueError(f"unknown step field(s) {sorted(unknown)[:10]}")
        role, kind = obj["role"], obj["kind"]
        if role not in _ROLES or kind not in _KINDS:
            raise ValueError(f"role {short(role)} / kind {short(kind)} is not one of lhbench's")
        ts = self.time(obj.get("timestamp"))
        agent = as_id(ctx, obj.get("agent_id"), "agent_id")
        meta = obj.get("metadata")
        if meta is not None and type(meta) is not dict:
            raise TypeError(f"metadata is {short(meta)}, not an object")
        is_error = obj.get("is_error", False)
        if type(is_error) is not bool:
            raise TypeError(f"is_error is {short(is_error)}, not true or false")
        usage = obj.get("usage")
        tally = None if usage is None else _usage(ctx, usage, "usage")
        step_usage = None if tally is None else tally.usage()
        if tally is not None:
            self.tokens.add(None, tally)
        content = as_text(obj.get("content"))
        if kind == TOOL_CALL:
            b.call(
                obj.get("tool_name"),
                obj.get("tool_call_id"),
                obj.get("tool_input"),
                ts=ts,
                meta=meta,
                agent=agent,
            )
            b.out[-1][1] = role
            if step_usage is not None:
                b.out[-1][11] = orjson.dumps(step_usage.model_dump(mode="json")).decode()
            return
        if kind == TOOL_RESULT:
            out = obj.get("tool_output")
            b.result(
                obj.get("tool_call_id"),
                as_text(out),
                is_error=is_error,
                exit_code=obj.get("exit_code"),
                ts=ts,
                tool_name=obj.get("tool_name"),
                meta=meta,
                agent=agent,
            )
            if b.out:
                b.out[-1][1] = role
            return
        if role == USER and kind == MESSAGE and agent is None:
            info.task_text = info.task_text or content
        b.step(
            role,
            kind,
            content,
            ts=ts,
            meta=meta,
            agent=agent,
            is_error=is_error,
            exit_code=obj.get("exit_code"),
            tool_name=as_id(ctx, obj.get("tool_name"), "tool_name"),
            usage=step_usage,
        )
        rec = b.out[-1]
        if obj.get("tool_input") is not None:
            rec[6] = json_text(ctx, obj["tool_input"], "tool_input")
        if obj.get("tool_output") is not None:
            rec[7] = as_text(obj["tool_output"])

    def finish(self) -> Item:
        if self.end_usage is not None:
            self.tokens.total = self.end_usage  # the end line's totals are the run's own
        if not self.ended or self.ctx.truncated:
            self.info.status = RunStatus.INCOMPLETE
        return self.end()


def generic_items(ctx: ImportContext) -> Iterator[Item]:
    """Rows and session ends of a generic-JSONL transcript."""
    clock = Clock()
    return line_items(ctx, lambda: _Session(ctx, clock))
