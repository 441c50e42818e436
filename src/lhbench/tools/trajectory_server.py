"""The trajectory under review, one step at a time, over MCP."""

from __future__ import annotations

import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from lhbench.schema import Trajectory

__all__ = ["build_trajectory_server"]


def build_trajectory_server(path: Path, server: MCPServer | None = None) -> MCPServer:
    """An MCP server serving ``view_trajectory_step`` for the trajectory stored at ``path``."""
    trajectory = Trajectory.model_validate_json(path.read_text(encoding="utf-8"))
    server = server or MCPServer("lhbench-trajectory", instructions="The trajectory under review.")

    @server.tool()
    def view_trajectory_step(i: int) -> str:
        """Step i (0-based) of the trajectory: role, kind, tool, input, output, error flag."""
        if not 0 <= i < len(trajectory.steps):
            raise ToolError(
                f"step {i} does not exist; the trajectory has steps 0..{len(trajectory.steps) - 1}"
            )
        s = trajectory.steps[i]
        return json.dumps(s.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False)

    @server.tool()
    def trajectory_length() -> int:
        """How many steps the trajectory has."""
        return len(trajectory.steps)

    return server
