"""Building an agent's app: install and build in the sandbox, with time limits, never a crash.

The app directory is copied (without ``node_modules``, ``.git`` and earlier outputs) to a
scratch directory and built there, so checking a run never changes its final state.
``npm ci`` (or ``npm install`` without a lockfile) runs only when the app declares
dependencies; then ``npm run build`` when it has a build script. What is served is
``dist/`` (or ``build/``, ``out/``), or the app itself when it is plain static files.

Network: the sandbox reaches only the npm registry, through the forwarder (an
:class:`~lhbench.sandbox.Endpoint` for the registry's host; inside, the registry URL keeps
its host name and uses a high local port). Packages are cached in ``cache_dir`` across
builds; with ``registry=None`` installs run ``--offline`` from that cache alone.
Inside a sandbox already (the preview tool runs in the pack's MCP server, which every
harness sandboxes), steps run as plain child processes with the same time limits.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from lhbench.errors import InfrastructureError, MissingDependency
from lhbench.sandbox import Endpoint, Limits, Sandbox, policy_for, run_sandboxed_sync

__all__ = [
    "DEFAULT_REGISTRY",
    "BuildResult",
    "BuildStep",
    "build_app",
    "in_sandbox",
    "registry_endpoint",
]

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
_SKIP = {"node_modules", ".git", "dist", "build", "out", ".lhbench", ".cache", ".preview"}
_TAIL = 4000
# npm's words for a registry it could not reach (not for a package that does not exist)
_UNREACHABLE = (
    "ENOTFOUND",
    "EAI_AGAIN",
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENETUNREACH",
    "EHOSTUNREACH",
    "network request to",
    "socket hang up",
)


def in_sandbox() -> bool:
    """Whether this process already runs inside lhbench's sandbox."""
    import socket

    return os.environ.get("LHBENCH_IN_SANDBOX") == "1" or socket.gethostname() == "lhbench-sandbox"


@dataclass(frozen=True)
class BuildStep:
    """One command of a build and how it ended."""

    command: str
    exit_code: int | None
    seconds: float
    timed_out: bool
    tail: str


@dataclass
class BuildResult:
    """Whether the app built, what to serve, and the evidence."""

    ok: bool
    output_dir: Path | None
    work_dir: Path
    steps: list[BuildStep] = field(default_factory=list)
    reason: str = ""
    warnings: int = 0
    static: bool = False  # no build step: the files are served as they are

    def as_dict(self) -> dict[str, object]:
        """Plain JSON."""
        return {
            "ok": self.ok,
            "reason": self.reason,
            "static": self.static,
            "warnings": self.warnings,
            "output_dir": str(self.output_dir) if self.output_dir else None,
            "steps": [
                {
                    "command": s.command,
                    "exit_code": s.exit_code,
                    "seconds": round(s.seconds, 2),
                    "timed_out": s.timed_out,
                    "tail": s.tail[-1500:],
                }
                for s in self.steps
            ],
        }


def registry_endpoint(registry: str) -> tuple[Endpoint, str]:
    """The endpoint the sandbox may reach for ``registry``, and its URL inside."""
    parts = urlsplit(registry)
    host = parts.hostname or "registry.npmjs.org"
    port = parts.port or (443 if parts.scheme == "https" else 80)
    local = port if port >= 1024 else 18000 + port
    inside = urlunsplit(parts._replace(netloc=f"{host}:{local}"))
    return Endpoint(host, port, local), inside.rstrip("/") + "/"


def _copy_app(src: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)

    def ignore(d: str, names: list[str]) -> set[str]:
        return {n for n in names if n in _SKIP and Path(d) == src} | {
            n for n in names if n == "node_modules"
        }

    shutil.copytree(src, dest, symlinks=True, ignore=ignore)


def _run_plain(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> BuildStep:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    text = out.decode("utf-8", "replace")
    return BuildStep(
        " ".join(argv), proc.returncode, time.perf_counter() - t0, timed_out, text[-_TAIL:]
    )


def build_app(
    app_dir: Path,
    work_dir: Path,
    *,
    sandbox: Sandbox | None,
    cache_dir: Path | None = None,
    registry: str | None = DEFAULT_REGISTRY,
    install_timeout: float = 300.0,
    build_timeout: float = 180.0,
) -> BuildResult:
    """Build ``app_dir`` in ``work_dir/app`` and say what to serve.

    ``sandbox`` None means this process is already sandboxed (see :func:`in_sandbox`); the
    caller decides, never this function.
    """
    app_dir, work_dir = Path(app_dir).absolute(), Path(work_dir).absolute()
    work_dir.mkdir(parents=True, exist_ok=True)
    app = work_dir / "app"
    result = BuildResult(ok=False, output_dir=None, work_dir=app)
    if not app_dir.is_dir():
        result.reason = f"{app_dir} is not a directory"
        return result
    try:
        _copy_app(app_dir, app)
    except (OSError, shutil.Error) as exc:
        result.reason = f"cannot copy the app: {exc}"
        return result
    pkg_path = app / "package.json"
    if not pkg_path.is_file():
        for cand in (app / "dist", app):
            if (cand / "index.html").is_file():
                result.ok, result.output_dir, result.static = True, cand, True
                return result
        result.reason = "no package.json and no index.html: nothing to build or serve"
        return result
    try:
        pkg = json.loads(pkg_path.read_text(encoding="utf-8"))
        if not isinstance(pkg, dict):
            raise ValueError("not an object")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        result.reason = f"package.json is not valid JSON: {exc}"
        return result
    scripts = pkg.get("scripts") if isinstance(pkg.get("scripts"), dict) else {}
    deps = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})}
    cache = Path(cache_dir or work_dir / "npm-cache").absolute()
    cache.mkdir(parents=True, exist_ok=True)
    home = work_dir / "home"
    home.mkdir(exist_ok=True)
    env = {
        "HOME": str(home),
        "CI": "1",
        "npm_config_cache": str(cache),
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
        "npm_config_loglevel": "warn",
        "NO_COLOR": "1",
        "FORCE_COLOR": "0",
    }
    endpoints: list[Endpoint] = []
    if registry is not None:
        ep, url = registry_endpoint(registry)
        endpoints.append(ep)
        env["npm_config_registry"] = url
    else:
        env["npm_config_offline"] = "true"

    def step(argv: list[str], timeout: float) -> BuildStep:
        if sandbox is None:
            return _run_plain(argv, app, env, timeout)
        policy = policy_for(
            app,
            writable=[work_dir, cache],
            env=env,
            home=home,
            endpoints=endpoints,
            limits=Limits(
                wall_s=timeout,
                cpu_s=int(timeout) * 2,
                memory_mb=4096,
                address_space=False,  # Node reserves far more address space than it uses
                file_mb=1024,
                processes=512,
            ),
            name="lhbench-build",
        )
        t0 = time.perf_counter()
        fin = run_sandboxed_sync(sandbox, argv, policy)
        text = (fin.text() + fin.text("stderr"))[-_TAIL:]
        return BuildStep(
            " ".join(argv), fin.returncode, time.perf_counter() - t0, fin.timed_out, text
        )

    wants_build = isinstance(scripts, dict) and isinstance(scripts.get("build"), str)
    if (deps or wants_build) and shutil.which("npm") is None:
        raise MissingDependency(
            "npm (Node.js)",
            needed_for="building a Figma-to-code app",
            install="apt-get install nodejs npm (or see nodejs.org)",
        )
    if deps:
        # npm ci needs a lockfile in sync; without one, npm install writes it
        lock = (app / "package-lock.json").is_file()
        argv = ["npm", "ci" if lock else "install", "--no-audit", "--no-fund"]
        if registry is None:
            argv.append("--offline")
        s = step(argv, install_timeout)
        result.steps.append(s)
        if registry is not None and s.exit_code not in (0, None):
            unreachable = [m for m in _UNREACHABLE if m in s.tail]
            if unreachable:
                # the registry, not the app: no build result, an infrastructure error
                raise InfrastructureError(
                    f"the npm registry {registry} could not be reached ({unreachable[0]}) "
                    f"while `{s.command}` ran; check the network or use --offline with a "
                    "filled npm cache"
                )
        if s.timed_out or s.exit_code != 0:
            result.reason = (
                f"`{s.command}` timed out after {install_timeout:g}s"
                if s.timed_out
                else f"`{s.command}` exited {s.exit_code}"
            )
            return result
    if isinstance(scripts, dict) and isinstance(scripts.get("build"), str):
        s = step(["npm", "run", "build"], build_timeout)
        result.steps.append(s)
        result.warnings = sum(1 for line in s.tail.splitlines() if "warn" in line.lower())
        if s.timed_out or s.exit_code != 0:
            result.reason = (
                f"`npm run build` timed out after {build_timeout:g}s"
                if s.timed_out
                else f"`npm run build` exited {s.exit_code}"
            )
            return result
        for name in ("dist", "build", "out"):
            if (app / name / "index.html").is_file():
                result.ok, result.output_dir = True, app / name
                return result
        result.reason = "the build succeeded but wrote no dist/index.html (nor build/, out/)"
        return result
    for cand in (app / "dist", app):
        if (cand / "index.html").is_file():
            result.ok, result.output_dir, result.static = True, cand, True
            return result
    result.reason = "package.json has no build script and there is no index.html to serve"
    return result
