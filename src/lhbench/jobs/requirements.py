"""What each bundled environment needs at run time, and whether this machine has it.

``lhbench doctor`` lists it; the checks themselves raise
:class:`~lhbench.errors.MissingDependency` naming the same install line when something is
missing, so a missing package or browser is infrastructure, never a score.
"""

from __future__ import annotations

import importlib.util
import shutil
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Requirement", "environment_requirements"]


@dataclass(frozen=True)
class Requirement:
    """One thing an environment needs: what, for what, whether present, how to install."""

    environment: str
    name: str
    needed_for: str
    present: bool
    install: str

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON."""
        return asdict(self)


def _module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def environment_requirements() -> list[Requirement]:
    """Every bundled environment's run-time needs (Figma, content, GUI, CLI harnesses)."""
    from lhbench.envs.content.scenes import ffmpeg_available
    from lhbench.envs.content.slides import chromium_path as slides_chromium
    from lhbench.envs.figma.capture import chromium_path
    from lhbench.envs.gui.render import soffice_binary

    playwright = _module("playwright")
    chromium = chromium_path() is not None
    npm = shutil.which("npm") is not None
    out = [
        Requirement(
            "figma",
            "playwright",
            "the capture (browser automation)",
            playwright,
            "pip install 'lhbench[figma]'",
        ),
        Requirement(
            "figma",
            "Chromium",
            "the capture",
            chromium,
            "apt-get install chromium-headless-shell",
        ),
        Requirement(
            "figma",
            "npm (Node.js)",
            "building apps with a package.json",
            npm,
            "apt-get install nodejs npm",
        ),
        Requirement(
            "content",
            "playwright",
            "the slide checks (browser automation)",
            playwright,
            "pip install 'lhbench[content]'",
        ),
        Requirement(
            "content",
            "Chromium (headless shell)",
            "the slide checks",
            slides_chromium() is not None,
            "apt-get install chromium-headless-shell",
        ),
        Requirement(
            "content",
            "ffmpeg and ffprobe",
            "measuring rendered video scenes",
            ffmpeg_available(),
            "apt-get install ffmpeg",
        ),
        Requirement(
            "gui",
            "LibreOffice (soffice)",
            "rendering office documents for the judge",
            soffice_binary() is not None,
            "apt-get install libreoffice-core libreoffice-writer libreoffice-calc "
            "libreoffice-impress",
        ),
    ]
    out += _cli_requirements(npm)
    return out


def _cli_requirements(npm: bool) -> list[Requirement]:
    """Each CLI harness's binary (found as ``lhbench run --harness`` finds it)."""
    from lhbench.errors import LhbenchError
    from lhbench.harness.cli_agents import CLI_AGENTS, cli_binary

    out = []
    for name, agent in sorted(CLI_AGENTS.items()):
        try:
            cli_binary(agent)
            present = True
        except LhbenchError:
            present = False
        out.append(
            Requirement(
                f"cli:{name}",
                f"`{agent.binary}`",
                f"--harness {name}",
                present,
                f"npm i --prefix DIR {agent.package}; {agent.env_var}=DIR/node_modules/.bin/"
                f"{agent.binary}" + ("" if npm else " (needs npm: apt-get install nodejs npm)"),
            )
        )
    return out
