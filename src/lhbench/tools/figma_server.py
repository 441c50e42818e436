"""The Figma-to-code tools over MCP: LH-Bench's nine design tools, Framelink's two, previews.

Design tools (LH-Bench's names and return shapes): ``get_figma_file``,
``get_figma_file_nodes``, ``get_node_tree``, ``get_node_styles``, ``get_node_components``,
``export_node_images``, ``get_page_visual_overview``, ``get_page_node_id``,
``get_layer_node_id``; Framelink-compatible ``get_figma_data`` and
``download_figma_images``. They call Figma's REST API through
:class:`~lhbench.envs.figma.FigmaClient`: a fixture server started inside this process
(``--store``, rate limited with ``--rate-limit``) or the real API (``--api`` with the
token in ``FIGMA_API_KEY``). API errors come back as LH-Bench's tools returned them,
``{"status": "error", "error": "Figma API error: 429 - {…}"}`` (with ``retry_after``), so
an agent sees the 429s real agents saw. Files are written only inside the workspace.

Preview tools: ``create_app_preview``, ``get_preview_status``, ``stop_app_preview``
(:class:`~lhbench.envs.figma.preview.PreviewManager`).

    python -m lhbench.tools.figma_server --store bundled:figma-mini --workspace DIR \
        [--rate-limit capacity=10,per_minute=10] [--api https://api.figma.com]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import secrets
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from lhbench.envs.figma.client import FigmaApiError, FigmaClient
from lhbench.envs.figma.design import Node, dash_id, iter_nodes, node_path, visible_solid
from lhbench.envs.figma.preview import PreviewManager
from lhbench.envs.figma.ratelimit import RateLimit, parse_rate_limit
from lhbench.envs.figma.server import FigmaFixtureServer
from lhbench.envs.figma.store import FixtureStore
from lhbench.envs.figma.stores import store_path
from lhbench.envs.paths import EscapeError, NotARegularFile, inside, write_beneath

__all__ = ["DESIGN_TOOLS", "FigmaTools", "ImageRequest", "build_figma_server", "main"]

DESIGN_TOOLS = (
    "get_figma_file",
    "get_figma_file_nodes",
    "get_node_tree",
    "get_node_styles",
    "get_node_components",
    "export_node_images",
    "get_page_visual_overview",
    "get_page_node_id",
    "get_layer_node_id",
)
_FORMATS = ("png", "jpg", "svg", "pdf")


class ImageRequest(BaseModel):
    """One image for ``download_figma_images`` (Framelink's shape)."""

    nodeId: str = Field(description="Node id, e.g. 12:34 (an instance chain I1:2;3:4 too).")
    fileName: str = Field(description="File name to write, ending .png, .svg or .gif.")
    imageRef: str | None = Field(default=None, description="For an image fill: its imageRef.")


def _norm_id(node_id: str) -> str:
    """``12-34`` → ``12:34`` (ids in URLs and file names use '-')."""
    node_id = node_id.strip()
    if ":" not in node_id and re.fullmatch(r"I?\d+-\d+(;\d+-\d+)*", node_id):
        return node_id.replace("-", ":")
    return node_id


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._ -]+", "_", name).strip(" .") or "layer"


def _api_error(exc: FigmaApiError) -> dict[str, Any]:
    out: dict[str, Any] = {"status": "error", "error": str(exc)}
    if exc.retry_after is not None:
        out["retry_after"] = exc.retry_after
    return out


class FigmaTools:
    """The tools' behaviour, independent of MCP (the server wraps each method)."""

    def __init__(self, client: FigmaClient, workspace: Path) -> None:
        self.client = client
        self.workspace = Path(workspace).resolve()

    # helpers -------------------------------------------------------------------------------

    def _call(self, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        try:
            return fn()
        except FigmaApiError as exc:
            return _api_error(exc)
        except (EscapeError, NotARegularFile, IsADirectoryError, NotADirectoryError) as exc:
            return {"status": "error", "error": f"refused: {exc}"}

    def _rel(self, path: str) -> str:
        """A workspace-relative path for ``path`` (absolute ones must be inside)."""
        p = Path(path or ".")
        if p.is_absolute():
            try:
                p = p.resolve().relative_to(self.workspace)
            except ValueError:
                raise EscapeError(f"{path} is outside the project") from None
        rel = p.as_posix()
        inside(self.workspace, rel)
        return rel

    def _write(self, rel_dir: str, name: str, data: bytes) -> str:
        rel = f"{rel_dir.rstrip('/')}/{name}" if rel_dir not in ("", ".") else name
        inside(self.workspace, rel)
        write_beneath(self.workspace, rel, data)
        return rel

    def _node(self, file_key: str, node_id: str, depth: int | None = None) -> dict[str, Any]:
        doc = self.client.nodes(file_key, node_id, depth=depth)
        entry = (doc.get("nodes") or {}).get(node_id)
        if entry is None:
            raise FigmaApiError(
                404, json.dumps({"status": 404, "err": f"Node {node_id} not found"})
            )
        return dict(entry)

    # LH-Bench's nine tools ---------------------------------------------------------------------

    def get_figma_file(self, file_key: str) -> dict[str, Any]:
        """The file's pages and metadata (depth 1)."""

        def go() -> dict[str, Any]:
            doc = self.client.file(file_key, depth=1)
            return {
                "status": "success",
                "name": doc.get("name"),
                "last_modified": doc.get("lastModified"),
                "version": doc.get("version"),
                "thumbnail_url": doc.get("thumbnailUrl"),
                "document": doc.get("document"),
                "components": doc.get("components", {}),
                "styles": doc.get("styles", {}),
            }

        return self._call(go)

    def get_figma_file_nodes(
        self, file_key: str, node_ids: str, depth: int | None = None
    ) -> dict[str, Any]:
        """Nodes by id (comma-separated), each with its components and styles."""

        def go() -> dict[str, Any]:
            ids = ",".join(_norm_id(i) for i in node_ids.split(",") if i.strip())
            doc = self.client.nodes(file_key, ids, depth=depth)
            return {
                "status": "success",
                "name": doc.get("name"),
                "last_modified": doc.get("lastModified"),
                "nodes": doc.get("nodes", {}),
            }

        return self._call(go)

    def get_page_node_id(self, file_key: str, page_name: str) -> dict[str, Any]:
        """The id of the page with this name (case-insensitive)."""

        def go() -> dict[str, Any]:
            doc = self.client.file(file_key, depth=1)
            pages = [p for p in (doc.get("document") or {}).get("children") or []]
            want = page_name.strip().lower()
            hit = next((p for p in pages if str(p.get("name", "")).lower() == want), None)
            hit = hit or next((p for p in pages if want in str(p.get("name", "")).lower()), None)
            if hit is None:
                return {
                    "status": "error",
                    "error": f"no page named {page_name!r}",
                    "available_pages": [p.get("name") for p in pages],
                }
            return {"status": "success", "page_id": hit["id"], "page_name": hit.get("name")}

        return self._call(go)

    def get_layer_node_id(
        self, file_key: str, page_node_id: str, layer_name: str
    ) -> dict[str, Any]:
        """The id of a layer with this name (case-insensitive) on a page."""

        def go() -> dict[str, Any]:
            page = self._node(file_key, _norm_id(page_node_id), depth=3)["document"]
            want = layer_name.strip().lower()
            nodes = [n for n in iter_nodes(page) if n is not page]
            hit = next((n for n in nodes if str(n.get("name", "")).lower() == want), None)
            hit = hit or next((n for n in nodes if want in str(n.get("name", "")).lower()), None)
            if hit is None:
                return {
                    "status": "error",
                    "error": f"no layer named {layer_name!r} on page {page_node_id}",
                    "top_level_layers": [c.get("name") for c in page.get("children") or []],
                }
            return {
                "status": "success",
                "layer_id": hit["id"],
                "layer_name": hit.get("name"),
                "layer_type": hit.get("type"),
            }

        return self._call(go)

    def get_node_tree(
        self, file_key: str, node_id: str, depth: int | None = None
    ) -> dict[str, Any]:
        """A node and its subtree (children past ``depth`` shown as [])."""

        def go() -> dict[str, Any]:
            nid = _norm_id(node_id)
            entry = self._node(file_key, nid, depth=depth)
            return {"status": "success", "node_id": nid, "node": entry["document"]}

        return self._call(go)

    def get_node_components(self, file_key: str, node_id: str) -> dict[str, Any]:
        """Component instances and components inside a node."""

        def go() -> dict[str, Any]:
            nid = _norm_id(node_id)
            entry = self._node(file_key, nid)
            comps = entry.get("components") or {}
            root = entry["document"]
            out = []
            for n in iter_nodes(root):
                if n.get("type") not in ("INSTANCE", "COMPONENT", "COMPONENT_SET"):
                    continue
                meta = comps.get(n.get("componentId") or n.get("id")) or {}
                path = node_path(root, n["id"]) or []
                frame = next(
                    (p.get("name") for p in reversed(path[:-1]) if p.get("type") == "FRAME"),
                    root.get("name"),
                )
                out.append(
                    {
                        "key": n["id"],
                        "name": meta.get("name") or n.get("name"),
                        "description": meta.get("description", ""),
                        "containing_frame": frame,
                    }
                )
            return {"status": "success", "components": out, "count": len(out)}

        return self._call(go)

    def get_node_styles(self, file_key: str, node_id: str) -> dict[str, Any]:
        """The named styles used inside a node (names only, as the API gives them)."""

        def go() -> dict[str, Any]:
            entry = self._node(file_key, _norm_id(node_id))
            styles = [
                {
                    "key": sid,
                    "name": s.get("name"),
                    "description": s.get("description", ""),
                    "style_type": s.get("styleType"),
                }
                for sid, s in (entry.get("styles") or {}).items()
            ]
            by_type: dict[str, list[dict[str, Any]]] = {}
            for s in styles:
                by_type.setdefault(str(s["style_type"]), []).append(s)
            return {
                "status": "success",
                "styles": styles,
                "styles_by_type": by_type,
                "count": len(styles),
            }

        return self._call(go)

    def _export(
        self,
        file_key: str,
        ids: list[str],
        out_dir: str,
        fmt: str,
        scale: float,
        names: dict[str, str],
    ) -> list[dict[str, Any]]:
        urls = self.client.images(file_key, ",".join(ids), scale=scale, fmt=fmt)
        exported = []
        for nid in ids:
            name = names.get(nid, f"{dash_id(nid)}.{fmt}")
            url = urls.get(nid)
            item: dict[str, Any] = {"node_id": nid, "filename": name}
            if url is None:
                item.update(path=None, size_bytes=0, status="failed: the node cannot be rendered")
            else:
                try:
                    data = self.client.download(url)
                    rel = self._write(out_dir, name, data)
                    item.update(path=rel, size_bytes=len(data), status="success")
                except FigmaApiError as exc:
                    item.update(path=None, size_bytes=0, status=f"failed: {exc}")
            exported.append(item)
        return exported

    def export_node_images(
        self,
        file_key: str,
        node_ids: str,
        output_dir: str,
        format: str = "png",
        scale: float = 2.0,
    ) -> dict[str, Any]:
        """Render nodes and save them as ``<output_dir>/<node-id>.<format>``."""

        def go() -> dict[str, Any]:
            fmt = format.lower()
            if fmt not in _FORMATS:
                return {"status": "error", "error": f"format must be one of {', '.join(_FORMATS)}"}
            out_dir = self._rel(output_dir)
            ids = [_norm_id(i) for i in node_ids.split(",") if i.strip()]
            exported = self._export(file_key, ids, out_dir, fmt, scale, {})
            ok = sum(1 for e in exported if e["status"] == "success")
            return {
                "status": "success" if ok else "error",
                "exported": exported,
                "total_nodes": len(ids),
                "success_count": ok,
                "output_dir": out_dir,
            }

        return self._call(go)

    def get_page_visual_overview(
        self,
        file_key: str,
        page_node_id: str,
        output_dir: str,
        format: str = "png",
        scale: float = 1.0,
    ) -> dict[str, Any]:
        """Render every top-level layer of a page to ``<output_dir>/<TYPE>/<name>.<format>``."""

        def go() -> dict[str, Any]:
            fmt = format.lower()
            if fmt not in _FORMATS:
                return {"status": "error", "error": f"format must be one of {', '.join(_FORMATS)}"}
            out_dir = self._rel(output_dir)
            page = self._node(file_key, _norm_id(page_node_id), depth=1)["document"]
            layers = [c for c in page.get("children") or [] if c.get("visible", True)]
            exported = []
            if layers:
                ids = [str(c["id"]) for c in layers]
                by_id = {str(c["id"]): c for c in layers}
                names = {
                    i: f"{by_id[i].get('type', 'NODE')}/{_safe_name(str(by_id[i].get('name')))}"
                    f".{fmt}"
                    for i in ids
                }
                for e in self._export(file_key, ids, out_dir, fmt, scale, names):
                    layer = by_id[e["node_id"]]
                    exported.append(
                        {
                            "layer_id": e["node_id"],
                            "layer_name": layer.get("name"),
                            "layer_type": layer.get("type"),
                            "filename": Path(e["filename"]).name,
                            "path": e["path"],
                            "size_bytes": e["size_bytes"],
                            "status": e["status"],
                        }
                    )
            return {
                "status": "success",
                "page_id": page.get("id"),
                "page_name": page.get("name"),
                "exported": exported,
                "total_layers": len(layers),
                "success_count": sum(1 for e in exported if e["status"] == "success"),
                "output_dir": out_dir,
            }

        return self._call(go)

    # Framelink's two -------------------------------------------------------------------------

    def get_figma_data(
        self, fileKey: str, nodeId: str | None = None, depth: int | None = None
    ) -> dict[str, Any]:
        """A simplified design: nodes with styles deduplicated into ``globalVars``."""

        def go() -> dict[str, Any]:
            if nodeId:
                nid = _norm_id(nodeId)
                doc = self.client.nodes(fileKey, nid, depth=depth)
                entry = (doc.get("nodes") or {}).get(nid)
                if entry is None:
                    return {"status": "error", "error": f"node {nodeId} not found"}
                roots = [entry["document"]]
                comps, sets, styles = (
                    entry.get("components", {}),
                    entry.get("componentSets", {}),
                    entry.get("styles", {}),
                )
            else:
                doc = self.client.file(fileKey, depth=depth)
                roots = list((doc.get("document") or {}).get("children") or [])
                comps, sets, styles = (
                    doc.get("components", {}),
                    doc.get("componentSets", {}),
                    doc.get("styles", {}),
                )
            gv: dict[str, Any] = {}
            nodes = [_simplify(n, gv, styles) for n in roots if n.get("visible", True)]
            return {
                "metadata": {
                    "name": doc.get("name"),
                    "lastModified": doc.get("lastModified"),
                    "thumbnailUrl": doc.get("thumbnailUrl"),
                    "components": {
                        k: {"id": k, "key": v.get("key"), "name": v.get("name")}
                        for k, v in comps.items()
                    },
                    "componentSets": {
                        k: {"id": k, "key": v.get("key"), "name": v.get("name")}
                        for k, v in sets.items()
                    },
                },
                "nodes": nodes,
                "globalVars": {"styles": gv},
            }

        return self._call(go)

    def download_figma_images(
        self, fileKey: str, nodes: list[ImageRequest], localPath: str, pngScale: float = 2.0
    ) -> dict[str, Any]:
        """Save image fills (by imageRef) and node renders (png or svg) under ``localPath``."""

        def go() -> dict[str, Any]:
            out_dir = self._rel(localPath)
            saved: list[str] = []
            failed: list[str] = []
            fills = [n for n in nodes if n.imageRef]
            renders = [n for n in nodes if not n.imageRef]
            if fills:
                urls = self.client.image_fills(fileKey)
                for n in fills:
                    url = urls.get(n.imageRef or "")
                    if url is None:
                        failed.append(f"{n.fileName}: no image fill {n.imageRef}")
                        continue
                    saved.append(
                        self._write(out_dir, _safe_name(n.fileName), self.client.download(url))
                    )
            for fmt in ("png", "svg"):
                group = [n for n in renders if n.fileName.lower().endswith(f".{fmt}")]
                if not group:
                    continue
                names = {_norm_id(n.nodeId): _safe_name(n.fileName) for n in group}
                for e in self._export(fileKey, list(names), out_dir, fmt, pngScale, names):
                    (saved if e["status"] == "success" else failed).append(
                        e["path"] or f"{e['filename']}: {e['status']}"
                    )
            other = [
                n.fileName for n in renders if not n.fileName.lower().endswith((".png", ".svg"))
            ]
            failed += [f"{f}: the file name must end .png or .svg" for f in other]
            return {
                "status": "success"
                if saved and not failed
                else ("error" if not saved else "partial"),
                "saved": saved,
                "failed": failed,
                "message": f"Downloaded {len(saved)} image(s) to {out_dir}",
            }

        return self._call(go)


def _hash_id(prefix: str, value: Any) -> str:
    digest = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:8]
    return f"{prefix}_{digest.upper()}"


def _css_color(c: dict[str, Any], opacity: float = 1.0) -> str:
    r, g, b = (round(float(c.get(k, 0)) * 255) for k in ("r", "g", "b"))
    a = float(c.get("a", 1)) * opacity
    return f"#{r:02X}{g:02X}{b:02X}" if a >= 0.999 else f"rgba({r}, {g}, {b}, {a:.2f})"


def _var(gv: dict[str, Any], prefix: str, value: Any, named: str | None = None) -> str:
    key = named or _hash_id(prefix, value)
    gv.setdefault(key, value)
    return key


def _simplify(node: Node, gv: dict[str, Any], styles: dict[str, Any]) -> dict[str, Any]:
    """Framelink-style simplified node: layout, text, fills, strokes, effects by reference."""
    out: dict[str, Any] = {"id": node.get("id"), "name": node.get("name"), "type": node.get("type")}
    bb = node.get("absoluteBoundingBox")
    if isinstance(bb, dict):
        out["boundingBox"] = {
            k: round(float(bb.get(k, 0)), 2) for k in ("x", "y", "width", "height")
        }
    named = {k: (styles.get(v) or {}).get("name") for k, v in (node.get("styles") or {}).items()}
    if node.get("type") == "TEXT":
        out["text"] = node.get("characters", "")
        st = node.get("style") or {}
        size = float(st.get("fontSize") or 16)
        text_style = {
            "fontFamily": st.get("fontFamily"),
            "fontWeight": st.get("fontWeight"),
            "fontSize": st.get("fontSize"),
            "lineHeight": f"{st.get('lineHeightPx')}px" if st.get("lineHeightPx") else None,
            "letterSpacing": f"{float(st.get('letterSpacing') or 0) / size:.3g}em",
            "textCase": st.get("textCase"),
            "textAlignHorizontal": st.get("textAlignHorizontal"),
        }
        out["textStyle"] = _var(
            gv, "style", {k: v for k, v in text_style.items() if v is not None}, named.get("text")
        )
    fills: list[Any] = []
    for p in node.get("fills") or ():
        if p.get("visible") is False:
            continue
        if p.get("type") == "SOLID":
            fills.append(_css_color(p.get("color") or {}, float(p.get("opacity", 1))))
        elif p.get("type") == "IMAGE":
            fills.append(
                {"type": "IMAGE", "imageRef": p.get("imageRef"), "scaleMode": p.get("scaleMode")}
            )
        elif str(p.get("type", "")).startswith("GRADIENT"):
            fills.append({"type": p.get("type"), "gradientStops": p.get("gradientStops")})
    if fills:
        out["fills"] = _var(gv, "fill", fills, named.get("fill"))
    strokes = [
        _css_color(p.get("color") or {})
        for p in node.get("strokes") or ()
        if p.get("type") == "SOLID"
    ]
    if strokes:
        out["strokes"] = _var(
            gv, "stroke", {"colors": strokes, "strokeWeight": f"{node.get('strokeWeight', 1)}px"}
        )
    shadows = [
        f"{e['offset']['x']:g}px {e['offset']['y']:g}px {e.get('radius', 0):g}px "
        f"{e.get('spread', 0) or 0:g}px {_css_color(e.get('color') or {})}"
        for e in node.get("effects") or ()
        if e.get("type") == "DROP_SHADOW" and e.get("visible", True) and e.get("offset")
    ]
    if shadows:
        out["effects"] = _var(gv, "effect", {"boxShadow": ", ".join(shadows)}, named.get("effect"))
    if node.get("cornerRadius"):
        out["borderRadius"] = f"{node['cornerRadius']:g}px"
    mode = node.get("layoutMode")
    if mode in ("HORIZONTAL", "VERTICAL"):
        layout = {
            "mode": "row" if mode == "HORIZONTAL" else "column",
            "gap": f"{node.get('itemSpacing', 0):g}px",
            "padding": " ".join(
                f"{node.get(k, 0):g}px"
                for k in ("paddingTop", "paddingRight", "paddingBottom", "paddingLeft")
            ),
        }
        out["layout"] = _var(gv, "layout", layout)
    if node.get("type") == "INSTANCE":
        out["componentId"] = node.get("componentId")
    solid = visible_solid(node.get("fills")) if node.get("type") != "TEXT" else None
    if solid is not None and solid[3] < 0.999:
        out["opacity"] = round(solid[3], 3)
    kids = [_simplify(c, gv, styles) for c in node.get("children") or () if c.get("visible", True)]
    if kids:
        out["children"] = kids
    return out


def build_figma_server(
    tools: FigmaTools, previews: PreviewManager | None = None, server: MCPServer | None = None
) -> MCPServer:
    """An MCP server exposing ``tools`` (and the preview tools when ``previews`` is given)."""
    server = server or MCPServer(
        "lhbench-figma",
        instructions="Read a Figma design (LH-Bench's design tools and Framelink's), export "
        "its images, and preview the app you build from it.",
    )

    def dump(doc: dict[str, Any]) -> str:
        return json.dumps(doc, ensure_ascii=False, default=str)

    @server.tool()
    def get_figma_file(file_key: str) -> str:
        """The Figma file's pages, components and styles (depth 1)."""
        return dump(tools.get_figma_file(file_key))

    @server.tool()
    def get_figma_file_nodes(file_key: str, node_ids: str, depth: int | None = None) -> str:
        """Nodes by id ("1:2,1:3"), each with its subtree (to depth), components and styles."""
        return dump(tools.get_figma_file_nodes(file_key, node_ids, depth))

    @server.tool()
    def get_page_node_id(file_key: str, page_name: str) -> str:
        """The node id of a page, found by name (case-insensitive)."""
        return dump(tools.get_page_node_id(file_key, page_name))

    @server.tool()
    def get_layer_node_id(file_key: str, page_node_id: str, layer_name: str) -> str:
        """The node id of a layer (a frame, group or element) on a page, found by name."""
        return dump(tools.get_layer_node_id(file_key, page_node_id, layer_name))

    @server.tool()
    def get_node_tree(file_key: str, node_id: str, depth: int | None = None) -> str:
        """A node's subtree: type, name, bounds, fills, text and style of every layer."""
        return dump(tools.get_node_tree(file_key, node_id, depth))

    @server.tool()
    def get_node_styles(file_key: str, node_id: str) -> str:
        """The named colour, text and effect styles used inside a node (names and types)."""
        return dump(tools.get_node_styles(file_key, node_id))

    @server.tool()
    def get_node_components(file_key: str, node_id: str) -> str:
        """The component instances inside a node, with their component names."""
        return dump(tools.get_node_components(file_key, node_id))

    @server.tool()
    def export_node_images(
        file_key: str, node_ids: str, output_dir: str, format: str = "png", scale: float = 2.0
    ) -> str:
        """Render nodes to files <output_dir>/<node-id>.<format> (png, jpg, svg or pdf)."""
        return dump(tools.export_node_images(file_key, node_ids, output_dir, format, scale))

    @server.tool()
    def get_page_visual_overview(
        file_key: str, page_node_id: str, output_dir: str, format: str = "png", scale: float = 1.0
    ) -> str:
        """Render every top-level layer of a page to <output_dir>/<TYPE>/<name>.<format>."""
        return dump(
            tools.get_page_visual_overview(file_key, page_node_id, output_dir, format, scale)
        )

    @server.tool()
    def get_figma_data(fileKey: str, nodeId: str | None = None, depth: int | None = None) -> str:
        """A simplified design of the file or a node, styles gathered in globalVars."""
        return dump(tools.get_figma_data(fileKey, nodeId, depth))

    @server.tool()
    def download_figma_images(
        fileKey: str, nodes: list[ImageRequest], localPath: str, pngScale: float = 2.0
    ) -> str:
        """Download image fills (give imageRef) and node renders (.png/.svg) into localPath."""
        return dump(tools.download_figma_images(fileKey, nodes, localPath, pngScale))

    if previews is not None:

        @server.tool()
        def create_app_preview(task_id: str, project_root: str = ".") -> str:
            """Build the project, serve it, and check every route: the URL or a diagnosis."""
            return dump(previews.create(task_id, project_root))

        @server.tool()
        def get_preview_status(task_id: str) -> str:
            """Whether a preview is running, its URL and its last checks."""
            return dump(previews.status(task_id))

        @server.tool()
        def stop_app_preview(task_id: str) -> str:
            """Stop a running preview."""
            return dump(previews.stop(task_id))

    return server


def main(argv: list[str] | None = None) -> int:
    """Start the fixture server (unless ``--api``), then the MCP server on stdio."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools.figma_server")
    ap.add_argument("--store", default="bundled:figma-mini", help="fixture store or bundled:<pack>")
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--rate-limit", default="off")
    ap.add_argument("--api", default=None, help="a Figma API base URL instead of the fixtures")
    ap.add_argument("--no-preview", action="store_true")
    args = ap.parse_args(argv)
    fixture: FigmaFixtureServer | None = None
    if args.api:
        client = FigmaClient(args.api)
    else:
        try:
            limit: RateLimit = parse_rate_limit(args.rate_limit)
            root = store_path(args.store)
        except ValueError as exc:
            ap.error(str(exc))
        token = secrets.token_hex(16)
        fixture = FigmaFixtureServer(FixtureStore(root), token=token, rate_limit=limit).start()
        client = FigmaClient(fixture.url, token)
    tools = FigmaTools(client, args.workspace)
    previews = None if args.no_preview else PreviewManager(args.workspace)
    try:
        build_figma_server(tools, previews).run()
    finally:
        if previews is not None:
            previews.close()
        if fixture is not None:
            fixture.stop()
        client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
