"""Post-tool verification hooks for the native harness.

After a matching tool call, the task's check runs on the workspace and its structured
result (diagnosis and next action) goes back to the agent with the tool's result.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path

from lhbench.sandbox import (
    CheckAnswerError,
    Finished,
    Limits,
    Sandbox,
    SandboxSession,
    UnsafeNoSandbox,
    finished_answer,
    policy_for,
    run_sandboxed_sync,
    sandbox_env,
    script_argv,
)
from lhbench.schema import HookSpec

__all__ = ["HookResult", "run_hooks"]


@dataclass(frozen=True)
class HookResult:
    """One check's verdict on the state after a tool call."""

    hook: str
    ok: bool
    diagnosis: str
    next_action: str
    error: str | None = None  # no verdict (crash, timeout, shape, contradiction): why

    def feedback(self) -> str:
        """What the agent reads appended to the tool result."""
        status = "passed" if self.ok else "FAILED"
        return f"[verification {self.hook}: {status}] {self.diagnosis}" + (
            f"\nNext action: {self.next_action}" if self.next_action else ""
        )


def _answer(check: str, res: Finished, timeout_s: float) -> HookResult:
    """A check's answer as a result; no verdict is a failed result with the error kept."""
    try:
        ans = finished_answer(check, res, timeout=timeout_s, payload="required")
    except CheckAnswerError as exc:
        why = str(exc).removeprefix(f"{check}: ")
        said = f" (it said: {exc.detail})" if exc.detail else ""
        return HookResult(
            check, False, f"the check {why}{said}", "continue without it", error=str(exc)
        )
    return HookResult(check, ans.passed, ans.detail, ans.next_action)


def run_hooks(
    hooks: list[HookSpec],
    tool_name: str,
    task_dir: Path,
    root: Path,
    *,
    sandbox: Sandbox | None,
    session: SandboxSession | None = None,
) -> list[HookResult]:
    """Run every hook matching ``tool_name``; a crashing check is a failed result, not a crash.

    Each check runs as a fresh process in ``sandbox``, seeing its task directory and the
    workspace read-only. ``sandbox=None`` means the caller is already inside one (the CLI
    hook program): the check then runs directly, under the same limits. ``session``: the
    run's own sandbox (verification), used where it shows the task directory and workspace.
    """
    out = []
    for h in hooks:
        if not fnmatch.fnmatch(tool_name, h.after_tool):
            continue
        script = task_dir / h.check
        argv = script_argv(script, "--root", str(root))
        limits = Limits(
            wall_s=h.timeout_s,
            cpu_s=max(1, int(h.timeout_s)),
            memory_mb=1024,
            file_mb=64,
            processes=32,
        )
        if session is not None and session.covers([task_dir, root]):
            env = sandbox_env(root, env={"LHBENCH_IN_SANDBOX": "1"})
            res = session.run(argv, cwd=root, env=env, limits=limits)
        else:
            policy = policy_for(
                root, readable=[task_dir, root], env={"LHBENCH_IN_SANDBOX": "1"}, limits=limits
            )
            res = run_sandboxed_sync(sandbox or UnsafeNoSandbox(), argv, policy)
        out.append(_answer(h.check, res, h.timeout_s))
    return out
