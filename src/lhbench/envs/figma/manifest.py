"""Ground-truth manifests (LH-Bench's ``ground_truth/manifest.json``), read leniently.

A manifest names the Figma file and its frames::

    {"figma_file_key": "…", "total_frames": 2,
     "frames": [{"name": "PDP", "node_id": "2176:167104", "gt_image": "2176-167104.png",
                 "target_route": "/pdp", "device": "mobile",
                 "viewport": {"width": 390, "height": 844}}]}

Real manifests are written by agents and are messy, so reading one never fails on a
detail: a frame's image is found by ``gt_image``, then by node id (``:`` → ``-``), then
by name; routes may be patterns (``/product/:id``, ``*``) or repeated; JSON with a
trailing comma or comments is repaired where possible. Everything that needed repair,
or could not be resolved, is kept as a warning.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["GroundTruth", "GtFrame", "ManifestError", "read_ground_truth"]

MANIFEST = "manifest.json"


class ManifestError(ValueError):
    """The manifest cannot be used at all (missing, unreadable, no frames)."""


@dataclass(frozen=True)
class GtFrame:
    """One frame of the ground truth."""

    name: str
    node_id: str
    image: Path | None
    route: str
    device: str | None = None
    viewport: tuple[int, int] | None = None

    @property
    def slug(self) -> str:
        """A file-name-safe id for this frame."""
        base = self.node_id or self.name
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", base).strip("-") or "frame"


@dataclass
class GroundTruth:
    """A read manifest: the file key, the frames, and what needed care."""

    root: Path
    file_key: str | None
    frames: list[GtFrame]
    warnings: list[str] = field(default_factory=list)


def _repair(text: str) -> str:
    """Common agent mistakes in JSON: comments, trailing commas, single quotes."""
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    if '"' not in text:
        text = text.replace("'", '"')
    return text


def _load(path: Path, warnings: list[str]) -> Any:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path}: cannot read: {exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        first = f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})"
    try:
        doc = json.loads(_repair(text))
    except json.JSONDecodeError:
        raise ManifestError(f"{first}; it could not be repaired either") from None
    warnings.append(f"{first}; read after removing comments and trailing commas")
    return doc


def _viewport(raw: Any) -> tuple[int, int] | None:
    if isinstance(raw, dict):
        try:
            return int(float(raw["width"])), int(float(raw.get("height") or 0))
        except (KeyError, TypeError, ValueError):
            return None
    if isinstance(raw, str):
        m = re.match(r"^\s*(\d+)\s*[x×]\s*(\d+)\s*$", raw)
        if m:
            return int(m[1]), int(m[2])
    return None


def _find_image(root: Path, entry: dict[str, Any], node_id: str, name: str) -> Path | None:
    pngs = {p.name.lower(): p for p in root.rglob("*.png") if p.is_file()} if root.is_dir() else {}
    raw = entry.get("gt_image") or entry.get("image") or entry.get("file")
    if isinstance(raw, str) and raw.strip():
        direct = (root / raw.strip()).resolve()
        if direct.is_file() and direct.is_relative_to(root.resolve()):
            return direct
        hit = pngs.get(Path(raw.strip()).name.lower())
        if hit is not None:
            return hit
    if node_id:
        for cand in (node_id.replace(":", "-"), node_id.replace(":", "_"), node_id):
            hit = pngs.get(f"{cand}.png".lower())
            if hit is not None:
                return hit
    if name:
        slug = re.sub(r"[^a-z0-9]+", "", name.lower())
        for fname, p in pngs.items():
            if re.sub(r"[^a-z0-9]+", "", fname.removesuffix(".png")) == slug:
                return p
    return None


def read_ground_truth(root: Path) -> GroundTruth:
    """The ground truth in ``root`` (a directory holding ``manifest.json``, or the file).

    Raises:
        ManifestError: no manifest, unreadable even after repair, or no frame in it.
    """
    root = Path(root)
    path = root if root.is_file() else root / MANIFEST
    folder = path.parent
    if not path.is_file():
        raise ManifestError(f"{path}: no ground-truth manifest")
    warnings: list[str] = []
    doc = _load(path, warnings)
    if isinstance(doc, list):
        doc = {"frames": doc}
        warnings.append(f"{path}: a bare list of frames (no figma_file_key)")
    if not isinstance(doc, dict):
        raise ManifestError(f"{path}: expected an object with 'frames'")
    raw_frames = doc.get("frames")
    if not isinstance(raw_frames, list) or not raw_frames:
        raise ManifestError(f"{path}: 'frames' must be a non-empty list")
    key = doc.get("figma_file_key") or doc.get("file_key")
    frames: list[GtFrame] = []
    for i, entry in enumerate(raw_frames):
        where = f"{path}: frames[{i}]"
        if not isinstance(entry, dict):
            warnings.append(f"{where}: not an object; skipped")
            continue
        node_id = str(entry.get("node_id") or entry.get("id") or "").strip()
        name = str(entry.get("name") or node_id or f"frame {i + 1}")
        route = entry.get("target_route") or entry.get("route") or entry.get("path")
        if not isinstance(route, str) or not route.strip():
            warnings.append(f"{where} ({name}): no target_route; '/' assumed")
            route = "/"
        route = route.strip()
        if route.startswith("#"):
            route = route[1:]
        if not route.startswith("/") and route != "*":
            route = "/" + route
        image = _find_image(folder, entry, node_id, name)
        if image is None:
            warnings.append(f"{where} ({name}): no ground-truth image found")
        elif isinstance(entry.get("gt_image"), str) and image.name != Path(entry["gt_image"]).name:
            warnings.append(
                f"{where} ({name}): gt_image {entry['gt_image']!r} not found; using {image.name}"
            )
        frames.append(
            GtFrame(
                name=name,
                node_id=node_id,
                image=image,
                route=route,
                device=str(entry["device"]) if entry.get("device") else None,
                viewport=_viewport(entry.get("viewport")),
            )
        )
    if not frames:
        raise ManifestError(f"{path}: no usable frame")
    total = doc.get("total_frames")
    if isinstance(total, int) and total != len(raw_frames):
        warnings.append(f"{path}: total_frames is {total} but {len(raw_frames)} frames are listed")
    routes = [f.route for f in frames]
    dupes = sorted({r for r in routes if routes.count(r) > 1})
    if dupes:
        warnings.append(f"{path}: route(s) {', '.join(dupes)} serve more than one frame")
    return GroundTruth(folder, str(key) if key else None, frames, warnings)
