"""The content environment's typed errors: each names the file and what was wrong."""

from __future__ import annotations

from pathlib import Path

from lhbench.errors import LhbenchError, Problem

__all__ = ["SourceError"]


class SourceError(LhbenchError):
    """A data-room file, a frozen extraction or a course file cannot be read as expected."""

    def __init__(self, file: Path | str, message: str, *, line: int | None = None) -> None:
        self.problem = Problem(file=str(file), message=message, line=line)
        super().__init__(str(self.problem))
