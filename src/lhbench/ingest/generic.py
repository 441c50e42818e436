"""The generic JSONL form any harness can write (documented in ``docs/generic-jsonl.md``).

One JSON object per line:

- optional first line ``{"type": "run", "session_id", "model", "harness_version",
  "started_at", "metadata"}``;
- step lines: the fields of ``lhbench.schema.Step`` without ``index`` (``role``, ``kind``,
  ``content``, ``tool_name``, ``tool_call_id``, ``tool_input``, ``tool_output``,
  ``is_error``, ``exit_code``, ``timestamp``, ``usage``, ``metadata``), optionally with
  ``"type": "step"``;
- optional last line ``{"type": "end", "status": "completed"|"failed", "usage": {...},
  "cost_usd", "error", "ended_at"}``. Without it the run is imported as incomplete.
"""

from __future__ import annotations

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

__all__ = ["read_generic", "sniff_generic"]

FORMAT = "jsonl"
_STEP_FIELDS = {
    "content",
    "tool_name",
    "tool_call_id",
    "tool_input",
    "tool_output",
    "is_error",
    "exit_code",
    "timestamp",
    "usage",
    "metadata",
}


def sniff_generic(objs: list[dict[str, Any]]) -> bool:
    """A run header or lines with role and kind."""
    return any(o.get("type") == "run" or ("role" in o and "kind" in o) for o in objs)


def read_generic(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a generic-JSONL transcript."""
    b = StepBuilder()
    ended = False
    for lineno, obj in iter_json_lines(ctx):

        def handle(obj: dict[str, Any] = obj) -> Iterator[Step]:
            nonlocal ended
            t = obj.get("type", "step")
            if t == "run":
                info.session_id = obj.get("session_id")
                info.model = obj.get("model")
                info.harness_version = obj.get("harness_version")
                info.started_at = parse_time(obj.get("started_at"))
                info.metadata.update(obj.get("metadata") or {})
            elif t == "end":
                ended = True
                info.status = RunStatus(obj.get("status", "completed"))
                if obj.get("usage"):
                    info.usage = Usage.model_validate(obj["usage"])
                info.cost_usd = obj.get("cost_usd")
                info.error = obj.get("error")
                info.ended_at = parse_time(obj.get("ended_at"))
            elif t == "step":
                unknown = set(obj) - _STEP_FIELDS - {"type", "role", "kind"}
                if unknown:
                    raise ValueError(f"unknown step field(s) {sorted(unknown)}")
                fields = {k: v for k, v in obj.items() if k in _STEP_FIELDS}
                fields["timestamp"] = parse_time(fields.get("timestamp"))
                role, kind = Role(obj["role"]), StepKind(obj["kind"])
                if role == Role.USER and kind == StepKind.MESSAGE:
                    info.task_text = info.task_text or str(fields.get("content", ""))
                yield b.make(role, kind, **fields)
            else:
                raise ValueError(f"unknown line type {t!r} (expected run, step or end)")

        yield from guarded(ctx, lineno, FORMAT, handle)
    if not ended or ctx.truncated:
        info.status = RunStatus.INCOMPLETE
