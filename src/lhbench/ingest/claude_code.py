"""Claude Code: ``-p --output-format stream-json --verbose`` output and session JSONL files.

Shapes followed (see ``fixtures/README.md`` in the tests for sources and versions):
``system/init`` (session, model, CLI version), ``assistant`` lines carrying one content
block each and repeating ``message.id`` (usage counted once per message id), ``user``
lines with the prompt echo or ``tool_result`` blocks (``tool_use_id``, ``is_error``),
``system`` hook and ``compact_boundary`` events, and the final ``result`` (cost, usage,
``modelUsage`` per model, turns; an API failure can arrive as ``subtype: success`` with
``is_error: true``). Session files carry the same messages with ``sessionId``,
``parentUuid``/``uuid`` links and the CLI ``version`` on every line.

Fidelity rules: steps follow the ``parentUuid`` chain and tool-call ids, not file order;
a sub-agent's lines (``parent_tool_use_id``, or ``isSidechain`` + ``agentId``) carry its
id; ``isMeta`` lines, compaction summaries, task notifications and command echoes are
harness text; a new ``system/init`` (or a line after ``result``, or a new ``sessionId``)
starts a new session.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import (
    ASSISTANT,
    COMPACTION,
    ERROR,
    HARNESS,
    HOOK,
    MESSAGE,
    THINKING,
    USER,
)
from lhbench.ingest.roles import is_harness_text
from lhbench.ingest.sessions import Item, LineSession, line_items
from lhbench.ingest.steps import steps_into
from lhbench.ingest.usage import MAX_MODELS, Tally, Tokens
from lhbench.ingest.values import (
    MAX_COUNT,
    Clock,
    as_cost,
    as_count,
    as_id,
    as_text,
    short,
    text_of,
)
from lhbench.schema import RunStatus, Step

__all__ = ["claude_code_items", "read_claude_code", "sniff_claude_code"]

FORMAT = "claude-code"
_RECENT = 256  # message ids whose usage may still repeat (lines of one message are adjacent)
_SEEN_UUIDS = 65536
_HELD_LINES = 256
_CALL_BLOCKS = ("tool_use", "server_tool_use", "mcp_tool_use")
_USAGE_FIELDS = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cache_read", "cache_read_input_tokens"),
    ("cache_write", "cache_creation_input_tokens"),
)


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


def read_claude_code(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Claude Code transcript, its sessions merged; ``info`` is filled as it is read."""
    return steps_into(info, claude_code_items(ctx))


# a message's usage: input, output, cache read, cache write tokens (one request)
_Counts = tuple[int, int, int, int]


def _tally(ctx: ImportContext, u: dict[str, Any], what: str) -> _Counts:
    """A message's usage (the common, well-formed case checked inline: it runs per message)."""
    i = u.get("input_tokens")
    o = u.get("output_tokens")
    cr = u.get("cache_read_input_tokens")
    cw = u.get("cache_creation_input_tokens")
    if not (type(i) is int and 0 <= i <= MAX_COUNT):
        i = 0 if i is None else as_count(ctx, i, f"{what}.input_tokens")
    if not (type(o) is int and 0 <= o <= MAX_COUNT):
        o = 0 if o is None else as_count(ctx, o, f"{what}.output_tokens")
    if not (type(cr) is int and 0 <= cr <= MAX_COUNT):
        cr = 0 if cr is None else as_count(ctx, cr, f"{what}.cache_read_input_tokens")
    if not (type(cw) is int and 0 <= cw <= MAX_COUNT):
        cw = 0 if cw is None else as_count(ctx, cw, f"{what}.cache_creation_input_tokens")
    return (i, o, cr, cw)


class _ParentOrder:
    """Session-file lines in ``parentUuid`` order.

    A line whose parent has not been seen yet waits (bounded) until it has, so a tool
    result written before its call follows it.
    """

    def __init__(self) -> None:
        self.seen: OrderedDict[str, None] = OrderedDict()
        self.waiting: dict[str, list[int]] = {}
        self.pending: OrderedDict[int, tuple[str, int, dict[str, Any]]] = OrderedDict()
        self.seq = 0

    def push(self, lineno: int, obj: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        parent = obj.get("parentUuid")
        out: list[tuple[int, dict[str, Any]]] = []
        if type(parent) is not str or parent in self.seen:
            self._release(lineno, obj, out)
            return out
        self.seq += 1
        self.pending[self.seq] = (parent, lineno, obj)
        self.waiting.setdefault(parent, []).append(self.seq)
        if len(self.pending) > _HELD_LINES:  # its parent is long gone (or never was): let it go
            seq, (p, ln, o) = self.pending.popitem(last=False)
            self.waiting[p].remove(seq)
            if not self.waiting[p]:
                del self.waiting[p]
            self._release(ln, o, out)
        return out

    def _release(
        self, lineno: int, obj: dict[str, Any], out: list[tuple[int, dict[str, Any]]]
    ) -> None:
        stack = [(lineno, obj)]
        while stack:
            ln, o = stack.pop()
            out.append((ln, o))
            u = o.get("uuid")
            if type(u) is not str:
                continue
            self.seen[u] = None
            if len(self.seen) > _SEEN_UUIDS:
                self.seen.popitem(last=False)
            kids = self.waiting.pop(u, None)
            if kids:
                for seq in reversed(kids):
                    _p, kln, ko = self.pending.pop(seq)
                    stack.append((kln, ko))

    def flush(self) -> list[tuple[int, dict[str, Any]]]:
        out: list[tuple[int, dict[str, Any]]] = []
        while self.pending:
            _seq, (p, ln, o) = self.pending.popitem(last=False)
            self.waiting[p].remove(_seq)
            if not self.waiting[p]:
                del self.waiting[p]
            self._release(ln, o, out)
        return out


class _Session(LineSession):
    FORMAT = FORMAT

    def __init__(self, ctx: ImportContext, clock: Clock, order: _ParentOrder) -> None:
        super().__init__(ctx, clock, hold_results=True)
        self.order = order  # shared by the file's sessions: held lines go to the one they end
        # the last messages' usage by id (oldest first), which their next lines may repeat
        # (an OrderedDict: taking the oldest of a plain dict scans the holes its deletions
        # left at the front, tens of entries per message)
        self.recent: OrderedDict[str, tuple[str | None, bool, _Counts]] = OrderedDict()
        # settled messages summed in plain lists (input, output, cache read, cache write,
        # requests): the main thread's, sub-agents', and per model (at most
        # usage.MAX_MODELS, in the order first settled); Tallies once the session ends
        self._sums: tuple[list[int], list[int]] = ([0] * 5, [0] * 5)
        self._model_sums: dict[str, list[int]] = {}
        self.main = Tally()
        self.sub = Tally()
        self.result_usage: dict[str, Any] | None = None
        self.result_models: Tokens | None = None
        self.saw_init = False
        self.saw_result = False
        self.session_file = False
        self.last_stop: str | None = None
        self._mid: Any = None  # the message id of the last assistant line, its usage, metadata
        self._mid_usage: Any = None
        self._mid_meta: dict[str, Any] | None = None

    # --- lines -------------------------------------------------------------------------

    def starts_session(self, obj: dict[str, Any]) -> bool:
        """A new init, a line after the result, or another ``sessionId``."""
        return (
            self.saw_result or self.session_file or obj.get("type") == "system"
        ) and _new_session(self, obj)

    def feed(self, lineno: int, obj: dict[str, Any]) -> None:
        """Session-file lines in ``parentUuid`` order, stream-json lines as they come."""
        if "parentUuid" in obj:
            for ln, o in self.order.push(lineno, obj):
                self.guarded(ln, o)
        else:
            self.guarded(lineno, obj)

    def line(self, obj: dict[str, Any]) -> None:
        ctx, info = self.ctx, self.info
        t = obj.get("type")
        raw = obj.get("timestamp")
        # the lines of one message share a timestamp: the common case without a call
        ts = self._ts if type(raw) is str and raw == self._raw else self.time(raw)
        if info.session_id is None:
            sid = obj.get("session_id") or obj.get("sessionId")
            if sid is not None:
                info.session_id = as_id(ctx, sid, "session id")
        if "sessionId" in obj:
            self.session_file = True
            version = obj.get("version")
            if type(version) is str and version:
                info.harness_version = version[:100]
        parent = obj.get("parent_tool_use_id")
        if parent is not None:
            agent = as_id(ctx, parent, "parent_tool_use_id")
        elif obj.get("isSidechain") is True:
            agent = as_id(ctx, obj.get("agentId"), "agentId") or "sidechain"
        else:
            agent = None
        if t == "assistant":
            self.assistant(obj, ts, agent)
        elif t == "user":
            self.user(obj, ts, agent)
        elif t == "system":
            self.system(obj, ts, agent)
        elif t == "result":
            self.result(obj, ts)

    def assistant(self, obj: dict[str, Any], ts: Any, agent: str | None) -> None:
        ctx, b = self.ctx, self.b
        msg = obj["message"]
        if type(msg) is not dict:
            raise TypeError(f"message is {short(msg)}, not an object")
        mid = msg.get("id")
        model = msg.get("model")
        if type(model) is not str:
            model = None
        u = msg.get("usage")
        if mid != self._mid or u != self._mid_usage:
            # a message's lines repeat its id and usage: read them once
            if type(mid) is str and type(u) is dict:
                self._usage(mid, model, agent is not None, _tally(ctx, u, "message.usage"))
            self._mid, self._mid_usage = mid, u
            self._mid_meta = {"message_id": mid} if type(mid) is str else None
        meta = self._mid_meta
        if agent is None:
            if model and not self.info.model:
                self.info.model = model[:200]
            stop = msg.get("stop_reason")
            if stop is not None:
                self.last_stop = stop if type(stop) is str else None
        content = msg.get("content")
        if type(content) is str:
            b.step(ASSISTANT, MESSAGE, content, ts=ts, meta=meta, agent=agent)
            content = ()
        elif type(content) is not list:
            if content is not None:
                raise TypeError(f"message.content is {short(content)}, not a list")
            content = ()
        for block in content:
            if type(block) is not dict:
                continue
            kind = block.get("type")
            if kind == "text":
                b.step(
                    ASSISTANT, MESSAGE, as_text(block.get("text")), ts=ts, meta=meta, agent=agent
                )
            elif kind in _CALL_BLOCKS:
                b.call(
                    block.get("name"),
                    block.get("id"),
                    block.get("input"),
                    ts=ts,
                    meta=meta,
                    agent=agent,
                )
            elif kind in ("thinking", "redacted_thinking"):
                b.step(
                    ASSISTANT,
                    THINKING,
                    as_text(block.get("thinking")),
                    ts=ts,
                    meta=meta,
                    agent=agent,
                )
            elif type(kind) is str and kind.endswith("_tool_result"):
                b.result(
                    block.get("tool_use_id"),
                    text_of(block.get("content")),
                    is_error=block.get("is_error") is True,
                    ts=ts,
                    agent=agent,
                )
        if obj.get("error"):
            b.step(HARNESS, ERROR, as_text(obj["error"]), ts=ts, is_error=True, agent=agent)

    def _usage(self, mid: str, model: str | None, sub: bool, t: _Counts) -> None:
        # usage repeats on every line of a message: keep the latest, count it once
        recent = self.recent
        if mid in recent:
            recent.move_to_end(mid)  # it is the latest again
        recent[mid] = (model, sub, t)
        if len(recent) > _RECENT:
            self._settle(*recent.popitem(last=False)[1])  # the oldest message settled

    def _settle(self, model: str | None, sub: bool, t: _Counts) -> None:
        i, o, cr, cw = t
        s = self._sums[sub]
        s[0] += i
        s[1] += o
        s[2] += cr
        s[3] += cw
        s[4] += 1
        if model:
            m = self._model_sums.get(model)
            if m is None:
                if len(self._model_sums) >= MAX_MODELS:
                    return  # as Tokens.add_model: a hostile file naming a model per line
                m = self._model_sums[model] = [0] * 5
            m[0] += i
            m[1] += o
            m[2] += cr
            m[3] += cw
            m[4] += 1

    def user(self, obj: dict[str, Any], ts: Any, agent: str | None) -> None:
        b = self.b
        msg = obj["message"]
        if type(msg) is not dict:
            raise TypeError(f"message is {short(msg)}, not an object")
        content = msg.get("content")
        injected = bool(obj.get("isMeta") or obj.get("isCompactSummary"))
        if type(content) is str:
            self._user_text(content, injected, ts, agent)
            return
        if type(content) is not list:
            raise TypeError(f"message.content is {short(content)}, not text or a list")
        results = len(content) > 1 and any(
            type(x) is dict and x.get("type") == "tool_result" for x in content
        )
        for block in content:
            if type(block) is not dict:
                continue
            kind = block.get("type")
            if kind == "tool_result":
                b.result(
                    block.get("tool_use_id"),
                    text_of(block.get("content")),
                    is_error=block.get("is_error") is True,
                    ts=ts,
                    agent=agent,
                )
            elif kind == "text":
                # text beside tool results is what the harness added to them (hook feedback)
                self._user_text(as_text(block.get("text")), injected or results, ts, agent)
            elif kind == "image":
                self._user_text("[image]", injected or results, ts, agent)

    def _user_text(self, text: str, injected: bool, ts: Any, agent: str | None) -> None:
        if injected or is_harness_text(text):
            self.b.step(HARNESS, MESSAGE, text, ts=ts, agent=agent)
            return
        if agent is None and self.info.task_text is None:
            self.info.task_text = text
        self.b.step(USER, MESSAGE, text, ts=ts, agent=agent)

    def system(self, obj: dict[str, Any], ts: Any, agent: str | None) -> None:
        ctx, info = self.ctx, self.info
        sub = obj.get("subtype")
        if sub == "init":
            self.saw_init = True
            model = obj.get("model")
            if type(model) is str and model:
                info.model = model[:200]
            version = obj.get("claude_code_version")
            if type(version) is str and version:
                info.harness_version = version[:100]
            tools = obj.get("tools")
            info.metadata["cwd"] = as_text(obj.get("cwd")) or None
            info.metadata["tools"] = (
                [x for x in tools if type(x) is str] if type(tools) is list else []
            )
        elif sub in ("hook_started", "hook_response"):
            outcome = obj.get("outcome")
            self.b.step(
                HARNESS,
                HOOK,
                as_text(obj.get("output") or obj.get("hook_name") or ""),
                tool_name=as_id(ctx, obj.get("hook_event") or obj.get("hook_name"), "hook name"),
                exit_code=obj.get("exit_code"),
                is_error=outcome in ("error", "blocked"),
                ts=ts,
                meta={"subtype": sub},
                agent=agent,
            )
        elif sub == "compact_boundary":
            meta = obj.get("compact_metadata") or obj.get("compactMetadata")
            self.b.step(
                HARNESS,
                COMPACTION,
                "context compacted",
                ts=ts,
                meta=meta if type(meta) is dict else None,
                agent=agent,
            )

    def result(self, obj: dict[str, Any], ts: Any) -> None:
        ctx, info = self.ctx, self.info
        self.saw_result = True
        cost = as_cost(ctx, obj.get("total_cost_usd"), "total_cost_usd")
        if cost is not None:
            info.cost_usd = (info.cost_usd or 0.0) + cost
        for k in ("num_turns", "duration_ms", "duration_api_ms", "subtype", "terminal_reason"):
            v = obj.get(k)
            if type(v) is str or (type(v) is int and 0 <= v < 2**53):
                info.metadata[k] = v
        status = obj.get("api_error_status")
        if type(status) is int and 0 <= status < 1000:
            info.metadata["api_error_status"] = status
        sub = obj.get("subtype")
        sub = sub if type(sub) is str else ""
        failed = obj.get("is_error") is True or sub.startswith("error")
        if failed:
            errors = obj.get("errors")
            if type(errors) is list and errors:
                detail = "; ".join(as_text(e) for e in errors[:20])
            else:
                detail = as_text(obj.get("result")) or sub or "error"
            info.error = detail
            self.b.step(HARNESS, ERROR, detail, ts=ts, is_error=True)
        else:
            info.error = None
        info.status = (
            RunStatus.LIMIT_EXCEEDED
            if sub in ("error_max_turns", "error_max_budget_usd")
            else RunStatus.FAILED
            if failed
            else RunStatus.COMPLETED
        )
        u = obj.get("usage")
        if type(u) is dict:
            self.result_usage = u
        models = obj.get("modelUsage")
        if type(models) is dict and models:
            self.result_models = self.result_models or Tokens()
            for name, m in models.items():
                if type(m) is not dict:
                    ctx.bad(f"modelUsage.{short(name, 40)} is not an object")
                    continue
                what = f"modelUsage.{short(name, 40)}"
                self.result_models.add(
                    name[:200],
                    Tally(
                        as_count(ctx, m.get("inputTokens"), f"{what}.inputTokens"),
                        as_count(ctx, m.get("outputTokens"), f"{what}.outputTokens"),
                        as_count(
                            ctx, m.get("cacheReadInputTokens"), f"{what}.cacheReadInputTokens"
                        ),
                        as_count(
                            ctx,
                            m.get("cacheCreationInputTokens"),
                            f"{what}.cacheCreationInputTokens",
                        ),
                        cost=as_cost(ctx, m.get("costUSD"), f"{what}.costUSD"),
                    ),
                )

    # --- the end -------------------------------------------------------------------------

    def close(self) -> None:
        """Lines still waiting for their parent go in; a file cut off ends unfinished."""
        for ln, o in self.order.flush():
            self.guarded(ln, o)
        if self.ctx.truncated:
            self.saw_result = False  # the file was cut off: whatever it said, this session stopped
            self.session_file = False

    def finish(self) -> Item:
        ctx, info = self.ctx, self.info
        for model, sub, t in self.recent.values():
            self._settle(model, sub, t)
        self.recent.clear()
        for tally, (i, o, cr, cw, n) in zip((self.main, self.sub), self._sums, strict=True):
            tally.add(Tally(i, o, cr, cw, requests=n))
        for model, (i, o, cr, cw, n) in self._model_sums.items():
            self.tokens.add_model(model, Tally(i, o, cr, cw, requests=n))
        self._sums = ([0] * 5, [0] * 5)
        self._model_sums = {}
        requests = self.main.requests + self.sub.requests
        self.tokens.total = Tally()
        self.tokens.total.add(self.main)
        self.tokens.total.add(self.sub)
        if self.result_models is not None:
            # modelUsage covers every model the session used, sub-agents included
            self.tokens = self.result_models
            if self.tokens.total.requests == 0:
                self.tokens.total.requests = requests
        elif self.result_usage is not None:
            # stream-json lines carry each message's usage at its start (output not yet
            # counted); the result's totals are the main thread's own count, field by field
            main = self.main
            for attr, key in _USAGE_FIELDS:
                if key in self.result_usage:
                    setattr(main, attr, as_count(ctx, self.result_usage[key], f"usage.{key}"))
            total = Tally()
            total.add(main)
            total.add(self.sub)
            self.tokens.total = total
        if self.session_file and not self.saw_result:
            # session files have no result line: a final end_turn with no call left open
            done = self.last_stop == "end_turn" and self.b.open_calls == 0
            info.status = RunStatus.COMPLETED if done else RunStatus.INCOMPLETE
        elif not self.saw_result:
            info.status = RunStatus.INCOMPLETE
        return self.end()


def claude_code_items(ctx: ImportContext) -> Iterator[Item]:
    """Rows and session ends of a Claude Code transcript."""
    clock = Clock()
    order = _ParentOrder()
    return line_items(ctx, lambda: _Session(ctx, clock, order))


def _new_session(s: _Session, obj: dict[str, Any]) -> bool:
    """Whether this line starts another session appended to the file."""
    t = obj.get("type")
    if t == "system":
        sub = obj.get("subtype")
        if sub == "init":
            return s.saw_init or s.saw_result
        starts = (
            sub in ("hook_started", "hook_response") and obj.get("hook_event") == "SessionStart"
        )
        return starts and (s.saw_result or s.saw_init)
    if s.saw_result and t in ("assistant", "user"):
        return True
    sid = obj.get("sessionId")
    return (
        sid is not None
        and s.session_file
        and s.info.session_id is not None
        and (sid != s.info.session_id)
    )
