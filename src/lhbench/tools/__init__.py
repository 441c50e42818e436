"""MCP servers agents and judges call: read-only filesystem, read-only SQL, trajectory steps."""

from lhbench.tools.fs_server import build_fs_server
from lhbench.tools.sql_server import MAX_ROWS, ReadOnlyDatabase, build_sql_server
from lhbench.tools.state_server import build_state_server
from lhbench.tools.trajectory_server import build_trajectory_server

__all__ = [
    "MAX_ROWS",
    "ReadOnlyDatabase",
    "build_fs_server",
    "build_sql_server",
    "build_state_server",
    "build_trajectory_server",
]
