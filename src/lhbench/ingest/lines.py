"""Reading a JSONL file: chunks hashed as they are read, lines numbered, JSON parsed.

One pass over the file does everything the import needs from its bytes: the SHA-256 of
the whole file (stored with its runs), the line numbers problems are reported at, and the
parsed objects. Lines longer than the limit are skipped without being held in memory.
A large file's chunks are hashed on a second thread (hashlib releases the GIL while it
hashes), so the hash costs the parsing thread nothing.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import queue
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from lhbench.ingest.base import ImportContext

__all__ = ["HashingReader", "file_digest", "iter_json_lines"]

_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"
_THREAD_HASH = 32 << 20  # files larger than this are hashed on a second thread
_HASH_UNIT = 4 << 20  # …in pieces this large (one GIL hand-over each)
_HASH_QUEUE = 2  # pieces waiting to be hashed at most (bounded memory)


class _Hasher:
    """SHA-256 of the bytes given, computed inline or (``threaded``) on a second thread.

    The thread gets pieces of a few MiB: hashlib releases the GIL while it hashes one, and
    each piece costs one hand-over of the GIL. ``close`` stops the thread (also when the
    read stops early); ``hexdigest`` waits for the last piece.
    """

    def __init__(self, threaded: bool) -> None:
        self._h = hashlib.sha256()
        self._pending: list[bytes] = []
        self._size = 0
        self._queue: queue.Queue[bytes | None] | None = None
        self._thread: threading.Thread | None = None
        if threaded:
            self._queue = queue.Queue(_HASH_QUEUE)
            self._thread = threading.Thread(target=self._run, name="lhbench-sha256", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        assert self._queue is not None
        while (piece := self._queue.get()) is not None:
            self._h.update(piece)

    def update(self, chunk: bytes) -> None:
        if self._queue is None:
            self._h.update(chunk)
            return
        self._pending.append(chunk)
        self._size += len(chunk)
        if self._size >= _HASH_UNIT:
            self._hand_over()

    def _hand_over(self) -> None:
        assert self._queue is not None
        if self._pending:
            piece = self._pending[0] if len(self._pending) == 1 else b"".join(self._pending)
            self._pending, self._size = [], 0
            self._queue.put(piece)

    def close(self) -> None:
        if self._thread is not None and self._queue is not None:
            self._pending, self._size = [], 0
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    def hexdigest(self) -> str:
        if self._thread is not None:
            self._hand_over()
            self.close()
        return self._h.hexdigest()


def iter_json_lines(ctx: ImportContext) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every JSON-object line; blank lines are skipped.

    ``ctx.line`` follows the line being handed out; ``ctx.digest`` is set once the file
    has been read to its end.
    """
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    limit = ctx.limits.line_bytes
    try:
        threaded = ctx.path.stat().st_size > _THREAD_HASH
    except OSError:
        threaded = False
    h = _Hasher(threaded)
    try:
        yield from _lines(ctx, h, loads, decode_error, limit)
        ctx.digest = h.hexdigest()
    finally:
        h.close()


def _lines(
    ctx: ImportContext, h: _Hasher, loads: Any, decode_error: Any, limit: int
) -> Iterator[tuple[int, dict[str, Any]]]:
    lineno = 0
    pending: list[bytes] = []  # pieces of the line not yet ended
    pending_len = 0
    skipping = False  # inside a line longer than the limit: drop bytes until its end
    with ctx.path.open("rb") as f:
        first = True
        while chunk := f.read(_CHUNK):
            h.update(chunk)
            if first:
                first = False
                if chunk.startswith(_BOM):
                    chunk = chunk[len(_BOM) :]
            if skipping:
                cut = chunk.find(b"\n")
                if cut < 0:
                    continue
                chunk = chunk[cut + 1 :]
                skipping = False
            end = chunk.rfind(b"\n")
            if end < 0:
                pending.append(chunk)
                pending_len += len(chunk)
                if pending_len > limit:
                    lineno += 1
                    ctx.problem(lineno, f"line longer than {limit >> 20} MiB; skipped")
                    pending, pending_len, skipping = [], 0, True
                continue
            # the chunk's lines (each with its newline, which JSON reads as space), the
            # first completed by what came before; what follows the last newline is the
            # start of a line not ended yet. A BytesIO finds the ends with memchr: a
            # split(b"\n") looks at every byte in a loop of its own (0.08-0.16 s of CPU
            # for 200 MB, against 0.02 s)
            body = io.BytesIO(chunk[: end + 1]) if end + 1 < len(chunk) else io.BytesIO(chunk)
            rest = chunk[end + 1 :]
            if pending:
                pending.append(body.readline())
                parts: Iterable[bytes] = itertools.chain((b"".join(pending),), body)
            else:
                parts = body
            pending, pending_len = ([rest], len(rest)) if rest else ([], 0)
            for raw in parts:
                lineno += 1
                try:
                    obj = loads(raw)
                except decode_error as exc:
                    if raw.strip():
                        ctx.problem(lineno, f"not valid JSON: {exc}")
                    continue
                if type(obj) is not dict:
                    ctx.problem(lineno, f"expected a JSON object, found {_kind(obj)}")
                    continue
                ctx.line = lineno
                yield lineno, obj
        if pending and not skipping:
            lineno += 1
            yield from _last_line(ctx, lineno, b"".join(pending))


def _last_line(ctx: ImportContext, lineno: int, raw: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        if raw.strip():
            # killed mid-write: keep what came before, mark the transcript incomplete
            ctx.truncated = True
            ctx.problems += 1
            if len(ctx.skipped) < ctx.limits.problems:
                from lhbench.errors import TranscriptError

                ctx.skipped.append(
                    TranscriptError(ctx.path, lineno, "truncated last line (run killed mid-write?)")
                )
        return
    if type(obj) is not dict:
        ctx.problem(lineno, f"expected a JSON object, found {_kind(obj)}")
        return
    ctx.line = lineno
    yield lineno, obj


def _kind(obj: Any) -> str:
    return {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(obj), "a number"
    )


class HashingReader:
    """A binary file that hashes what is read from it (for parsers that pull bytes)."""

    def __init__(self, f: IO[bytes]) -> None:
        self._f = f
        self._h = hashlib.sha256()
        self.bytes = 0

    def read(self, n: int = -1) -> bytes:
        """Read and hash up to ``n`` bytes."""
        data = self._f.read(n)
        self._h.update(data)
        self.bytes += len(data)
        return data

    def finish(self) -> str:
        """The SHA-256 of the whole file (the rest is read and hashed if the parser stopped)."""
        while data := self._f.read(_CHUNK):
            self._h.update(data)
        return self._h.hexdigest()


def file_digest(path: Path) -> str:
    """SHA-256 of a file, read in chunks (for formats not read front to back)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()
