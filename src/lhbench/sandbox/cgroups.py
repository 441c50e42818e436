"""Per-sandbox control groups, where the machine lets us make them.

A pids group is the only limit on process count that holds for a root-owned process
(RLIMIT_NPROC exempts root), and a memory group limits resident memory without the
address-space limit that breaks Node. Both cgroup v2 and v1 hierarchies are handled; where
neither is writable the sandbox still runs, with rlimits only, and ``lhbench doctor`` says so.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from pathlib import Path

__all__ = ["CgroupSet", "cgroup_support"]

_ROOT = Path("/sys/fs/cgroup")


def _own_path(controller: str) -> str:
    """This process's cgroup path for a v1 controller ('' for v2's unified line)."""
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, ctrls, path = line.split(":", 2)
            if controller in ctrls.split(","):
                return path
    except OSError:
        pass
    return "/"


def _writable(d: Path) -> bool:
    return d.is_dir() and os.access(d, os.W_OK)


def _v2_parent() -> Path | None:
    controllers = _ROOT / "cgroup.controllers"
    if not controllers.is_file():
        return None
    have = controllers.read_text().split()
    if "pids" not in have:
        return None
    parent = _ROOT / _own_path("").lstrip("/")
    return parent if _writable(parent) else None


def _v1_parent(controller: str) -> Path | None:
    base = _ROOT / controller
    if not base.is_dir() or (_ROOT / "cgroup.controllers").is_file():
        return None
    parent = base / _own_path(controller).lstrip("/")
    return parent if _writable(parent) else None


def cgroup_support() -> dict[str, str]:
    """Which limits cgroups can enforce here: controller -> where (empty when none)."""
    out = {}
    if (v2 := _v2_parent()) is not None:
        out["pids"] = f"cgroup v2 ({v2})"
        if "memory" in (_ROOT / "cgroup.controllers").read_text().split():
            out["memory"] = f"cgroup v2 ({v2})"
        return out
    for ctrl in ("pids", "memory"):
        if (p := _v1_parent(ctrl)) is not None:
            out[ctrl] = f"cgroup v1 ({p})"
    return out


class CgroupSet:
    """The groups one sandbox runs in; ``procs_files`` are what its launcher joins."""

    def __init__(self, *, processes: int | None, memory_mb: int | None) -> None:
        self.dirs: list[Path] = []
        name = f"lhbench-{secrets.token_hex(6)}"
        v2 = _v2_parent()
        try:
            if v2 is not None:
                d = v2 / name
                d.mkdir()
                self.dirs.append(d)
                if processes is not None:
                    (d / "pids.max").write_text(str(processes))
                if memory_mb is not None and (d / "memory.max").exists():
                    (d / "memory.max").write_text(str(memory_mb << 20))
                return
            for ctrl, value, file in (
                ("pids", processes, "pids.max"),
                ("memory", memory_mb << 20 if memory_mb else None, "memory.limit_in_bytes"),
            ):
                parent = _v1_parent(ctrl)
                if parent is None or value is None:
                    continue
                d = parent / name
                d.mkdir()
                self.dirs.append(d)
                (d / file).write_text(str(value))
        except OSError:
            self.close()
            self.dirs = []

    @property
    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a process writes its pid into to join."""
        return [d / "cgroup.procs" for d in self.dirs]

    def close(self) -> None:
        """Kill whatever is left in the groups and remove them."""
        for d in self.dirs:
            for _ in range(50):
                try:
                    pids = [int(p) for p in (d / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.02)
            with contextlib.suppress(OSError):
                d.rmdir()
