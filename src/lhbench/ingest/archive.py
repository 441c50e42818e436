"""Zip members as bounded streams: stored, deflate, bzip2, lzma, and zstd (method 93).

Inspect AI writes ``.eval`` logs as zips whose members current versions compress with
zstd, which Python's ``zipfile`` cannot read before 3.14: those members are read here
with the ``zstandard`` package. Every member is a stream (nothing is read whole), and a
member that is larger than the limit, or expands far more than JSON does, is refused
before it is read — and cut off if it turns out larger than its header said.
"""

from __future__ import annotations

import contextlib
import struct
import zipfile
import zlib
from pathlib import Path
from typing import IO, Any

import zstandard

from lhbench.ingest.base import Limits

__all__ = ["ArchiveError", "MemberStream", "open_member"]

ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_RATIO_FLOOR = 32 << 20  # below this size any ratio is fine: a small member is no bomb
_ZSTD_WINDOW = 1 << 27  # the largest window a frame may ask for (128 MiB)


class ArchiveError(Exception):
    """A member that cannot or must not be read, and why."""


class _Window:
    """At most ``size`` bytes of the archive file, from where it stands."""

    def __init__(self, f: IO[bytes], size: int) -> None:
        self._f = f
        self._left = size

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            return b""
        n = self._left if n is None or n < 0 else min(n, self._left)
        data: bytes = self._f.read(n)
        self._left -= len(data)
        return data


class MemberStream:
    """A member's uncompressed bytes, counted: more than ``limit`` raises ArchiveError."""

    def __init__(self, raw: Any, name: str, limit: int, owned: IO[bytes] | None = None) -> None:
        self._raw = raw
        self._name = name
        self._limit = limit
        self._owned = owned
        self.bytes = 0
        self.crc = 0

    def read(self, n: int = -1) -> bytes:
        """Read up to ``n`` uncompressed bytes."""
        if n == 0:
            return b""  # parsers probe with read(0) for bytes or text
        try:
            data: bytes = self._raw.read(n if n and n > 0 else 1 << 16)
        except Exception as exc:  # ZstdError, zlib.error, BadZipFile (CRC), EOFError, OSError …
            raise ArchiveError(f"{self._name}: cannot decompress: {exc}") from None
        self.bytes += len(data)
        if self.bytes > self._limit:
            raise ArchiveError(f"{self._name}: larger than its header says (or the limit)")
        self.crc = zlib.crc32(data, self.crc)
        return data

    def close(self) -> None:
        """Release the member (and the file handle opened for it, if any)."""
        for f in (self._raw, self._owned):
            if f is not None:
                with contextlib.suppress(Exception):  # closing a broken stream: best effort
                    f.close()


def open_member(
    zf: zipfile.ZipFile, path: Path, info: zipfile.ZipInfo, limits: Limits
) -> MemberStream:
    """A bounded stream of one member (ArchiveError says why it cannot be read)."""
    name = info.filename
    size, packed = info.file_size, info.compress_size
    if size > limits.member_bytes:
        raise ArchiveError(
            f"{name}: {size >> 20} MiB uncompressed, over the {limits.member_bytes >> 20} MiB limit"
        )
    if size > _RATIO_FLOOR and size > limits.member_ratio * max(packed, 1):
        raise ArchiveError(
            f"{name}: expands {size // max(packed, 1)}× ({packed} → {size} bytes), over the "
            f"{limits.member_ratio}× limit: refused as a zip bomb"
        )
    if info.flag_bits & 0x1:
        raise ArchiveError(f"{name}: encrypted")
    limit = size  # a member may not turn out larger than its header says
    if info.compress_type != ZSTD:
        try:
            return MemberStream(zf.open(info), name, limit)
        except Exception as exc:  # BadZipFile, NotImplementedError (methods), OSError, …
            raise ArchiveError(f"{name}: {exc}") from None
    f = path.open("rb")
    try:
        f.seek(info.header_offset)
        head = f.read(_LOCAL_HEADER.size)
        if len(head) != _LOCAL_HEADER.size:
            raise ArchiveError(f"{name}: local header cut off")
        sig, *_rest, name_len, extra_len = _LOCAL_HEADER.unpack(head)
        if sig != b"PK\x03\x04":
            raise ArchiveError(f"{name}: no local header where the directory says")
        f.seek(name_len + extra_len, 1)
        dctx = zstandard.ZstdDecompressor(max_window_size=_ZSTD_WINDOW)
        raw = dctx.stream_reader(_Window(f, packed), read_across_frames=True)  # type: ignore[arg-type]
    except ArchiveError:
        f.close()
        raise
    except (OSError, ValueError, struct.error, zstandard.ZstdError) as exc:
        f.close()
        raise ArchiveError(f"{name}: {exc}") from None
    return MemberStream(raw, name, limit, owned=f)
