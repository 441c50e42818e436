"""The GUI judge's read-only view of a final state (see :mod:`lhbench.envs.gui.state`).

Every file it opens is named by the state's own layout from an integer or a fixed name:
nothing the judge passes becomes a path. A sheet is looked up among the workbook's sheet
names; a step number among the steps of ``steps.json``; a page among the rendered pages.
Nothing here writes: the tools only read the state directory, itself a read-only copy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lhbench.envs.gui.state import state_document
from lhbench.office.documents import (
    DocumentError,
    document_kind,
    read_docx,
    read_pptx,
    read_xlsx,
)

__all__ = ["MODALITIES", "GuiView"]

MODALITIES = ("screenshot", "a11y", "both")
MAX_RENDER_PAGES = 4  # images one render call returns
TREE_CHARS = 12_000


class GuiView:
    """Read-only queries over one materialized GUI state."""

    def __init__(self, state: Path) -> None:
        self.state = Path(state).resolve()
        doc = state_document(self.state)
        if doc is None:
            raise FileNotFoundError(f"no final document in {self.state}")
        self.document = doc
        self.kind = document_kind(doc)
        try:
            steps = json.loads((self.state / "steps.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            steps = []
        self._steps: dict[int, dict[str, Any]] = {
            int(s["step"]): s for s in steps if isinstance(s, dict) and type(s.get("step")) is int
        }
        try:
            self._render = json.loads((self.state / "render" / "render.json").read_text())
        except (OSError, ValueError):
            self._render = {"error": "the document was not rendered"}

    def info(self) -> str:
        """What the final document is and what can be looked at."""
        pages = self._render.get("pages")
        unit = {"word": "page", "excel": "sheet", "powerpoint": "slide"}[self.kind]
        rendered = (
            f"{pages} {unit}(s) rendered" if pages is not None else str(self._render.get("error"))
        )
        return (
            f"final document: {self.kind} ({self.document.suffix[1:].upper()}), {rendered}; "
            f"trajectory: {len(self._steps)} step(s) "
            f"({', '.join(str(n) for n in sorted(self._steps)[:50])})"
        )

    def read(self, *, start: int = 1, count: int = 50, sheet: str | None = None,
             cells: str | None = None) -> str:  # fmt: skip
        """Structured content of the final document (paragraphs / cells / slides)."""
        try:
            if self.kind == "word":
                return read_docx(self.document, start=start, count=count)
            if self.kind == "excel":
                return read_xlsx(self.document, sheet=sheet, cells=cells)
            return read_pptx(self.document, first=start, last=start + max(1, min(count, 50)) - 1)
        except DocumentError as exc:
            return f"(cannot read the document: {exc})"

    def pages(self, first: int, last: int) -> tuple[list[tuple[int, bytes]], str]:
        """Rendered pages ``first``..``last`` (at most a few), and a note on what was left."""
        drawn = int(self._render.get("drawn") or 0)
        if not drawn:
            return [], f"(no rendering: {self._render.get('error', 'nothing drawn')})"
        first = max(1, first)
        last = min(last, drawn, first + MAX_RENDER_PAGES - 1)
        out = []
        for n in range(first, last + 1):
            p = self.state / "render" / f"page-{n}.png"
            if p.is_file() and not p.is_symlink():
                out.append((n, p.read_bytes()))
        note = f"pages {first}-{last} of {drawn}" if out else f"(no page {first}: 1..{drawn})"
        return out, note

    def steps(self) -> str:
        """Every step: its number, action, and what was observed."""
        if not self._steps:
            return "(the trajectory has no steps)"
        lines = []
        for n in sorted(self._steps):
            s = self._steps[n]
            seen = [k for k in ("screenshot", "a11y") if s.get(k)]
            lines.append(
                f"step {n}: {str(s.get('action'))[:300]}  [{', '.join(seen) or 'no observation'}]"
            )
        return "\n".join(lines)

    def _step_file(self, step: int, key: str, suffix: str) -> Path | None:
        s = self._steps.get(step)
        if s is None or not s.get(key):
            return None
        p = self.state / "steps" / f"step-{step}{suffix}"  # from the number, not the index
        return p if p.is_file() and not p.is_symlink() else None

    def screenshot(self, step: int) -> bytes | str:
        """The PNG screenshot after step ``step``, or why there is none."""
        if type(step) is not int:
            return "(give a step number)"
        p = self._step_file(step, "screenshot", ".png")
        if p is None:
            return f"(no screenshot at step {step}; steps: {sorted(self._steps)[:50]})"
        return p.read_bytes()

    def a11y_tree(self, step: int, offset: int = 0) -> str:
        """The accessibility tree at step ``step`` (a window of it), or why there is none."""
        if type(step) is not int:
            return "(give a step number)"
        p = self._step_file(step, "a11y", ".xml")
        if p is None:
            return f"(no accessibility tree at step {step}; steps: {sorted(self._steps)[:50]})"
        text = p.read_bytes().decode("utf-8", "replace")
        offset = max(0, offset)
        window = text[offset : offset + TREE_CHARS]
        more = len(text) - offset - len(window)
        tail = f"\n[{more} more characters: call again with offset={offset + len(window)}]"
        return window + (tail if more > 0 else "")
