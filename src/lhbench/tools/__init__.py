"""MCP servers agents and judges call: read-only filesystem, read-only SQL, trajectory steps.

Each name is imported on first use: the judges' sandboxed tool worker
(:mod:`lhbench.tools.worker`) starts from this package without the MCP SDK.
"""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names

if TYPE_CHECKING:
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

__getattr__ = lazy_names(
    __name__,
    {
        "MAX_ROWS": "lhbench.tools.sql_server",
        "ReadOnlyDatabase": "lhbench.tools.sql_server",
        "build_fs_server": "lhbench.tools.fs_server",
        "build_sql_server": "lhbench.tools.sql_server",
        "build_state_server": "lhbench.tools.state_server",
        "build_trajectory_server": "lhbench.tools.trajectory_server",
    },
    globals(),
)
