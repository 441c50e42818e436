"""Generate the bundled ``figma-mini`` pack (Figma-to-code, mini) from a design description.

Run from the repository root: ``uv run python scripts/make_figma_mini.py`` (needs Debian's
``chromium-headless-shell`` and, for the Vite reference app's lockfile, the npm registry).

From ``scripts/figma_mini/design.py`` (brand colours, text styles, products, icons and
pages written as HTML with ``data-fig`` marks) it:

1. draws the image fills (flat illustrations, with Pillow);
2. writes the design as a static site and renders every frame in headless Chromium: the
   2x render (lowered to Figma's 32-megapixel cap when a frame is that large) is the
   frame's ground truth, and a DOM walk of the 1x render gives each marked element's
   box, fill, text and type, written as a Figma REST file (DOCUMENT → CANVAS → FRAME,
   TEXT with ``style``, RECTANGLE with IMAGE fills, INSTANCE of icon and button
   COMPONENTs, named FILL and TEXT styles);
3. writes the fixture store (``figma/<key>/``), each task's ``ground_truth/`` (manifest
   and frame PNGs), the tasks, the skill, the rubrics, and two reference apps made from
   the same pages: a static site and a Vite + React Router app.

Nothing here is fetched from another project; the Figma shapes follow the REST API's
published field names.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import re
import shutil
import subprocess
import sys
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

HERE = Path(__file__).resolve().parent / "figma_mini"
sys.path.insert(0, str(HERE))
import design as D  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "src/lhbench/packs/data/figma-mini"
CHROMIUM = "/usr/bin/chromium-headless-shell"
MAX_PIXELS = 1 << 25
LAST_MODIFIED = "2026-11-20T09:30:00Z"


# images ---------------------------------------------------------------------------------


def _hex(c: str) -> tuple[int, int, int]:
    return int(c[1:3], 16), int(c[3:5], 16), int(c[5:7], 16)


def _shade(c: tuple[int, int, int], f: float) -> tuple[int, int, int]:
    return tuple(max(0, min(255, round(v * f))) for v in c)  # type: ignore[return-value]


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.convert("RGB").quantize(colors=32, method=Image.Quantize.MEDIANCUT).save(
        buf, "PNG", optimize=True
    )
    return buf.getvalue()


def draw_product(colour: str, w: int = 960, h: int = 840, seed: int = 0) -> bytes:
    """A bag of coffee on a soft background."""
    base = _hex(colour)
    img = Image.new("RGB", (w, h), _shade(base, 1.9) if max(base) < 130 else _shade(base, 1.25))
    d = ImageDraw.Draw(img)
    d.rectangle([0, int(h * 0.72), w, h], fill=_shade(base, 0.75))
    bx, by = int(w * 0.32), int(h * 0.18)
    d.rounded_rectangle([bx, by, w - bx, int(h * 0.8)], radius=28, fill=base)
    d.rectangle([bx, by, w - bx, by + 40], fill=_shade(base, 0.7))
    d.rounded_rectangle(
        [bx + 50, int(h * 0.4), w - bx - 50, int(h * 0.58)], radius=12, fill=(251, 248, 243)
    )
    for i in range(5):
        cx = int(w * 0.15) + ((i * 97 + seed * 31) % int(w * 0.7))
        cy = int(h * 0.84) + (i * 23 % 50)
        d.ellipse([cx - 22, cy - 14, cx + 22, cy + 14], fill=_shade(base, 0.45))
    return _png(img)


def draw_pastry(colour: str, w: int = 960, h: int = 840) -> bytes:
    base = _hex(colour)
    img = Image.new("RGB", (w, h), (236, 228, 214))
    d = ImageDraw.Draw(img)
    d.ellipse([int(w * 0.15), int(h * 0.55), int(w * 0.85), int(h * 0.9)], fill=(255, 255, 255))
    d.ellipse([int(w * 0.28), int(h * 0.3), int(w * 0.72), int(h * 0.78)], fill=base)
    d.ellipse([int(w * 0.38), int(h * 0.4), int(w * 0.62), int(h * 0.6)], fill=_shade(base, 0.8))
    return _png(img)


def draw_hero(w: int = 1280, h: int = 920) -> bytes:
    img = Image.new("RGB", (w, h), (220, 235, 228))
    d = ImageDraw.Draw(img)
    d.ellipse([int(w * 0.62), 80, int(w * 0.62) + 180, 260], fill=(233, 162, 59))
    d.polygon([(0, 620), (420, 360), (860, 640), (0, 920)], fill=(127, 156, 142))
    d.polygon([(340, 700), (900, 380), (1280, 620), (1280, 920), (340, 920)], fill=(47, 93, 80))
    d.rectangle([560, 520, 860, 760], fill=(181, 113, 60))
    d.polygon([(530, 520), (710, 400), (890, 520)], fill=(122, 78, 45))
    d.rectangle([680, 640, 740, 760], fill=(251, 248, 243))
    return _png(img)


def draw_barn(w: int = 1120, h: int = 800) -> bytes:
    img = Image.new("RGB", (w, h), (251, 236, 214))
    d = ImageDraw.Draw(img)
    d.rectangle([0, 560, w, h], fill=(127, 156, 142))
    d.rectangle([300, 300, 820, 600], fill=(156, 107, 63))
    d.polygon([(260, 300), (560, 120), (860, 300)], fill=(78, 59, 49))
    d.rectangle([500, 420, 620, 600], fill=(47, 93, 80))
    return _png(img)


def draw_portrait(colour: str, w: int = 176) -> bytes:
    base = _hex(colour)
    img = Image.new("RGB", (w, w), _shade(base, 1.35))
    d = ImageDraw.Draw(img)
    d.ellipse([w * 0.3, w * 0.18, w * 0.7, w * 0.58], fill=(232, 200, 170))
    d.ellipse([w * 0.12, w * 0.62, w * 0.88, w * 1.3], fill=base)
    return _png(img)


def images() -> dict[str, bytes]:
    out = {"hero": draw_hero(), "barn": draw_barn()}
    for i, p in enumerate(D.PRODUCTS):
        out[f"product-{p[0]}"] = draw_product(p[4], seed=i)
    for i, (_n, _p, c) in enumerate(D.PASTRIES):
        out[f"pastry-{i + 1}"] = draw_pastry(c)
    for i, (_n, _r, c) in enumerate(D.TEAM):
        out[f"team-{i + 1}"] = draw_portrait(c)
    return out


# sites ----------------------------------------------------------------------------------


def document(title: str, body: str, css_href: str, extra_css: str = "") -> str:
    style = f"<style>{extra_css}</style>" if extra_css else ""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<title>{title}</title>\n<link rel="stylesheet" href="{css_href}">{style}\n'
        f"</head>\n<body>{body}\n</body>\n</html>\n"
    )


def strip_marks(html: str) -> str:
    return re.sub(r'\s+data-(fig|component|image)="[^"]*"', "", html)


def site_pages() -> dict[str, tuple[str, str]]:
    """Relative path of each page -> (title, body with ``{A}`` for the asset base)."""
    pages = {
        "index.html": ("Fernhill Coffee", D.page_home()),
        "menu/index.html": ("Menu · Fernhill Coffee", D.page_menu()),
        "about/index.html": ("About · Fernhill Coffee", D.page_about()),
        "contact/index.html": ("Contact · Fernhill Coffee", D.page_contact()),
    }
    for p in D.PRODUCTS:
        pages[f"product/{p[0]}/index.html"] = (f"{p[1]} · Fernhill Coffee", D.page_product(p))
    return pages


def write_site(dest: Path, imgs: dict[str, bytes], *, marked: bool) -> None:
    """The static site (marked: with the data-fig marks the DOM walk reads)."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "assets").mkdir(parents=True)
    (dest / "styles.css").write_text(D.CSS.lstrip(), encoding="utf-8")
    for name, data in imgs.items():
        (dest / "assets" / f"{name}.png").write_bytes(data)
    pages = site_pages()
    if marked:
        pages["components/index.html"] = ("Components", D.page_components())
    for rel, (title, body) in pages.items():
        depth = rel.count("/")
        base = "/".join([".."] * depth) or "."
        html = body.replace("{A}", base)
        if not marked:
            html = strip_marks(html)
        extra = D.COMPONENTS_CSS if rel.startswith("components/") else ""
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(document(title, html, f"{base}/styles.css", extra), encoding="utf-8")


# rendering and the DOM walk -------------------------------------------------------------

WALK = """() => {
  const els = Array.from(document.querySelectorAll('[data-fig]'));
  const index = new Map(els.map((e, i) => [e, i]));
  const px = v => parseFloat(v) || 0;
  const items = els.map((el, i) => {
    const r = el.getBoundingClientRect();
    const cs = getComputedStyle(el);
    let p = el.parentElement;
    while (p && !p.hasAttribute('data-fig')) p = p.parentElement;
    const svg = el.tagName.toLowerCase() === 'svg';
    let t = null;
    if ((el.dataset.fig || '').startsWith('TEXT:')) {
      const range = document.createRange();
      range.selectNodeContents(el);
      const rs = Array.from(range.getClientRects()).filter(q => q.width > 0 && q.height > 0);
      if (rs.length) {
        const x0 = Math.min(...rs.map(q => q.left)), y0 = Math.min(...rs.map(q => q.top));
        const x1 = Math.max(...rs.map(q => q.right)), y1 = Math.max(...rs.map(q => q.bottom));
        t = {x: x0 + scrollX, y: y0 + scrollY, w: x1 - x0, h: y1 - y0};
      }
    }
    return {
      textBox: t,
      i, parent: p ? index.get(p) : null, fig: el.dataset.fig,
      component: el.dataset.component || null, image: el.dataset.image || null,
      x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height,
      visible: cs.display !== 'none' && cs.visibility !== 'hidden' && r.width > 0 && r.height > 0,
      text: el.textContent.replace(/\\s+/g, ' ').trim(),
      color: cs.color, bg: cs.backgroundColor, radius: px(cs.borderTopLeftRadius),
      border: px(cs.borderTopWidth), borderColor: cs.borderTopColor, shadow: cs.boxShadow,
      fontFamily: cs.fontFamily, fontWeight: cs.fontWeight, fontSize: px(cs.fontSize),
      lineHeight: cs.lineHeight, letterSpacing: cs.letterSpacing, textAlign: cs.textAlign,
      textTransform: cs.textTransform, display: cs.display, flexDirection: cs.flexDirection,
      gap: px(cs.columnGap), rowGap: px(cs.rowGap), pt: px(cs.paddingTop),
      pr: px(cs.paddingRight), pb: px(cs.paddingBottom), pl: px(cs.paddingLeft),
      overflow: cs.overflow, wrap: cs.flexWrap,
      paths: svg ? Array.from(el.querySelectorAll('path')).map(pp => {
        const b = pp.getBoundingClientRect();
        return {x: b.left + scrollX, y: b.top + scrollY, w: b.width, h: b.height, d: pp.getAttribute('d')};
      }) : null,
    };
  });
  return {items, width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight};
}"""

SETTLE = """async () => {
  await document.fonts.ready;
  await Promise.all(Array.from(document.images).map(i => i.complete ? null : new Promise(r => { i.onload = i.onerror = r; })));
}"""


class Site:
    """A directory served on 127.0.0.1."""

    def __init__(self, root: Path) -> None:
        handler = partial(_Quiet, directory=str(root))
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *a: Any) -> None:
        pass


def render(browser: Any, url: str, width: int, height: int) -> tuple[dict[str, Any], bytes, float]:
    """The DOM walk at 1x and the full-page render at 2x (capped), with its real scale."""
    ctx = browser.new_context(viewport={"width": width, "height": height}, device_scale_factor=1)
    page = ctx.new_page()
    page.goto(url, wait_until="load")
    page.evaluate(SETTLE)
    walk = page.evaluate(WALK)
    ctx.close()
    full_h = walk["height"]
    scale = 2.0 if width * full_h * 4 <= MAX_PIXELS else math.sqrt(MAX_PIXELS / (width * full_h))
    ctx = browser.new_context(
        viewport={"width": width, "height": height}, device_scale_factor=scale
    )
    page = ctx.new_page()
    page.goto(url, wait_until="load")
    page.evaluate(SETTLE)
    png = page.screenshot(full_page=True, animations="disabled")
    ctx.close()
    return walk, png, scale


# Figma nodes ------------------------------------------------------------------------------


def css_rgba(value: str) -> tuple[float, float, float, float] | None:
    m = re.match(r"rgba?\(([^)]*)\)", value or "")
    if not m:
        return None
    parts = [float(x) for x in re.split(r"[,\s/]+", m.group(1).strip()) if x]
    r, g, b = parts[:3]
    a = parts[3] if len(parts) > 3 else 1.0
    return r / 255, g / 255, b / 255, a


def paint(rgba: tuple[float, float, float, float]) -> dict[str, Any]:
    r, g, b, a = rgba
    return {
        "blendMode": "NORMAL",
        "type": "SOLID",
        "color": {"r": round(r, 6), "g": round(g, 6), "b": round(b, 6), "a": round(a, 4)},
    }


def hex_of(rgba: tuple[float, float, float, float]) -> str:
    return "#" + "".join(f"{round(v * 255):02X}" for v in rgba[:3])


def sha1(text: str | bytes) -> str:
    return hashlib.sha1(text if isinstance(text, bytes) else text.encode()).hexdigest()


class FileBuilder:
    """Turns DOM walks into one Figma file document."""

    def __init__(self, fill_refs: dict[str, str]) -> None:
        self.fill_refs = fill_refs
        self.styles: dict[str, Any] = {}
        self.color_style: dict[str, str] = {}
        self.text_style: dict[tuple[Any, ...], str] = {}
        for i, (name, hx) in enumerate(D.COLORS.items(), 1):
            sid = f"90:{i}"
            self.styles[sid] = {
                "key": sha1(name),
                "name": name,
                "description": "",
                "remote": False,
                "styleType": "FILL",
            }
            self.color_style[hx.upper()] = sid
        for i, (name, spec) in enumerate(D.TEXT_STYLES.items(), 1):
            sid = f"91:{i}"
            self.styles[sid] = {
                "key": sha1(name),
                "name": name,
                "description": "",
                "remote": False,
                "styleType": "TEXT",
            }
            family, weight, size, lh, _ls, upper = spec
            self.text_style[(family, weight, size, lh, upper)] = sid
        self.components: dict[str, Any] = {}
        self.component_sets: dict[str, Any] = {}
        self.component_ids: dict[str, str] = {}  # data-component -> node id

    def _base(self, nid: str, ntype: str, name: str, box: tuple[float, ...]) -> dict[str, Any]:
        x, y, w, h = (round(v, 2) for v in box)
        bb = {"x": x, "y": y, "width": w, "height": h}
        return {
            "id": nid,
            "name": name,
            "type": ntype,
            "scrollBehavior": "SCROLLS",
            "blendMode": "PASS_THROUGH",
            "absoluteBoundingBox": bb,
            "absoluteRenderBounds": dict(bb),
            "constraints": {"vertical": "TOP", "horizontal": "LEFT"},
        }

    def node(
        self,
        it: dict[str, Any],
        kids: list[dict[str, Any]],
        nid: str,
        origin: tuple[float, float],
        prefix_instance: str | None,
    ) -> dict[str, Any]:
        ntype, _, name = it["fig"].partition(":")
        box = (origin[0] + it["x"], origin[1] + it["y"], it["w"], it["h"])
        if ntype == "TEXT" and it.get("textBox"):
            tb = it["textBox"]
            box = (origin[0] + tb["x"], origin[1] + tb["y"], tb["w"], tb["h"])
        n = self._base(nid, ntype, name, box)
        color = css_rgba(it["color"])
        if ntype == "TEXT":
            family = it["fontFamily"].split(",")[0].strip().strip("\"'")
            weight = int(float(it["fontWeight"]))
            size = it["fontSize"]
            lh = (
                float(it["lineHeight"].removesuffix("px"))
                if it["lineHeight"].endswith("px")
                else round(size * 1.2, 2)
            )
            ls = (
                float(it["letterSpacing"].removesuffix("px"))
                if it["letterSpacing"].endswith("px")
                else 0.0
            )
            upper = it["textTransform"] == "uppercase"
            style = {
                "fontFamily": family,
                "fontPostScriptName": family.replace(" ", "")
                + ("-Bold" if weight >= 700 else "-Regular"),
                "fontStyle": "Bold" if weight >= 700 else "Regular",
                "fontWeight": weight,
                "textAutoResize": "WIDTH_AND_HEIGHT",
                "fontSize": size,
                "textAlignHorizontal": {
                    "center": "CENTER",
                    "right": "RIGHT",
                    "justify": "JUSTIFIED",
                }.get(it["textAlign"], "LEFT"),
                "textAlignVertical": "TOP",
                "letterSpacing": ls,
                "lineHeightPx": lh,
                "lineHeightPercentFontSize": round(100 * lh / size, 4),
                "lineHeightUnit": "PIXELS",
            }
            if upper:
                style["textCase"] = "UPPER"
            n.update(
                characters=it["text"],
                style=style,
                fills=[paint(color)] if color else [],
                strokes=[],
                strokeWeight=1,
                strokeAlign="OUTSIDE",
                effects=[],
                characterStyleOverrides=[],
                styleOverrideTable={},
                lineTypes=["NONE"],
                lineIndentations=[0],
                layoutVersion=4,
            )
            styles = {}
            tkey = (family, weight, size, lh, upper)
            if tkey in self.text_style:
                styles["text"] = self.text_style[tkey]
            if color and hex_of(color) in self.color_style:
                styles["fill"] = self.color_style[hex_of(color)]
            if styles:
                n["styles"] = styles
            return n
        bg = css_rgba(it["bg"])
        fills = [paint(bg)] if bg and bg[3] > 0 else []
        if it.get("image"):
            fills = [
                {
                    "blendMode": "NORMAL",
                    "type": "IMAGE",
                    "scaleMode": "FILL",
                    "imageRef": self.fill_refs[it["image"]],
                }
            ]
            if ntype not in ("RECTANGLE",):
                ntype = n["type"] = "RECTANGLE"
        n["fills"] = fills
        if bg and bg[3] > 0 and hex_of(bg) in self.color_style and not it.get("image"):
            n["styles"] = {"fill": self.color_style[hex_of(bg)]}
        strokes = []
        if it["border"] > 0:
            bc = css_rgba(it["borderColor"])
            if bc:
                strokes = [paint(bc)]
        n.update(strokes=strokes, strokeWeight=it["border"] or 1, strokeAlign="INSIDE")
        if it["radius"]:
            n["cornerRadius"] = min(it["radius"], min(it["w"], it["h"]) / 2)
            n["cornerSmoothing"] = 0
        effects = []
        m = re.match(
            r"(rgba?\([^)]*\))\s+(-?[\d.]+)px\s+(-?[\d.]+)px\s+([\d.]+)px(?:\s+(-?[\d.]+)px)?",
            it["shadow"] or "",
        )
        if m:
            effects.append(
                {
                    "type": "DROP_SHADOW",
                    "visible": True,
                    "color": paint(css_rgba(m.group(1)))["color"],  # type: ignore[arg-type]
                    "blendMode": "NORMAL",
                    "offset": {"x": float(m.group(2)), "y": float(m.group(3))},
                    "radius": float(m.group(4)),
                    "spread": float(m.group(5) or 0),
                    "showShadowBehindNode": False,
                }
            )
        n["effects"] = effects
        if ntype in ("FRAME", "INSTANCE", "COMPONENT", "COMPONENT_SET", "PAGE"):
            n["clipsContent"] = it["overflow"] == "hidden"
            n["background"] = list(fills)
            if bg:
                n["backgroundColor"] = paint(bg)["color"]
            if it["display"] in ("flex", "inline-flex"):
                n["layoutMode"] = (
                    "VERTICAL" if it["flexDirection"].startswith("column") else "HORIZONTAL"
                )
                n["itemSpacing"] = (
                    it["gap"] if n["layoutMode"] == "HORIZONTAL" else (it["rowGap"] or it["gap"])
                )
                if it["wrap"] == "wrap":
                    n["layoutWrap"] = "WRAP"
                    n["counterAxisSpacing"] = it["rowGap"]
                n.update(
                    paddingLeft=it["pl"],
                    paddingRight=it["pr"],
                    paddingTop=it["pt"],
                    paddingBottom=it["pb"],
                )
                n["primaryAxisSizingMode"] = "FIXED"
            else:
                n["layoutMode"] = "NONE"
        if it["paths"] is not None:
            stroke = css_rgba(it["color"])
            kids = []
            for j, path in enumerate(it["paths"], 1):
                vid = (
                    f"{prefix_instance or nid};{j}"
                    if ntype == "INSTANCE"
                    else f"{nid.split(':')[0]}:{int(nid.split(':')[1]) * 100 + j}"
                )
                v = self._base(
                    vid if ntype != "INSTANCE" else f"I{vid}",
                    "VECTOR",
                    "Vector",
                    (origin[0] + path["x"], origin[1] + path["y"], path["w"], path["h"]),
                )
                v.update(
                    fills=[],
                    strokes=[paint(stroke)] if stroke else [],
                    strokeWeight=2,
                    strokeAlign="CENTER",
                    strokeCap="ROUND",
                    strokeJoin="ROUND",
                    effects=[],
                )
                kids.append(v)
        if ntype == "INSTANCE":
            n["componentId"] = self.component_ids[it["component"]]
            n["componentProperties"] = {}
            n["overrides"] = []
        if ntype == "COMPONENT":
            self.component_ids[it["component"]] = nid
        n["children"] = kids
        return n

    def frame(
        self,
        walk: dict[str, Any],
        prefix: int,
        name: str,
        origin: tuple[float, float],
        *,
        page_bg: str = "#FBF8F3",
    ) -> dict[str, Any]:
        items = [it for it in walk["items"] if it["visible"]]
        by_parent: dict[int | None, list[dict[str, Any]]] = {}
        for it in items:
            by_parent.setdefault(it["parent"], []).append(it)
        counter = [1]
        root = next(it for it in items if it["fig"] == "PAGE")

        def ident() -> str:
            counter[0] += 1
            return f"{prefix}:{counter[0]}"

        def build(it: dict[str, Any], inst: str | None, inst_n: list[int] | None) -> dict[str, Any]:
            if inst is not None and inst_n is not None:
                inst_n[0] += 1
                nid = f"I{inst};{prefix + 1000}:{inst_n[0]}"
            else:
                nid = ident()
            ntype = it["fig"].split(":")[0]
            child_inst, child_n = inst, inst_n
            if ntype == "INSTANCE" and inst is None:
                child_inst, child_n = nid, [0]
            kids = [build(c, child_inst, child_n) for c in by_parent.get(it["i"], [])]
            return self.node(it, kids, nid, origin, child_inst if ntype == "INSTANCE" else None)

        children = [build(c, None, None) for c in by_parent.get(root["i"], [])]
        fid = f"{prefix}:1"
        frame = self._base(
            fid, "FRAME", name, (origin[0], origin[1], walk["width"], walk["height"])
        )
        bg = css_rgba(f"rgb{tuple(_hex(page_bg))}")
        assert bg is not None
        frame.update(
            fills=[paint(bg)],
            strokes=[],
            strokeWeight=1,
            strokeAlign="INSIDE",
            effects=[],
            clipsContent=True,
            background=[paint(bg)],
            backgroundColor=paint(bg)["color"],
            layoutMode="NONE",
            styles={"fill": self.color_style["#FBF8F3"]},
            children=children,
        )
        return frame

    def components_frame(
        self, walk: dict[str, Any], prefix: int, origin: tuple[float, float]
    ) -> dict[str, Any]:
        frame = self.frame(walk, prefix, "Components", origin)
        for n in _walk_nodes(frame):
            if n["type"] == "COMPONENT" and n["id"] not in self.components:
                self.components[n["id"]] = {
                    "key": sha1("component:" + n["name"]),
                    "name": n["name"],
                    "description": "",
                    "remote": False,
                    "documentationLinks": [],
                }
            if n["type"] == "COMPONENT_SET":
                self.component_sets[n["id"]] = {
                    "key": sha1("set:" + n["name"]),
                    "name": n["name"],
                    "description": "Primary button",
                    "remote": False,
                }
                for c in n["children"]:
                    if c["type"] == "COMPONENT":
                        self.components[c["id"]] = {
                            "key": sha1("component:" + c["name"]),
                            "name": c["name"],
                            "description": "",
                            "remote": False,
                            "documentationLinks": [],
                            "componentSetId": n["id"],
                        }
        return frame


def _walk_nodes(n: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield n
    for c in n.get("children", []):
        yield from _walk_nodes(c)


def dash(nid: str) -> str:
    return nid.replace(":", "-")


# writing the pack -----------------------------------------------------------------------


def jsx_of(html: str) -> str:
    """The page body as JSX (class → className, SVG attributes camel-cased, void tags closed)."""
    out = strip_marks(html).replace("{A}", "")
    out = out.replace('class="', 'className="')
    for a, b in (
        ("stroke-width", "strokeWidth"),
        ("stroke-linecap", "strokeLinecap"),
        ("stroke-linejoin", "strokeLinejoin"),
    ):
        out = out.replace(f"{a}=", f"{b}=")
    out = re.sub(r"<(img|input)([^>]*?)\s*/?>", r"<\1\2 />", out)
    return out.strip()


def write_vite(dest: Path, imgs: dict[str, bytes]) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "src" / "pages").mkdir(parents=True)
    (dest / "public" / "assets").mkdir(parents=True)
    for name, data in imgs.items():
        (dest / "public" / "assets" / f"{name}.png").write_bytes(data)
    pkg = {
        "name": "fernhill-vite",
        "private": True,
        "version": "1.0.0",
        "type": "module",
        "scripts": {"dev": "vite", "build": "vite build"},
        "dependencies": {"react": "18.3.1", "react-dom": "18.3.1", "react-router-dom": "6.28.0"},
        "devDependencies": {"@vitejs/plugin-react": "4.3.4", "vite": "5.4.11"},
    }
    (dest / "package.json").write_text(json.dumps(pkg, indent=2) + "\n")
    (dest / "vite.config.js").write_text(
        'import { defineConfig } from "vite";\nimport react from "@vitejs/plugin-react";\n\n'
        'export default defineConfig({ plugins: [react()], base: "/" });\n'
    )
    (dest / "index.html").write_text(
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<title>Fernhill Coffee</title>\n</head>\n<body>\n<div id="root"></div>\n'
        '<script type="module" src="/src/main.jsx"></script>\n</body>\n</html>\n'
    )
    (dest / "src" / "styles.css").write_text(D.CSS.lstrip())
    pages = {
        "Home": D.page_home(),
        "Menu": D.page_menu(),
        "About": D.page_about(),
        "Contact": D.page_contact(),
    }
    for p in D.PRODUCTS:
        pages[f"Product{p[0]}"] = D.page_product(p)
    for name, html in pages.items():
        body = jsx_of(html)
        (dest / "src" / "pages" / f"{name}.jsx").write_text(
            f"export default function {name}() {{\n  return (\n{body}\n  );\n}}\n"
        )
    imports = "\n".join(f'import {n} from "./pages/{n}.jsx";' for n in pages)
    products = ", ".join(f'"{p[0]}": Product{p[0]}' for p in D.PRODUCTS)
    (dest / "src" / "main.jsx").write_text(
        'import React from "react";\nimport { createRoot } from "react-dom/client";\n'
        'import { BrowserRouter, Routes, Route, useParams } from "react-router-dom";\n'
        'import "./styles.css";\n' + imports + "\n\n"
        f"const PRODUCTS = {{ {products} }};\n\n"
        'function NotFound() {\n  return (\n    <main className="page"><section className="page-title">'
        '<h1 className="h1">Page not found</h1></section></main>\n  );\n}\n\n'
        "function Product() {\n  const { id } = useParams();\n  const Page = PRODUCTS[id] || NotFound;\n"
        "  return <Page />;\n}\n\n"
        'createRoot(document.getElementById("root")).render(\n  <BrowserRouter>\n    <Routes>\n'
        '      <Route path="/" element={<Home />} />\n      <Route path="/menu" element={<Menu />} />\n'
        '      <Route path="/product/:id" element={<Product />} />\n'
        '      <Route path="/about" element={<About />} />\n'
        '      <Route path="/contact" element={<Contact />} />\n'
        '      <Route path="*" element={<NotFound />} />\n    </Routes>\n  </BrowserRouter>\n);\n'
    )
    subprocess.run(
        ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=dest,
        check=True,
    )


def write_static(dest: Path, imgs: dict[str, bytes]) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    write_site(dest / "site", imgs, marked=False)
    (dest / "package.json").write_text(
        json.dumps(
            {
                "name": "fernhill-static",
                "private": True,
                "version": "1.0.0",
                "scripts": {"build": "node build.mjs"},
            },
            indent=2,
        )
        + "\n"
    )
    (dest / "build.mjs").write_text(BUILD_MJS.replace("SRC", "site"))


BUILD_MJS = """// Builds the site: copies SRC/ to dist/ (Node's standard library only).
import { cpSync, existsSync, rmSync } from "node:fs";

if (!existsSync("SRC")) {
  console.error("nothing to build: SRC/ does not exist");
  process.exit(1);
}
rmSync("dist", { recursive: true, force: true });
cpSync("SRC", "dist", { recursive: true });
console.log("built dist/ from SRC/");
"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    imgs = images()
    fill_refs = {name: sha1(data) for name, data in imgs.items()}
    store = OUT / "figma" / D.FILE_KEY
    (store / "renders").mkdir(parents=True)
    (store / "image_fills").mkdir()
    for name, data in imgs.items():
        (store / "image_fills" / f"{fill_refs[name]}.png").write_bytes(data)

    design = ROOT / ".lhbench" / "figma-mini-design"
    write_site(design, imgs, marked=True)
    site = Site(design)
    builder = FileBuilder(fill_refs)
    frames: dict[str, dict[str, Any]] = {}
    pages: dict[str, list[dict[str, Any]]] = {"Desktop": [], "Mobile": [], "Components": []}
    xs = {"Desktop": 0.0, "Mobile": 0.0}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"]
            )
            walk, png, scale = render(browser, site.url + "/components/", 640, 400)
            comp = builder.components_frame(walk, 70, (0.0, 0.0))
            (store / "renders" / f"{dash(comp['id'])}@2x.png").write_bytes(png)
            pages["Components"].append(comp)
            for k, (name, route, _key, width, canvas) in enumerate(D.FRAMES, 1):
                height = 844 if width < 600 else 900
                walk, png, scale = render(browser, site.url + route, width, height)
                frame = builder.frame(walk, k * 10, name, (xs[canvas], 0.0))
                xs[canvas] += walk["width"] + 160
                (store / "renders" / f"{dash(frame['id'])}@2x.png").write_bytes(png)
                frames[name] = {
                    "node": frame,
                    "route": route,
                    "width": width,
                    "height": height,
                    "scale": scale,
                    "png": png,
                }
                pages[canvas].append(frame)
                print(
                    f"{name}: {walk['width']}x{walk['height']} css px, scale {scale:.3f}, "
                    f"{len(png) // 1024} KiB"
                )
            browser.close()
    finally:
        site.close()
    for n, path in D.ICONS.items():
        cid = builder.component_ids[n]
        (store / "renders" / f"{dash(cid)}.svg").write_text(
            '<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24" viewBox="0 0 24 24" '
            'fill="none" stroke="#1F2328" stroke-width="2" stroke-linecap="round" '
            f'stroke-linejoin="round"><path d="{path}"/></svg>\n'
        )
    canvases = []
    for i, (name, children) in enumerate(pages.items(), 1):
        canvases.append(
            {
                "id": f"0:{i}",
                "name": name,
                "type": "CANVAS",
                "scrollBehavior": "SCROLLS",
                "backgroundColor": {"r": 0.96, "g": 0.96, "b": 0.96, "a": 1},
                "prototypeStartNodeID": None,
                "flowStartingPoints": [],
                "children": children,
            }
        )
    doc = {
        "name": D.FILE_NAME,
        "role": "viewer",
        "lastModified": LAST_MODIFIED,
        "editorType": "figma",
        "thumbnailUrl": "",
        "version": "2026112009",
        "document": {
            "id": "0:0",
            "name": "Document",
            "type": "DOCUMENT",
            "scrollBehavior": "SCROLLS",
            "children": canvases,
        },
        "components": builder.components,
        "componentSets": builder.component_sets,
        "schemaVersion": 0,
        "styles": builder.styles,
    }
    (store / "file.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")

    for task_id, (title, names, routes, tags) in D.TASKS.items():
        gt = OUT / "ground_truth" / task_id
        gt.mkdir(parents=True)
        entries = []
        for name in names:
            f = frames[name]
            nid = f["node"]["id"]
            (gt / f"{dash(nid)}.png").write_bytes(f["png"])
            entry: dict[str, Any] = {
                "name": name,
                "node_id": nid,
                "gt_image": f"{dash(nid)}.png",
                "target_route": routes[name],
            }
            if f["width"] < 600:
                entry["device"] = "mobile"
                entry["viewport"] = {"width": f["width"], "height": f["height"]}
            entries.append(entry)
        (gt / "manifest.json").write_text(
            json.dumps(
                {"figma_file_key": D.FILE_KEY, "total_frames": len(entries), "frames": entries},
                indent=2,
            )
            + "\n"
        )
        write_task(task_id, title, names, routes, tags, frames)

    write_static(OUT / "reference" / "static", imgs)
    write_vite(OUT / "reference" / "vite", imgs)
    write_pack_files()
    print(f"wrote {OUT}")


def write_task(
    task_id: str,
    title: str,
    names: list[str],
    routes: dict[str, str],
    tags: dict[str, str],
    frames: dict[str, dict[str, Any]],
) -> None:
    tdir = OUT / "tasks" / task_id
    init = tdir / "initial"
    init.mkdir(parents=True)
    (init / "package.json").write_text(
        json.dumps(
            {
                "name": task_id,
                "private": True,
                "version": "0.1.0",
                "scripts": {"build": "node build.mjs"},
            },
            indent=2,
        )
        + "\n"
    )
    (init / "build.mjs").write_text(BUILD_MJS.replace("SRC", "src"))
    (init / "README.md").write_text(
        "# Project\n\nPut the site's files under `src/` (pages, styles, assets). "
        "`npm run build` copies `src/` to `dist/`, which is what gets previewed and deployed.\n"
        "No package registry is reachable here: use Node's standard library only.\n"
    )
    frame_lines = "\n".join(
        f'  - "{n}" (node {frames[n]["node"]["id"]}, {frames[n]["width"]} px wide) at route {routes[n]}'
        for n in names
    )
    instruction = (
        f'Build these frames of the Figma file {D.FILE_KEY} ("{D.FILE_NAME}") as a web site in '
        f"this project:\n{frame_lines}\n"
        "Use the figma tools to read the design (structure, styles, components) and to export "
        "its images and icons; do not guess colours, fonts or sizes. Match the frames closely, "
        "serve every route listed, and make the pages responsive. Keep asset paths relative "
        "or rooted at /. `npm run build` must produce dist/. Check your work with "
        "create_app_preview and fix what it reports before you finish."
    )
    doc = {
        "title": title,
        "instruction": instruction,
        "environment": {"initial_state": "initial", "mcp_servers": ["figma"]},
        "ground_truth": [task_id],
        "rubrics": ["figma-to-code"],
        "skills": ["figma-to-code"],
        "tags": {**tags, "frame_count": len(names)},
        "limits": {"wall_seconds": 5400, "tool_calls": 400},
    }
    import yaml

    (tdir / "task.yaml").write_text(
        yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    )


PACK_YAML = """# Generated by scripts/make_figma_mini.py from scripts/figma_mini/design.py; see README.md.
id: figma-mini
version: "1.0"
environment: figma-to-code
description: >-
  Three Figma-to-code tasks over one generated design file (six frames: a desktop and a
  mobile landing page, a tall menu page, a product page, about and contact), with the
  design served by a local Figma fixture server through LH-Bench's nine design tools,
  a preview tool, ground-truth frames, rubrics and deterministic output checks.
mcp_servers:
  figma:
    command: ['{python}', '-m', 'lhbench.tools.figma_server', '--store', 'bundled:figma-mini',
              '--workspace', '{workspace}', '--rate-limit', 'capacity=6,per_minute=10']
    env: {LHBENCH_IN_SANDBOX: "1"}
"""


def write_pack_files() -> None:
    (OUT / "pack.yaml").write_text(PACK_YAML)
    rub = OUT / "rubrics"
    rub.mkdir()
    shutil.copy(
        ROOT / "src/lhbench/packs/data/lhbench-rubrics/rubrics/figma-to-code.yaml",
        rub / "figma-to-code.yaml",
    )
    (rub / "figma-checks.yaml").write_text((HERE / "figma-checks.yaml").read_text())
    skill = OUT / "skills" / "figma-to-code"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text((HERE / "SKILL.md").read_text())
    (OUT / "README.md").write_text((HERE / "README.md").read_text())


if __name__ == "__main__":
    main()
