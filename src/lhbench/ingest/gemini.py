"""Gemini CLI: ``--output-format stream-json`` events and ``--output-format json`` documents.

stream-json: every event has ``type`` and ``timestamp``: ``init`` (session, model),
``message`` (assistant text arrives as ``delta`` chunks to join), ``tool_use`` (tool name,
id, parameters), ``tool_result`` (joined on tool id, status, output or error), ``error``
(severity ``warning`` or ``error``), ``result`` (status, stats with token counts per
model). json: one object ``{session_id, response, stats, error}``.

Gemini counts cached tokens inside its prompt count; its ``input`` field is the rest,
which is what lhbench calls input tokens. Thought tokens are output (the json form
reports them; stream-json stats do not).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import ASSISTANT, ERROR, HARNESS, MESSAGE, USER
from lhbench.ingest.lines import HashingReader
from lhbench.ingest.roles import is_harness_text
from lhbench.ingest.sessions import Item, LineSession, describe, line_items
from lhbench.ingest.steps import steps_into
from lhbench.ingest.usage import Tally, Tokens
from lhbench.ingest.values import Clock, as_count, as_id, as_text, short, text_of
from lhbench.schema import RunStatus, Step

__all__ = ["gemini_items", "read_gemini", "sniff_gemini"]

FORMAT = "gemini-cli"
_DOCUMENT_BYTES = 256 << 20  # the json form is one document: read whole only up to this


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


def read_gemini(ctx: ImportContext, info: TranscriptInfo) -> Iterator[Step]:
    """Steps of a Gemini CLI transcript (either output format), its sessions merged."""
    return steps_into(info, gemini_items(ctx))


def _stream_usage(ctx: ImportContext, s: dict[str, Any], what: str) -> Tally:
    cached = as_count(ctx, s.get("cached"), f"{what}.cached")
    if "input" in s:
        fresh = as_count(ctx, s.get("input"), f"{what}.input")
    else:
        fresh = max(0, as_count(ctx, s.get("input_tokens"), f"{what}.input_tokens") - cached)
    return Tally(fresh, as_count(ctx, s.get("output_tokens"), f"{what}.output_tokens"), cached)


def _document_usage(ctx: ImportContext, m: dict[str, Any], what: str) -> Tally:
    tok = m.get("tokens")
    tok = tok if type(tok) is dict else {}
    api = m.get("api")
    api = api if type(api) is dict else {}
    cached = as_count(ctx, tok.get("cached"), f"{what}.tokens.cached")
    if "input" in tok:
        fresh = as_count(ctx, tok.get("input"), f"{what}.tokens.input")
    else:
        fresh = max(0, as_count(ctx, tok.get("prompt"), f"{what}.tokens.prompt") - cached)
    thoughts = as_count(ctx, tok.get("thoughts"), f"{what}.tokens.thoughts")
    return Tally(
        fresh,
        as_count(ctx, tok.get("candidates"), f"{what}.tokens.candidates") + thoughts,
        cached,
        reasoning=thoughts,
        requests=as_count(ctx, api.get("totalRequests"), f"{what}.api.totalRequests"),
    )


def _models(ctx: ImportContext, stats: dict[str, Any], usage: Any) -> Tokens:
    tokens = Tokens()
    models = stats.get("models")
    if type(models) is dict:
        for name, m in models.items():
            if type(m) is dict:
                tokens.add(name[:200], usage(ctx, m, f"stats.models.{short(name, 40)}"))
    return tokens


class _Session(LineSession):
    FORMAT = FORMAT

    def __init__(self, ctx: ImportContext, clock: Clock) -> None:
        super().__init__(ctx, clock, hold_results=True)
        self.pending: list[str] = []
        self.pending_ts: Any = None
        self.saw_init = False
        self.saw_result = False

    def flush_text(self) -> None:
        if self.pending:
            self.b.step(ASSISTANT, MESSAGE, "".join(self.pending), ts=self.pending_ts)
            self.pending.clear()
            self.pending_ts = None

    def starts_session(self, obj: dict[str, Any]) -> bool:
        """Each ``init`` after the first (or after a result) starts a session."""
        return obj.get("type") == "init" and (self.saw_init or self.saw_result)

    def line(self, obj: dict[str, Any]) -> None:
        ctx, info, b = self.ctx, self.info, self.b
        t = obj.get("type")
        ts = self.time(obj.get("timestamp"))
        if t == "message" and obj.get("role") == "assistant":
            self.pending.append(as_text(obj.get("content")))
            self.pending_ts = self.pending_ts or ts
            if obj.get("delta") is not True:
                self.flush_text()
            return
        self.flush_text()
        if t == "init":
            self.saw_init = True
            info.session_id = as_id(ctx, obj.get("session_id"), "session_id")
            model = obj.get("model")
            info.model = model[:200] if type(model) is str and model else info.model
        elif t == "message":
            text = as_text(obj.get("content"))
            if is_harness_text(text):
                b.step(HARNESS, MESSAGE, text, ts=ts)
            else:
                info.task_text = info.task_text or text
                b.step(USER, MESSAGE, text, ts=ts)
        elif t == "tool_use":
            b.call(obj.get("tool_name"), obj.get("tool_id"), obj.get("parameters"), ts=ts)
        elif t == "tool_result":
            err = obj.get("error")
            err = err if type(err) is dict else {}
            out = obj.get("output")
            text = text_of(out) if out is not None else as_text(err.get("message"))
            meta = {"error_type": err.get("type")} if err else None
            b.result(
                obj.get("tool_id"), text, is_error=obj.get("status") == "error", ts=ts, meta=meta
            )
        elif t == "error":
            severity = obj.get("severity")
            text = as_text(obj.get("message"))
            if severity == "warning":
                b.step(HARNESS, MESSAGE, text, ts=ts, meta={"severity": "warning"})
            else:
                b.step(HARNESS, ERROR, text, ts=ts, is_error=True, meta={"severity": "error"})
        elif t == "result":
            self.saw_result = True
            stats = obj.get("stats")
            if type(stats) is dict:
                self.tokens = _models(ctx, stats, _stream_usage)
                if not self.tokens.models:
                    self.tokens.add(None, _stream_usage(ctx, stats, "stats"))
            if obj.get("status") == "error":
                err = obj.get("error")
                info.error = as_text(err.get("message") if type(err) is dict else err) or "error"
                info.status = RunStatus.FAILED
            else:
                info.status, info.error = RunStatus.COMPLETED, None

    def finish(self) -> Item:
        self.flush_text()
        if not self.saw_result or self.ctx.truncated:
            self.info.status = RunStatus.INCOMPLETE
        return self.end()


def _document(ctx: ImportContext, doc: dict[str, Any]) -> Iterator[Item]:
    s = _Session(ctx, Clock())
    info = s.info
    try:
        info.session_id = as_id(ctx, doc.get("session_id"), "session_id")
        stats = doc.get("stats")
        if stats is not None and type(stats) is not dict:
            raise TypeError(f"stats is {short(stats)}, not an object")
        stats = stats or {}
        s.tokens = _models(ctx, stats, _document_usage)
        if s.tokens.models:
            info.model = next(iter(s.tokens.models))
        if doc.get("response") is not None:
            s.b.step(ASSISTANT, MESSAGE, as_text(doc["response"]))
        warnings = doc.get("warnings")
        for w in warnings if type(warnings) is list else []:
            s.b.step(HARNESS, MESSAGE, as_text(w), meta={"severity": "warning"})
        if doc.get("error"):
            err = doc["error"]
            info.error = as_text(err.get("message") if type(err) is dict else err) or "error"
            s.b.step(HARNESS, ERROR, info.error, is_error=True)
            info.status = RunStatus.FAILED
        else:
            done = doc.get("response") is not None
            info.status = RunStatus.COMPLETED if done else RunStatus.INCOMPLETE
        tools = stats.get("tools")
        if type(tools) is dict:
            info.metadata["tool_stats"] = {
                k: v for k, v in tools.items() if type(v) is int and 0 <= v < 2**53
            }
    except TranscriptError:
        raise
    except Exception as exc:
        ctx.problem(1, f"{FORMAT}: unexpected document shape: {describe(exc)}")
    yield s.b.take()
    yield s.end()


def _single_document(ctx: ImportContext) -> dict[str, Any] | None:
    """The file as one JSON document (the json form, pretty-printed), or None if it is not."""
    with ctx.path.open("rb") as f:
        head = f.read(4096).lstrip()
        if not head.startswith(b"{") or b"\n" not in head:
            return None
        try:
            orjson.loads(head.split(b"\n", 1)[0])
            return None  # its first line is a whole object: the line form
        except orjson.JSONDecodeError:
            pass
        f.seek(0)
        reader = HashingReader(f)
        size = ctx.path.stat().st_size
        if size > _DOCUMENT_BYTES:
            ctx.problem(1, f"{FORMAT}: a json document over {_DOCUMENT_BYTES >> 20} MiB")
            ctx.digest = reader.finish()
            return {}
        data = reader.read(size)
        ctx.digest = reader.finish()
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None  # not one document after all: read it line by line
    return doc if type(doc) is dict else None


def gemini_items(ctx: ImportContext) -> Iterator[Item]:
    """Rows and session ends of a Gemini CLI transcript (each ``init`` starts a session)."""
    doc = _single_document(ctx)
    if doc is not None:
        yield from _document(ctx, doc)
        return
    clock = Clock()
    yield from line_items(ctx, lambda: _Session(ctx, clock))
