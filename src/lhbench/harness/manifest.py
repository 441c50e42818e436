"""Manifest-based recovery.

The agent keeps ``manifest.json`` (completed steps, urls, updated_at) at the workspace
root, so a restarted run resumes instead of redoing work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lhbench.schema import utcnow

__all__ = ["MANIFEST", "complete_step", "read_manifest"]

MANIFEST = "manifest.json"


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest (an empty one when the run has not started one)."""
    path = root / MANIFEST
    if not path.is_file():
        return {"completed_steps": [], "updated_at": None}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {"completed_steps": [], "updated_at": None, "note": "manifest.json was unreadable"}
    if not isinstance(doc, dict):
        return {
            "completed_steps": [],
            "updated_at": None,
            "note": "manifest.json was not an object",
        }
    doc.setdefault("completed_steps", [])
    return dict(doc)


def complete_step(root: Path, step: str, urls: dict[str, str] | None = None) -> dict[str, Any]:
    """Record a completed step (idempotent), written atomically."""
    doc = read_manifest(root)
    if step not in doc["completed_steps"]:
        doc["completed_steps"].append(step)
    doc.update(urls or {})
    doc["updated_at"] = utcnow().isoformat()
    tmp = root / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    tmp.replace(root / MANIFEST)
    return doc
