"""Paths and small helpers shared by the Figma environment tests."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from lhbench.packs import bundled_pack_dirs

PACK = next(d for d in bundled_pack_dirs() if d.name == "figma-mini")
STORE = PACK / "figma"
KEY = "FmMiniFernhill01"
REPO = Path(__file__).resolve().parents[3]
NPM_CACHE = REPO / ".lhbench" / "npm-cache"  # kept across sessions, as the CLI tests keep theirs


def registry_reachable() -> bool:
    """Whether the npm registry answers (the Vite reference app installs from it)."""
    try:
        with socket.create_connection(("registry.npmjs.org", 443), timeout=5):
            return True
    except OSError:
        return False


def static_copy(dest: Path) -> Path:
    """A copy of the static reference app, to perturb."""
    shutil.copytree(PACK / "reference" / "static", dest)
    return dest


def vite_copy(dest: Path) -> Path:
    """A copy of the Vite reference app, to perturb."""
    shutil.copytree(PACK / "reference" / "vite", dest)
    return dest
