"""The transcript formats, their auto-detection, and one interface over all of them."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.claude_code import read_claude_code, sniff_claude_code
from lhbench.ingest.codex import read_codex, sniff_codex
from lhbench.ingest.gemini import read_gemini, sniff_gemini
from lhbench.ingest.generic import read_generic, sniff_generic
from lhbench.ingest.inspect_log import read_inspect, sniff_inspect
from lhbench.ingest.osworld import read_osworld, sniff_osworld
from lhbench.schema import Step

__all__ = ["FORMATS", "Format", "detect_format", "read_transcripts"]

Transcript = tuple[TranscriptInfo, Iterator[Step]]


@dataclass(frozen=True)
class Format:
    """One transcript format: its name, the harness it implies, how to read it."""

    name: str
    harness: str
    sniff: Callable[[list[dict[str, Any]]], bool]
    reader: Callable[[ImportContext, TranscriptInfo], Iterator[Step]] | None = None


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format("claude-code", "claude-code", sniff_claude_code, read_claude_code),
        Format("codex", "codex", sniff_codex, read_codex),
        Format("gemini-cli", "gemini-cli", sniff_gemini, read_gemini),
        Format("osworld", "osworld", sniff_osworld, read_osworld),
        Format("inspect", "inspect", lambda objs: sniff_inspect("", objs)),
        Format("jsonl", "imported", sniff_generic, read_generic),
    )
}


def _head_objects(path: Path, n: int = 20) -> list[dict[str, Any]]:
    with path.open("rb") as f:
        head = f.read(1 << 20)
    objs: list[dict[str, Any]] = []
    for line in islice(head.splitlines(), n):
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        if isinstance(obj, dict):
            objs.append(obj)
    if not objs:
        try:
            whole = json.loads(head)
            if isinstance(whole, dict):
                objs.append(whole)
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass
    return objs


def detect_format(path: Path) -> Format:
    """The format of a file, from its name and first lines.

    Raises:
        TranscriptError: when no format recognises it.
    """
    if path.suffix == ".eval":
        return FORMATS["inspect"]
    if path.suffix == ".json":
        with path.open("rb") as f:
            head = f.read(1 << 20)
        try:
            whole = json.loads(head)
            objs = [whole] if isinstance(whole, dict) else []
        except (json.JSONDecodeError, UnicodeDecodeError):
            # a document larger than the head: look for an EvalLog's top-level keys
            text = head.decode("utf-8", errors="replace")
            objs = _head_objects(path)
            if re.search(r'^\s*\{\s*"version"\s*:', text) and '"eval"' in text:
                return FORMATS["inspect"]
        if any(sniff_inspect(path.suffix, [o]) for o in objs):
            return FORMATS["inspect"]
    else:
        objs = _head_objects(path)
    for name in ("claude-code", "codex", "gemini-cli", "osworld", "jsonl"):
        if FORMATS[name].sniff(objs):
            return FORMATS[name]
    raise TranscriptError(
        path,
        1,
        "format not recognised (one of claude-code, codex, gemini-cli, osworld, inspect, jsonl)",
    )


def read_transcripts(fmt: Format, ctx: ImportContext) -> Iterator[Transcript]:
    """Every transcript in a file: one for line formats, one per sample for Inspect logs."""
    if fmt.name == "inspect":
        yield from read_inspect(ctx)
        return
    assert fmt.reader is not None
    info = TranscriptInfo(source=str(ctx.path))
    yield info, fmt.reader(ctx, info)
