"""What a sandboxed process may see and use: mounts, environment, network, limits.

A policy is plain data. Backends turn it into their own command line; callers build it
with :func:`policy_for` from a few paths, so every use (agent tools, CLI agents, checks,
replays, judge tools) gets the same base view: system directories and the Python that
runs lhbench read-only, a private ``/tmp`` and ``/proc``, no host home, and no network.
"""

from __future__ import annotations

import os
import sys
import sysconfig
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from lhbench.sandbox.pg_gate import PgAccess

__all__ = [
    "CRASH_EXIT",
    "ENV_ALLOW",
    "SANDBOX_PATH",
    "Endpoint",
    "Limits",
    "Mount",
    "SandboxPolicy",
    "lhbench_paths",
    "policy_for",
    "private_paths",
    "sandbox_env",
    "script_argv",
    "system_mounts",
]

# what a sandboxed process may inherit; everything else (keys, tokens) stays outside
ENV_ALLOW = ("LANG", "LC_ALL", "TZ", "TERM")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"

# /etc is not bound whole: /etc/shadow, /etc/ssh and friends stay outside
_ETC = (
    "/etc/alternatives",
    "/etc/ca-certificates",
    "/etc/ca-certificates.conf",
    "/etc/group",
    "/etc/host.conf",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/mime.types",
    "/etc/nsswitch.conf",
    "/etc/os-release",
    "/etc/passwd",
    "/etc/ssl",
    "/etc/fonts",
)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt/node")


@dataclass(frozen=True)
class Mount:
    """A host path shown inside the sandbox (at the same path unless ``target`` is given)."""

    source: Path
    writable: bool = False
    target: Path | None = None
    empty: bool = False  # hide what is there: an empty directory (a tmpfs) in its place

    @property
    def at(self) -> Path:
        """Where it appears inside."""
        return self.target or self.source


@dataclass(frozen=True)
class Endpoint:
    """One TCP endpoint the sandbox may reach, through the harness's forwarder.

    Inside the sandbox a relay listens on ``127.0.0.1:local_port`` (and ``host`` resolves
    to 127.0.0.1 there), so a client keeps the URL's host name, for TLS; outside, the
    forwarder connects only to ``host:port``. With ``socket``, the relay carries
    connections to that Unix socket instead (a server lhbench runs, such as the proxy that
    holds a model's key), and no forwarder is made. With ``postgres``, the forwarder is a
    PostgreSQL gate admitting only that role and database.
    """

    host: str
    port: int
    local_port: int
    socket: Path | None = None  # a server of ours already listening (e.g. the key proxy)
    postgres: PgAccess | None = None


@dataclass(frozen=True)
class Limits:
    """Resource limits; None leaves a limit unset.

    ``memory_mb`` caps address space (RLIMIT_AS) for Python-only work and, where cgroups
    are writable, resident memory for everything; ``processes`` needs a pids cgroup (a
    root-owned process ignores RLIMIT_NPROC). ``disk_mb`` bounds what the command may
    write: each private tmpfs (``/tmp``, ``/run``) is that size, and the writable mounts
    together may grow by that much before the command is stopped (a disk limit).
    """

    wall_s: float | None = 300.0
    cpu_s: int | None = 300
    memory_mb: int | None = 2048
    address_space: bool = True
    file_mb: int | None = 1024
    disk_mb: int | None = None
    processes: int | None = 256
    open_files: int | None = 1024


@dataclass(frozen=True)
class SandboxPolicy:
    """Everything a backend needs to run one command confined."""

    cwd: Path
    mounts: tuple[Mount, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    endpoints: tuple[Endpoint, ...] = ()
    limits: Limits = field(default_factory=Limits)
    name: str = "lhbench"

    def with_limits(self, **changes: object) -> SandboxPolicy:
        """The same policy with some limits changed."""
        return replace(self, limits=replace(self.limits, **changes))  # type: ignore[arg-type]

    def with_mounts(self, *mounts: Mount) -> SandboxPolicy:
        """The same policy with more mounts."""
        return replace(self, mounts=(*self.mounts, *mounts))


# A pack's Python script (verify.py, a hook check) answers with its exit code, and Python
# also exits 1 on an uncaught exception: run through this, a crash exits CRASH_EXIT instead,
# so a script that crashed is never read as one that said "fail". SystemExit and os._exit
# pass through unchanged; the script runs as __main__ with its directory on sys.path.
CRASH_EXIT = 70
_SCRIPT_RUNNER = (
    "import os, runpy, sys, traceback\n"
    "script = sys.argv[1]\n"
    "sys.argv = sys.argv[1:]\n"
    "sys.path[0] = os.path.dirname(os.path.abspath(script))\n"
    "try:\n"
    "    runpy.run_path(script, run_name='__main__')\n"
    "except SystemExit:\n"
    "    raise\n"
    "except BaseException:\n"
    "    traceback.print_exc()\n"
    "    sys.stderr.flush()\n"
    f"    os._exit({CRASH_EXIT})\n"
)


def script_argv(script: Path, *args: str) -> list[str]:
    """The command running a pack's Python ``script`` with ``args`` (see :data:`CRASH_EXIT`)."""
    return [sys.executable, "-c", _SCRIPT_RUNNER, str(script), *args]


def lhbench_paths() -> list[Path]:
    """What running ``python -m lhbench…`` inside needs, to bind read-only.

    The interpreter, its stdlib and site-packages (the venv), and lhbench's own source.
    """
    paths = {
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(sys.exec_prefix),
        Path(sysconfig.get_paths()["stdlib"]).parent,
        Path(__file__).resolve().parents[2],  # the directory holding the lhbench package
    }
    exe = Path(sys.executable)
    paths.add(exe.parent)
    paths.add(exe.resolve().parent.parent)
    return sorted(p for p in paths if p.exists() and str(p) not in ("/", "/usr"))


# In a bundled pack: what a run must not see (answers, labels, and how it is checked)
_PRIVATE_DIRS = ("ground_truth", "reference")
_PRIVATE_TASK_DIRS = ("trajectories", "answers", "golden")
_PRIVATE_TASK_FILES = ("verify.py", "labels.json", "expected.json")


def private_paths() -> list[Path]:
    """What lhbench's own mounts would show but no sandboxed process may read by default.

    The bundled packs sit inside the installed package, which every sandbox sees (to run
    ``python -m lhbench…``): their ground truth, reference solutions, labelled
    trajectories and verify scripts are hidden (an empty directory; a file cannot be opened). A
    process that needs them (a verify script, a check) is given its task's directory
    explicitly, which shows them again; an agent never is. What a pack's tools serve
    (design files, data rooms, corpora) stays readable, for its MCP servers.
    """
    data = Path(__file__).resolve().parents[1] / "packs" / "data"
    out: list[Path] = []
    if not data.is_dir():
        return out
    for pack in sorted(p for p in data.iterdir() if p.is_dir()):
        out += [pack / d for d in _PRIVATE_DIRS if (pack / d).is_dir()]
        tasks = pack / "tasks"
        if tasks.is_dir():
            for task in sorted(t for t in tasks.iterdir() if t.is_dir()):
                out += [task / d for d in _PRIVATE_TASK_DIRS if (task / d).is_dir()]
                out += [task / f for f in _PRIVATE_TASK_FILES if (task / f).is_file()]
                # the task's own scripts beside task.yaml (hook checks): how it is checked
                out += sorted(
                    p
                    for p in task.glob("*.py")
                    if p.is_file() and p.name not in _PRIVATE_TASK_FILES
                )
    return out


def _hidden(path: Path) -> Mount:
    # a directory becomes an empty one; a file, a device node that cannot be opened there
    if path.is_dir():
        return Mount(path, empty=True)
    return Mount(Path(os.devnull), target=path)


def system_mounts() -> list[Mount]:
    """System directories and the parts of /etc programs need, read-only; packs hidden."""
    out = [Mount(Path(p)) for p in (*_SYSTEM, *_ETC) if os.path.lexists(p)]
    out += [Mount(p) for p in lhbench_paths()]
    out += [_hidden(p) for p in private_paths()]
    return out


def sandbox_env(
    cwd: Path, *, home: Path | None = None, env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """A sandboxed process's environment: :data:`ENV_ALLOW` from ours, a fixed PATH, then ``env``.

    ``HOME`` is ``home`` or ``cwd``, ``TMPDIR`` is ``/tmp``.
    """
    built = {k: os.environ[k] for k in ENV_ALLOW if k in os.environ}
    python_bin = str(Path(sys.executable).parent)
    built.update(
        {
            "PATH": f"{python_bin}:{SANDBOX_PATH}",
            "HOME": str(Path(home).absolute() if home else Path(cwd).absolute()),
            "TMPDIR": "/tmp",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
    )
    built.update(env or {})
    return built


def policy_for(
    cwd: Path,
    *,
    writable: Sequence[Path] = (),
    readable: Sequence[Path] = (),
    env: Mapping[str, str] | None = None,
    home: Path | None = None,
    endpoints: Sequence[Endpoint] = (),
    limits: Limits | None = None,
    name: str = "lhbench",
) -> SandboxPolicy:
    """The base policy plus these paths: ``writable`` ones read-write, ``readable`` read-only.

    Paths are made absolute (a relative ``--home`` would otherwise name a different place
    inside). ``cwd`` is shown read-only unless a path given covers it. Mounts go shallow
    to deep, so a read-only directory inside a writable one (a run's settings in its run
    directory) stays read-only. The environment is built from :data:`ENV_ALLOW` taken
    from this process, a fixed PATH, ``HOME`` (``home`` or ``cwd``), ``TMPDIR=/tmp``,
    then ``env``.
    """
    cwd = Path(cwd).absolute()
    built = sandbox_env(cwd, home=home, env=env)
    own = [Mount(Path(p).absolute()) for p in readable]
    own += [Mount(Path(p).absolute(), writable=True) for p in writable]
    if not any(cwd.is_relative_to(m.at) for m in own):
        own.append(Mount(cwd))  # a process must be able to stand in its directory
    own.sort(key=lambda m: len(m.at.parts))
    mounts = [*system_mounts(), *own]
    return SandboxPolicy(
        cwd=cwd,
        mounts=tuple(mounts),
        env=built,
        endpoints=tuple(endpoints),
        limits=limits or Limits(),
        name=name,
    )
