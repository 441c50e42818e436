"""Agent runners: our model-agnostic harness, workspaces, skills, hooks, recovery, executors.

Names load on first use: the hook program (``python -m lhbench.harness.cli_hook``) runs
after every tool call of a CLI agent and must not pay for pydantic-ai, MCP and Ray imports.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lhbench.harness.compaction import Compactor, WorkingSet, estimate_message_tokens
    from lhbench.harness.executors import (
        EXECUTORS,
        Executor,
        LocalExecutor,
        RayExecutor,
        make_executor,
    )
    from lhbench.harness.hooks import HookResult, run_hooks
    from lhbench.harness.manifest import MANIFEST, complete_step, read_manifest
    from lhbench.harness.native import HARNESS_VERSION, NativeHarness, NativeResult
    from lhbench.harness.runner import HARNESSES, RunOutcome, RunSpec, execute
    from lhbench.harness.workspace import (
        ENV_ALLOW,
        SQL_STATE_FILE,
        Workspace,
        install_skills,
        prepare_workspace,
        run_id_for,
        scrubbed_env,
        skill_text,
    )

_WHERE = {
    "compaction": ("Compactor", "WorkingSet", "estimate_message_tokens"),
    "hooks": ("HookResult", "run_hooks"),
    "manifest": ("MANIFEST", "complete_step", "read_manifest"),
    "native": ("HARNESS_VERSION", "NativeHarness", "NativeResult"),
    "executors": ("EXECUTORS", "Executor", "LocalExecutor", "RayExecutor", "make_executor"),
    "runner": ("HARNESSES", "RunOutcome", "RunSpec", "execute"),
    "workspace": (
        "ENV_ALLOW",
        "SQL_STATE_FILE",
        "Workspace",
        "install_skills",
        "prepare_workspace",
        "run_id_for",
        "scrubbed_env",
        "skill_text",
    ),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "ENV_ALLOW",
    "EXECUTORS",
    "HARNESSES",
    "HARNESS_VERSION",
    "MANIFEST",
    "SQL_STATE_FILE",
    "Compactor",
    "Executor",
    "HookResult",
    "LocalExecutor",
    "NativeHarness",
    "NativeResult",
    "RayExecutor",
    "RunOutcome",
    "RunSpec",
    "WorkingSet",
    "Workspace",
    "complete_step",
    "estimate_message_tokens",
    "execute",
    "install_skills",
    "make_executor",
    "prepare_workspace",
    "read_manifest",
    "run_hooks",
    "run_id_for",
    "scrubbed_env",
    "skill_text",
]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'lhbench.harness' has no attribute {name!r}")
    return getattr(importlib.import_module(f"lhbench.harness.{module}"), name)
