"""Post-tool verification hooks for the native harness.

After a matching tool call, the task's check runs on the workspace and its structured
result (diagnosis and next action) goes back to the agent with the tool's result.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

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


def run_hooks(
    hooks: list[HookSpec], tool_name: str, task_dir: Path, root: Path, env: dict[str, str]
) -> list[HookResult]:
    """Run every hook matching ``tool_name``; a crashing check is a failed result, not a crash."""
    out = []
    for h in hooks:
        if not fnmatch.fnmatch(tool_name, h.after_tool):
            continue
        try:
            proc = subprocess.run(
                [sys.executable, str(task_dir / h.check), "--root", str(root)],
                capture_output=True,
                text=True,
                timeout=h.timeout_s,
                env=env,
                cwd=root,
                stdin=subprocess.DEVNULL,
            )
            doc = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else {}
            out.append(
                HookResult(
                    h.check,
                    bool(doc.get("ok", proc.returncode == 0)),
                    str(doc.get("diagnosis", proc.stderr.strip()[-500:])),
                    str(doc.get("next_action", "")),
                )
            )
        except (subprocess.TimeoutExpired, json.JSONDecodeError, OSError) as exc:
            out.append(
                HookResult(h.check, False, f"the check could not run: {exc}", "continue without it")
            )
    return out
