"""Small edits of a course workspace, as a careless or dishonest agent would make them."""

from __future__ import annotations

import re
from pathlib import Path


def replace_in(path: Path, old: str, new: str) -> None:
    """Replace exactly one occurrence of ``old`` (fails loudly if it is not there once)."""
    text = path.read_text()
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    path.write_text(text.replace(old, new))


def cite_of(path: Path, claim_start: str) -> str:
    """The citation ending the line that starts with ``claim_start``."""
    for line in path.read_text().splitlines():
        if line.startswith(claim_start):
            m = re.search(r"\[[^\]]+\]$", line)
            assert m, line
            return m.group(0)
    raise AssertionError(f"no line starts with {claim_start!r} in {path}")
