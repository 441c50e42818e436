"""Environments that replay: filesystem and SQL final states, and verify scripts that label them.

Each name is imported on first use: a sandboxed tool worker that needs one module does
not load the others (SQLAlchemy, the schema).
"""

from typing import TYPE_CHECKING

from lhbench._lazy import lazy_names

if TYPE_CHECKING:
    from lhbench.envs.filesystem import (
        FS_TOOLS,
        ReplayReport,
        copy_initial_state,
        replay_filesystem,
    )
    from lhbench.envs.paths import EscapeError, inside
    from lhbench.envs.pg_guard import PgRoleError, check_read_only_role, require_read_only_url
    from lhbench.envs.sql import (
        SQL_TOOLS,
        PostgresDatabases,
        ReplayError,
        SqlState,
        replay_sql,
        split_statements,
    )
    from lhbench.envs.verify import (
        VerifyError,
        VerifyResult,
        check_limits,
        database_access,
        run_state_check,
        run_verify,
    )

__all__ = [
    "FS_TOOLS",
    "SQL_TOOLS",
    "EscapeError",
    "PgRoleError",
    "PostgresDatabases",
    "ReplayError",
    "ReplayReport",
    "SqlState",
    "VerifyError",
    "VerifyResult",
    "check_limits",
    "check_read_only_role",
    "copy_initial_state",
    "database_access",
    "inside",
    "replay_filesystem",
    "replay_sql",
    "require_read_only_url",
    "run_state_check",
    "run_verify",
    "split_statements",
]

__getattr__ = lazy_names(
    __name__,
    {
        "EscapeError": "lhbench.envs.paths",
        "FS_TOOLS": "lhbench.envs.filesystem",
        "PgRoleError": "lhbench.envs.pg_guard",
        "PostgresDatabases": "lhbench.envs.sql",
        "ReplayError": "lhbench.envs.sql",
        "ReplayReport": "lhbench.envs.filesystem",
        "SQL_TOOLS": "lhbench.envs.sql",
        "SqlState": "lhbench.envs.sql",
        "VerifyError": "lhbench.envs.verify",
        "VerifyResult": "lhbench.envs.verify",
        "check_limits": "lhbench.envs.verify",
        "check_read_only_role": "lhbench.envs.pg_guard",
        "copy_initial_state": "lhbench.envs.filesystem",
        "database_access": "lhbench.envs.verify",
        "inside": "lhbench.envs.paths",
        "replay_filesystem": "lhbench.envs.filesystem",
        "replay_sql": "lhbench.envs.sql",
        "require_read_only_url": "lhbench.envs.pg_guard",
        "run_state_check": "lhbench.envs.verify",
        "run_verify": "lhbench.envs.verify",
        "split_statements": "lhbench.envs.sql",
    },
    globals(),
)
