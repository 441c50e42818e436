"""One interface for every sandbox backend, and running a command through it.

A backend turns (argv, policy) into a :class:`Prepared` command: the argv to execute, the
environment to give the launcher (already the sandbox's own: nothing of ours leaks through
``/proc/1/environ``), and what to clean up afterwards (cgroups, forwarders, temp files).
:func:`run_sandboxed` runs it with the wall-clock limit, kills the whole process group on
time-out, and always cleans up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from lhbench.errors import InfrastructureError, LhbenchError
from lhbench.sandbox.policy import SandboxPolicy

__all__ = [
    "DiskLimitExceeded",
    "Finished",
    "Prepared",
    "Sandbox",
    "SandboxUnavailable",
    "run_sandboxed",
    "run_sandboxed_sync",
    "written_bytes",
]


class SandboxUnavailable(InfrastructureError):
    """No sandbox backend works here, and running unconfined was not allowed.

    Infrastructure, never a score: the unit is retried once a sandbox works.
    """


class DiskLimitExceeded(LhbenchError):
    """A sandboxed command wrote more than its disk limit; it was stopped."""

    def __init__(self, where: Sequence[Path], limit_mb: int, grown: int) -> None:
        places = ", ".join(str(p) for p in where)
        super().__init__(
            f"disk limit of {limit_mb} MiB reached: the command wrote {grown >> 20} MiB "
            f"into {places} and was stopped"
        )
        self.limit_mb = limit_mb
        self.grown = grown


def written_bytes(roots: Sequence[Path]) -> int:
    """Disk space used under ``roots`` (allocated blocks; links not followed, each inode once)."""
    seen: set[tuple[int, int]] = set()
    total = 0
    stack = [str(r) for r in roots]
    while stack:
        top = stack.pop()
        try:
            it = os.scandir(top)
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
    return total


DISK_POLL_S = 0.5


class _DiskWatch:
    """How much a command's writable mounts grew; set ``over`` once past the limit."""

    def __init__(self, policy: SandboxPolicy) -> None:
        self.limit = policy.limits.disk_mb
        self.roots = [m.source for m in policy.mounts if m.writable and not m.empty]
        self.base = written_bytes(self.roots) if self.limit and self.roots else 0
        self.grown = 0
        self.over = False

    @property
    def active(self) -> bool:
        return bool(self.limit and self.roots)

    def check(self) -> bool:
        """True when past the limit (measured now)."""
        if not self.active or self.limit is None:
            return False
        self.grown = max(self.grown, written_bytes(self.roots) - self.base)
        if self.grown > self.limit << 20:
            self.over = True
        return self.over

    def error(self) -> DiskLimitExceeded:
        return DiskLimitExceeded(self.roots, self.limit or 0, self.grown)


@dataclass
class Prepared:
    """A command ready to start: argv, environment, working directory, and its cleanup."""

    argv: list[str]
    env: dict[str, str]
    cwd: str
    backend: str
    _cleanup: list[Callable[[], None]] = field(default_factory=list)

    def close(self) -> None:
        """Release cgroups, forwarders and temporary files (idempotent)."""
        while self._cleanup:
            with contextlib.suppress(Exception):
                self._cleanup.pop()()


@dataclass(frozen=True)
class Finished:
    """How a sandboxed command ended."""

    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    backend: str
    disk_limit: DiskLimitExceeded | None = None  # stopped for writing past its disk limit
    usage: Mapping[str, float] | None = None  # CPU seconds and peak memory, where reported

    def text(self, which: str = "stdout") -> str:
        """Decoded output."""
        return (self.stdout if which == "stdout" else self.stderr).decode("utf-8", "replace")


class Sandbox(Protocol):
    """A way to confine processes (bubblewrap, a container runtime, or none)."""

    name: str

    def available(self) -> str | None:
        """None when it works here, else why not."""
        ...

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> Prepared:
        """The command that runs ``argv`` under ``policy``."""
        ...

    def describe(self) -> list[str]:
        """What a sandboxed process sees and may do, one line each (for ``lhbench doctor``)."""
        ...


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


MAX_OUTPUT = 8 << 20


def _read_capped(f: BinaryIO, max_output: int) -> bytes:
    """The output, or its head and tail around a note saying how much was cut."""
    size = f.seek(0, os.SEEK_END)
    f.seek(0)
    if size <= max_output:
        return f.read()
    half = max_output // 2
    head = f.read(half)
    f.seek(size - half)
    tail = f.read(half)
    return head + f"\n[... {size - 2 * half} bytes of output cut ...]\n".encode() + tail


async def run_sandboxed(
    sandbox: Sandbox,
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    stdin: bytes | None = None,
    stdout_path: Path | None = None,
    max_output: int = MAX_OUTPUT,
) -> Finished:
    """Run ``argv`` confined; wait at most ``policy.limits.wall_s``; kill its group after.

    Output goes to files, never to memory, so a command printing gigabytes costs disk
    (bounded by the file-size limit) and not the harness's memory; what is returned is
    capped at ``max_output`` bytes per stream (head and tail, saying what was cut).
    ``stdout_path`` keeps the whole stdout there instead (a CLI's transcript), copied from
    a pipe: the file is never open in the sandbox, so nothing in it can reopen it (through
    ``/proc/PID/fd``) and rewrite what was written before.
    """
    prepared = sandbox.prepare(argv, policy)
    try:
        with contextlib.ExitStack() as stack:
            out: BinaryIO = stack.enter_context(tempfile.TemporaryFile())
            err = stack.enter_context(tempfile.TemporaryFile())
            proc = await asyncio.create_subprocess_exec(
                *prepared.argv,
                cwd=prepared.cwd,
                env=prepared.env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE if stdout_path is not None else out,
                stderr=err,
                start_new_session=True,
            )
            cap = (policy.limits.file_mb or 1024) << 20
            copy = (
                asyncio.ensure_future(_copy(proc.stdout, stdout_path, cap))
                if stdout_path is not None and proc.stdout is not None
                else None
            )
            timed_out = False
            disk = _DiskWatch(policy)
            watch = asyncio.ensure_future(_watch_disk(disk, proc.pid)) if disk.active else None
            try:
                await asyncio.wait_for(_finish(proc, stdin, copy), policy.limits.wall_s)
            except TimeoutError:
                timed_out = True
                _kill_group(proc.pid)
                await proc.wait()
            finally:
                _kill_group(proc.pid)  # anything it left behind in its group
                if watch is not None:
                    watch.cancel()
                    with contextlib.suppress(BaseException):
                        await watch
                if copy is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(copy, 10)
            return Finished(
                proc.returncode,
                b"" if stdout_path is not None else _read_capped(out, max_output),
                _read_capped(err, max_output),
                timed_out,
                prepared.backend,
                disk.error() if disk.over or disk.check() else None,
            )
    finally:
        prepared.close()


async def _watch_disk(disk: _DiskWatch, pid: int) -> None:
    """Stop the command's group once its writable mounts grew past its disk limit."""
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(DISK_POLL_S)
        if await loop.run_in_executor(None, disk.check):
            _kill_group(pid)
            return


async def _finish(
    proc: asyncio.subprocess.Process, stdin: bytes | None, copy: asyncio.Future[None] | None
) -> None:
    if stdin is not None and proc.stdin is not None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        proc.stdin.close()
    if copy is not None:
        await copy
    await proc.wait()


async def _copy(stream: asyncio.StreamReader, path: Path, cap: int) -> None:
    """Copy a pipe to ``path`` up to ``cap`` bytes; the rest is read and dropped."""
    written = 0
    with path.open("wb") as f:
        while chunk := await stream.read(1 << 16):
            if written < cap:
                f.write(chunk[: cap - written])
                written += min(len(chunk), cap - written)


def _watch_disk_sync(disk: _DiskWatch, pid: int, stop: threading.Event) -> None:
    while not stop.wait(DISK_POLL_S):
        if disk.check():
            _kill_group(pid)
            return


def run_sandboxed_sync(
    sandbox: Sandbox,
    argv: Sequence[str],
    policy: SandboxPolicy,
    *,
    stdin: bytes | None = None,
    max_output: int = MAX_OUTPUT,
) -> Finished:
    """Like :func:`run_sandboxed`, from synchronous code."""
    prepared = sandbox.prepare(argv, policy)
    try:
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                prepared.argv,
                cwd=prepared.cwd,
                env=prepared.env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
            timed_out = False
            disk = _DiskWatch(policy)
            stop = threading.Event()
            watch = threading.Thread(target=_watch_disk_sync, args=(disk, proc.pid, stop))
            if disk.active:
                watch.start()
            try:
                proc.communicate(stdin, timeout=policy.limits.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(proc.pid)
                proc.wait()
            finally:
                _kill_group(proc.pid)
                stop.set()
                if watch.is_alive():
                    watch.join()
            return Finished(
                proc.returncode,
                _read_capped(out, max_output),
                _read_capped(err, max_output),
                timed_out,
                prepared.backend,
                disk.error() if disk.over or disk.check() else None,
            )
    finally:
        prepared.close()
