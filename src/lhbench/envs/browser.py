"""Headless Chromium in the sandbox: one place for finding it, what it needs and its policy.

The Figma capture and the content slide checks both drive Debian's headless Chromium with
playwright inside lhbench's sandbox (Chromium's own sandbox off: the process is already
confined, and its setuid/namespace sandbox cannot start there).
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from lhbench.errors import MissingDependency
from lhbench.sandbox import Limits, SandboxPolicy, policy_for

__all__ = [
    "CHROMIUM_ARGS",
    "browser_policy",
    "browser_requirements",
    "chromium_path",
]

#: flags every sandboxed Chromium starts with (a use adds its own, e.g. hidden scrollbars)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
_NAMES = ("chromium-headless-shell", "chromium", "chromium-browser")
_PLACES = ("/usr/bin", "/usr/lib/chromium")


def chromium_path() -> str | None:
    """Debian's headless Chromium (or a full Chromium), if installed."""
    for name in _NAMES:
        for place in _PLACES:
            if Path(place, name).exists():
                return f"{place}/{name}"
        found = shutil.which(name)
        if found:
            return found
    return None


def browser_requirements(needed_for: str, extra: str) -> list[MissingDependency]:
    """What driving Chromium needs and is missing here (empty: it can run).

    Args:
        needed_for: What the browser is for, as the error says it.
        extra: The lhbench extra that installs playwright (``figma``, ``content``).
    """
    missing = []
    if importlib.util.find_spec("playwright") is None:
        missing.append(
            MissingDependency(
                "playwright",
                needed_for=f"{needed_for} (browser automation)",
                install=f"pip install 'lhbench[{extra}]'",
            )
        )
    if chromium_path() is None:
        missing.append(
            MissingDependency(
                "Chromium",
                needed_for=needed_for,
                install="apt-get install chromium-headless-shell",
            )
        )
    return missing


def browser_policy(
    workdir: Path,
    *,
    readable: list[Path],
    timeout: float,
    name: str,
    file_mb: int = 256,
    processes: int = 256,
) -> SandboxPolicy:
    """The sandbox a browser worker runs in: ``workdir`` writable, ``readable`` read-only.

    No network; memory capped but not address space (Chromium reserves far more than it
    uses); CPU twice the wall-clock limit (renderer and browser processes together).
    """
    return policy_for(
        workdir,
        writable=[workdir],
        readable=readable,
        env={"LHBENCH_IN_SANDBOX": "1"},
        limits=Limits(
            wall_s=timeout,
            cpu_s=int(timeout) * 2,
            memory_mb=4096,
            address_space=False,
            file_mb=file_mb,
            processes=processes,
        ),
        name=name,
    )
