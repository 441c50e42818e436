"""Agent runners: our model-agnostic harness, workspaces, skills, hooks, recovery, executors."""

from lhbench.harness.compaction import Compactor, WorkingSet, estimate_message_tokens
from lhbench.harness.hooks import HookResult, run_hooks
from lhbench.harness.manifest import MANIFEST, complete_step, read_manifest
from lhbench.harness.native import HARNESS_VERSION, NativeHarness, NativeResult
from lhbench.harness.runner import HARNESSES, RunOutcome, RunSpec, execute, run_local, run_ray
from lhbench.harness.workspace import (
    ENV_ALLOW,
    Workspace,
    install_skills,
    prepare_workspace,
    run_id_for,
    scrubbed_env,
    skill_text,
)

__all__ = [
    "ENV_ALLOW",
    "HARNESSES",
    "HARNESS_VERSION",
    "MANIFEST",
    "Compactor",
    "HookResult",
    "NativeHarness",
    "NativeResult",
    "RunOutcome",
    "RunSpec",
    "WorkingSet",
    "Workspace",
    "complete_step",
    "estimate_message_tokens",
    "execute",
    "install_skills",
    "prepare_workspace",
    "read_manifest",
    "run_hooks",
    "run_id_for",
    "run_local",
    "run_ray",
    "scrubbed_env",
    "skill_text",
]
