"""The worker inside a long-lived sandbox: it starts each command of one unit of work.

    python -I -S /path/to/lhbench/sandbox/worker.py FD

Started once per unit (a run's replay and checks) as the sandboxed command, it reads
requests from the host on the Unix socket ``FD`` (one JSON object per message, with the
command's stdout, stderr and stdin as file descriptors alongside) and, for each, forks and
executes the command and answers when it has ended. Standard library only, run by path
with ``-S``: it imports nothing of lhbench, so it starts in the time of a bare interpreter.

What each command gets, on top of the sandbox the worker lives in:

- its own session and process group, its resource limits (CPU time, file size, open files,
  address space), and its wall-clock limit (then its group, and everything else, is killed);
- a Landlock domain of its own: it may write only its own scratch directory (its
  ``TMPDIR``, removed after it) and the paths its request names (a replay's output), and
  cannot signal, trace or read the file descriptors of the worker or of anything outside
  its domain;
- a seccomp filter refusing System V and POSIX IPC objects (they would outlive it);
- after it ends, every process left in the sandbox except the worker is killed and
  reaped (the worker is the sandbox's child subreaper: nothing escapes to another parent).

Replies carry the request's id, which the host drew at random and never gives to the
command: a command that reached the socket still could not answer for another request.
"""

from __future__ import annotations

import ctypes
import os
import resource
import select
import struct
import sys
import time

# The C halves of json, signal and socket, not the modules: those import enum, re,
# collections, functools and typing, ~10 ms of every sandbox's start on this class of
# machine, for a process that reads and writes a few small JSON messages. Nor contextlib
# or shutil (the same, and bz2, lzma and fnmatch). tests/sandbox/test_worker.py checks
# what it imports.
from _json import encode_basestring_ascii as _json_str
from _json import make_scanner as _json_scanner
from _signal import SIG_DFL, SIGKILL, SIGPIPE  # type: ignore[import-not-found]
from _signal import signal as _set_signal
from _socket import CMSG_LEN, SCM_RIGHTS, SOL_SOCKET
from _socket import socket as _Socket

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["landlock_abi", "main"]

_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_DUMPABLE = 4
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# landlock: syscall numbers (the same on every architecture), access rights by ABI version
_LL_CREATE, _LL_ADD_RULE, _LL_RESTRICT = 444, 445, 446
_LL_VERSION = 1
_LL_RULE_PATH_BENEATH = 1
_WRITE_FILE = 1 << 1
_READ_FILE = 1 << 2
_FILE_RIGHTS_ABI1 = (1 << 0) | _WRITE_FILE | _READ_FILE  # execute, write, read
_DIR_WRITES_ABI1 = sum(1 << i for i in (4, 5, 6, 7, 8, 9, 10, 11, 12))  # remove_*, make_*
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6
_SCOPE_SIGNAL = 1 << 1  # ABI 6

MAX_REQUEST = 1 << 20
SCRATCH_ROOT = "/tmp/.lhbench-worker"

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    r = _libc.syscall(_LL_CREATE, None, ctypes.c_size_t(0), ctypes.c_uint32(_LL_VERSION))
    return int(r) if r > 0 else 0


def _landlock(abi: int, writable: list[str]) -> None:
    """Restrict this process (and what it starts) to writing only under ``writable``."""
    handled = _WRITE_FILE | _DIR_WRITES_ABI1
    if abi >= 2:
        handled |= _REFER
    if abi >= 3:
        handled |= _TRUNCATE
    if abi >= 6:
        attr = struct.pack("=QQQ", handled, 0, _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL)
    else:
        attr = struct.pack("=Q", handled)
    buf = ctypes.create_string_buffer(attr, len(attr))
    fd = _libc.syscall(_LL_CREATE, buf, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        rules = [(p, handled) for p in writable]
        # the character devices programs write to (/dev/null above all)
        rules += [
            (f"/dev/{d}", _WRITE_FILE | (handled & _TRUNCATE)) for d in ("null", "zero", "full")
        ]
        for path, rights in rules:
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= _WRITE_FILE | _TRUNCATE | _FILE_RIGHTS_ABI1
                rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, pfd), 12)
                if _libc.syscall(_LL_ADD_RULE, fd, _LL_RULE_PATH_BENEATH, rule, 0) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(pfd)
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0:
            raise OSError(ctypes.get_errno(), "no_new_privs")
        if _libc.syscall(_LL_RESTRICT, fd, 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(fd)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _seccomp(program: bytes) -> None:
    buf = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) < 0:
        raise OSError(ctypes.get_errno(), "seccomp")


_RLIMITS = {
    "cpu": resource.RLIMIT_CPU,
    "fsize": resource.RLIMIT_FSIZE,
    "nofile": resource.RLIMIT_NOFILE,
    "as": resource.RLIMIT_AS,
    "core": resource.RLIMIT_CORE,
}


def _child(req: dict[str, Any], fds: list[int], scratch: str, abi: int, seccomp: bytes) -> None:
    """In the forked child: become the command (never returns)."""
    try:
        os.setsid()
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        _set_signal(SIGPIPE, SIG_DFL)
        for name, value in (req.get("rlimits") or {}).items():
            _, hard = resource.getrlimit(_RLIMITS[name])
            value = int(value) if hard == resource.RLIM_INFINITY else min(int(value), hard)
            resource.setrlimit(_RLIMITS[name], (value, value))
        os.chdir(req["cwd"])
        _landlock(abi, [scratch, *req.get("write", [])])
        if seccomp:
            _seccomp(seccomp)
        env = dict(req.get("env") or {})
        env["TMPDIR"] = scratch
        os.execvpe(req["argv"][0], req["argv"], env)
    except BaseException as exc:  # whatever failed, the child must not return
        try:
            os.write(2, f"lhbench sandbox worker: cannot start the command: {exc}\n".encode())
        except Exception:
            pass
        os._exit(127)


def _ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1:
        out.add(pid)
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                pid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    out.add(1)
    return out


def _others(keep: set[int]) -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _sweep(keep: set[int]) -> int:
    """Kill and reap every process of the sandbox but ours; how many were left over."""
    killed: set[int] = set()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        left = _others(keep)
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, SIGKILL)
                killed.add(pid)
            except OSError:
                pass
        _reap()
        time.sleep(0.001)
    _reap()
    return len(killed)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _clear(path: str) -> None:
    """Remove a command's scratch directory and everything in it, whatever it made there.

    Every process that could change the tree has been killed. Each directory is opened
    by descriptor (never through a link), given back the rights its command may have
    taken (read-only, or no rights at all), emptied of its files, and its directories
    moved up into the scratch directory itself: so no directory is ever deeper than one
    level, however deep the command nested them (past PATH_MAX, or thousands of levels),
    and one descriptor is open at a time. shutil's rmtree would keep a descriptor and a
    stack frame per level, and its import costs every sandbox's start.
    """
    try:
        os.chmod(path, 0o700)
        root = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    try:
        todo: list[str | None] = [None]  # None: the scratch directory itself
        moved = 0
        taken: set[str] = set()  # the names the command gave the scratch directory's entries
        while todo:
            name = todo.pop()
            try:
                if name is None:
                    fd = os.dup(root)
                else:
                    # a directory (lstat said so, and nothing is left to swap it for a link)
                    os.chmod(name, 0o700, dir_fd=root)
                    fd = os.open(name, _DIR_FLAGS, dir_fd=root)
            except OSError:
                continue
            try:
                with os.scandir(fd) as entries:
                    found = [(e.name, e.is_dir(follow_symlinks=False)) for e in entries]
            except OSError:
                found = []
            if name is None:
                taken = {child for child, _ in found}
            for child, is_dir in found:
                try:
                    if not is_dir:
                        os.unlink(child, dir_fd=fd)
                    elif name is None:
                        todo.append(child)
                    else:
                        moved += 1
                        while f".lhbench-clear-{moved}" in taken:
                            moved += 1
                        up = f".lhbench-clear-{moved}"
                        # moving a directory rewrites its "..": it must be writable
                        os.chmod(child, 0o700, dir_fd=fd)
                        os.rename(child, up, src_dir_fd=fd, dst_dir_fd=root)
                        todo.append(up)
                except OSError:
                    pass
            os.close(fd)
            if name is not None:
                try:
                    os.rmdir(name, dir_fd=root)
                except OSError:
                    pass
    finally:
        os.close(root)
    try:
        os.rmdir(path)
    except OSError:
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, SIGKILL)
    except OSError:
        pass


def _encode(value: object) -> str:
    """JSON text of a reply: objects, strings, integers, finite floats, booleans, None.

    Strings go through the C encoder the json package uses (``_json``), so they come out
    as json.dumps writes them; anything else is a TypeError, as it is for json.dumps.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _json_str(value)
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value) if value - value == 0 else "null"  # inf, nan
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_str(str(k))}:{_encode(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"cannot encode {type(value).__name__} in a reply")


def _send(sock: _Socket, reply: dict[str, Any]) -> None:
    try:
        text = _encode(reply)
    except (TypeError, ValueError, RecursionError) as exc:
        # never the worker's end: the host hears that this reply could not be written
        rid = reply.get("id")
        text = _encode(
            {
                "id": rid if isinstance(rid, str) else None,
                "error": f"the reply could not be written: {type(exc).__name__}",
            }
        )
    sock.send(text.encode())


def _malformed(req: dict[str, Any]) -> str | None:
    """Why a request cannot be run (None: it can); its id is echoed only if a string."""
    if not isinstance(req.get("id"), str):
        return "a request's id must be a string"
    argv = req["argv"]
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        return "a request's argv must be a list of strings"
    return None


class _Decoding:
    """What the C scanner reads of a decoder: json.loads's defaults, no NaN or Infinity."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> None:
        raise ValueError(f"{name} is not a number a request holds")


_scan = _json_scanner(_Decoding)  # type: ignore[arg-type]  # any object with these names


def _load(msg: bytes) -> dict[str, Any] | None:
    """A request from the host (a JSON object), or None when it is not one.

    Read by the C scanner json.loads uses; the text must be one value and nothing after it.
    """
    try:
        text = msg.decode()
        value, end = _scan(text, 0)
    except (UnicodeDecodeError, StopIteration, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and end == len(text) else None


def _recv_fds(sock: _Socket, size: int, maxfds: int) -> tuple[bytes, list[int]]:
    """A message and the descriptors sent with it (socket.recv_fds without its import)."""
    msg, ancdata, _flags, _addr = sock.recvmsg(size, CMSG_LEN(maxfds * 4))
    fds: list[int] = []
    for level, kind, data in ancdata:
        if level == SOL_SOCKET and kind == SCM_RIGHTS:
            n = len(data) // 4
            fds += struct.unpack(f"{n}i", data[: 4 * n])
    return msg, fds


def _run(
    sock: _Socket,
    req: dict[str, Any],
    fds: list[int],
    n: int,
    abi: int,
    seccomp: bytes,
    keep: set[int],
) -> dict[str, Any]:
    scratch = f"{SCRATCH_ROOT}/{n}"
    os.makedirs(scratch, mode=0o700)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        sock.close()
        _child(req, fds, scratch, abi, seccomp)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    timeout = req.get("timeout")
    deadline = None if timeout is None else started + float(timeout)
    timed_out = cancelled = False
    status = usage = None
    try:
        while status is None:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([pidfd, sock.fileno()], [], [], wait)
            if pidfd in ready:
                _, status, usage = os.wait4(pid, 0)
            elif sock.fileno() in ready:
                msg = sock.recv(MAX_REQUEST)
                if not msg or (_load(msg) or {}).get("cancel") == req["id"]:
                    cancelled = True
                    _kill_group(pid)
                if not msg:
                    _, status, usage = os.wait4(pid, 0)
            else:
                timed_out = True
                _kill_group(pid)
    finally:
        os.close(pidfd)
    left = _sweep(keep)
    _clear(scratch)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
    return {
        "id": req["id"],
        "returncode": None if (timed_out or cancelled) else code,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": timed_out,
        "cancelled": cancelled,
        "left_over": left,
        "seconds": time.monotonic() - started,
        "usage": {
            "user_s": usage.ru_utime if usage else 0.0,
            "system_s": usage.ru_stime if usage else 0.0,
            "max_rss_kb": usage.ru_maxrss if usage else 0,
        },
    }


def main(argv: list[str]) -> int:
    """Serve requests on the socket ``argv[0]`` until the host closes it."""
    sock = _Socket(fileno=int(argv[0]))
    os.set_inheritable(sock.fileno(), False)
    seccomp = bytes.fromhex(argv[1]) if len(argv) > 1 else b""
    # nothing in the sandbox may read this process's file descriptors or memory
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    # every orphan of a command becomes our child: it is found, killed and reaped here
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    abi = landlock_abi()
    keep = _ancestors()
    os.makedirs(SCRATCH_ROOT, mode=0o700, exist_ok=True)
    _send(sock, {"ready": True, "landlock": abi, "pid": os.getpid()})
    if abi < 1:
        return 3
    n = 0
    while True:
        try:
            msg, fds = _recv_fds(sock, MAX_REQUEST, 3)
        except OSError:
            return 0
        if not msg:
            return 0
        req = _load(msg)
        if req is None or "argv" not in req:  # a late cancel of a command that has already ended
            for fd in fds:
                os.close(fd)
            continue
        why = _malformed(req)
        if why is not None:
            for fd in fds:
                os.close(fd)
            rid = req.get("id")
            _send(sock, {"id": rid if isinstance(rid, str) else None, "error": why})
            continue
        n += 1
        try:
            reply = _run(sock, req, fds, n, abi, seccomp, keep)
        except Exception as exc:  # the host hears of it; the worker goes on
            _sweep(keep)
            reply = {"id": req.get("id"), "error": f"{type(exc).__name__}: {exc}"}
        _send(sock, reply)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
