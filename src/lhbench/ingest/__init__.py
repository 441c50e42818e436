"""Transcript importers: Claude Code, Codex CLI, Gemini CLI, OSWorld, Inspect logs, generic JSONL.

Each reads a file once, streaming, into steps with one meaning across formats (see
docs/transcripts.md): flat rows for the store (``read_records``) or validated Steps
(``read_transcripts``). Anything it cannot read is reported with its file and line
(TranscriptError) and never raises unless ``strict``; transcripts that stop mid-run are
marked incomplete; several sessions in one file become one run or one run each.
"""

from lhbench.ingest.base import ImportContext, Limits, TranscriptInfo
from lhbench.ingest.builder import Record, StepBuilder, step_of
from lhbench.ingest.formats import (
    FORMATS,
    Format,
    detect_format,
    read_records,
    read_transcripts,
)
from lhbench.ingest.lines import file_digest, iter_json_lines
from lhbench.ingest.roles import is_harness_text
from lhbench.ingest.values import Clock, text_of

__all__ = [
    "FORMATS",
    "Clock",
    "Format",
    "ImportContext",
    "Limits",
    "Record",
    "StepBuilder",
    "TranscriptInfo",
    "detect_format",
    "file_digest",
    "is_harness_text",
    "iter_json_lines",
    "read_records",
    "read_transcripts",
    "step_of",
    "text_of",
]
