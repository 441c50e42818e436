"""Content hashes: a pack, task, rubric or skill is identified by what its files hold."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

__all__ = ["hash_bytes", "hash_tree", "iter_files", "stat_tree"]

_SKIP_DIRS = {"__pycache__", ".git", ".lhbench", ".mypy_cache", ".pytest_cache"}


def hash_bytes(data: bytes) -> str:
    """SHA-256 hex digest of ``data``."""
    return hashlib.sha256(data).hexdigest()


def iter_files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root`` in a stable order, skipping caches and VCS dirs."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if any(part in _SKIP_DIRS or part.endswith(".pyc") for part in rel.parts):
            continue
        if path.is_file():
            yield path


def hash_tree(root: Path) -> str:
    """Hash of every file's relative path and bytes; renaming or editing any file changes it."""
    h = hashlib.sha256()
    if root.is_file():
        h.update(root.read_bytes())
        return h.hexdigest()
    for path in iter_files(root):
        rel = path.relative_to(root).as_posix().encode()
        h.update(len(rel).to_bytes(8, "big") + rel)
        data = path.read_bytes()
        h.update(len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def stat_tree(root: Path) -> str:
    """Hash of every file's relative path, size and modification time (no file is read).

    The cheap gate before :func:`hash_tree`: the files :func:`iter_files` hashes, stated
    only. Equal to what was recorded, the content is taken as unchanged; different, the
    tree is hashed to see whether it really changed (a touched file has the same hash).
    """
    h = hashlib.sha256()
    for path in iter_files(root):
        st = path.stat()
        rel = path.relative_to(root).as_posix().encode()
        h.update(len(rel).to_bytes(8, "big") + rel)
        h.update(st.st_size.to_bytes(8, "big") + st.st_mtime_ns.to_bytes(16, "big", signed=True))
    return h.hexdigest()
