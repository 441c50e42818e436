"""Where fixture stores are: a directory, or ``bundled:<pack>`` for a pack shipped with lhbench.

A bundled pack's fixtures live in ``lhbench/packs/data/<pack>/figma``; inside lhbench's
sandbox that directory is readable (lhbench's own files are bound read-only), so a
pack's MCP server can name its fixtures this way without a path of the host.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["BUNDLED_DATA", "store_path"]

BUNDLED_DATA = Path(__file__).resolve().parents[2] / "packs" / "data"


def store_path(spec: str) -> Path:
    """The directory a ``--store`` value names.

    Raises:
        ValueError: a ``bundled:`` name that is not a bundled pack with fixtures.
    """
    if spec.startswith("bundled:"):
        name = spec.removeprefix("bundled:")
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.-]*", name):
            raise ValueError(f"store {spec!r}: expected bundled:<pack name>")
        path = BUNDLED_DATA / name / "figma"
        if not path.is_dir():
            raise ValueError(f"store {spec!r}: the bundled pack {name!r} has no figma/ fixtures")
        return path
    return Path(spec)
