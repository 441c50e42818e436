"""Transcript importers: Claude Code, Codex CLI, Gemini CLI, OSWorld, Inspect logs, generic JSONL.

Each reads a file line by line into normalized Steps (constant memory), names the file
and line of anything it cannot read (TranscriptError), and marks transcripts that stop
mid-run as incomplete.
"""

from lhbench.ingest.base import (
    ImportContext,
    StepBuilder,
    TranscriptInfo,
    iter_json_lines,
    parse_time,
    text_of,
)
from lhbench.ingest.formats import FORMATS, Format, detect_format, read_transcripts

__all__ = [
    "FORMATS",
    "Format",
    "ImportContext",
    "StepBuilder",
    "TranscriptInfo",
    "detect_format",
    "iter_json_lines",
    "parse_time",
    "read_transcripts",
    "text_of",
]
