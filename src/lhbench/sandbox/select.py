"""Choosing the sandbox: the configured backend, else the first that works; never silently none.

``sandbox = "auto"`` (the default) takes bubblewrap, then a container runtime. Where none
works, anything that runs untrusted code refuses, naming what to install, unless the user
passes ``--unsafe-no-sandbox`` (setting ``unsafe_no_sandbox``); then the unconfined backend
is used and every run it makes records that it was unsandboxed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import lru_cache

from lhbench.sandbox.base import Prepared, Sandbox, SandboxUnavailable
from lhbench.sandbox.bubblewrap import PRLIMIT, BubblewrapSandbox, join_cgroups, prlimit_args
from lhbench.sandbox.cgroups import CgroupSet
from lhbench.sandbox.container import ContainerSandbox
from lhbench.sandbox.policy import SandboxPolicy

__all__ = ["BACKENDS", "UnsafeNoSandbox", "candidates_report", "get_sandbox"]

BACKENDS = ("auto", "bubblewrap", "container", "none")


class UnsafeNoSandbox:
    """No confinement at all: the command runs as this user, with this machine's network.

    Only the environment allow-list, the working directory and the resource limits still
    apply. Chosen only on request; runs record ``unsandboxed``.
    """

    name = "none"

    def available(self) -> str | None:
        """Always runs."""
        return None

    def prepare(self, argv: Sequence[str], policy: SandboxPolicy) -> Prepared:
        """``argv`` under prlimit (and cgroups where writable), in ``policy.cwd``."""
        cgroups = CgroupSet(processes=policy.limits.processes, memory_mb=policy.limits.memory_mb)
        launch = [PRLIMIT, *prlimit_args(policy.limits), "--", *argv]
        return Prepared(
            argv=join_cgroups(cgroups.procs_files, launch),
            env=dict(policy.env),
            cwd=str(policy.cwd),
            backend=self.name,
            _cleanup=[cgroups.close],
        )

    def describe(self) -> list[str]:
        """What it does not contain."""
        return [
            "backend: none (--unsafe-no-sandbox): untrusted code runs as this user, "
            "sees this machine's files and network; runs are recorded as unsandboxed",
        ]


@lru_cache(maxsize=8)
def _probe(backend: str, image: str) -> tuple[Sandbox | None, tuple[str, ...]]:
    tried: list[str] = []
    candidates: list[Sandbox] = []
    if backend in ("auto", "bubblewrap"):
        candidates.append(BubblewrapSandbox())
    if backend in ("auto", "container"):
        candidates.append(ContainerSandbox(image=image))
    for sb in candidates:
        why = sb.available()
        if why is None:
            return sb, tuple(tried)
        tried.append(f"{sb.name}: {why}")
    return None, tuple(tried)


def get_sandbox(
    backend: str = "auto", *, unsafe: bool = False, image: str = "python:3.11-slim"
) -> Sandbox:
    """The sandbox to use.

    Raises:
        SandboxUnavailable: no backend works and ``unsafe`` was not given, naming what each
            backend needs.
    """
    backend = os.environ.get("LHBENCH_SANDBOX", backend) if backend == "auto" else backend
    if backend not in BACKENDS:
        raise SandboxUnavailable(f"sandbox {backend!r}: expected one of {', '.join(BACKENDS)}")
    if backend == "none":
        if not unsafe:
            raise SandboxUnavailable(
                "sandbox 'none' runs untrusted code unconfined: pass --unsafe-no-sandbox "
                "(setting unsafe_no_sandbox) to allow it"
            )
        return UnsafeNoSandbox()
    sandbox, tried = _probe(backend, image)
    if sandbox is not None:
        return sandbox
    if unsafe:
        return UnsafeNoSandbox()
    raise SandboxUnavailable(
        "no sandbox works here ("
        + "; ".join(tried)
        + "). Install bubblewrap (Debian: apt-get install bubblewrap), or pass "
        "--unsafe-no-sandbox to run untrusted code unconfined (runs are recorded as unsandboxed)"
    )


def candidates_report(image: str = "python:3.11-slim") -> dict[str, str | None]:
    """Each real backend and why it does not work here (None: it works)."""
    return {sb.name: sb.available() for sb in (BubblewrapSandbox(), ContainerSandbox(image=image))}
