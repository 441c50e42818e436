"""Running code lhbench does not trust: agents, pack scripts, replays, judge tools.

One interface (:class:`Sandbox`), backends per platform (bubblewrap by default on Linux,
a container runtime where a daemon runs, and an explicit, recorded "none"), a network
forwarder that is a sandbox's only way out, and resource limits.
"""

from lhbench.sandbox.answer import (
    AnswerFault,
    CheckAnswer,
    CheckAnswerError,
    finished_answer,
    read_check_answer,
)
from lhbench.sandbox.base import (
    DiskLimitExceeded,
    Finished,
    Prepared,
    Sandbox,
    SandboxUnavailable,
    run_sandboxed,
    run_sandboxed_sync,
)
from lhbench.sandbox.bubblewrap import SANDBOX_UID, BubblewrapSandbox
from lhbench.sandbox.cgroups import cgroup_support
from lhbench.sandbox.container import ContainerSandbox
from lhbench.sandbox.forward import Forwarder
from lhbench.sandbox.pg_gate import PgAccess, PgGate
from lhbench.sandbox.policy import (
    CRASH_EXIT,
    ENV_ALLOW,
    Endpoint,
    Limits,
    Mount,
    SandboxPolicy,
    lhbench_paths,
    policy_for,
    private_paths,
    sandbox_env,
    script_argv,
    system_mounts,
)
from lhbench.sandbox.select import BACKENDS, UnsafeNoSandbox, get_sandbox
from lhbench.sandbox.session import SandboxSession, open_session, session_support

__all__ = [
    "BACKENDS",
    "CRASH_EXIT",
    "ENV_ALLOW",
    "SANDBOX_UID",
    "AnswerFault",
    "BubblewrapSandbox",
    "CheckAnswer",
    "CheckAnswerError",
    "ContainerSandbox",
    "DiskLimitExceeded",
    "Endpoint",
    "Finished",
    "Forwarder",
    "Limits",
    "Mount",
    "PgAccess",
    "PgGate",
    "Prepared",
    "Sandbox",
    "SandboxPolicy",
    "SandboxSession",
    "SandboxUnavailable",
    "UnsafeNoSandbox",
    "cgroup_support",
    "finished_answer",
    "get_sandbox",
    "lhbench_paths",
    "open_session",
    "policy_for",
    "private_paths",
    "read_check_answer",
    "run_sandboxed",
    "run_sandboxed_sync",
    "sandbox_env",
    "script_argv",
    "session_support",
    "system_mounts",
]
