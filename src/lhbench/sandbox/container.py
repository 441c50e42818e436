"""A container backend (Docker or Podman) for machines where a daemon runs and bwrap does not.

The image (setting ``sandbox_image``) provides the system; the policy's mounts are bound at
the same paths (read-only unless writable), so lhbench's Python and the workspace appear
where the harness expects them: the image's Python must match the host's version. The
container gets no network (``--network none``), no capabilities, no new privileges, a
read-only root, a private ``/tmp``, and the pids, memory and CPU limits of the policy; it
is named, and removed when the command ends or is killed (stopping the client alone would
leave it running).
Endpoints are reached as with bubblewrap: a relay inside, a forwarder on a Unix socket.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path

from lhbench.sandbox.base import Prepared
from lhbench.sandbox.forward import Forwarder
from lhbench.sandbox.policy import SandboxPolicy

__all__ = ["ContainerSandbox"]


class ContainerSandbox:
    """Confinement in a Docker or Podman container."""

    name = "container"

    def __init__(self, image: str = "python:3.11-slim", runtime: str | None = None) -> None:
        self.image = image
        self.runtime = runtime or shutil.which("podman") or shutil.which("docker") or "docker"

    def available(self) -> str | None:
        """None when the runtime answers (its daemon runs), else why not."""
        if shutil.which(self.runtime) is None:
            return f"{self.runtime} is not installed"
        try:
            proc = subprocess.run(
                [self.runtime, "info", "--format", "{{.ServerVersion}}"],
                capture_output=True,
                timeout=20,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{self.runtime} does not answer: {exc}"
        if proc.returncode != 0:
            why = proc.stderr.decode(errors="replace").strip()[:200]
            return f"{self.runtime} has no daemon here: {why}"
        return None

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> Prepared:
        """The ``run`` command for ``argv`` under ``policy``."""
        prepared = Prepared(argv=[], env={"PATH": "/usr/bin:/bin"}, cwd="/", backend=self.name)
        lim = policy.limits
        # a named container: killing the client does not stop it, so cleanup removes it
        name = f"lhbench-{uuid.uuid4().hex[:12]}"
        runtime = self.runtime

        def remove() -> None:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run([runtime, "rm", "-f", name], capture_output=True, timeout=60)

        prepared._cleanup.append(remove)
        args = [
            self.runtime,
            "run",
            "--rm",
            "-i",
            "--init",
            "--name",
            name,
            "--network",
            "none",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--read-only",
            "--tmpfs",
            "/tmp",
            "--user",
            "1000:1000",
            "--workdir",
            str(Path(policy.cwd).absolute()),
        ]
        if lim.processes is not None:
            args += ["--pids-limit", str(lim.processes)]
        if lim.memory_mb is not None:
            args += ["--memory", f"{lim.memory_mb}m"]
        if lim.cpu_s is not None:
            args += ["--ulimit", f"cpu={lim.cpu_s}"]
        if lim.file_mb is not None:
            args += ["--ulimit", f"fsize={lim.file_mb << 20}"]
        for m in policy.mounts:
            if m.empty:
                args += ["--tmpfs", str(Path(m.at).absolute())]
                continue
            if not m.source.exists() or str(m.source).startswith(("/usr", "/lib", "/bin", "/etc")):
                continue  # the image brings its own system
            mode = "rw" if m.writable else "ro"
            args += ["-v", f"{Path(m.source).absolute()}:{Path(m.at).absolute()}:{mode}"]
        for k, v in policy.env.items():
            args += ["-e", f"{k}={v}"]
        inner = list(argv)
        if policy.endpoints:
            scratch = Path(tempfile.mkdtemp(prefix="lhbench-net-"))
            prepared._cleanup.append(lambda: shutil.rmtree(scratch, ignore_errors=True))
            maps: list[str] = []
            for i, ep in enumerate(policy.endpoints):
                if ep.socket is not None:
                    args += ["-v", f"{ep.socket}:/run/lhbench/own/{i}.sock"]
                    maps += ["--map", f"127.0.0.1:{ep.local_port}=/run/lhbench/own/{i}.sock"]
                    continue
                fwd = Forwarder(
                    scratch / f"{i}.sock", ep.host, ep.port, postgres=ep.postgres
                ).__enter__()
                prepared._cleanup.append(lambda f=fwd: f.__exit__(None, None, None))  # type: ignore[misc]
                maps += ["--map", f"127.0.0.1:{ep.local_port}=/run/lhbench/net/{i}.sock"]
                if ep.host not in ("127.0.0.1", "localhost"):
                    args += ["--add-host", f"{ep.host}:127.0.0.1"]
            args += ["-v", f"{scratch}:/run/lhbench/net"]
            inner = [sys.executable, "-I", "-m", "lhbench.sandbox.relay", *maps, "--", *inner]
        prepared.argv = [*args, self.image, *inner]
        return prepared

    def describe(self) -> list[str]:
        """What the container contains."""
        return [
            f"backend: container ({self.runtime}, image {self.image})",
            "network: none, except allowed endpoints through a forwarder on a Unix socket",
            "identity: uid 1000, no capabilities, no new privileges, read-only root",
            "filesystem: the image; lhbench's Python read-only and the workspace read-write "
            "at their host paths; private /tmp",
            "limits: pids, memory, CPU time and file size (container runtime)",
        ]
