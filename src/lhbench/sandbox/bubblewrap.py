"""The default backend on Linux: bubblewrap (Debian's ``bubblewrap`` package).

Every namespace unshared (mount, PID, network, IPC, UTS, user, cgroup): the process runs as
an unprivileged uid with no capabilities, sees only the mounts its policy lists (system
directories read-only, its workspace read-write), a private ``/tmp``, ``/proc`` and
``/dev``, loopback only, and dies with its launcher. Limits come from ``prlimit`` (CPU time,
file size, open files, address space) and, where writable, a pids and memory cgroup.
"""

from __future__ import annotations

import marshal
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from lhbench.sandbox.base import Prepared
from lhbench.sandbox.cgroups import CgroupSet, cgroup_support
from lhbench.sandbox.forward import Forwarder
from lhbench.sandbox.policy import Limits, SandboxPolicy
from lhbench.sandbox.relay import relay_argv
from lhbench.sandbox.seccomp import seccomp_program

__all__ = [
    "PRLIMIT",
    "SANDBOX_UID",
    "BubblewrapSandbox",
    "join_cgroups",
    "launcher",
    "prlimit_args",
]

SANDBOX_UID = 65533  # not root's, nor any login's: what nothing else on the host owns
NET_DIR = "/run/lhbench/net"


def prlimit_args(limits: Limits) -> list[str]:
    """``prlimit`` options for a policy's limits (empty when none applies)."""
    args = ["--core=0"]
    if limits.cpu_s is not None:
        args.append(f"--cpu={limits.cpu_s}")
    file_mb = min((m for m in (limits.file_mb, limits.disk_mb) if m is not None), default=None)
    if file_mb is not None:
        args.append(f"--fsize={file_mb << 20}")
    if limits.open_files is not None:
        args.append(f"--nofile={limits.open_files}")
    if limits.memory_mb is not None and limits.address_space:
        args.append(f"--as={limits.memory_mb << 20}")
    return args


def join_cgroups(procs_files: Sequence[Path], argv: Sequence[str]) -> list[str]:
    """The launcher with cgroups only (no environment file): see :func:`launcher`."""
    return launcher(argv, procs_files=procs_files)


# What runs on the host between us and the sandbox, in a fresh interpreter that imports
# nothing (-I -S): it joins the cgroups (so every descendant is counted), opens the
# sandbox's environment file as fd 3 and deletes it (bwrap reads it with --args 3: the
# environment never appears in a host command line), puts the seccomp filter in fd 4,
# moves to a new empty session keyring (the caller's keys stay out of reach), then execs
# the command. Run as root, it first stages what the sandbox binds (below) and drops to
# the unprivileged SANDBOX_UID, so nothing in the sandbox is root on the host.
#
# Staging: in a mount namespace of its own (nothing shows on the host), every path bwrap
# is to bind is mounted under STAGE_DIR as an idmapped mount that shows files owned by
# root as owned by SANDBOX_UID (and stores what SANDBOX_UID creates as root): the sandbox
# reaches paths under 0700 directories (/root/.pyenv, a temp directory) and writes its
# workspace as before, while every other root-owned file of the host stays root's. Where
# a filesystem cannot be idmapped, a plain bind is staged (readable, not writable).
_LAUNCHER = """
import marshal, os, sys
c = marshal.loads(bytes.fromhex(sys.argv[1]))

def stage(c):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    def ok(r, what):
        if r < 0:
            e = ctypes.get_errno()
            raise OSError(e, "%s: %s" % (what, os.strerror(e)))
        return r
    top, uid = c["stage_dir"], c["drop"]
    os.makedirs(top, mode=0o755, exist_ok=True)
    ok(libc.unshare(0x20000), "unshare(CLONE_NEWNS)")
    ok(libc.mount(None, b"/", None, 16384 | (1 << 18), None), "make / private")
    ok(libc.mount(b"tmpfs", top.encode(), b"tmpfs", 2 | 4, b"mode=0755,size=64k"), "stage tmpfs")
    userns = -1
    r, w = os.pipe()
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.close(ready_r)
        libc.unshare(0x10000000)
        os.write(ready_w, b"x")  # its user namespace exists now (however loaded the host)
        os.read(r, 1)
        os._exit(0)
    os.close(r)
    os.close(ready_w)
    try:
        os.read(ready_r, 1)
        os.close(ready_r)
        for f in ("uid_map", "gid_map"):
            with open("/proc/%d/%s" % (pid, f), "w") as m:
                m.write("0 %d 1\\n" % uid)
        userns = os.open("/proc/%d/ns/user" % pid, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        userns = -1
    finally:
        os.close(w)
        os.waitpid(pid, 0)

    class Attr(ctypes.Structure):
        _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "prop", "userns")]

    for i, src in enumerate(c["stage"]):
        if not os.path.exists(src):  # a missing (or dangling) --ro-bind-try source: skipped
            continue
        dst = "%s/%d" % (top, i)
        if os.path.isdir(src):
            os.mkdir(dst)
        else:
            os.close(os.open(dst, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        # open_tree(OPEN_TREE_CLONE|O_CLOEXEC|AT_RECURSIVE), mount_setattr(IDMAP), move_mount
        fd = ok(libc.syscall(428, -100, src.encode(), 1 | 0o2000000 | 0x8000), "open_tree")
        if userns >= 0:
            a = Attr(0x100000, 0, 0, userns)
            libc.syscall(442, fd, b"", 0x1000 | 0x8000, ctypes.byref(a), ctypes.sizeof(a))
        ok(libc.syscall(429, fd, b"", -100, dst.encode(), 4), "move_mount " + src)
        os.close(fd)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)

try:
    for p in c["cgroups"]:
        with open(p, "w") as f:
            f.write(str(os.getpid()))
    if c["args"]:
        fd = os.open(c["args"], os.O_RDONLY)
        os.unlink(c["args"])
        if fd != 3:
            os.dup2(fd, 3)
            os.close(fd)
        os.set_inheritable(3, True)
    if c["seccomp"]:
        fd = os.memfd_create("lhbench-seccomp", 0)
        os.write(fd, bytes.fromhex(c["seccomp"]))
        os.lseek(fd, 0, 0)
        if fd != 4:
            os.dup2(fd, 4)
            os.close(fd)
        os.set_inheritable(4, True)
    if c["keyctl"]:
        import ctypes
        ctypes.CDLL(None, use_errno=True).syscall(c["keyctl"], 1, 0)
    if c["drop"] is not None:
        stage(c)
    os.execv(sys.argv[2], sys.argv[2:])
except OSError as e:
    sys.stderr.write("lhbench sandbox launcher: %s\\n" % e)
    sys.exit(125)
"""
# KEYCTL_JOIN_SESSION_KEYRING is keyctl(1, NULL); the syscall's number by architecture
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine, 0)
STAGE_DIR = "/run/lhbench-stage"
_SECCOMP = seccomp_program()


def launcher(
    argv: Sequence[str],
    *,
    procs_files: Sequence[Path] = (),
    args_file: Path | None = None,
    stage: Sequence[str] = (),
    drop: int | None = None,
    seccomp: bytes | None = None,
) -> list[str]:
    """The host-side command that sets up and then execs ``argv`` (an absolute path).

    ``drop``: the uid (and gid) to become after staging ``stage`` under :data:`STAGE_DIR`
    (``STAGE_DIR/<index>``); ``seccomp``: a filter to leave in fd 4.
    """
    cfg = {
        "cgroups": [str(p) for p in procs_files],
        "args": str(args_file or ""),
        "keyctl": _KEYCTL,
        "stage": list(stage),
        "stage_dir": STAGE_DIR,
        "drop": drop,
        "seccomp": seccomp.hex() if seccomp else "",
    }
    # marshal, built in, read by the same interpreter: json's import (with re) was a third
    # of the launcher's CPU, paid for every sandbox
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, marshal.dumps(cfg).hex(), *argv]


PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"


# /proc is the sandbox's own (its PID namespace), but its kernel knobs are the host's:
# covered read-only (bwrap's own cover skips /proc/sys: the directory itself is not
# writable, the files in it are), and what lists kernel memory, keys or timers masked
_PROC_READ_ONLY = ("/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs")
_PROC_MASKED = (
    "/proc/kcore",
    "/proc/keys",
    "/proc/key-users",
    "/proc/timer_list",
    "/proc/sched_debug",
    "/proc/kmsg",
    "/proc/kpagecount",
    "/proc/kpageflags",
    "/proc/kpagecgroup",
)


def _proc_covers() -> list[str]:
    out: list[str] = []
    for p in _PROC_READ_ONLY:
        if os.path.exists(p):
            out += ["--ro-bind", p, p]
    for p in _PROC_MASKED:
        if os.path.exists(p):
            out += ["--ro-bind", os.devnull, p]
    return out


# readable by every uid on any Debian-like host: bound as they are, never staged
_UNSTAGED = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc")


def _staged(mount_args: list[str], stage: list[str]) -> list[str]:
    """``mount_args`` with each bind's source replaced by its staged copy (added to ``stage``).

    ``mount_args``: only ``--tmpfs AT``, ``--symlink TARGET AT`` and binds ``SRC AT``.
    """
    out: list[str] = []
    i = 0
    while i < len(mount_args):
        op = mount_args[i]
        if op == "--tmpfs":
            out += mount_args[i : i + 2]
            i += 2
            continue
        src, at = mount_args[i + 1], mount_args[i + 2]
        unstaged = src == os.devnull or any(src == u or src.startswith(u + "/") for u in _UNSTAGED)
        if op != "--symlink" and not unstaged:
            stage.append(src)
            src = f"{STAGE_DIR}/{len(stage) - 1}"
        out += [op, src, at]
        i += 3
    return out


class BubblewrapSandbox:
    """Confinement with bubblewrap; see the module docstring for what it shows and hides."""

    name = "bubblewrap"

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or shutil.which("bwrap") or "bwrap"
        # as root: drop to SANDBOX_UID (staged, idmapped mounts); where this host cannot
        # (no unprivileged user namespaces, no mount API), why not, and bwrap runs as root
        self.drop_root = os.geteuid() == 0
        self.no_drop: str | None = None

    def _try(self) -> str | None:
        from lhbench.sandbox.policy import policy_for

        prepared = self.prepare(["/bin/true"], policy_for(Path("/tmp")))
        try:
            proc = subprocess.run(
                prepared.argv, capture_output=True, timeout=20, env=prepared.env, cwd="/"
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap cannot start: {exc}"
        finally:
            prepared.close()
        if proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip()
            return f"bwrap cannot create a sandbox here: {why}"
        return None

    def available(self) -> str | None:
        """None when bwrap runs a command here, else why not."""
        if shutil.which(self.binary) is None and not Path(self.binary).exists():
            return "bwrap is not installed (Debian: apt-get install bubblewrap)"
        why = self._try()
        if why is not None and self.drop_root:
            # run as root where dropping is impossible: still confined, but the sandbox is
            # root on the host (doctor's identity check fails and says why)
            self.drop_root, self.no_drop = False, why
            if self._try() is not None:
                self.drop_root, self.no_drop = True, None
            else:
                return None
        return why

    def _base_args(self, cwd: Path, mount_args: list[str], limits: Limits) -> list[str]:
        size = str((limits.disk_mb or 1024) << 20)
        return [
            "--unshare-all",
            "--unshare-user",
            "--disable-userns",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--hostname",
            "lhbench-sandbox",
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
            "--proc",
            "/proc",
            *_proc_covers(),
            "--dev",
            "/dev",
            "--size",
            size,
            "--tmpfs",
            "/tmp",
            "--size",
            size,
            "--tmpfs",
            "/run",
            *mount_args,
            "--chdir",
            str(cwd),
        ]

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> Prepared:
        """The bwrap command line for ``argv`` under ``policy``."""
        prepared = Prepared(argv=[], env=dict(policy.env), cwd="/", backend=self.name)
        mount_args: list[str] = []
        for m in policy.mounts:
            src, at = os.path.abspath(m.source), os.path.abspath(m.at)
            if m.empty:
                mount_args += ["--tmpfs", at]
            elif os.path.islink(src) and m.target is None and not m.writable:
                mount_args += ["--symlink", os.readlink(src), at]
            elif m.writable:
                mount_args += ["--bind", src, at]
            else:
                mount_args += ["--ro-bind-try", src, at]
        inner = list(argv)
        if policy.endpoints:
            scratch = Path(tempfile.mkdtemp(prefix="lhbench-net-"))
            prepared._cleanup.append(lambda: shutil.rmtree(scratch, ignore_errors=True))
            hosts = ["127.0.0.1 localhost", "::1 localhost"]
            maps: list[str] = []
            for i, ep in enumerate(policy.endpoints):
                if ep.socket is not None:
                    sock = ep.socket
                else:
                    sock = scratch / f"{i}.sock"
                    fwd = Forwarder(sock, ep.host, ep.port, postgres=ep.postgres).__enter__()
                    prepared._cleanup.append(lambda f=fwd: f.__exit__(None, None, None))  # type: ignore[misc]
                inside = f"{NET_DIR}/{i}.sock"
                mount_args += ["--bind", str(sock), inside]
                maps += ["--map", f"127.0.0.1:{ep.local_port}={inside}"]
                if ep.host not in ("127.0.0.1", "localhost"):
                    hosts.append(f"127.0.0.1 {ep.host}")
            hosts_file = scratch / "hosts"
            hosts_file.write_text("\n".join(hosts) + "\n")
            mount_args += ["--ro-bind", str(hosts_file), "/etc/hosts"]
            inner = relay_argv(maps, inner)
        cgroups = CgroupSet(processes=policy.limits.processes, memory_mb=policy.limits.memory_mb)
        prepared._cleanup.append(cgroups.close)
        # the sandbox's environment goes in a file bwrap reads (--args), not in our argv
        # or in the host-side launcher's own environment
        env_dir = Path(tempfile.mkdtemp(prefix="lhbench-env-"))
        prepared._cleanup.append(lambda: shutil.rmtree(env_dir, ignore_errors=True))
        args_file = env_dir / "args"
        env_args = ["--clearenv"]
        for k, v in policy.env.items():
            env_args += ["--setenv", k, v]
        args_file.write_bytes(b"".join(a.encode() + b"\0" for a in env_args))
        drop = SANDBOX_UID if self.drop_root else None
        stage: list[str] = []
        if drop is not None:
            mount_args = _staged(mount_args, stage)
        bwrap = [
            self.binary,
            "--args",
            "3",
            *self._base_args(Path(policy.cwd).absolute(), mount_args, policy.limits),
            *(["--seccomp", "4"] if _SECCOMP else []),
            "--",
            *inner,
        ]
        launch = [PRLIMIT, *prlimit_args(policy.limits), "--", *bwrap]
        prepared.argv = launcher(
            launch,
            procs_files=cgroups.procs_files,
            args_file=args_file,
            stage=stage,
            drop=drop,
            seccomp=_SECCOMP,
        )
        prepared.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        return prepared

    def describe(self) -> list[str]:
        """What the sandbox contains."""
        support = cgroup_support()
        return [
            f"backend: bubblewrap ({self.binary})",
            "namespaces: mount, pid, network (loopback only), ipc, uts, user, cgroup",
            f"identity: uid {SANDBOX_UID} inside, no capabilities; dies with its launcher; "
            + (
                f"on the host uid {SANDBOX_UID} too (lhbench runs as root: it drops to it, "
                "through idmapped mounts of what the sandbox sees)"
                if self.drop_root
                else f"ROOT on the host: could not drop to uid {SANDBOX_UID} ({self.no_drop})"
                if os.geteuid() == 0
                else f"on the host the caller's uid {os.geteuid()}"
            ),
            "kernel: /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus read-only; "
            "/proc/kcore, /proc/keys and other kernel listings masked; "
            + (
                "seccomp denies ptrace, process_vm_*, keyrings, mount (all of its calls), "
                "bpf, perf_event_open, userfaultfd, module loading, kexec and foreign ABIs"
                if _SECCOMP
                else f"no seccomp filter (no system call table for {os.uname().machine})"
            ),
            "filesystem: /usr, /bin, /lib*, the parts of /etc programs need and lhbench's "
            "Python read-only; the workspace read-write; private /tmp, /proc, /dev; no home",
            "environment: an allow-list (PATH, HOME, LANG, LC_ALL, TZ, TERM) and what the "
            "harness sets; nothing else of the parent's",
            "network: none, except each allowed model or database endpoint through a "
            "forwarder on a Unix socket",
            "limits: CPU time, file size, open files, address space (prlimit); a disk limit "
            "(private /tmp and /run that size; the writable mounts measured while it runs); "
            + (
                ", ".join(f"{k} ({v})" for k, v in support.items())
                if support
                else "no writable cgroup here: no process-count or resident-memory limit"
            )
            + "; wall time, then the whole process group is killed",
        ]
