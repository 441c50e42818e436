"""Importing files into a store through the import job (as ``lhbench import`` does)."""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.config import Settings
from lhbench.errors import TranscriptError
from lhbench.jobs import ImportOutcome, import_transcripts
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
    out = asyncio.run(import_transcripts(store, settings, paths, **kw))
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
