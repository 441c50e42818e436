"""The offline Figma fixture store: files, frame renders, image fills, variables.

Layout, one directory per file key::

    <root>/<file_key>/file.json                 GET /v1/files/:key at full depth
    <root>/<file_key>/renders/<id>@<s>x.png     a node rendered at scale s (12-34@2x.png)
    <root>/<file_key>/renders/<id>.svg          a vector node's SVG export (optional)
    <root>/<file_key>/image_fills/<ref>.png     image fills by imageRef
    <root>/<file_key>/variables_local.json      optional; without it variables/local is 403

A render the store does not hold is cut from the closest ancestor that has one, using
``(absoluteBoundingBox − ancestor origin) · s``, and resized; every export obeys Figma's
32-megapixel cap (a larger request is scaled down, as the API does).
"""

from __future__ import annotations

import base64
import io
import json
import math
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from PIL import Image

from lhbench.envs.figma.design import Node, dash_id, find_node, iter_nodes, node_path

__all__ = ["MAX_EXPORT_PIXELS", "FixtureError", "FixtureStore", "export_scale"]

MAX_EXPORT_PIXELS = 1 << 25  # Figma: "Images up to 32 megapixels can be exported"
_RENDER = re.compile(r"^(?P<id>.+)@(?P<scale>[0-9.]+)x\.png$")
Image.MAX_IMAGE_PIXELS = 200_000_000  # tall 2x frames are large but not bombs


class FixtureError(ValueError):
    """A fixture file is missing or does not hold what it should (names the file)."""


def export_scale(width: float, height: float, scale: float) -> float:
    """The scale Figma really exports at: ``scale``, lowered to fit 32 megapixels."""
    area = max(width, 1.0) * max(height, 1.0)
    if area * scale * scale <= MAX_EXPORT_PIXELS:
        return scale
    return math.sqrt(MAX_EXPORT_PIXELS / area)


class FixtureStore:
    """Read-only access to a directory of Figma fixtures (thread-safe)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._files: dict[str, Node] = {}
        self._images: OrderedDict[tuple[str, str], Image.Image] = OrderedDict()
        self._lock = threading.Lock()

    def keys(self) -> list[str]:
        """File keys with a ``file.json``."""
        if not self.root.is_dir():
            return []
        return sorted(p.name for p in self.root.iterdir() if (p / "file.json").is_file())

    def has(self, key: str) -> bool:
        """Whether the store holds this file (a key is a plain name, never a path)."""
        return (
            bool(re.fullmatch(r"[A-Za-z0-9_-]{1,128}", key))
            and (self.root / key / "file.json").is_file()
        )

    def file(self, key: str) -> Node:
        """The whole file document (``GET /v1/files/:key`` at full depth).

        Raises:
            KeyError: no such file key.
            FixtureError: its ``file.json`` is not a Figma file document.
        """
        if not self.has(key):
            raise KeyError(key)
        with self._lock:
            cached = self._files.get(key)
        if cached is not None:
            return cached
        path = self.root / key / "file.json"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FixtureError(f"{path}: not readable JSON: {exc}") from None
        if not isinstance(doc, dict) or not isinstance(doc.get("document"), dict):
            raise FixtureError(f"{path}: expected an object with a 'document' node")
        with self._lock:
            self._files[key] = doc
        return doc

    def node(self, key: str, node_id: str) -> Node | None:
        """A node of the file by id (None when absent)."""
        return find_node(self.file(key)["document"], node_id)

    def variables(self, key: str) -> dict[str, Any] | None:
        """The ``variables/local`` answer, when the fixture provides one."""
        path = self.root / key / "variables_local.json"
        if not path.is_file():
            return None
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise FixtureError(f"{path}: not readable JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise FixtureError(f"{path}: expected an object")
        return doc

    def image_fill(self, key: str, ref: str) -> bytes | None:
        """The bytes of an image fill (None when the store has none for ``ref``)."""
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,128}", ref):
            return None
        for ext in ("png", "jpg", "gif"):
            path = self.root / key / "image_fills" / f"{ref}.{ext}"
            if path.is_file():
                return path.read_bytes()
        return None

    def image_fill_refs(self, key: str) -> list[str]:
        """Every imageRef used by a visible-or-not IMAGE paint in the file."""
        refs: set[str] = set()
        for n in iter_nodes(self.file(key)["document"]):
            for p in n.get("fills") or ():
                if p.get("type") == "IMAGE" and p.get("imageRef"):
                    refs.add(str(p["imageRef"]))
        return sorted(refs)

    # renders -----------------------------------------------------------------------------

    def _stored_renders(self, key: str) -> dict[str, float]:
        """Node id (dashed) -> scale of the stored render with the highest scale."""
        out: dict[str, float] = {}
        folder = self.root / key / "renders"
        if folder.is_dir():
            for p in folder.iterdir():
                m = _RENDER.match(p.name)
                if m:
                    s = float(m["scale"])
                    out[m["id"]] = max(out.get(m["id"], 0.0), s)
        return out

    def _load(self, key: str, name: str) -> Image.Image:
        with self._lock:
            img = self._images.get((key, name))
            if img is not None:
                self._images.move_to_end((key, name))
                return img
        path = self.root / key / "renders" / name
        with Image.open(path) as raw:
            img = raw.convert("RGBA")
        with self._lock:
            self._images[(key, name)] = img
            while len(self._images) > 4:
                self._images.popitem(last=False)
        return img

    def render(
        self, key: str, node_id: str, *, scale: float = 1.0, fmt: str = "png"
    ) -> bytes | None:
        """The node exported as Figma would (None: the node cannot be rendered here).

        ``fmt`` is png, jpg, svg or pdf. An SVG is the stored vector export when there is
        one, else the raster wrapped in an ``<image>``.
        """
        doc = self.file(key)
        path = node_path(doc["document"], node_id.replace("-", ":"))
        if path is None:
            return None
        node = path[-1]
        bb = node.get("absoluteBoundingBox")
        if not isinstance(bb, dict) or node.get("type") in ("DOCUMENT", "CANVAS"):
            return None
        w, h = float(bb.get("width", 0)), float(bb.get("height", 0))
        if w <= 0 or h <= 0:
            return None
        if fmt == "svg":
            vector = self._svg(key, node)
            if vector is not None:
                return vector
        s = export_scale(w, h, scale)
        raster = self._raster(key, path, s)
        if raster is None:
            return None
        buf = io.BytesIO()
        if fmt == "jpg":
            raster.convert("RGB").save(buf, "JPEG", quality=90)
        elif fmt == "pdf":
            raster.convert("RGB").save(buf, "PDF", resolution=72.0 * s)
        elif fmt == "svg":
            png = io.BytesIO()
            raster.save(png, "PNG")
            data = base64.b64encode(png.getvalue()).decode()
            return (
                f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:g}" height="{h:g}" '
                f'viewBox="0 0 {w:g} {h:g}"><image width="{w:g}" height="{h:g}" '
                f'href="data:image/png;base64,{data}"/></svg>'
            ).encode()
        else:
            # large exports favour speed over size (a capped 32-Mpx frame: ~1 s, not ~4 s)
            big = raster.width * raster.height > 4_000_000
            raster.save(buf, "PNG", compress_level=1 if big else 6)
        return buf.getvalue()

    def _svg(self, key: str, node: Node) -> bytes | None:
        folder = self.root / key / "renders"
        for nid in (node.get("id"), node.get("componentId")):
            if isinstance(nid, str):
                p = folder / f"{dash_id(nid)}.svg"
                if p.is_file():
                    return p.read_bytes()
        return None

    def _raster(self, key: str, path: list[Node], scale: float) -> Image.Image | None:
        stored = self._stored_renders(key)
        node = path[-1]
        bb = node["absoluteBoundingBox"]
        for anc in reversed(path):
            did = dash_id(str(anc.get("id", "")))
            if did not in stored or not isinstance(anc.get("absoluteBoundingBox"), dict):
                continue
            s0 = stored[did]
            img = self._load(key, f"{did}@{s0:g}x.png")
            abb = anc["absoluteBoundingBox"]
            # the stored render may itself have been capped: measure its real scale
            s_real = img.width / max(float(abb["width"]), 1.0)
            x0 = (float(bb["x"]) - float(abb["x"])) * s_real
            y0 = (float(bb["y"]) - float(abb["y"])) * s_real
            box = (
                round(x0),
                round(y0),
                round(x0 + float(bb["width"]) * s_real),
                round(y0 + float(bb["height"]) * s_real),
            )
            crop = img.crop(box)
            size = (
                max(1, round(float(bb["width"]) * scale)),
                max(1, round(float(bb["height"]) * scale)),
            )
            if crop.size != size:
                crop = crop.resize(size, Image.Resampling.LANCZOS)
            return crop
        return None
