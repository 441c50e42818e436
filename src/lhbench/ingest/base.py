"""What every importer shares: the per-file context, the transcript's run info, the limits.

Importers are streaming: they read a file once, in chunks, and hand rows on as they go,
so a transcript of any size is imported in constant memory. Anything a line holds that
cannot be read becomes a TranscriptError naming the file and line (the line is skipped,
or the value left out); with ``strict`` the first one stops the import. A last line cut
off mid-write (a run killed while writing) is not an error: the transcript is marked
incomplete.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from lhbench.errors import TranscriptError
from lhbench.schema import RunStatus, Usage

__all__ = ["ImportContext", "Limits", "TranscriptInfo"]


@dataclass(frozen=True)
class Limits:
    """What an importer accepts before calling input hostile rather than large.

    Attributes:
        line_bytes: A line longer than this is skipped and reported (memory stays bounded).
        member_bytes: An archive member (an Inspect ``.eval`` sample) larger than this is
            refused.
        member_ratio: …as is a member over 32 MiB that expands more than this many times.
        problems: Problems kept in full per file; the rest are counted.
    """

    line_bytes: int = 32 << 20
    member_bytes: int = 4 << 30
    member_ratio: int = 200
    problems: int = 1000


@dataclass
class TranscriptInfo:
    """What a transcript says about its run (one session, or several merged), filled as read.

    ``usage`` follows one meaning in every format (see docs/transcripts.md): input tokens
    exclude cache reads and writes, output tokens include reasoning, ``model_usage`` splits
    it per model when the transcript names several.
    """

    source: str
    key: str = ""
    session_id: str | None = None
    model: str | None = None
    harness_version: str | None = None
    task_text: str | None = None
    status: RunStatus = RunStatus.INCOMPLETE
    usage: Usage = field(default_factory=Usage)
    model_usage: dict[str, Usage] = field(default_factory=dict)
    cost_usd: float | None = None
    started_at: datetime | None = None
    ended_at: datetime | None = None
    error: str | None = None
    sessions: int = 1
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class ImportContext:
    """Per-file state: where problems go, whether they stop the import, what was read.

    Attributes:
        path: The file.
        strict: The first problem raises instead of being recorded.
        skipped: The first ``limits.problems`` problems.
        problems: How many problems there were in all.
        truncated: The last line was cut off mid-write.
        line: The line being read (problems found in a value are reported here).
        digest: SHA-256 of the whole file, once it has been read to the end.
    """

    path: Path
    strict: bool = False
    skipped: list[TranscriptError] = field(default_factory=list)
    problems: int = 0
    truncated: bool = False
    line: int = 1
    digest: str | None = None
    limits: Limits = field(default_factory=Limits)
    # the step builder of the session being read: rows it built before a problem stopped
    # the import (strict) are still handed on
    builder: Any = None

    def problem(self, line: int, message: str) -> None:
        """Record (or, with strict, raise) a problem at a line."""
        err = TranscriptError(self.path, max(1, line), message)
        if self.strict:
            raise err
        self.problems += 1
        if len(self.skipped) < self.limits.problems:
            self.skipped.append(err)

    def bad(self, message: str) -> None:
        """Record a problem at the line being read."""
        self.problem(self.line, message)
