"""Filesystem environments: an initial directory and the replay of a trajectory into a copy.

The trajectory's file operations (MCP filesystem-server style) are applied to a fresh
sandbox copy of the task's initial state.

Only calls whose result was not an error are replayed: the replayed state is the state
the agent actually left. A call the importer marked not replayable
(:data:`~lhbench.schema.REPLAY_REFUSED_KEY`: its path left the task root, say) and a call
that cannot be applied here are skipped and reported: the replay then lacks a write the
run made, so no check may decide on it. Operations: ``write_file`` (path, content),
``edit_file`` (path, edits [{oldText, newText}]), ``create_directory`` (path),
``move_file`` (source, destination), ``delete_file`` (path).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lhbench.envs.paths import EscapeError, inside
from lhbench.schema import REPLAY_REFUSED_KEY, StepKind, Trajectory

__all__ = ["FS_TOOLS", "ReplayReport", "copy_initial_state", "replay_filesystem"]

FS_TOOLS = {"write_file", "edit_file", "create_directory", "move_file", "delete_file"}


@dataclass
class ReplayReport:
    """What a replay applied and what it could not."""

    applied: int = 0
    skipped: list[str] = field(default_factory=list)


def copy_initial_state(initial: Path | None, dest: Path) -> Path:
    """A fresh copy of the initial state (an empty directory when there is none)."""
    if dest.exists():
        shutil.rmtree(dest)
    if initial is not None and initial.is_dir():
        shutil.copytree(initial, dest, symlinks=True)
    else:
        dest.mkdir(parents=True)
    return dest


def _apply(root: Path, name: str, args: dict[str, Any]) -> None:
    for key in ("path", "source", "destination"):
        if "\\" in str(args.get(key, "")):
            # a Windows path's separators: replayed here they would name one odd file
            raise EscapeError(f"path {args[key]!r} is Windows-style; it cannot be replayed here")
    if name == "write_file":
        target = inside(root, str(args["path"]))
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(str(args["content"]), encoding="utf-8")
    elif name == "edit_file":
        target = inside(root, str(args["path"]), must_exist=True)
        text = target.read_text(encoding="utf-8")
        for edit in args.get("edits", []):
            old, new = str(edit["oldText"]), str(edit["newText"])
            if old not in text:
                raise ValueError(f"edit_file: text to replace not found in {args['path']}")
            text = text.replace(old, new, 1)
        if not args.get("dryRun"):
            target.write_text(text, encoding="utf-8")
    elif name == "create_directory":
        inside(root, str(args["path"])).mkdir(parents=True, exist_ok=True)
    elif name == "move_file":
        src = inside(root, str(args["source"]), must_exist=True)
        dst = inside(root, str(args["destination"]))
        if dst.exists():
            raise FileExistsError(f"move_file: destination {args['destination']} exists")
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.rename(dst)
    elif name == "delete_file":
        target = inside(root, str(args["path"]), must_exist=True)
        shutil.rmtree(target) if target.is_dir() else target.unlink()


def replay_filesystem(initial: Path | None, trajectory: Trajectory, dest: Path) -> ReplayReport:
    """Copy the initial state to ``dest`` and apply the trajectory's successful file calls."""
    copy_initial_state(initial, dest)
    failed = {
        s.tool_call_id for s in trajectory.steps if s.kind == StepKind.TOOL_RESULT and s.is_error
    }
    report = ReplayReport()
    for step in trajectory.steps:
        if step.kind != StepKind.TOOL_CALL or step.tool_name not in FS_TOOLS:
            continue
        if step.tool_call_id in failed:
            continue
        refused = (step.metadata or {}).get(REPLAY_REFUSED_KEY)
        if refused:
            report.skipped.append(f"step {step.index} {step.tool_name}: {refused}")
            continue
        try:
            _apply(dest, step.tool_name, step.tool_input or {})
            report.applied += 1
        except (EscapeError, OSError, ValueError, KeyError, RuntimeError) as exc:
            # RuntimeError: a symlink loop in the state, met while resolving the path
            report.skipped.append(f"step {step.index} {step.tool_name}: {exc}")
    return report
