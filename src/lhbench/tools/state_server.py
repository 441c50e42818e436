"""One MCP server for a judge in one final state: its files or database, and its trajectory.

A single process for all of a state's tools: the MCP SDK alone takes about half a second
of CPU to import, and an agent judge starts one server set per verdict.
"""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

from lhbench.tools.fs_server import build_fs_server
from lhbench.tools.sql_server import build_sql_server
from lhbench.tools.trajectory_server import build_trajectory_server

__all__ = ["build_state_server"]


def build_state_server(
    *, root: Path | None = None, db_url: str | None = None, trajectory: Path | None = None
) -> MCPServer:
    """Read-only tools over a replayed state, in one server.

    Files under ``root``, the database at ``db_url``, the steps of the trajectory file:
    each only when given.
    """
    server = MCPServer(
        "lhbench-state",
        instructions="Read-only tools over the environment as the agent left it, and over "
        "the steps of its trajectory.",
    )
    if root is not None:
        build_fs_server(root, server)
    if db_url is not None:
        build_sql_server(db_url, server)
    if trajectory is not None:
        build_trajectory_server(trajectory, server)
    return server
