"""The GUI judge's tools: the final office document and the trajectory, read-only.

``document_info()`` says what the final document is; ``render_pages(first, last)`` shows
pages/slides/sheets of it as images (rendered beforehand by LibreOffice in the sandbox);
``read_document(...)`` gives its structured content (python-docx / openpyxl /
python-pptx); ``list_steps()``, ``view_screenshot(step)`` and ``view_a11y_tree(step)``
show the trajectory's observations. The modality (AJ-Bench's GUI ablation) chooses what
the judge perceives: ``screenshot`` (images: rendered pages and screenshots), ``a11y``
(structure: document content and accessibility trees) or ``both``.

The judge gets them from its sandboxed tool worker (``python -m lhbench.tools.worker gui
--state DIR``); ``python -m lhbench.tools.gui_server --state DIR [--modality M]
[--trajectory FILE]`` serves them over MCP to any other client.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lhbench.envs.gui.view import MODALITIES, GuiView
from lhbench.tools.registry import Image, McpTools, Registrar

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["GUI_TOOLS", "add_gui_tools", "build_gui_server", "gui_tools_for"]

SCREENSHOT_TOOLS = frozenset({"render_pages", "view_screenshot"})
A11Y_TOOLS = frozenset({"read_document", "view_a11y_tree"})
GUI_TOOLS = frozenset({"document_info", "list_steps"}) | SCREENSHOT_TOOLS | A11Y_TOOLS


def gui_tools_for(modality: str) -> frozenset[str]:
    """The tools a modality offers."""
    if modality not in MODALITIES:
        raise ValueError(f"modality {modality!r}: expected one of {', '.join(MODALITIES)}")
    base = frozenset({"document_info", "list_steps"})
    if modality == "screenshot":
        return base | SCREENSHOT_TOOLS
    if modality == "a11y":
        return base | A11Y_TOOLS
    return GUI_TOOLS


def build_gui_server(
    state: Path, modality: str = "both", server: MCPServer | None = None
) -> MCPServer:
    """An MCP server over a materialized GUI state (or these tools added to ``server``)."""
    from mcp.server.mcpserver import MCPServer

    server = server or MCPServer(
        "lhbench-gui",
        instructions="Read-only view of an office task's final document and trajectory.",
    )
    add_gui_tools(state, modality, McpTools(server))
    return server


def add_gui_tools(state: Path, modality: str, server: Registrar) -> None:
    """Register the GUI tools of ``modality`` over the materialized state on ``server``."""
    view = GuiView(state)
    tools = gui_tools_for(modality)

    @server.tool()
    def document_info() -> str:
        """The final document's kind, how many pages/sheets/slides, and the step numbers."""
        return view.info()

    @server.tool()
    def list_steps() -> str:
        """Every step of the trajectory: its action and what was observed."""
        return view.steps()

    if "render_pages" in tools:

        @server.tool()
        def render_pages(first: int = 1, last: int = 1) -> list[str | Image]:
            """Pages (Word), sheets (Excel) or slides (PowerPoint) first..last as images."""
            images, note = view.pages(first, last)
            out: list[str | Image] = [note]
            for n, png in images:
                out += [f"page {n}:", Image(data=png, format="png")]
            return out

        @server.tool()
        def view_screenshot(step: int) -> list[str | Image]:
            """The screenshot taken after step ``step`` (0: before the first action)."""
            got = view.screenshot(step)
            if isinstance(got, str):
                return [got]
            return [f"screenshot at step {step}:", Image(data=got, format="png")]

    if "read_document" in tools:

        @server.tool()
        def read_document(
            start: int = 1, count: int = 50, sheet: str | None = None, cells: str | None = None
        ) -> str:
            """Structured content of the final document.

            Word: paragraphs from ``start`` with styles, and tables. Excel: cells of
            ``sheet`` (``cells`` like A1:D20) with values, formulas and number formats.
            PowerPoint: slides from ``start`` with shapes, text and positions.
            """
            return view.read(start=start, count=count, sheet=sheet, cells=cells)

        @server.tool()
        def view_a11y_tree(step: int, offset: int = 0) -> str:
            """The accessibility tree observed at step ``step`` (from character ``offset``)."""
            return view.a11y_tree(step, offset)


def main() -> None:
    """Serve the GUI state (and the trajectory's steps, when given) on stdio."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools.gui_server")
    ap.add_argument("--state", type=Path, required=True)
    ap.add_argument("--modality", choices=MODALITIES, default="both")
    ap.add_argument("--trajectory", type=Path)
    args = ap.parse_args()
    server = build_gui_server(args.state, args.modality)
    if args.trajectory is not None:
        from lhbench.tools.trajectory_server import build_trajectory_server

        build_trajectory_server(args.trajectory, server)
    server.run()


if __name__ == "__main__":
    main()
