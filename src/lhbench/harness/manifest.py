"""Manifest-based recovery.

The agent keeps ``manifest.json`` (completed steps, urls, updated_at) at the workspace
root, so a restarted run resumes instead of redoing work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lhbench.envs.paths import (
    EscapeError,
    NotARegularFile,
    read_beneath,
    replace_beneath,
)
from lhbench.schema import utcnow

__all__ = ["MANIFEST", "complete_step", "read_manifest"]

MANIFEST = "manifest.json"


MAX_MANIFEST_BYTES = 1 << 20


def _empty(note: str | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"completed_steps": [], "updated_at": None}
    if note:
        doc["note"] = note
    return doc


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest (an empty one when the run has not started one).

    The workspace is the agent's: ``manifest.json`` may be anything it put there — a link
    to a host file, a FIFO, a huge or deeply nested document. It is opened without
    following links, read up to :data:`MAX_MANIFEST_BYTES`, and anything else gives an
    empty manifest with a note saying why.
    """
    try:
        data, size = read_beneath(root, MANIFEST, limit=MAX_MANIFEST_BYTES + 1)
    except FileNotFoundError:
        return _empty()
    except (EscapeError, NotARegularFile, IsADirectoryError, NotADirectoryError):
        return _empty("manifest.json is not a regular file in the workspace; ignored")
    if size > MAX_MANIFEST_BYTES:
        return _empty(f"manifest.json is over {MAX_MANIFEST_BYTES} bytes; ignored")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # bad JSON or UTF-8, or nesting too deep
        return _empty("manifest.json was unreadable")
    if not isinstance(doc, dict):
        return _empty("manifest.json was not an object")
    if not isinstance(doc.get("completed_steps", []), list):
        doc["completed_steps"] = []
    doc.setdefault("completed_steps", [])
    return dict(doc)


def complete_step(root: Path, step: str, urls: dict[str, str] | None = None) -> dict[str, Any]:
    """Record a completed step (idempotent), written atomically.

    The new manifest replaces the name by a rename, so a link the agent planted at
    ``manifest.json`` or its temporary file is replaced, never written through.
    """
    doc = read_manifest(root)
    doc.pop("note", None)
    if step not in doc["completed_steps"]:
        doc["completed_steps"].append(step)
    doc.update(urls or {})
    doc["updated_at"] = utcnow().isoformat()
    replace_beneath(root, MANIFEST, json.dumps(doc, indent=2).encode("utf-8"))
    return doc
