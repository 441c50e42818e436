"""The sample packs that ship inside the lhbench package."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

from lhbench.errors import PackError, Problem
from lhbench.packs.loader import PACK_FILE
from lhbench.packs.yamlio import load_yaml

__all__ = ["bundled_pack_dirs", "find_pack_dirs", "read_pack_id", "resolve_pack_dir"]


def read_pack_id(pack_dir: Path) -> str | None:
    """The id in a pack's ``pack.yaml`` without loading the pack (None if unreadable)."""
    try:
        data, _ = load_yaml(pack_dir / PACK_FILE)
    except PackError:
        return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def bundled_pack_dirs() -> list[Path]:
    """Directories of the packs shipped in ``lhbench/packs/data``."""
    with as_file(files("lhbench.packs") / "data") as data:
        root = Path(data)
        return sorted(p for p in root.iterdir() if (p / PACK_FILE).is_file())


def find_pack_dirs(root: Path) -> list[Path]:
    """``root`` itself if it is a pack, else every pack directly below it."""
    if (root / PACK_FILE).is_file():
        return [root]
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / PACK_FILE).is_file())


def resolve_pack_dir(pack: str) -> Path:
    """A pack directory from a path or the name of a bundled pack."""
    p = Path(pack)
    if (p / "pack.yaml").is_file():
        return p
    for d in bundled_pack_dirs():
        if d.name == pack:
            return d
    raise PackError(
        [Problem(file=pack, message="no such pack: give a pack directory or a bundled pack name")]
    )
