"""Transcript formats from plugins: a ``TranscriptReader`` as an ingest ``Format``.

A plugin reader hands over validated ``Step`` objects; here they become the flat rows
the import job stores, renumbered from 0 in the order given. Whatever the plugin raises
becomes a ``TranscriptError`` naming the file and the plugin: a broken plugin fails its
file, never the import.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.builder import Record
from lhbench.plugins import TranscriptReader
from lhbench.schema import Step, StepKind, step_to_row

if TYPE_CHECKING:
    from lhbench.ingest.sessions import Transcript

__all__ = ["MAX_PLUGIN_STEPS", "plugin_transcripts"]

MAX_PLUGIN_STEPS = 1_000_000
_CHUNK = 1000


def _rows(reader: TranscriptReader, ctx: ImportContext, steps: Iterable[Step]) -> list[Record]:
    rows: list[Record] = []
    names: dict[str, str | None] = {}
    for i, step in enumerate(islice(steps, MAX_PLUGIN_STEPS + 1)):
        if i == MAX_PLUGIN_STEPS:
            raise TranscriptError(
                ctx.path, 1, f"{reader.name} (plugin): more than {MAX_PLUGIN_STEPS} steps"
            )
        if not isinstance(step, Step):
            raise TranscriptError(
                ctx.path,
                1,
                f"{reader.name} (plugin): step {i} is a {type(step).__name__}, not a Step",
            )
        row = step_to_row(step)
        row[0] = i  # renumbered from 0 in the order given
        # as the built-in readers do: a result takes its call's tool name
        if step.kind == StepKind.TOOL_CALL and step.tool_call_id:
            names[step.tool_call_id] = step.tool_name
        elif step.kind == StepKind.TOOL_RESULT and row[4] is None and step.tool_call_id:
            row[4] = names.get(step.tool_call_id)
        rows.append(row)
    return rows


def _chunks(rows: list[Record]) -> Iterator[list[Record]]:
    for i in range(0, len(rows), _CHUNK):
        yield rows[i : i + _CHUNK]


def plugin_transcripts(reader: TranscriptReader, ctx: ImportContext) -> Iterator[Transcript]:
    """Each transcript a plugin's reader finds in the file, as rows (errors name the file)."""
    try:
        read = [(info, _rows(reader, ctx, steps)) for info, steps in reader.read(ctx.path)]
    except TranscriptError:
        raise
    except Exception as exc:  # the plugin's bug: this file fails, with what it said
        raise TranscriptError(
            ctx.path, 1, f"{reader.name} (plugin): {type(exc).__name__}: {exc}"
        ) from exc
    for n, (info, rows) in enumerate(read):
        if not isinstance(info, TranscriptInfo):
            raise TranscriptError(
                ctx.path, 1, f"{reader.name} (plugin): transcript {n} info is not a TranscriptInfo"
            )
        info.source = str(ctx.path)
        if len(read) > 1 and not info.key:
            info.key = str(n)
        yield info, _chunks(rows)
