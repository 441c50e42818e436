"""The trajectory under review, one step at a time, over MCP.

A step is shown as JSON within :data:`MAX_STEP_CHARS`: a step larger than that (an agent's
tool output may be megabytes) has its longest text values cut, each saying how long it was,
and the answer says it was truncated.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lhbench.schema import Trajectory
from lhbench.tools.registry import McpTools, Registrar, ToolFailure

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["MAX_STEP_CHARS", "add_trajectory_tools", "build_trajectory_server", "show_step"]

MAX_STEP_CHARS = 64_000  # one tool answer, as the SQL and file tools cap theirs


def _cut(value: Any, limit: int) -> Any:
    """``value`` with every string longer than ``limit`` cut, saying how long it was."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}…[cut: {len(value)} characters]"
    if isinstance(value, dict):
        return {k: _cut(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > limit:
            return [*(_cut(v, limit) for v in value[:limit]), f"…[cut: {len(value)} items]"]
        return [_cut(v, limit) for v in value]
    return value


def show_step(doc: dict[str, Any], max_chars: int = MAX_STEP_CHARS) -> str:
    """A step's JSON within ``max_chars``, long values cut and the cut said."""
    text = json.dumps(doc, ensure_ascii=False)
    if len(text) <= max_chars:
        return text
    limit = max_chars // 2
    while limit >= 16:
        cut = json.dumps(_cut(doc, limit), ensure_ascii=False)
        note = f"\n[step truncated: {len(text)} characters in full, long values cut]"
        if len(cut) + len(note) <= max_chars:
            return cut + note
        limit //= 2
    return text[: max_chars - 100] + f"\n[step truncated: {len(text)} characters in full]"


def build_trajectory_server(path: Path, server: MCPServer | None = None) -> MCPServer:
    """An MCP server serving ``view_trajectory_step`` for the trajectory stored at ``path``."""
    from mcp.server.mcpserver import MCPServer

    server = server or MCPServer("lhbench-trajectory", instructions="The trajectory under review.")
    add_trajectory_tools(path, McpTools(server))
    return server


def add_trajectory_tools(path: Path, server: Registrar) -> None:
    """Register the trajectory's step tools (the trajectory stored at ``path``) on ``server``."""
    trajectory = Trajectory.model_validate_json(path.read_text(encoding="utf-8"))

    @server.tool()
    def view_trajectory_step(i: int) -> str:
        """Step i (0-based) of the trajectory: role, kind, tool, input, output, error flag."""
        if not 0 <= i < len(trajectory.steps):
            raise ToolFailure(
                f"step {i} does not exist; the trajectory has steps 0..{len(trajectory.steps) - 1}"
            )
        s = trajectory.steps[i]
        return show_step(s.model_dump(mode="json", exclude_defaults=True))

    @server.tool()
    def trajectory_length() -> int:
        """How many steps the trajectory has."""
        return len(trajectory.steps)
