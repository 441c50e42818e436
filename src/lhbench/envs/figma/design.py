"""Reading Figma REST documents: node lookup, depth-limited subtrees, and what checks need.

A Figma file (``GET /v1/files/:key``) is a tree ``DOCUMENT → CANVAS (pages) → nodes``.
These helpers are shared by the fixture server (which answers ``ids``/``depth`` queries
from a stored file), the agent's design tools, and the output checks (which need a
frame's text blocks, solid fills, image fills and component instances in the frame's own
coordinates).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DesignBlock",
    "FrameDesign",
    "Node",
    "dash_id",
    "find_node",
    "frame_design",
    "is_pua",
    "iter_nodes",
    "node_path",
    "paint_rgba",
    "truncate",
    "visible_solid",
]

Node = dict[str, Any]

_PUA = re.compile("[\ue000-\uf8ff]")
ICON_FONTS = ("fontawesome", "font awesome", "material icons", "material symbols", "icomoon")


def dash_id(node_id: str) -> str:
    """A node id as URLs and exported file names spell it (``12:34`` → ``12-34``)."""
    return node_id.replace(":", "-").replace(";", "_")


def is_pua(text: str) -> bool:
    """Whether the text holds private-use characters (icon-font glyphs)."""
    return bool(_PUA.search(text))


def iter_nodes(node: Node, *, visible_only: bool = False) -> Iterator[Node]:
    """``node`` and every descendant, depth first; a hidden node hides its subtree."""
    if visible_only and node.get("visible") is False:
        return
    yield node
    for child in node.get("children") or ():
        yield from iter_nodes(child, visible_only=visible_only)


def find_node(root: Node, node_id: str) -> Node | None:
    """The node with this id under ``root`` (``12-34`` is accepted for ``12:34``)."""
    wanted = {node_id, node_id.replace("-", ":")}
    for n in iter_nodes(root):
        if n.get("id") in wanted:
            return n
    return None


def node_path(root: Node, node_id: str) -> list[Node] | None:
    """The nodes from ``root`` down to the node with this id (None when absent)."""
    if root.get("id") == node_id:
        return [root]
    for child in root.get("children") or ():
        sub = node_path(child, node_id)
        if sub is not None:
            return [root, *sub]
    return None


def truncate(node: Node, depth: int | None) -> Node:
    """A copy of ``node`` keeping ``depth`` levels of children (None: all).

    Nodes at the cut keep an empty ``children`` list, as depth-limited answers show them.
    """
    out = copy.deepcopy(node) if depth is None else dict(node)
    if depth is None:
        return out
    if "children" in node:
        out["children"] = [truncate(c, depth - 1) for c in node["children"]] if depth > 0 else []
    return out


def paint_rgba(paint: dict[str, Any]) -> tuple[float, float, float, float] | None:
    """A visible SOLID paint's colour as RGBA in 0..1 (alpha times paint opacity)."""
    if paint.get("type") != "SOLID" or paint.get("visible") is False:
        return None
    c = paint.get("color") or {}
    alpha = float(c.get("a", 1.0)) * float(paint.get("opacity", 1.0))
    return float(c.get("r", 0)), float(c.get("g", 0)), float(c.get("b", 0)), alpha


def visible_solid(paints: list[dict[str, Any]] | None) -> tuple[float, float, float, float] | None:
    """The composite of a node's visible SOLID paints (top-most last, as Figma stacks them)."""
    out: tuple[float, float, float, float] | None = None
    for p in paints or ():
        rgba = paint_rgba(p)
        if rgba is None:
            continue
        if out is None:
            out = rgba
            continue
        r, g, b, a = rgba
        br, bg, bb, ba = out
        na = a + ba * (1 - a)
        if na <= 0:
            continue
        out = (
            (r * a + br * ba * (1 - a)) / na,
            (g * a + bg * ba * (1 - a)) / na,
            (b * a + bb * ba * (1 - a)) / na,
            na,
        )
    return out


@dataclass(frozen=True)
class DesignBlock:
    """One element of a frame, in CSS pixels relative to the frame's top-left corner."""

    node_id: str
    kind: str  # text | fill | image | instance | icon
    name: str
    box: tuple[float, float, float, float]  # x, y, w, h
    text: str = ""
    rgba: tuple[float, float, float, float] | None = None
    style: dict[str, Any] = field(default_factory=dict)
    section: str = ""  # id of the top-level child of the frame it sits in
    image_ref: str | None = None
    component_id: str | None = None
    texts: tuple[str, ...] = ()  # an instance's descendant text node ids


@dataclass(frozen=True)
class FrameDesign:
    """What the checks compare against, taken from one frame of the Figma file."""

    node_id: str
    name: str
    width: float
    height: float
    texts: list[DesignBlock]
    fills: list[DesignBlock]
    images: list[DesignBlock]
    instances: list[DesignBlock]
    icons: list[DesignBlock]
    background: tuple[float, float, float, float] | None


def _box(node: Node, ox: float, oy: float) -> tuple[float, float, float, float] | None:
    bb = node.get("absoluteBoundingBox")
    if not isinstance(bb, dict):
        return None
    try:
        return (
            float(bb["x"]) - ox,
            float(bb["y"]) - oy,
            float(bb["width"]),
            float(bb["height"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _text_content(node: Node) -> str:
    text = str(node.get("characters", ""))
    case = (node.get("style") or {}).get("textCase")
    if case == "UPPER":
        text = text.upper()
    elif case == "LOWER":
        text = text.lower()
    return text


def frame_design(frame: Node, components: dict[str, Any] | None = None) -> FrameDesign:
    """The frame's text, solid-fill, image-fill, instance and icon blocks.

    Text in icon fonts (private-use characters or an icon-font family) is left out:
    nobody can match it as text. Instances are top-most only; an instance no wider or
    taller than 64 px counts as an icon (an asset), a larger one as a component.
    """
    del components  # names are on the nodes; kept for callers passing the file's map
    ox, oy, fw, fh = _box(frame, 0, 0) or (0.0, 0.0, 0.0, 0.0)
    texts: list[DesignBlock] = []
    fills: list[DesignBlock] = []
    images: list[DesignBlock] = []
    instances: list[DesignBlock] = []
    icons: list[DesignBlock] = []

    def walk(node: Node, section: str, in_instance: bool) -> None:
        if node.get("visible") is False:
            return
        box = _box(node, ox, oy)
        ntype = node.get("type", "")
        nid = str(node.get("id", ""))
        name = str(node.get("name", ""))
        if box is not None and ntype == "TEXT":
            style = dict(node.get("style") or {})
            family = str(style.get("fontFamily", "")).lower()
            text = _text_content(node)
            if text.strip() and not is_pua(text) and not family.startswith(ICON_FONTS):
                texts.append(
                    DesignBlock(
                        nid,
                        "text",
                        name,
                        box,
                        text=text,
                        rgba=visible_solid(node.get("fills")),
                        style=style,
                        section=section,
                    )
                )
        if box is not None and ntype != "TEXT":
            for paint in node.get("fills") or ():
                if paint.get("type") == "IMAGE" and paint.get("visible") is not False:
                    images.append(
                        DesignBlock(
                            nid,
                            "image",
                            name,
                            box,
                            section=section,
                            image_ref=paint.get("imageRef"),
                        )
                    )
                    break
            solid = visible_solid(node.get("fills"))
            if (
                solid is not None
                and solid[3] > 0.05
                and box[2] * box[3] >= 400
                and not in_instance_icon(node)
            ):
                fills.append(DesignBlock(nid, "fill", name, box, rgba=solid, section=section))
        if box is not None and ntype == "INSTANCE" and not in_instance:
            descendant_texts = tuple(
                str(n.get("id"))
                for n in iter_nodes(node, visible_only=True)
                if n.get("type") == "TEXT"
            )
            block = DesignBlock(
                nid,
                "instance",
                name,
                box,
                section=section,
                component_id=node.get("componentId"),
                texts=descendant_texts,
            )
            if box[2] <= 64 and box[3] <= 64 and not descendant_texts:
                icons.append(
                    DesignBlock(
                        nid,
                        "icon",
                        name,
                        box,
                        section=section,
                        component_id=node.get("componentId"),
                    )
                )
            else:
                instances.append(block)
        inside = in_instance or ntype == "INSTANCE"
        for child in node.get("children") or ():
            walk(child, section, inside)

    def in_instance_icon(node: Node) -> bool:
        return node.get("type") in ("VECTOR", "BOOLEAN_OPERATION", "ELLIPSE", "LINE", "STAR")

    for child in frame.get("children") or ():
        walk(child, str(child.get("id", "")), False)
    return FrameDesign(
        node_id=str(frame.get("id", "")),
        name=str(frame.get("name", "")),
        width=fw,
        height=fh,
        texts=texts,
        fills=fills,
        images=images,
        instances=instances,
        icons=icons,
        background=visible_solid(frame.get("fills")),
    )
