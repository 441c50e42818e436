"""The search judge's tools: the recorded web, read-only, and nothing else.

``search(query)`` ranks the corpus's pages by BM25 (SQLite FTS5), ``open_url(url)`` shows
a captured page as readable text, ``find_in_page(url, text)`` lists its lines containing a
text. A URL that was not captured gets "NOT IN THE RECORDED WEB", never a fetch: the
server has no network code, and the sandbox it runs in has no network either.

The judge gets them from its sandboxed tool worker (``python -m lhbench.tools.worker web
--index CORPUS.sqlite``); ``python -m lhbench.tools.web_server --index CORPUS.sqlite
[--trajectory FILE]`` serves them over MCP to any other client.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lhbench.envs.web import RecordedWeb
from lhbench.tools.registry import McpTools, Registrar

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["add_web_tools", "build_web_server"]


def build_web_server(index: Path, server: MCPServer | None = None) -> MCPServer:
    """An MCP server over a compiled corpus index (or these tools added to ``server``)."""
    from mcp.server.mcpserver import MCPServer

    server = server or MCPServer(
        "lhbench-web",
        instructions="Read-only search over the recorded web the answer was made from.",
    )
    add_web_tools(index, McpTools(server))
    return server


def add_web_tools(index: Path, server: Registrar) -> None:
    """Register the recorded web's tools (the compiled corpus index at ``index``) on ``server``."""
    web = RecordedWeb(index)

    @server.tool()
    def search(query: str, limit: int = 8) -> str:
        """Search the recorded web; each hit gives URL, title, capture time and a snippet."""
        hits = web.search(query, limit)
        if not hits:
            return "(no recorded page matches)"
        return "\n\n".join(
            f"{n}. {title}\n   {url}\n   captured {captured}\n   {snippet}"
            for n, (url, title, captured, snippet) in enumerate(hits, 1)
        )

    @server.tool()
    def open_url(url: str, offset: int = 0) -> str:
        """Open a recorded page as readable text (from character ``offset``)."""
        return web.open_url(url, offset)

    @server.tool()
    def find_in_page(url: str, text: str) -> str:
        """The numbered lines of a recorded page that contain ``text`` (case-insensitive)."""
        return web.find_in_page(url, text)


def main() -> None:
    """Serve the recorded web (and the trajectory's steps, when given) on stdio."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools.web_server")
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--trajectory", type=Path)
    args = ap.parse_args()
    server = build_web_server(args.index)
    if args.trajectory is not None:
        from lhbench.tools.trajectory_server import build_trajectory_server

        build_trajectory_server(args.trajectory, server)
    server.run()


if __name__ == "__main__":
    main()
