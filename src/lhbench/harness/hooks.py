"""Post-tool verification hooks for the native harness.

After a matching tool call, the task's check runs on the workspace and its structured
result (diagnosis and next action) goes back to the agent with the tool's result.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass
from pathlib import Path

from lhbench.sandbox import (
    CRASH_EXIT,
    Limits,
    Sandbox,
    UnsafeNoSandbox,
    policy_for,
    run_sandboxed_sync,
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

    def feedback(self) -> str:
        """What the agent reads appended to the tool result."""
        status = "passed" if self.ok else "FAILED"
        return f"[verification {self.hook}: {status}] {self.diagnosis}" + (
            f"\nNext action: {self.next_action}" if self.next_action else ""
        )


def _parse(check: str, returncode: int | None, out: str, err: str) -> HookResult:
    """A check's answer as a result; any other shape is a failed check saying why."""
    lines = out.strip().splitlines()
    if returncode == CRASH_EXIT:
        return HookResult(
            check, False, f"the check crashed: {err.strip()[-500:]}", "continue without it"
        )
    if not lines:
        detail = err.strip()[-500:] or f"exit code {returncode}"
        return HookResult(check, returncode == 0, detail, "")
    try:
        doc = json.loads(lines[-1])
    except json.JSONDecodeError:
        return HookResult(
            check,
            False,
            f"the check answered in an unexpected shape (not JSON): {lines[-1][:200]}",
            "continue without it",
        )
    if not isinstance(doc, dict) or not isinstance(doc.get("ok", returncode == 0), bool):
        return HookResult(
            check,
            False,
            "the check answered in an unexpected shape: expected "
            f'{{"ok": bool, "diagnosis": str, "next_action": str}}, got {str(doc)[:200]}',
            "continue without it",
        )
    return HookResult(
        check,
        bool(doc.get("ok", returncode == 0)),
        str(doc.get("diagnosis", err.strip()[-500:]))[:2000],
        str(doc.get("next_action", ""))[:1000],
    )


def run_hooks(
    hooks: list[HookSpec],
    tool_name: str,
    task_dir: Path,
    root: Path,
    *,
    sandbox: Sandbox | None,
) -> list[HookResult]:
    """Run every hook matching ``tool_name``; a crashing check is a failed result, not a crash.

    Each check runs as a fresh process in ``sandbox``, seeing its task directory and the
    workspace read-only. ``sandbox=None`` means the caller is already inside one (the CLI
    hook program): the check then runs directly, under the same limits.
    """
    out = []
    for h in hooks:
        if not fnmatch.fnmatch(tool_name, h.after_tool):
            continue
        script = task_dir / h.check
        argv = script_argv(script, "--root", str(root))
        policy = policy_for(
            root,
            readable=[task_dir, root],
            env={"LHBENCH_IN_SANDBOX": "1"},
            limits=Limits(
                wall_s=h.timeout_s,
                cpu_s=max(1, int(h.timeout_s)),
                memory_mb=1024,
                file_mb=64,
                processes=32,
            ),
        )
        res = run_sandboxed_sync(sandbox or UnsafeNoSandbox(), argv, policy)
        if res.timed_out:
            out.append(
                HookResult(
                    h.check,
                    False,
                    f"the check timed out after {h.timeout_s}s",
                    "continue without it",
                )
            )
            continue
        out.append(_parse(h.check, res.returncode, res.text(), res.text("stderr")))
    return out
