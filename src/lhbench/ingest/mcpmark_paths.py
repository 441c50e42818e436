"""MCPMark filesystem logs' absolute paths, rebased under the task root.

MCPMark copies a task's initial state to ``<project>/.mcpmark_backups/backup_<service>_
<category>_<task>_<pid>`` and starts the MCP filesystem server on that directory, so the
agent's calls name absolute paths in it (``/home/<user>/.mcpmark_backups/…/notes/a.md``).
lhbench replays a run into a fresh copy of the initial state, where the same file is
``notes/a.md``. The root is the directory the server itself reported
(``list_allowed_directories``), else the one backup directory the log's successful calls
work in. A path that leaves it (``..``, another backup directory, a home-relative or
Windows-style path, a NUL byte) is not rebased: the call keeps its recorded input and is
marked not replayable (:data:`~lhbench.schema.REPLAY_REFUSED_KEY`) with the reason, so a
check on a state without that write is undecided, never a verdict.

Paths are normalised lexically, as the server normalises them before its own check;
a symlink inside the state is the replay's to refuse (it resolves every path it writes).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from lhbench.schema import REPLAY_REFUSED_KEY

__all__ = ["PATH_KEYS", "rebase_path", "rebase_paths", "task_root"]

PATH_KEYS = ("path", "source", "destination")  # the filesystem server's path arguments
_LIST_KEYS = ("paths",)
_BACKUP = re.compile(r"^(/(?:[^/]+/)*\.mcpmark_backups/[^/]+)(?:/|$)")


class _Refused(ValueError):
    pass


def _normal(path: str) -> str:
    return "/" + posixpath.normpath(path).lstrip("/")


def rebase_path(path: Any, root: str | None) -> str:
    """``path`` relative to ``root`` (``"."`` for the root itself).

    Raises:
        ValueError: the path is not a string, holds a NUL byte, is Windows-style or
            home-relative, climbs out with ``..``, or (absolute) lies outside ``root``.
    """
    if not isinstance(path, str):
        raise _Refused(f"path {path!r} is not a string")
    if "\x00" in path:
        raise _Refused(f"path {path!r} contains a NUL byte")
    if "\\" in path or re.match(r"^[A-Za-z]:", path):
        raise _Refused(f"path {path!r} is Windows-style; the task root is a POSIX directory")
    if path.startswith("~"):
        raise _Refused(f"path {path!r} is relative to a home directory, not the task root")
    if not path.startswith("/"):
        rel = posixpath.normpath(path or ".")
        if rel == ".." or rel.startswith("../"):
            raise _Refused(f"path {path!r} climbs out of the task root")
        return rel
    if root is None:
        raise _Refused(f"path {path!r} is absolute and the log names no task root")
    full = _normal(path)
    if full == root:
        return "."
    if full.startswith(root + "/"):
        return full[len(root) + 1 :]
    raise _Refused(f"path {path!r} is outside the task root {root}")


def _paths_of(args: dict[str, Any]) -> list[Any]:
    out = [args[k] for k in PATH_KEYS if k in args]
    for k in _LIST_KEYS:
        if isinstance(args.get(k), list):
            out.extend(args[k])
    return out


def task_root(steps: list[dict[str, Any]], task_key: str) -> str | None:
    """The directory the log's filesystem server served (None when the log cannot say).

    ``task_key`` (``<category>_<task>``) picks MCPMark's backup directory of this task
    when successful calls work in several.
    """
    failed = {s["tool_call_id"] for s in steps if s["kind"] == "tool_result" and s["is_error"]}
    calls = {s["tool_call_id"]: s for s in steps if s["kind"] == "tool_call"}
    allowed: set[str] = set()
    backups: set[str] = set()
    for s in steps:
        if s["kind"] == "tool_result" and not s["is_error"]:
            call = calls.get(s["tool_call_id"])
            if call is not None and call["tool_name"] == "list_allowed_directories":
                lines = str(s.get("tool_output") or "").splitlines()
                allowed |= {_normal(x.strip()) for x in lines if x.strip().startswith("/")}
        if s["kind"] == "tool_call" and s["tool_call_id"] not in failed:
            for p in _paths_of(s.get("tool_input") or {}):
                if isinstance(p, str) and "\x00" not in p and p.startswith("/"):
                    m = _BACKUP.match(_normal(p))
                    if m:
                        backups.add(m.group(1))
    if len(allowed) == 1:
        return allowed.pop()
    if len(backups) > 1:
        backups = {b for b in backups if f"_{task_key}_" in b.rsplit("/", 1)[1] + "_"}
    return backups.pop() if len(backups) == 1 else None


def rebase_paths(steps: list[dict[str, Any]], task_key: str) -> list[str]:
    """Rebase every call's path arguments in place; the refusals of successful calls.

    A call with a path that cannot be rebased keeps its recorded input; when its result was
    not an error it is marked not replayable, and the reason is returned.
    """
    root = task_root(steps, task_key)
    failed = {s["tool_call_id"] for s in steps if s["kind"] == "tool_result" and s["is_error"]}
    refused = []
    for s in steps:
        args = s.get("tool_input")
        if s["kind"] != "tool_call" or not isinstance(args, dict) or not _paths_of(args):
            continue
        try:
            new = dict(args)
            for k in PATH_KEYS:
                if k in args:
                    new[k] = rebase_path(args[k], root)
            for k in _LIST_KEYS:
                if isinstance(args.get(k), list):
                    new[k] = [rebase_path(p, root) for p in args[k]]
        except _Refused as exc:
            if s["tool_call_id"] not in failed:
                s.setdefault("metadata", {})[REPLAY_REFUSED_KEY] = str(exc)
                refused.append(f"{s['tool_name']} call {s['tool_call_id']}: {exc}")
            continue
        s["tool_input"] = new
    return refused
