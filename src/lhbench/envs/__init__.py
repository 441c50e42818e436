"""Environments that replay: filesystem and SQL final states, and verify scripts that label them."""

from lhbench.envs.filesystem import FS_TOOLS, ReplayReport, copy_initial_state, replay_filesystem
from lhbench.envs.paths import EscapeError, inside
from lhbench.envs.sql import SQL_TOOLS, PostgresDatabases, SqlState, replay_sql, split_statements
from lhbench.envs.verify import VerifyError, VerifyPool, VerifyResult, run_verify

__all__ = [
    "FS_TOOLS",
    "SQL_TOOLS",
    "EscapeError",
    "PostgresDatabases",
    "ReplayReport",
    "SqlState",
    "VerifyError",
    "VerifyPool",
    "VerifyResult",
    "copy_initial_state",
    "inside",
    "replay_filesystem",
    "replay_sql",
    "run_verify",
    "split_statements",
]
