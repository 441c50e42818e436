"""A frozen extraction read back: ``sources.json`` plus ``<source_id>.md``, line-addressable.

:class:`SourceSet` is what the agent's tools and the citation checks read. Lines are
1-based; :meth:`SourceSet.span` gives lines ``start..end`` inclusive. Loading validates
``sources.json`` (a typed error naming the file and the JSON path), that each Markdown
file exists and has the line count recorded, and refuses symlinks and oversized files.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lhbench.envs.content.errors import SourceError
from lhbench.envs.content.extract import MAX_SOURCE_BYTES, SOURCES_FILE

__all__ = ["SourceRecord", "SourceSet", "load_sources"]

_SID = r"^[a-z0-9][a-z0-9_.\-]*$"


class _Extractor(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    version: str
    normalizer_version: str


class SourceRecord(BaseModel):
    """One entry of ``sources.json``."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=_SID, max_length=120)
    origin: str
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    extractor: _Extractor
    lines: int = Field(ge=0)
    title: str = ""


class _SourcesDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")
    sources: list[SourceRecord]


@dataclass
class SourceSet:
    """The sources of one frozen extraction, with their lines."""

    directory: Path
    records: dict[str, SourceRecord]
    lines: dict[str, list[str]] = field(repr=False)

    def __contains__(self, source_id: object) -> bool:
        return source_id in self.records

    @property
    def ids(self) -> list[str]:
        """Source ids in order."""
        return sorted(self.records)

    def line_count(self, source_id: str) -> int:
        """How many lines the source has."""
        return len(self.lines[source_id])

    def span(self, source_id: str, start: int, end: int) -> list[str]:
        """Lines ``start..end`` (1-based, inclusive, clipped to the source)."""
        src = self.lines[source_id]
        return src[max(start, 1) - 1 : max(min(end, len(src)), 0)]

    def text(self, source_id: str) -> str:
        """The source's whole Markdown."""
        return "\n".join(self.lines[source_id]) + "\n"

    def digest(self) -> str:
        """A hash of every source's id and text (what a check's identity depends on)."""
        h = hashlib.sha256()
        for sid in self.ids:
            h.update(sid.encode() + b"\0" + self.text(sid).encode() + b"\0")
        return h.hexdigest()


def _where(err: dict[str, object]) -> str:
    loc = err.get("loc") or ()
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")  # type: ignore[attr-defined]


def load_sources(directory: Path) -> SourceSet:
    """Read a frozen extraction; :class:`SourceError` naming the file when it is broken."""
    index = directory / SOURCES_FILE
    if not index.is_file() or index.is_symlink():
        raise SourceError(index, "missing (run `lhbench content extract` on the data room)")
    try:
        doc = _SourcesDoc.model_validate(json.loads(index.read_bytes()[:MAX_SOURCE_BYTES]))
    except json.JSONDecodeError as exc:
        raise SourceError(index, f"not JSON: {exc.msg}", line=exc.lineno) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise SourceError(index, f"{_where(dict(first))}: {first['msg']}") from None
    records: dict[str, SourceRecord] = {}
    lines: dict[str, list[str]] = {}
    for rec in doc.sources:
        if rec.id in records:
            raise SourceError(index, f"source id {rec.id!r} appears twice")
        md = directory / f"{rec.id}.md"
        if md.is_symlink() or not md.is_file():
            raise SourceError(md, "missing or not a regular file")
        if md.stat().st_size > MAX_SOURCE_BYTES:
            raise SourceError(md, f"larger than {MAX_SOURCE_BYTES} bytes")
        text = md.read_bytes().decode("utf-8", errors="replace")
        got = re.split(r"\n", text[:-1] if text.endswith("\n") else text) if text else []
        if len(got) != rec.lines:
            raise SourceError(md, f"has {len(got)} lines but sources.json records {rec.lines}")
        records[rec.id] = rec
        lines[rec.id] = got
    return SourceSet(directory=directory, records=records, lines=lines)
