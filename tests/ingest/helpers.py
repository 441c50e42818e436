"""Importing files into a store through the import job (as ``lhbench import`` does)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.api import ImportOutcome, import_transcripts
from lhbench.config import Settings
from lhbench.errors import TranscriptError
from lhbench.store import Store


@dataclass
class Imported:
    """What an import did, summed over its files."""

    outcome: ImportOutcome
    files: int = 0
    runs: int = 0
    already: int = 0
    incomplete: int = 0
    steps: int = 0
    skipped_lines: list[TranscriptError] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def import_paths(
    store: Store, paths: list[Path], *, settings: Settings | None = None, **kw: Any
) -> Imported:
    """Import ``paths`` into ``store``; the import job's results, summed."""
    settings = settings or Settings(home=Path(tempfile.mkdtemp(prefix="lhbench-import-")))
    out = import_transcripts(paths, store=store, settings=settings, **kw)
    res = Imported(out, files=out.summary.planned, already=out.summary.skipped)
    for f in out.files:
        res.runs += len(f.runs)
        res.already += f.already
        res.incomplete += f.incomplete
        res.steps += f.steps
        res.skipped_lines.extend(f.skipped_lines)
        res.run_ids.extend(f.runs)
        if f.error:
            res.failed.append(f.error)
    return res


ZSTD = 93


def zstd_frames(data: bytes, frames: int = 2) -> bytes:
    """``data`` zstd-compressed as several concatenated frames (as Inspect AI writes them)."""
    import zstandard

    step = max(1, -(-len(data) // frames))
    cctx = zstandard.ZstdCompressor()
    return b"".join(cctx.compress(data[i : i + step]) for i in range(0, len(data), step)) or (
        cctx.compress(b"")
    )


def write_zip(
    path: Path,
    members: dict[str, bytes],
    *,
    method: int = ZSTD,
    packed: dict[str, bytes] | None = None,
    declared: dict[str, int] | None = None,
) -> Path:
    """A zip written byte by byte, so members can use zstd (method 93) and lie about sizes.

    Args:
        path: Where to write it.
        members: Name → uncompressed bytes.
        method: 93 (zstd), 8 (deflate) or 0 (stored).
        packed: Name → bytes to store instead of compressing the member.
        declared: Name → the uncompressed size the headers claim.
    """
    import struct
    import zlib

    out = bytearray()
    central = bytearray()
    for name, data in members.items():
        if packed and name in packed:
            body = packed[name]
        elif method == ZSTD:
            body = zstd_frames(data)
        elif method == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            body = c.compress(data) + c.flush()
        else:
            body = data
        crc = zlib.crc32(data)
        size = (declared or {}).get(name, len(data))
        raw = name.encode()
        offset = len(out)
        out += struct.pack(
            "<4sHHHHHIIIHH",
            b"PK\x03\x04",
            63,
            0,
            method,
            0,
            0x21,
            crc,
            len(body),
            size,
            len(raw),
            0,
        )
        out += raw + body
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            63 | (3 << 8),
            63,
            0,
            method,
            0,
            0x21,
            crc,
            len(body),
            size,
            len(raw),
            0,
            0,
            0,
            0,
            0o644 << 16,
            offset,
        )
        central += raw
    cd_offset = len(out)
    out += central
    out += struct.pack(
        "<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), cd_offset, 0
    )
    path.write_bytes(bytes(out))
    return path
