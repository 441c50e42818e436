"""Sessions of a line transcript: the one driver every line format plugs into, and merging.

``line_items`` is the transcript loop every JSONL format shares: it reads the lines
(``iter_json_lines``: hashing, BOM, size limit, JSON errors at file:line), hands each
object to the format's ``LineSession``, turns whatever a line's unexpected shape raises
into a problem at that line, starts a new session where the format says one starts, and
hands the rows on in chunks. A format only says what one line means.

Several sessions in one file become one run (the last session decides its status) or one each.

A harness that resumes a session often appends the new session's output to the same
file. Readers mark where each session ends (``SessionEnd`` with that session's info);
here the sessions become either one transcript — steps numbered on, usage and cost
summed, status and error from the last session — or one transcript per session.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import Record, StepBuilder
from lhbench.ingest.lines import iter_json_lines
from lhbench.ingest.usage import Tally, Tokens
from lhbench.ingest.values import Clock

__all__ = [
    "Item",
    "LineSession",
    "SessionEnd",
    "SessionState",
    "Transcript",
    "describe",
    "keep_rows_on_stop",
    "line_items",
    "merge_sessions",
    "split_sessions",
]

_SESSION_IDS = 100
_CHUNK_ROWS = 512  # rows handed on at once while a session is read


@dataclass
class SessionEnd:
    """The rows before this mark belong to a session that has ended; here is its info."""

    info: TranscriptInfo


Item = list[Record] | SessionEnd
Transcript = tuple[TranscriptInfo, Iterator[list[Record]]]


def keep_rows_on_stop(ctx: ImportContext, items: Iterator[Item]) -> Iterator[Item]:
    """``items``, and when a problem stops them (strict), the rows built before it first."""
    try:
        yield from items
    except TranscriptError:
        b = ctx.builder
        if b is not None and b.out:
            yield b.take()
        raise


def merge_sessions(source: str, items: Iterator[Item]) -> Transcript:
    """One transcript of every session in the file."""
    total = TranscriptInfo(source=source, sessions=0)
    return total, _merged(total, items)


def _merged(total: TranscriptInfo, items: Iterator[Item]) -> Iterator[list[Record]]:
    offset = 0  # rows before this session (each session numbers its own from 0)
    seen = 0
    for item in items:
        if isinstance(item, SessionEnd):
            _merge(total, item.info)
            offset = seen
            continue
        if offset:
            for rec in item:
                rec[0] += offset
        seen += len(item)
        yield item


def _merge(total: TranscriptInfo, s: TranscriptInfo) -> None:
    first = total.sessions == 0
    total.sessions += 1
    total.status, total.error = s.status, s.error  # the last session decides
    if first:
        total.usage, total.model_usage = s.usage, dict(s.model_usage)
        total.cost_usd = s.cost_usd
    else:
        t = Tally.of(total.usage)
        t.add(Tally.of(s.usage))
        total.usage = t.usage()
        for model, u in s.model_usage.items():
            mt = Tally.of(total.model_usage[model]) if model in total.model_usage else Tally()
            mt.add(Tally.of(u))
            total.model_usage[model] = mt.usage()
        if s.cost_usd is not None:
            total.cost_usd = (total.cost_usd or 0.0) + s.cost_usd
    total.session_id = total.session_id or s.session_id
    total.task_text = total.task_text or s.task_text
    total.started_at = total.started_at or s.started_at
    total.ended_at = s.ended_at or total.ended_at
    total.model = s.model or total.model
    total.harness_version = s.harness_version or total.harness_version
    total.metadata.update(s.metadata)
    if s.session_id:
        ids = total.metadata.setdefault("session_ids", [])
        if len(ids) < _SESSION_IDS and (not ids or ids[-1] != s.session_id):
            ids.append(s.session_id)


def split_sessions(source: str, items: Iterator[Item]) -> Iterator[Transcript]:
    """One transcript per session, keyed ``s1``, ``s2`` … (its info filled in when it ends)."""
    it = iter(items)
    n = 0
    while True:
        try:
            first = next(it)
        except StopIteration:
            return
        n += 1
        info = TranscriptInfo(source=source, key=f"s{n}")
        rows = _session(info, first, it)
        yield info, rows
        for _ in rows:  # the consumer may not have read it all: move on to the next session
            pass


def _session(info: TranscriptInfo, first: Item, it: Iterator[Item]) -> Iterator[list[Record]]:
    item = first
    while True:
        if isinstance(item, SessionEnd):
            for f in fields(TranscriptInfo):
                if f.name != "key":
                    setattr(info, f.name, getattr(item.info, f.name))
            return
        yield item
        try:
            item = next(it)
        except StopIteration:
            return


class SessionState:
    """What a reader keeps for the session it is reading: info, rows, tokens, clock."""

    def __init__(
        self, ctx: ImportContext, clock: Clock | None = None, *, hold_results: bool = False
    ) -> None:
        self.ctx = ctx
        self.info = TranscriptInfo(source=str(ctx.path))
        self.b = StepBuilder(ctx, hold_results=hold_results)
        ctx.builder = self.b
        self.tokens = Tokens()
        self.clock = clock or Clock()
        self._raw: Any = None
        self._ts: datetime | None = None

    def time(self, raw: Any) -> datetime | None:
        """A line's timestamp, which also moves the session's start and end."""
        if raw is None:
            return None
        if raw == self._raw and type(raw) is str:
            return self._ts  # the lines of one message share it: seen, and counted, already
        ts = self.clock(self.ctx, raw)
        self._raw, self._ts = raw, ts
        if ts is not None:
            info = self.info
            if info.started_at is None or ts < info.started_at:
                info.started_at = ts
            if info.ended_at is None or ts > info.ended_at:
                info.ended_at = ts
        return ts

    def end(self) -> SessionEnd:
        """The session's end mark (held results are emitted first: see ``StepBuilder.flush``)."""
        self.b.flush()
        info = self.info
        info.usage = self.tokens.total.usage()
        info.model_usage = self.tokens.per_model()
        if info.cost_usd is None:
            info.cost_usd = info.usage.cost_usd
        elif info.usage.cost_usd is None:
            info.usage = info.usage.model_copy(update={"cost_usd": info.cost_usd})
        return SessionEnd(info)


class LineSession(SessionState):
    """A session of a line format: what one line means, where a session starts and ends.

    Subclasses set ``FORMAT`` (named in problems) and implement ``line``; ``line_items``
    drives them.
    """

    FORMAT: ClassVar[str] = ""
    # how a line's unexpected shape is described after the format's name
    SHAPE: ClassVar[str] = "unexpected event shape: "

    def line(self, obj: dict[str, Any]) -> None:
        """Read one line's object into the session (raising on a shape it cannot read)."""
        raise NotImplementedError

    def starts_session(self, obj: dict[str, Any]) -> bool:
        """Whether this line starts another session appended to the file (it must not raise)."""
        return False

    def feed(self, lineno: int, obj: dict[str, Any]) -> None:
        """Read a line; a format that reorders lines hands each to ``guarded`` itself."""
        self.guarded(lineno, obj)

    def guarded(self, lineno: int, obj: dict[str, Any]) -> None:
        """``line``, with whatever an unexpected shape raises recorded as a problem at its line."""
        self.ctx.line = lineno
        try:
            self.line(obj)
        except TranscriptError:
            raise
        except Exception as exc:  # an unexpected shape is this line's problem, never a crash
            self.ctx.problem(lineno, f"{self.FORMAT}: {self.SHAPE}{describe(exc)}")

    def close(self) -> None:
        """Before the session's last rows are taken (lines a format held back go in here)."""

    def finish(self) -> Item:
        """The session's end mark, its status settled."""
        return self.end()


S = TypeVar("S", bound=LineSession)


def line_items(ctx: ImportContext, new_session: Callable[[], S]) -> Iterator[Item]:
    """Rows and session ends of a line transcript, read by the sessions ``new_session`` makes."""
    s = new_session()
    for lineno, obj in iter_json_lines(ctx):
        if s.starts_session(obj):
            yield from _end(s)
            s = new_session()
        s.feed(lineno, obj)
        if len(s.b.out) >= _CHUNK_ROWS:
            yield s.b.take()
    yield from _end(s)


def _end(s: LineSession) -> Iterator[Item]:
    s.close()
    yield s.b.take()
    yield s.finish()


def describe(exc: Exception) -> str:
    """An exception raised by an unexpected shape, as a problem message."""
    if isinstance(exc, KeyError):
        return f"missing field {exc}"
    text = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {text}"[:300]
