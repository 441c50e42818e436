"""The transcript formats, their auto-detection, and one interface over all of them.

``read_records`` is what the import job uses: each transcript's info and its steps as
flat rows, in chunks, for the store to insert as they are. ``read_transcripts`` is the
same as validated ``Step`` objects, for the Python API and the tests.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

import orjson

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import step_of
from lhbench.ingest.claude_code import claude_code_items, sniff_claude_code
from lhbench.ingest.codex import codex_items, sniff_codex
from lhbench.ingest.gemini import gemini_items, sniff_gemini
from lhbench.ingest.generic import generic_items, sniff_generic
from lhbench.ingest.inspect_log import read_inspect, sniff_inspect
from lhbench.ingest.osworld import osworld_items, sniff_osworld
from lhbench.ingest.plugin import plugin_transcripts
from lhbench.ingest.sessions import Item, Transcript, keep_rows_on_stop, merge_sessions
from lhbench.ingest.sessions import split_sessions as _split
from lhbench.plugins import GROUPS, Registry, TranscriptReader
from lhbench.schema import Step

__all__ = [
    "BUILTIN_FORMATS",
    "FORMATS",
    "Format",
    "detect_format",
    "format_of_reader",
    "read_records",
    "read_transcripts",
]

_HEAD = 1 << 20


@dataclass(frozen=True)
class Format:
    """One transcript format: its name, the harness it implies, how to read it.

    Line formats have ``items`` (rows and session ends, for one run or one per session);
    formats that hold several runs of their own (Inspect logs: one per sample) have
    ``transcripts``.
    """

    name: str
    harness: str
    sniff: Callable[[list[dict[str, Any]]], bool]
    items: Callable[[ImportContext], Iterator[Item]] | None = None
    transcripts: Callable[[ImportContext], Iterator[Transcript]] | None = None


BUILTIN_FORMATS: tuple[Format, ...] = (
    Format("claude-code", "claude-code", sniff_claude_code, claude_code_items),
    Format("codex", "codex", sniff_codex, codex_items),
    Format("gemini-cli", "gemini-cli", sniff_gemini, gemini_items),
    Format("osworld", "osworld", sniff_osworld, osworld_items),
    Format("inspect", "inspect", lambda objs: sniff_inspect("", objs), transcripts=read_inspect),
    Format("jsonl", "imported", sniff_generic, generic_items),
)


def _as_formats(obj: Any) -> list[Format]:
    """An entry point's object as formats: a Format, a plugin reader, or a list of them."""
    objs = list(obj) if isinstance(obj, list | tuple) else [obj]
    out = []
    for o in objs:
        if isinstance(o, Format):
            out.append(o)
        elif isinstance(o, TranscriptReader):
            out.append(format_of_reader(o))
        else:
            raise TypeError(
                f"expected a TranscriptReader or an ingest Format, got {type(o).__name__}"
            )
    return out


# built-in formats (entry point group lhbench.formats, like any plugin's), then plugins'
FORMATS: Registry[Format] = Registry(GROUPS["formats"], lambda: BUILTIN_FORMATS, adapt=_as_formats)
_BUILTIN_ORDER = ("claude-code", "codex", "gemini-cli", "osworld")


def _objects(head: bytes, n: int = 20) -> list[dict[str, Any]]:
    objs: list[dict[str, Any]] = []
    for line in islice(head.splitlines(), n):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    if not objs:
        try:
            whole = orjson.loads(head)
        except orjson.JSONDecodeError:
            return objs
        if isinstance(whole, dict):
            objs.append(whole)
    return objs


def detect_format(path: Path) -> Format:
    """The format of a file, from its name and first lines.

    Raises:
        TranscriptError: when no format recognises it (or it cannot be read).
    """
    if path.suffix == ".eval":
        return FORMATS["inspect"]
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD)
    except OSError as exc:
        raise TranscriptError(path, 1, f"cannot read: {exc}") from None
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    objs = _objects(head)
    if path.suffix == ".json":
        # a document larger than the head: look for an EvalLog's top-level keys
        text = head[:4096].decode("utf-8", errors="replace")
        if re.search(r'^\s*\{\s*"version"\s*:', text) and '"eval"' in head.decode(
            "utf-8", errors="replace"
        ):
            return FORMATS["inspect"]
        if any(sniff_inspect(path.suffix, [o]) for o in objs):
            return FORMATS["inspect"]
    builtin = {f.name for f in BUILTIN_FORMATS}
    plugins = [n for n in FORMATS if n not in builtin]
    # the built-in line formats, then plugins', then the generic JSONL last (it is the
    # loosest)
    for name in (*_BUILTIN_ORDER, *plugins, "jsonl"):
        if FORMATS[name].sniff(objs):
            return FORMATS[name]
    raise TranscriptError(path, 1, f"format not recognised (one of {', '.join(sorted(FORMATS))})")


def read_records(
    fmt: Format, ctx: ImportContext, *, split_sessions: bool = False
) -> Iterator[Transcript]:
    """Every transcript in a file, as (info, chunks of flat rows).

    A line format gives one transcript with its sessions merged (the last decides the
    status), or with ``split_sessions`` one per session; an Inspect log one per sample.
    A transcript's info is complete once its rows have been read.
    """
    if fmt.transcripts is not None:
        yield from fmt.transcripts(ctx)
        return
    assert fmt.items is not None
    source = str(ctx.path)
    items = keep_rows_on_stop(ctx, fmt.items(ctx))
    if split_sessions:
        yield from _split(source, items)
    else:
        yield merge_sessions(source, items)


def read_transcripts(
    fmt: Format, ctx: ImportContext, *, split_sessions: bool = False
) -> Iterator[tuple[TranscriptInfo, Iterator[Step]]]:
    """Every transcript in a file, its steps as validated Steps (see ``read_records``)."""
    for info, rows in read_records(fmt, ctx, split_sessions=split_sessions):
        yield info, _steps(rows)


def _steps(rows: Iterator[list[Any]]) -> Iterator[Step]:
    for chunk in rows:
        for rec in chunk:
            yield step_of(rec)


def format_of_reader(reader: TranscriptReader) -> Format:
    """The ingest ``Format`` reading with a plugin's reader."""

    def sniff(objs: list[dict[str, Any]]) -> bool:
        try:
            return bool(reader.sniff(objs))
        except Exception:  # a sniffer that crashes does not recognise the file
            return False

    return Format(
        reader.name,
        reader.harness,
        sniff,
        transcripts=lambda ctx: plugin_transcripts(reader, ctx),
    )
