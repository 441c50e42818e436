"""The default backend on Linux: bubblewrap (Debian's ``bubblewrap`` package).

Every namespace unshared (mount, PID, network, IPC, UTS, user, cgroup): the process runs as
an unprivileged uid with no capabilities, sees only the mounts its policy lists (system
directories read-only, its workspace read-write), a private ``/tmp``, ``/proc`` and
``/dev``, loopback only, and dies with its launcher. Limits come from ``prlimit`` (CPU time,
file size, open files, address space) and, where writable, a pids and memory cgroup.
"""

from __future__ import annotations

import json
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

__all__ = [
    "PRLIMIT",
    "SANDBOX_UID",
    "BubblewrapSandbox",
    "join_cgroups",
    "launcher",
    "prlimit_args",
]

SANDBOX_UID = 1000
NET_DIR = "/run/lhbench/net"


def prlimit_args(limits: Limits) -> list[str]:
    """``prlimit`` options for a policy's limits (empty when none applies)."""
    args = ["--core=0"]
    if limits.cpu_s is not None:
        args.append(f"--cpu={limits.cpu_s}")
    if limits.file_mb is not None:
        args.append(f"--fsize={limits.file_mb << 20}")
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
# environment never appears in a host command line), moves to a new empty session
# keyring (the caller's keys stay out of reach), then execs the command.
_LAUNCHER = """
import json, os, sys
c = json.loads(sys.argv[1])
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
    if c["keyctl"]:
        import ctypes
        ctypes.CDLL(None, use_errno=True).syscall(c["keyctl"], 1, 0)
    os.execv(sys.argv[2], sys.argv[2:])
except OSError as e:
    sys.stderr.write("lhbench sandbox launcher: %s\\n" % e)
    sys.exit(125)
"""
# KEYCTL_JOIN_SESSION_KEYRING is keyctl(1, NULL); the syscall's number by architecture
_KEYCTL = {"x86_64": 250, "aarch64": 219}.get(os.uname().machine, 0)


def launcher(
    argv: Sequence[str], *, procs_files: Sequence[Path] = (), args_file: Path | None = None
) -> list[str]:
    """The host-side command that sets up and then execs ``argv`` (an absolute path)."""
    cfg = {
        "cgroups": [str(p) for p in procs_files],
        "args": str(args_file or ""),
        "keyctl": _KEYCTL,
    }
    return [sys.executable, "-I", "-S", "-c", _LAUNCHER, json.dumps(cfg), *argv]


PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"


class BubblewrapSandbox:
    """Confinement with bubblewrap; see the module docstring for what it shows and hides."""

    name = "bubblewrap"

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or shutil.which("bwrap") or "bwrap"

    def available(self) -> str | None:
        """None when bwrap runs a command here, else why not."""
        if shutil.which(self.binary) is None and not Path(self.binary).exists():
            return "bwrap is not installed (Debian: apt-get install bubblewrap)"
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

    def _base_args(self, cwd: Path, mount_args: list[str]) -> list[str]:
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
            "--dev",
            "/dev",
            "--tmpfs",
            "/tmp",
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
            inner = [sys.executable, "-m", "lhbench.sandbox.relay", *maps, "--", *inner]
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
        bwrap = [
            self.binary,
            "--args",
            "3",
            *self._base_args(Path(policy.cwd).absolute(), mount_args),
            "--",
            *inner,
        ]
        launch = [PRLIMIT, *prlimit_args(policy.limits), "--", *bwrap]
        prepared.argv = launcher(launch, procs_files=cgroups.procs_files, args_file=args_file)
        prepared.env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
        return prepared

    def describe(self) -> list[str]:
        """What the sandbox contains."""
        support = cgroup_support()
        return [
            f"backend: bubblewrap ({self.binary})",
            "namespaces: mount, pid, network (loopback only), ipc, uts, user, cgroup",
            f"identity: uid {SANDBOX_UID} inside, no capabilities; dies with its launcher",
            "filesystem: /usr, /bin, /lib*, the parts of /etc programs need and lhbench's "
            "Python read-only; the workspace read-write; private /tmp, /proc, /dev; no home",
            "environment: an allow-list (PATH, HOME, LANG, LC_ALL, TZ, TERM) and what the "
            "harness sets; nothing else of the parent's",
            "network: none, except each allowed model or database endpoint through a "
            "forwarder on a Unix socket",
            "limits: CPU time, file size, open files, address space (prlimit); "
            + (
                ", ".join(f"{k} ({v})" for k, v in support.items())
                if support
                else "no writable cgroup here: no process-count or resident-memory limit"
            )
            + "; wall time, then the whole process group is killed",
        ]
