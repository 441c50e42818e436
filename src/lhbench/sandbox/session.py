"""One sandbox for a unit of work: built once, then each command costs a fork and an exec.

Building a bubblewrap sandbox (the launcher, as root the idmapped staging and the uid
drop, prlimit, bwrap's namespaces and mounts, cgroups) costs several times what starting
a Python process does. A :class:`SandboxSession` builds it once for one unit of work (one
run's replay and its checks) and runs a small worker in it (:mod:`lhbench.sandbox.worker`)
that forks and executes each command the host sends, with that command's limits, and
answers with how it ended. A session serves one unit only: never two runs, never two
tasks (their states must not meet).

Between the commands of a session nothing carries over: each command writes only its own
scratch directory (Landlock) and the paths its request names, cannot make IPC objects
(seccomp), cannot signal or read the worker, and whatever it leaves running is killed
before the next command starts. Where the worker cannot be used (another backend, no
Landlock in this kernel), :func:`open_session` returns None and callers run each command
in a sandbox of its own, as before.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import secrets
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from lhbench.sandbox.base import (
    DISK_POLL_S,
    MAX_OUTPUT,
    Finished,
    Prepared,
    Sandbox,
    _DiskWatch,
    _read_capped,
)
from lhbench.sandbox.policy import Limits, Mount, SandboxPolicy
from lhbench.sandbox.seccomp import ipc_program

__all__ = ["WORKER", "SandboxSession", "open_session", "session_support"]

WORKER = Path(__file__).with_name("worker.py")
_GRACE_S = 10.0  # past a command's wall limit, how long the worker has to answer
_START_S = 60.0  # how long a sandbox may take to start on a busy machine


@lru_cache(maxsize=1)
def _landlock_abi() -> int:
    from lhbench.sandbox.worker import landlock_abi

    return landlock_abi()


def session_support(sandbox: Sandbox) -> str | None:
    """None when ``sandbox`` can run a session's worker here, else why not."""
    from lhbench.sandbox.bubblewrap import BubblewrapSandbox

    if os.environ.get("LHBENCH_SANDBOX_SESSION", "1") == "0":
        return "turned off (LHBENCH_SANDBOX_SESSION=0)"
    if not isinstance(sandbox, BubblewrapSandbox):
        return f"the {sandbox.name} backend runs one command per sandbox"
    if _landlock_abi() < 1:
        return "this kernel has no Landlock (each command then gets a sandbox of its own)"
    return None


# A sandbox dies with the thread that started it (bwrap's --die-with-parent is the
# parent-death signal, sent when that thread ends): sessions outlive the worker threads of
# asyncio.to_thread, so every one is built and started from this one long-lived thread,
# in the background (the caller goes on making the state meanwhile).
_spawner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lhbench-sandbox-spawner")


def _rlimits(limits: Limits) -> dict[str, int]:
    out = {"core": 0}
    if limits.cpu_s is not None:
        out["cpu"] = limits.cpu_s
    file_mb = min((m for m in (limits.file_mb, limits.disk_mb) if m is not None), default=None)
    if file_mb is not None:
        out["fsize"] = file_mb << 20
    if limits.open_files is not None:
        out["nofile"] = limits.open_files
    if limits.memory_mb is not None and limits.address_space:
        out["as"] = limits.memory_mb << 20
    return out


_live: weakref.WeakSet[SandboxSession] = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    """Sessions still open at exit: their cgroups and forwarders are released too."""
    for s in list(_live):
        with contextlib.suppress(Exception):
            s.close()


class SandboxSession:
    """A sandbox built once for one unit of work, running its commands one at a time.

    ``policy`` says what the whole unit may see (every command's mounts and endpoints);
    its limits bound the whole sandbox (memory and process-count cgroups, the size of the
    private ``/tmp``), and each command brings its own (:meth:`run`).
    """

    def __init__(
        self, sandbox: Sandbox, policy: SandboxPolicy | Callable[[], SandboxPolicy]
    ) -> None:
        self.sandbox = sandbox
        self._policy_src = policy
        self._policy: SandboxPolicy | None = None
        self._policy_lock = threading.Lock()
        self._lock = threading.Lock()
        self._launch: Future[None] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._prepared: Prepared | None = None
        self._sock: socket.socket | None = None
        self._log: Any = None
        self._hello: dict[str, Any] | None = None
        self.started = 0  # sandboxes built (a worker that died is replaced)
        self.commands = 0
        self.closed = False
        _live.add(self)

    @property
    def policy(self) -> SandboxPolicy:
        """What the whole unit may see; its limits are the sandbox's (see the class)."""
        with self._policy_lock:
            if self._policy is None:
                given = (
                    self._policy_src
                    if isinstance(self._policy_src, SandboxPolicy)
                    else self._policy_src()
                )
                unit = given.limits
                self._policy = replace(
                    given,
                    limits=Limits(
                        wall_s=None,
                        cpu_s=None,
                        memory_mb=unit.memory_mb,
                        address_space=False,
                        file_mb=None,
                        disk_mb=unit.disk_mb,
                        processes=None if unit.processes is None else unit.processes + 4,
                        open_files=None,
                    ),
                )
            return self._policy

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> SandboxSession:
        """Start building the sandbox, in the background (:meth:`run` waits for it)."""
        with self._lock:
            self._start()
        return self

    def _start(self) -> None:
        if self.closed:
            raise RuntimeError("this sandbox session is closed")
        if self._launch is None:
            self._launch = _spawner.submit(self._build)

    def _build(self) -> None:
        """Prepare and start the sandbox with its worker (on the spawner thread)."""
        host, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # above the launcher's own descriptors (3: the environment file, 4: seccomp)
        fd = fcntl.fcntl(inside.fileno(), fcntl.F_DUPFD_CLOEXEC, 10)
        inside.close()
        ipc = ipc_program() or b""
        argv = [sys.executable, "-I", "-S", str(WORKER), str(fd), ipc.hex()]
        log = tempfile.TemporaryFile()  # noqa: SIM115 - kept open as long as the sandbox
        prepared = None
        try:
            prepared = self.sandbox.prepare(argv, self.policy)
            self._proc = subprocess.Popen(
                prepared.argv,
                cwd=prepared.cwd,
                env=prepared.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                pass_fds=(fd,),
                start_new_session=True,
            )
        except BaseException:
            if prepared is not None:
                prepared.close()
            host.close()
            log.close()
            raise
        finally:
            os.close(fd)
        self._prepared, self._sock, self._log, self._hello = prepared, host, log, None
        self.started += 1

    def _ready(self) -> socket.socket:
        self._start()
        assert self._launch is not None
        try:
            self._launch.result()
        except BaseException:
            self._launch = None
            raise
        assert self._sock is not None
        if self._hello is None:
            msg = self._recv(_START_S)
            if msg is None:
                why = self._worker_log()
                self._stop()
                raise OSError(f"the sandbox's worker did not start: {why}")
            self._hello = json.loads(msg)
        return self._sock

    def _recv(self, timeout: float | None) -> bytes | None:
        """The worker's next message, or None (it ended, or said nothing in ``timeout``)."""
        assert self._sock is not None
        ready, _, _ = select.select([self._sock], [], [], timeout)
        if not ready:
            return None
        try:
            return self._sock.recv(1 << 20) or None
        except OSError:
            return None

    def _worker_log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return " | ".join(
            self._log.read()[-2000:].decode(errors="replace").strip().splitlines()[-3:]
        )

    def _stop(self) -> None:
        """End this sandbox (everything in it dies with bwrap); a later command starts another."""
        launch, self._launch = self._launch, None
        if launch is not None:
            with contextlib.suppress(BaseException):
                launch.result()
        proc, self._proc = self._proc, None
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, 9)
            with contextlib.suppress(Exception):
                proc.wait(timeout=10)
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._prepared is not None:
            self._prepared.close()
            self._prepared = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def close(self) -> None:
        """End the sandbox and release what it held (idempotent)."""
        with self._lock:
            self.closed = True
            if self._launch is not None:
                with contextlib.suppress(BaseException):
                    self._launch.result()
            if self._sock is not None:
                with contextlib.suppress(OSError):
                    self._sock.shutdown(socket.SHUT_RDWR)
            proc = self._proc
            if proc is not None:
                with contextlib.suppress(Exception):
                    proc.wait(timeout=2)
            self._stop()

    def __enter__(self) -> SandboxSession:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def covers(self, paths: Sequence[Path]) -> bool:
        """Whether every path is shown in this sandbox (not hidden, not missing)."""
        for path in paths:
            p = Path(path).absolute()
            shown = [m for m in self.policy.mounts if p == m.at or p.is_relative_to(m.at)]
            if not shown:
                return False
            last = shown[-1]  # a later mount covers an earlier one, as bwrap applies them
            if last.empty or str(last.source) == os.devnull:
                return False
        return True

    # -- commands ------------------------------------------------------------------------
    def run(
        self,
        argv: Sequence[str],
        *,
        limits: Limits,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        write: Sequence[Path] = (),
        stdin: bytes | None = None,
        max_output: int = MAX_OUTPUT,
    ) -> Finished:
        """Run ``argv`` in this sandbox and wait for it, as :func:`run_sandboxed_sync` does.

        ``limits``: this command's (wall time, CPU, file size, open files, address space;
        the disk limit over ``write``). ``write``: paths (inside) it may write besides its
        scratch directory; they must be writable mounts of the session's policy.
        """
        if self.closed:
            # closed under its caller (a run's sandbox evicted): a sandbox of its own,
            # showing the same, writable only where this command may write
            return self._alone(argv, limits, cwd, env, write, stdin, max_output)
        with self._lock, contextlib.ExitStack() as stack:
            sock = self._ready()
            out = stack.enter_context(tempfile.TemporaryFile())
            err = stack.enter_context(tempfile.TemporaryFile())
            inp = stack.enter_context(
                tempfile.TemporaryFile() if stdin is not None else open(os.devnull, "rb")  # noqa: SIM115
            )
            if stdin is not None:
                inp.write(stdin)
                inp.seek(0)
            nonce = secrets.token_hex(16)
            req = {
                "id": nonce,
                "argv": list(argv),
                "cwd": str(cwd or self.policy.cwd),
                "env": dict(self.policy.env if env is None else env),
                "timeout": limits.wall_s,
                "rlimits": _rlimits(limits),
                "write": [str(Path(p).absolute()) for p in write],
            }
            self.commands += 1
            try:
                socket.send_fds(
                    sock, [json.dumps(req).encode()], [inp.fileno(), out.fileno(), err.fileno()]
                )
            except OSError:
                reply = None
            else:
                reply = self._await(nonce, limits, write)
            note = b""
            if reply is None or reply.get("id") != nonce or "error" in reply:
                # the worker ended, hung, or answered for another command: this command
                # failed, and the sandbox is replaced before the next one
                why = (
                    f"the sandbox's worker failed: {reply['error']}"
                    if reply is not None and reply.get("id") == nonce and "error" in reply
                    else "the sandbox's worker ended or answered out of turn during this command"
                )
                note = f"\n[lhbench: {why}; the command's sandbox was ended]\n".encode()
                self._stop()
                reply = {"returncode": None, "timed_out": reply is None and self._late}
            disk = self._disk
            code = reply.get("returncode")
            if isinstance(code, int) and code < 0:
                code = 128 - code  # killed by a signal: bwrap reports 128 + N
            return Finished(
                code,
                _read_capped(out, max_output),
                _read_capped(err, max_output) + note,
                bool(reply.get("timed_out")),
                f"{self.sandbox.name}+worker",
                disk.error() if disk is not None and (disk.over or disk.check()) else None,
                usage=reply.get("usage"),
            )

    def _alone(
        self,
        argv: Sequence[str],
        limits: Limits,
        cwd: Path | None,
        env: Mapping[str, str] | None,
        write: Sequence[Path],
        stdin: bytes | None,
        max_output: int,
    ) -> Finished:
        from lhbench.sandbox.base import run_sandboxed_sync

        writes = [Path(p).absolute() for p in write]
        writable = [m.at for m in self.policy.mounts if m.writable and not m.empty]
        mounts = tuple(
            [
                replace(m, writable=False) if m.writable and not m.empty else m
                for m in self.policy.mounts
            ]
            + [
                Mount(w, writable=True)
                for w in writes
                if any(w.is_relative_to(at) for at in writable)
            ]
        )
        policy = replace(
            self.policy,
            cwd=Path(cwd or self.policy.cwd),
            env=dict(self.policy.env if env is None else env),
            mounts=mounts,
            limits=limits,
        )
        return run_sandboxed_sync(self.sandbox, argv, policy, stdin=stdin, max_output=max_output)

    _late = False
    _disk: _DiskWatch | None = None

    def _await(self, nonce: str, limits: Limits, write: Sequence[Path]) -> dict[str, Any] | None:
        """The worker's reply to ``nonce``; watching the disk limit of what it may write."""
        assert self._sock is not None
        self._late = False
        watch = _DiskWatch(replace(self.policy, limits=limits))
        writes = [Path(p).absolute() for p in write]
        watch.roots = [
            r
            for r in watch.roots
            if any(r.is_relative_to(w) or w.is_relative_to(r) for w in writes)
        ]
        self._disk = watch if watch.active else None
        limit = None if limits.wall_s is None else limits.wall_s + _GRACE_S
        deadline = None if limit is None else time.monotonic() + limit
        cancelled = False
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                self._late = True
                return None
            if self._disk is not None:
                wait = DISK_POLL_S if wait is None else min(wait, DISK_POLL_S)
            ready, _, _ = select.select([self._sock], [], [], wait)
            if ready:
                try:
                    msg = self._sock.recv(1 << 20)
                except OSError:
                    return None
                if not msg:
                    return None
                try:
                    reply = json.loads(msg)
                except ValueError:
                    return {"id": None}
                return reply if isinstance(reply, dict) else {"id": None}
            if self._disk is not None and not cancelled and self._disk.check():
                cancelled = True
                with contextlib.suppress(OSError):
                    self._sock.send(json.dumps({"cancel": nonce}).encode())


def open_session(sandbox: Sandbox, policy: SandboxPolicy) -> SandboxSession | None:
    """A started session for one unit of work, or None where the worker cannot be used."""
    if session_support(sandbox) is not None:
        return None
    return SandboxSession(sandbox, policy).start()
