"""Steps as flat rows, built straight from the parsed JSON (no pydantic model per line).

A row is a list in ``schema.STEP_ROW`` order (the order of ``Step``'s fields), with the
JSON fields as JSON text: the store inserts it as it is, and ``step_of``
(``schema.step_from_row``) turns it into a validated ``Step`` for the Python API and the
tests.

The builder numbers rows contiguously and joins tool results to their calls: a result
takes its call's tool name, and (when asked) a result that arrives before its call is
held back until the call has been emitted, so the stored order is the event order.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson

from lhbench.ingest.base import ImportContext
from lhbench.ingest.values import MAX_ID, as_exit_code, as_id, json_text
from lhbench.schema import Role, StepKind, Usage, step_from_row

__all__ = [
    "ASSISTANT",
    "COMPACTION",
    "ERROR",
    "HARNESS",
    "HOOK",
    "MESSAGE",
    "SYSTEM",
    "THINKING",
    "TOOL",
    "TOOL_CALL",
    "TOOL_RESULT",
    "USER",
    "Record",
    "StepBuilder",
    "step_of",
]

Record = list[Any]

USER, ASSISTANT, TOOL, HARNESS, SYSTEM = (
    Role.USER.value,
    Role.ASSISTANT.value,
    Role.TOOL.value,
    Role.HARNESS.value,
    Role.SYSTEM.value,
)
MESSAGE, TOOL_CALL, TOOL_RESULT, THINKING, ERROR, HOOK, COMPACTION = (
    StepKind.MESSAGE.value,
    StepKind.TOOL_CALL.value,
    StepKind.TOOL_RESULT.value,
    StepKind.THINKING.value,
    StepKind.ERROR.value,
    StepKind.HOOK.value,
    StepKind.COMPACTION.value,
)
_EMPTY = "{}"
_OPEN_CALLS = 100_000  # calls never answered are forgotten past this many
_ANSWERED = 4096  # recently answered call ids: a repeated result is not held
_HELD = 512  # results waiting for their call
_HOLD_WINDOW = 64  # rows a result waits for its call before it is emitted without it


class StepBuilder:
    """Numbers rows, remembers open tool calls, and (``hold_results``) orders results after calls.

    Rows are appended to ``out``; the reader hands them on (``take``) as it goes. This runs
    once per transcript line, so it keeps to plain dicts and lists. A ``meta`` dict passed
    in must not be changed afterwards (its JSON is reused while the same object comes in).
    """

    def __init__(self, ctx: ImportContext, *, hold_results: bool = False) -> None:
        self.ctx = ctx
        self.count = 0
        self.out: list[Record] = []
        self.calls: dict[str, str | None] = {}
        self._answered: set[str] = set()
        self._ring: list[str | None] = [None] * _ANSWERED
        self._pos = 0
        self._hold = hold_results
        self._held: OrderedDict[str, tuple[int, Record]] = OrderedDict()
        self._meta: Any = None  # the last metadata object and its JSON (lines repeat it)
        self._meta_json = _EMPTY

    def _meta_text(self, meta: dict[str, Any] | None) -> str:
        if not meta:
            return _EMPTY
        if meta is not self._meta:
            self._meta, self._meta_json = meta, json_text(self.ctx, meta, "metadata")
        return self._meta_json

    def take(self) -> list[Record]:
        """The rows built since the last take."""
        out, self.out = self.out, []
        return out

    def _put(self, rec: Record) -> None:
        rec[0] = self.count
        self.count += 1
        self.out.append(rec)

    def step(
        self,
        role: str,
        kind: str,
        content: str = "",
        ts: Any = None,
        meta: dict[str, Any] | None = None,
        agent: str | None = None,
        *,
        is_error: bool = False,
        exit_code: Any = None,
        tool_name: str | None = None,
        usage: Usage | None = None,
    ) -> None:
        """A step that is not a tool call or result (message, thinking, error, hook …)."""
        self.out.append(
            [
                self.count,
                role,
                kind,
                content,
                tool_name,
                None,
                None,
                None,
                is_error,
                None if exit_code is None else as_exit_code(self.ctx, exit_code),
                ts,
                None if usage is None else orjson.dumps(usage.model_dump(mode="json")).decode(),
                self._meta_text(meta) if meta else _EMPTY,
                agent,
            ]
        )
        self.count += 1
        if self._held:
            self._release_stale()

    def call(
        self,
        name: Any,
        call_id: Any,
        tool_input: Any,
        ts: Any = None,
        meta: dict[str, Any] | None = None,
        agent: str | None = None,
    ) -> None:
        """A tool call; a result held for it follows right after."""
        ctx = self.ctx
        name_s = (
            name if type(name) is str and 0 < len(name) <= MAX_ID else as_id(ctx, name, "tool name")
        )
        cid = (
            call_id
            if type(call_id) is str and 0 < len(call_id) <= MAX_ID
            else as_id(ctx, call_id, "tool call id")
        )
        if name_s is None and cid is None:
            name_s = "unknown"
        if type(tool_input) is not dict:
            tool_input = None if tool_input is None else {"input": tool_input}
        if tool_input is None:
            args = None
        else:
            try:
                args = orjson.dumps(tool_input).decode()
            except orjson.JSONEncodeError:
                args = json_text(ctx, tool_input, "tool input")
        self.out.append(
            [
                self.count,
                ASSISTANT,
                TOOL_CALL,
                "",
                name_s,
                cid,
                args,
                None,
                False,
                None,
                ts,
                None,
                self._meta_text(meta) if meta else _EMPTY,
                agent,
            ]
        )
        self.count += 1
        if cid is not None:
            calls = self.calls
            calls[cid] = name_s
            if len(calls) > _OPEN_CALLS:
                del calls[next(iter(calls))]
            if self._held:
                held = self._held.pop(cid, None)
                if held is not None:
                    rec = held[1]
                    calls.pop(cid, None)
                    self._answer(cid)
                    rec[4] = rec[4] or name_s
                    self._put(rec)
                self._release_stale()

    def result(
        self,
        call_id: Any,
        output: str,
        is_error: bool = False,
        exit_code: Any = None,
        ts: Any = None,
        tool_name: Any = None,
        meta: dict[str, Any] | None = None,
        agent: str | None = None,
    ) -> None:
        """A tool result, joined to its call by id."""
        ctx = self.ctx
        cid = (
            call_id
            if type(call_id) is str and 0 < len(call_id) <= MAX_ID
            else as_id(ctx, call_id, "tool call id")
        )
        name = None if tool_name is None else as_id(ctx, tool_name, "tool name")
        rec = [
            0,
            TOOL,
            TOOL_RESULT,
            "",
            name,
            cid,
            None,
            output,
            is_error,
            None if exit_code is None else as_exit_code(ctx, exit_code),
            ts,
            None,
            self._meta_text(meta) if meta else _EMPTY,
            agent,
        ]
        if cid is None:
            rec[4] = name or "unknown"
        elif cid in self.calls:
            called = self.calls.pop(cid)
            rec[4] = name or called
            if self._hold:
                self._answer(cid)
        elif self._hold and cid not in self._answered and cid not in self._held:
            self._held[cid] = (self.count, rec)  # its call comes later (file order ≠ event order)
            if len(self._held) > _HELD:
                self._put(self._held.popitem(last=False)[1][1])
            return
        rec[0] = self.count  # _put, inline: this runs once per tool result
        self.count += 1
        self.out.append(rec)
        if self._held:
            self._release_stale()

    def _answer(self, cid: str) -> None:
        # the last few thousand answered ids, in a ring: a repeated result is not held back
        if not self._hold:
            return  # only held results look at it
        pos = self._pos
        ring = self._ring
        old = ring[pos]
        if old is not None:
            self._answered.discard(old)
        ring[pos] = cid
        self._answered.add(cid)
        self._pos = pos + 1 if pos + 1 < _ANSWERED else 0

    def _release_stale(self) -> None:
        while self._held:
            cid, (since, rec) = next(iter(self._held.items()))
            if self.count - since <= _HOLD_WINDOW:
                return
            del self._held[cid]
            self._put(rec)

    def flush(self) -> None:
        """Emit every held result (the transcript or session has ended)."""
        while self._held:
            self._put(self._held.popitem(last=False)[1][1])

    @property
    def open_calls(self) -> int:
        """Tool calls not answered (yet)."""
        return len(self.calls)


# a row as a validated Step (for the Python API and the tests)
step_of = step_from_row
