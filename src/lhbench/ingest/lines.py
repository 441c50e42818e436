"""Reading a JSONL file: chunks hashed as they are read, lines numbered, JSON parsed.

One pass over the file does everything the import needs from its bytes: the SHA-256 of
the whole file (stored with its runs), the line numbers problems are reported at, and the
parsed objects. Lines longer than the limit are skipped without being held in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from lhbench.ingest.base import ImportContext

__all__ = ["HashingReader", "file_digest", "iter_json_lines"]

_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


def iter_json_lines(ctx: ImportContext) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every JSON-object line; blank lines are skipped.

    ``ctx.line`` follows the line being handed out; ``ctx.digest`` is set once the file
    has been read to its end.
    """
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    limit = ctx.limits.line_bytes
    h = hashlib.sha256()
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
            body = chunk[:end]
            if pending:
                pending.append(body)
                body = b"".join(pending)
            rest = chunk[end + 1 :]
            pending, pending_len = ([rest], len(rest)) if rest else ([], 0)
            for raw in body.split(b"\n"):
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
    ctx.digest = h.hexdigest()


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
