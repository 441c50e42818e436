"""Rows as validated Steps: the Python API over the importers (the store takes the rows)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import fields

from lhbench.ingest.base import TranscriptInfo
from lhbench.ingest.builder import step_of
from lhbench.ingest.sessions import Item, merge_sessions
from lhbench.schema import Step

__all__ = ["steps_into"]


def steps_into(info: TranscriptInfo, items: Iterator[Item]) -> Iterator[Step]:
    """The Steps of every session in ``items``, merged into ``info`` once they are read."""
    total, rows = merge_sessions(info.source, items)
    for chunk in rows:
        for rec in chunk:
            yield step_of(rec)
    for f in fields(TranscriptInfo):
        if f.name not in ("source", "key"):
            setattr(info, f.name, getattr(total, f.name))
