"""A judge's tools in one final state: its files or database, and its trajectory.

One process for all of a state's tools, over MCP (:func:`build_state_server`, for any MCP
client: ``python -m lhbench.tools state``) or in the judges' sandboxed tool worker
(:func:`add_state_tools`, ``python -m lhbench.tools.worker state``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from lhbench.tools.registry import McpTools, Registrar

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["add_state_tools", "build_state_server", "state_arguments"]


def state_arguments(ap: argparse.ArgumentParser) -> None:
    """The state's command-line options (at least one is needed: see :func:`add_state_tools`)."""
    ap.add_argument("--root", type=Path)
    ap.add_argument("--db")
    ap.add_argument("--trajectory", type=Path)


def add_state_tools(
    server: Registrar,
    *,
    root: Path | None = None,
    db_url: str | None = None,
    trajectory: Path | None = None,
) -> None:
    """Register the read-only tools over a state on ``server``.

    Files under ``root``, the database at ``db_url``, the steps of the trajectory file:
    each only when given (each module imported only then: SQLAlchemy for a database).

    Raises:
        ValueError: none of the three was given.
    """
    if root is None and db_url is None and trajectory is None:
        raise ValueError("state: give at least one of --root, --db, --trajectory")
    if root is not None:
        from lhbench.tools.fs_server import add_fs_tools

        add_fs_tools(root, server)
    if db_url is not None:
        from lhbench.tools.sql_server import ReadOnlyDatabase, add_sql_tools

        add_sql_tools(ReadOnlyDatabase(db_url), server)
    if trajectory is not None:
        from lhbench.tools.trajectory_server import add_trajectory_tools

        add_trajectory_tools(trajectory, server)


def build_state_server(
    *, root: Path | None = None, db_url: str | None = None, trajectory: Path | None = None
) -> MCPServer:
    """Read-only tools over a replayed state, in one MCP server (see :func:`add_state_tools`)."""
    from mcp.server.mcpserver import MCPServer

    server = MCPServer(
        "lhbench-state",
        instructions="Read-only tools over the environment as the agent left it, and over "
        "the steps of its trajectory.",
    )
    add_state_tools(McpTools(server), root=root, db_url=db_url, trajectory=trajectory)
    return server
