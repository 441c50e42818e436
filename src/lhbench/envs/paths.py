"""Paths inside an environment root: nothing a trajectory or a judge names may leave it."""

from __future__ import annotations

from pathlib import Path

__all__ = ["EscapeError", "inside"]


class EscapeError(ValueError):
    """A path that would leave the environment root."""


def inside(root: Path, rel: str, *, must_exist: bool = False) -> Path:
    """``root/rel`` resolved, refusing absolute paths, ``..``, NUL bytes and symlinks out.

    Raises:
        EscapeError: the path is absolute, climbs out, or resolves (via a symlink) outside.
        FileNotFoundError: with ``must_exist``, when it does not exist.
    """
    if "\x00" in rel:
        raise EscapeError(f"path {rel!r} contains a NUL byte")
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        raise EscapeError(f"path {rel!r} is absolute; paths are relative to the environment root")
    parts = Path(rel).parts
    if ".." in parts:
        raise EscapeError(f"path {rel!r} climbs out with '..'")
    base = root.resolve()
    target = (base / rel).resolve()
    if target != base and not target.is_relative_to(base):
        raise EscapeError(f"path {rel!r} leads outside the environment root (through a symlink)")
    if must_exist and not target.exists():
        raise FileNotFoundError(f"no such file or directory: {rel}")
    return target
