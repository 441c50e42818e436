"""Inspect AI eval logs, ``.eval`` and ``.json``; each sample (per epoch) is one trajectory.

``.eval`` is a zip of ``header.json`` and ``samples/*.json`` (zstd-compressed by current
Inspect; see ``archive``); ``.json`` is one EvalLog document with its samples inline.
Both are streamed: a sample's messages become rows as they are parsed, its ``events``
(which repeat the messages, and can be most of the file) are skipped, so memory does not
grow with the log.

Sample messages follow Inspect's ChatMessage shapes: ``role`` system/user/assistant/tool;
``content`` a string or a list of content items (``text``, ``reasoning``, …); assistant
``tool_calls`` (``id``, ``function``, ``arguments``); tool messages with ``tool_call_id``,
``function`` and ``error`` (``{type, message}``). Usage is the sample's ``model_usage``
per model (Inspect's own input count already excludes cache reads, and its output count
includes reasoning, as lhbench's do); the end time is ``completed_at``, else the start
plus ``total_time``.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from lhbench.errors import TranscriptError
from lhbench.ingest.archive import ZSTD, ArchiveError, MemberStream, open_member
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import (
    ASSISTANT,
    ERROR,
    HARNESS,
    MESSAGE,
    SYSTEM,
    THINKING,
    USER,
    Record,
    StepBuilder,
)
from lhbench.ingest.jsonstream import Events
from lhbench.ingest.lines import HashingReader, file_digest
from lhbench.ingest.roles import is_harness_text
from lhbench.ingest.sessions import Transcript, describe
from lhbench.ingest.usage import Tally, Tokens
from lhbench.ingest.values import Clock, as_cost, as_count, as_id, as_text, short, text_of
from lhbench.schema import RunStatus

__all__ = ["read_inspect", "sniff_inspect"]

FORMAT = "inspect"
_HEADER_KEYS = ("version", "status", "eval", "stats", "error")
_SAMPLE_KEYS = (
    "id",
    "epoch",
    "target",
    "scores",
    "model_usage",
    "error",
    "limit",
    "total_time",
    "working_time",
    "started_at",
    "completed_at",
    "uuid",
)


def sniff_inspect(path_suffix: str, objs: list[dict[str, Any]]) -> bool:
    """``.eval`` files, or a JSON document with ``eval`` and ``samples``."""
    return path_suffix == ".eval" or any(
        "eval" in o and ("samples" in o or "version" in o) for o in objs
    )


def _content(content: Any) -> tuple[str, str]:
    """(text, reasoning) of a message's content."""
    if type(content) is str:
        return content, ""
    if type(content) is not list:
        return as_text(content), ""
    text, reasoning = [], []
    for item in content:
        if type(item) is not dict:
            continue
        kind = item.get("type")
        if kind == "reasoning":
            r = item.get("reasoning") or item.get("summary")
            reasoning.append("[redacted]" if item.get("redacted") and not r else as_text(r))
        elif kind == "text":
            text.append(as_text(item.get("text")))
        else:
            part = text_of(item)
            if part:
                text.append(part)
    return "\n".join(t for t in text if t), "\n".join(r for r in reasoning if r)


class _Sample:
    """One sample being read: the fields seen so far, its rows, its info."""

    def __init__(
        self, ctx: ImportContext, header: dict[str, Any], ordinal: int, where: str
    ) -> None:
        self.ctx = ctx
        self.header = header
        self.ordinal = ordinal
        self.where = where
        self.fields: dict[str, Any] = {}
        self.b = StepBuilder(ctx)
        self.info = TranscriptInfo(source=str(ctx.path))
        self.broken: str | None = None
        self.n_messages = 0

    def problem(self, message: str) -> None:
        self.ctx.problem(1, f"{FORMAT}: {self.where}: {message}")

    def key(self) -> str:
        sid, epoch = self.fields.get("id"), self.fields.get("epoch", 1)
        if type(sid) not in (str, int) or isinstance(sid, bool):
            return f"sample{self.ordinal}"
        epoch = epoch if type(epoch) is int and 0 <= epoch < 10**6 else 1
        return f"{str(sid)[:100]}-e{epoch}"

    def message(self, m: Any) -> None:
        b, info = self.b, self.info
        where = f"messages[{self.n_messages}]"
        self.n_messages += 1
        if type(m) is not dict:
            self.problem(f"{where}: {short(m)} is not a message")
            return
        role = m.get("role")
        text, reasoning = _content(m.get("content"))
        if role == "system":
            b.step(SYSTEM, MESSAGE, text)
        elif role == "user":
            if is_harness_text(text):
                b.step(HARNESS, MESSAGE, text)
            else:
                info.task_text = info.task_text or text
                b.step(USER, MESSAGE, text)
        elif role == "assistant":
            if reasoning:
                b.step(ASSISTANT, THINKING, reasoning)
            if text:
                b.step(ASSISTANT, MESSAGE, text)
            calls = m.get("tool_calls")
            for call in calls if type(calls) is list else []:
                if type(call) is dict:
                    args = call.get("arguments")
                    b.call(
                        call.get("function"),
                        call.get("id"),
                        args if type(args) is dict else {"arguments": args},
                    )
        elif role == "tool":
            err = m.get("error")
            if type(err) is dict:
                note = f"{as_text(err.get('type'))}: {as_text(err.get('message'))}"
                output = f"{text}\n{note}".strip()
            else:
                output = text
            b.result(
                m.get("tool_call_id") or f"anon-{b.count}",
                output,
                is_error=bool(err),
                tool_name=m.get("function"),
            )
        else:
            self.problem(f"{where}: unknown message role {short(role)}")

    def finish(self) -> None:
        """Fill the info from the sample's fields and the log header (once all are read)."""
        ctx, info, f = self.ctx, self.info, self.fields
        ev = self.header.get("eval")
        ev = ev if type(ev) is dict else {}
        clock = Clock()
        info.key = info.key or self.key()
        run_id = ev.get("run_id")
        info.session_id = as_id(ctx, run_id, "eval.run_id") if run_id else None
        model = ev.get("model")
        info.model = model[:200] if type(model) is str and model else None
        packages = ev.get("packages")
        version = packages.get("inspect_ai") if type(packages) is dict else None
        info.harness_version = version[:100] if type(version) is str and version else None
        started = clock(ctx, f.get("started_at"), "started_at") or clock(
            ctx, ev.get("created"), "eval.created"
        )
        ended = clock(ctx, f.get("completed_at"), "completed_at")
        total = f.get("total_time")
        if ended is None and started is not None and type(total) in (int, float):
            seconds = float(total)  # type: ignore[arg-type]
            ended = started + timedelta(seconds=seconds) if 0 <= seconds < 1e9 else None
        if ended is None:
            stats = self.header.get("stats")
            if type(stats) is dict:
                ended = clock(ctx, stats.get("completed_at"), "stats.completed_at")
        info.started_at = started
        info.ended_at = ended if ended is None or started is None or ended >= started else None
        tokens = Tokens()
        usage = f.get("model_usage")
        if type(usage) is dict:
            for name, u in list(usage.items())[:64]:
                if type(u) is dict:
                    tokens.add(str(name)[:200], self._usage(u, f"model_usage.{short(name, 40)}"))
        info.usage = tokens.total.usage()
        info.model_usage = tokens.per_model()
        info.cost_usd = info.usage.cost_usd
        err = f.get("error")
        limit = f.get("limit")
        if err:
            info.error = as_text(err.get("message") if type(err) is dict else err) or "error"
            self.b.step(HARNESS, ERROR, info.error, is_error=True)
            info.status = RunStatus.FAILED
        elif self.broken:
            info.status = RunStatus.INCOMPLETE
        elif limit:
            kind = limit.get("type") if type(limit) is dict else limit
            info.error = f"{as_text(kind)} limit reached"
            info.status = RunStatus.LIMIT_EXCEEDED
        else:
            info.status = RunStatus.COMPLETED
        sid = f.get("id")
        info.metadata.update(
            {
                "task": ev.get("task") if type(ev.get("task")) is str else None,
                "sample_id": sid if type(sid) in (str, int) and not isinstance(sid, bool) else None,
                "epoch": f.get("epoch", 1) if type(f.get("epoch", 1)) is int else None,
                "scores": f.get("scores"),
                "target": f.get("target"),
            }
        )

    def _usage(self, u: dict[str, Any], what: str) -> Tally:
        ctx = self.ctx
        inp = as_count(ctx, u.get("input_tokens"), f"{what}.input_tokens")
        out = as_count(ctx, u.get("output_tokens"), f"{what}.output_tokens")
        cr = as_count(ctx, u.get("input_tokens_cache_read"), f"{what}.input_tokens_cache_read")
        cw = as_count(ctx, u.get("input_tokens_cache_write"), f"{what}.input_tokens_cache_write")
        total = as_count(ctx, u.get("total_tokens"), f"{what}.total_tokens")
        if (cr or cw) and total == inp + out and inp >= cr + cw:
            inp -= cr + cw  # an older log that counted cache reads inside its input
        return Tally(
            inp,
            out,
            cr,
            cw,
            reasoning=as_count(ctx, u.get("reasoning_tokens"), f"{what}.reasoning_tokens"),
            cost=as_cost(ctx, u.get("total_cost"), f"{what}.total_cost"),
        )


def _sample(events: Events, sample: _Sample) -> Iterator[Transcript]:
    """The sample whose opening ``{`` was just read: one transcript, rows streamed."""
    while True:
        e = events.next()
        if e is None or e[0] == "end_map":
            if e is None:
                sample.broken = events.error or "the document ended inside a sample"
                sample.problem(f"unreadable from here on: {sample.broken}")
            sample.finish()
            yield sample.info, iter([sample.b.take()])
            return
        if e[0] != "map_key":
            sample.problem("not an object")
            return
        key = e[1]
        first = events.next()
        if first is None:
            continue
        if key == "messages" and first[0] == "start_array":
            sample.info.key = sample.key()
            yield sample.info, _rows(events, sample)
            return
        _field(events, sample, key, first)


def _field(events: Events, sample: _Sample, key: str, first: tuple[str, Any]) -> None:
    if key in _SAMPLE_KEYS:
        value, problem = events.build(first)
        if problem:
            sample.problem(f"{key}: {problem}")
        sample.fields[key] = value
    else:
        events.skip(first)


def _rows(events: Events, sample: _Sample) -> Iterator[list[Record]]:
    b = sample.b
    while True:
        e = events.next()
        if e is None:
            sample.broken = events.error or "the document ended inside the messages"
            break
        if e[0] == "end_array":
            break
        m, problem = events.build(e)
        if problem:
            sample.problem(f"messages[{sample.n_messages}]: {problem}")
        try:
            sample.message(m)
        except TranscriptError:
            raise
        except Exception as exc:  # an unexpected shape is this message's problem
            sample.problem(f"messages[{sample.n_messages - 1}]: {describe(exc)}")
        if len(b.out) >= 512:
            yield b.take()
    while sample.broken is None:  # the fields after the messages: usage, error, times
        e = events.next()
        if e is None:
            sample.broken = events.error or "the document ended inside a sample"
            break
        if e[0] == "end_map":
            break
        first = events.next()
        if first is None:
            continue
        _field(events, sample, e[1], first)
    if sample.broken:
        sample.problem(f"unreadable from here on: {sample.broken}")
    sample.finish()
    yield b.take()


def _drain(transcripts: Iterator[Transcript]) -> Iterator[Transcript]:
    for info, rows in transcripts:
        yield info, rows
        for _ in rows:  # not read by the consumer: the stream must still move past it
            pass


def _read_json(ctx: ImportContext) -> Iterator[Transcript]:
    with ctx.path.open("rb") as f:
        reader = HashingReader(f)
        events = Events(reader)
        e = events.next()
        if e is None or e[0] != "start_map":
            ctx.problem(
                1, f"{FORMAT}: not an EvalLog object ({events.error or 'not a JSON object'})"
            )
            ctx.digest = reader.finish()
            return
        header: dict[str, Any] = {}
        ordinal = 0
        while True:
            e = events.next()
            if e is None or e[0] != "map_key":
                break
            key, first = e[1], events.next()
            if first is None:
                break
            if key == "samples" and first[0] == "start_array":
                while True:
                    item = events.next()
                    if item is None or item[0] == "end_array":
                        break
                    ordinal += 1
                    where = f"samples[{ordinal - 1}]"
                    if item[0] != "start_map":
                        ctx.problem(1, f"{FORMAT}: {where} is not an object")
                        events.skip(item)
                        continue
                    yield from _drain(_sample(events, _Sample(ctx, header, ordinal, where)))
            elif key in _HEADER_KEYS:
                value, problem = events.build(first)
                if problem:
                    ctx.problem(1, f"{FORMAT}: {key}: {problem}")
                header[key] = value
            else:
                events.skip(first)
        if events.error:
            ctx.problem(1, f"{FORMAT}: not valid JSON (cut off?): {events.error}")
            ctx.truncated = True
        ctx.digest = reader.finish()


def _read_eval(ctx: ImportContext) -> Iterator[Transcript]:
    try:
        zf = zipfile.ZipFile(ctx.path)
    except Exception as exc:  # BadZipFile, NotImplementedError (versions), OSError, …
        ctx.problem(1, f"{FORMAT}: not a readable .eval zip archive: {exc}")
        return
    with zf:
        try:
            infos = {i.filename: i for i in zf.infolist()}
        except Exception as exc:  # a directory zipfile accepted but cannot list
            ctx.problem(1, f"{FORMAT}: unreadable zip directory: {exc}")
            return
        header: dict[str, Any] = {}
        for name in ("header.json", "_journal/start.json"):
            if name in infos:
                header = _member_header(ctx, zf, infos[name])
                break
        samples = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        for k, name in enumerate(samples, 1):
            try:
                stream = open_member(zf, ctx.path, infos[name], ctx.limits)
            except ArchiveError as exc:
                ctx.problem(1, f"{FORMAT}: {exc}")
                continue
            try:
                yield from _drain(_member_sample(ctx, stream, header, k, name))
                info = infos[name]
                # zipfile checks the CRC of the methods it reads; zstd members are ours to check
                whole = info.compress_type == ZSTD and stream.bytes == info.file_size
                if whole and stream.crc != info.CRC:
                    ctx.problem(1, f"{FORMAT}: {name}: CRC mismatch (the member is damaged)")
            finally:
                stream.close()
    ctx.digest = file_digest(ctx.path)


def _member_header(
    ctx: ImportContext, zf: zipfile.ZipFile, info: zipfile.ZipInfo
) -> dict[str, Any]:
    try:
        stream = open_member(zf, ctx.path, info, ctx.limits)
    except ArchiveError as exc:
        ctx.problem(1, f"{FORMAT}: {exc}")
        return {}
    header: dict[str, Any] = {}
    try:
        events = Events(stream)
        e = events.next()
        if e is None or e[0] != "start_map":
            ctx.problem(1, f"{FORMAT}: {info.filename}: not an object")
            return {}
        while True:
            e = events.next()
            if e is None or e[0] != "map_key":
                break
            key, first = e[1], events.next()
            if first is None:
                break
            if key in _HEADER_KEYS:
                value, problem = events.build(first)
                if problem:
                    ctx.problem(1, f"{FORMAT}: {info.filename}: {key}: {problem}")
                header[key] = value
            else:
                events.skip(first)
        if events.error:
            ctx.problem(1, f"{FORMAT}: {info.filename}: not valid JSON: {events.error}")
    except ArchiveError as exc:
        ctx.problem(1, f"{FORMAT}: {exc}")
    finally:
        stream.close()
    return header


def _member_sample(
    ctx: ImportContext, stream: MemberStream, header: dict[str, Any], k: int, name: str
) -> Iterator[Transcript]:
    events = Events(stream)
    sample = _Sample(ctx, header, k, name)
    try:
        e = events.next()
        if e is None or e[0] != "start_map":
            ctx.problem(1, f"{FORMAT}: {name}: not a sample object ({events.error or 'empty'})")
            return
        yield from _sample(events, sample)
    except ArchiveError as exc:
        ctx.problem(1, f"{FORMAT}: {exc}")


def read_inspect(ctx: ImportContext) -> Iterator[Transcript]:
    """One transcript (info and row chunks) per sample and epoch."""
    if Path(ctx.path).suffix == ".eval":
        yield from _read_eval(ctx)
    else:
        yield from _read_json(ctx)
