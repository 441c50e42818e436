"""Environments that replay: filesystem and SQL final states, and verify scripts that label them."""

from lhbench.envs.filesystem import FS_TOOLS, ReplayReport, copy_initial_state, replay_filesystem
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
