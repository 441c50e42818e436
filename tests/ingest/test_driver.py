"""The one line driver every JSONL format plugs into: a format says what a line means."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lhbench.errors import TranscriptError
from lhbench.ingest import ImportContext
from lhbench.ingest.builder import ASSISTANT, MESSAGE
from lhbench.ingest.sessions import LineSession, SessionEnd, line_items, merge_sessions


class _Toy(LineSession):
    FORMAT = "toy"

    def starts_session(self, obj: dict[str, Any]) -> bool:
        return obj.get("type") == "start" and self.b.count > 0

    def line(self, obj: dict[str, Any]) -> None:
        if obj.get("type") == "start":
            return
        self.b.step(ASSISTANT, MESSAGE, obj["text"])  # KeyError: an unexpected shape


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "toy.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_format_gives_only_its_line_logic(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            '{"type": "start"}',
            '{"text": "one"}',
            "{not json",
            '{"nope": 1}',
            "[1]",
            '{"type": "start"}',
            '{"text": "two"}',
        ],
    )
    ctx = ImportContext(path)
    items = list(line_items(ctx, lambda: _Toy(ctx)))
    ends = [i for i in items if isinstance(i, SessionEnd)]
    rows = [r for i in items if not isinstance(i, SessionEnd) for r in i]
    assert len(ends) == 2  # the second "start" began a second session
    assert [r[3] for r in rows] == ["one", "two"]
    # every problem names the file and its line; the shape error names the format
    assert [(p.problem.line, p.problem.message.split(":")[0]) for p in ctx.skipped] == [
        (3, "not valid JSON"),
        (4, "toy"),
        (5, "expected a JSON object, found an array"),
    ]
    assert "unexpected event shape: missing field 'text'" in ctx.skipped[1].problem.message
    assert ctx.digest is not None  # the driver read the file to its end, hashed


def test_strict_stops_at_the_first_bad_line_with_its_place(tmp_path: Path) -> None:
    path = _write(tmp_path, ['{"text": "one"}', '{"nope": 1}', '{"text": "two"}'])
    ctx = ImportContext(path, strict=True)
    with pytest.raises(TranscriptError, match=r"toy\.jsonl:2"):
        _total, rows = merge_sessions(str(path), line_items(ctx, lambda: _Toy(ctx)))
        list(rows)
